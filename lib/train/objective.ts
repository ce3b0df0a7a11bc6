/**
 * The training objective by name, bound to the layout of the training data: a function from the
 * batch's embedding matrix to the loss and its named terms (the terms are what the log shows).
 *
 * | name     | pairs (zigzag + labels)        | triplets                   | unsupervised (two views) |
 * |----------|--------------------------------|----------------------------|--------------------------|
 * | `angle`  | AnglE total (cosine/ibn/angle) | AnglE triplet form         | —                        |
 * | `simcse` | InfoNCE, positives only        | supervised SimCSE          | unsupervised SimCSE      |
 * | `simace` | SimACE, positives only         | —                          | SimACE                   |
 * | `arccon` | ArcCon, positives only         | —                          | ArcCon                   |
 * | `sbert-cosine`  | SBERT cosine regression (graded labels / scale) | — | —                      |
 * | `sbert-softmax` | SBERT softmax classifier over (u, v, |u−v|)     | — | —                      |
 *
 * `sbert-softmax` owns trainable parameters (the classifier W, b, named `objective.classifier.*`):
 * the trainer trains and checkpoints them with the model's, and they are not part of the model.
 *
 * "Positives only" objectives read every pair as a positive, so pair data for them must be
 * labelled 1 throughout; anything else is refused rather than silently treated as positive.
 */
import { tf } from '../backend/index.js';
import { angleLossTerms, angleTripletLossTerms, type AngleLossConfigInput } from '../losses/angle-loss.js';
import { arcconLoss, type ArcconOptions } from '../losses/arccon.js';
import { simaceLoss, type SimaceOptions } from '../losses/simace.js';
import { sbertCosineLoss } from '../losses/sbert-cosine.js';
import { sbertClassifierInit, sbertSoftmaxLoss } from '../losses/sbert-softmax.js';
import { simcsePairLoss, simcseSupervisedLoss, simcseUnsupervisedLoss } from '../losses/simcse.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import type { TrainingExamples } from './examples.js';

/** The objectives by name (see the table above). */
export const OBJECTIVE_NAMES = ['angle', 'simcse', 'simace', 'arccon', 'sbert-cosine', 'sbert-softmax'] as const;

export type ObjectiveConfig =
  | { name: 'angle'; loss?: AngleLossConfigInput }
  | { name: 'simcse'; temperature?: number }
  | { name: 'simace'; options?: SimaceOptions }
  | { name: 'arccon'; options?: ArcconOptions }
  | { name: 'sbert-cosine'; scale?: number }
  | { name: 'sbert-softmax'; classes?: number };

export interface ObjectiveValue {
  total: tf.Scalar;
  /** Unweighted terms by name (e.g. cosine, ibn, angle); empty for single-term objectives. */
  terms: Record<string, tf.Scalar>;
}

export type ObjectiveFn = (emb: tf.Tensor2D, batch: { labels: readonly number[]; keys: readonly string[] }) => ObjectiveValue;

/** An objective ready to train: its loss, and the trainable parameters it owns (most own none). */
export interface BoundObjective {
  loss: ObjectiveFn;
  parameters: Map<string, tf.Variable>;
  dispose(): void;
}

/** What some objectives need to create their parameters. */
export interface ObjectiveContext {
  /** Sentence-embedding size. */
  dim?: number;
  /** Seed of parameter initialisation. */
  seed?: number;
}

const noParameters = (loss: ObjectiveFn): BoundObjective => ({ loss, parameters: new Map(), dispose: () => {} });

function positivesOnly(name: string, labels: readonly number[]): void {
  const bad = labels.findIndex((y) => y !== 1);
  if (bad >= 0) {
    throw new InputError(`objective '${name}' treats every pair as a positive, but pair ${bad} of the batch has label ${labels[bad]}; keep only label-1 pairs`);
  }
}

/** Checks that the objective accepts this kind of data and returns it ready to train. */
export function bindObjective(cfg: ObjectiveConfig, kind: TrainingExamples['kind'], ctx: ObjectiveContext = {}): BoundObjective {
  if (cfg.name === 'sbert-softmax') {
    if (kind !== 'pairs') throw new InputError(`objective '${cfg.name}' cannot train on ${kind} data`);
    if (!ctx.dim) throw new InputError(`objective '${cfg.name}' needs the embedding size to create its classifier`);
    const classes = cfg.classes ?? 2;
    const init = sbertClassifierInit(ctx.dim, classes, ctx.seed ?? 0);
    const scope = `objective${objectiveInstances++}`;
    const weight = tf.tidy(() => tf.variable(tf.tensor2d(init.weight, [classes, 3 * ctx.dim!]), true, `${scope}/classifier.weight`));
    const bias = tf.tidy(() => tf.variable(tf.tensor1d(init.bias), true, `${scope}/classifier.bias`));
    return {
      loss: (emb, b) => ({ total: sbertSoftmaxLoss(emb, b.labels, weight as tf.Variable<tf.Rank.R2>, bias as tf.Variable<tf.Rank.R1>), terms: {} }),
      parameters: new Map<string, tf.Variable>([
        ['objective.classifier.weight', weight],
        ['objective.classifier.bias', bias],
      ]),
      dispose: () => tf.dispose([weight, bias]),
    };
  }
  return noParameters(lossOf(cfg, kind));
}

let objectiveInstances = 0;

function lossOf(cfg: ObjectiveConfig, kind: TrainingExamples['kind']): ObjectiveFn {
  const refuse = (): never => {
    throw new InputError(`objective '${cfg.name}' cannot train on ${kind} data`);
  };
  switch (cfg.name) {
    case 'angle':
      if (kind === 'pairs') {
        return (emb, b) => {
          const r = angleLossTerms(emb, b.labels, cfg.loss, { keys: b.keys });
          const terms: Record<string, tf.Scalar> = {};
          for (const k of ['cosine', 'ibn', 'angle'] as const) if (r[k]) terms[k] = r[k]!;
          return { total: r.total, terms };
        };
      }
      if (kind === 'triplets') {
        return (emb) => {
          const r = angleTripletLossTerms(emb, cfg.loss);
          const terms: Record<string, tf.Scalar> = {};
          for (const k of ['contrastive', 'cosine', 'angle'] as const) if (r[k]) terms[k] = r[k]!;
          return { total: r.total, terms };
        };
      }
      return refuse();
    case 'simcse': {
      const o = { temperature: cfg.temperature };
      if (kind === 'triplets') return (emb) => ({ total: simcseSupervisedLoss(emb, o), terms: {} });
      if (kind === 'unsupervised') return (emb) => ({ total: simcseUnsupervisedLoss(emb, o), terms: {} });
      return (emb, b) => {
        positivesOnly('simcse', b.labels);
        return { total: simcsePairLoss(emb, o), terms: {} };
      };
    }
    case 'simace':
    case 'arccon': {
      if (kind === 'triplets') return refuse();
      const loss = cfg.name === 'simace' ? (e: tf.Tensor2D) => simaceLoss(e, cfg.options) : (e: tf.Tensor2D) => arcconLoss(e, cfg.options);
      return (emb, b) => {
        if (kind === 'pairs') positivesOnly(cfg.name, b.labels);
        return { total: loss(emb), terms: {} };
      };
    }
    case 'sbert-cosine':
      if (kind !== 'pairs') return refuse();
      return (emb, b) => ({ total: sbertCosineLoss(emb, b.labels, { scale: cfg.scale }), terms: {} });
    default:
      throw new UnknownNameError('objective', String((cfg as { name: string }).name), OBJECTIVE_NAMES);
  }
}
