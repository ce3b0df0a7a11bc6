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
 *
 * "Positives only" objectives read every pair as a positive, so pair data for them must be
 * labelled 1 throughout; anything else is refused rather than silently treated as positive.
 */
import { tf } from '../backend/index.js';
import { angleLossTerms, angleTripletLossTerms, type AngleLossConfigInput } from '../losses/angle-loss.js';
import { arcconLoss, type ArcconOptions } from '../losses/arccon.js';
import { simaceLoss, type SimaceOptions } from '../losses/simace.js';
import { simcsePairLoss, simcseSupervisedLoss, simcseUnsupervisedLoss } from '../losses/simcse.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import type { TrainingExamples } from './examples.js';

/** The objectives by name (see the table above). */
export const OBJECTIVE_NAMES = ['angle', 'simcse', 'simace', 'arccon'] as const;

export type ObjectiveConfig =
  | { name: 'angle'; loss?: AngleLossConfigInput }
  | { name: 'simcse'; temperature?: number }
  | { name: 'simace'; options?: SimaceOptions }
  | { name: 'arccon'; options?: ArcconOptions };

export interface ObjectiveValue {
  total: tf.Scalar;
  /** Unweighted terms by name (e.g. cosine, ibn, angle); empty for single-term objectives. */
  terms: Record<string, tf.Scalar>;
}

export type ObjectiveFn = (emb: tf.Tensor2D, batch: { labels: readonly number[]; keys: readonly string[] }) => ObjectiveValue;

function positivesOnly(name: string, labels: readonly number[]): void {
  const bad = labels.findIndex((y) => y !== 1);
  if (bad >= 0) {
    throw new InputError(`objective '${name}' treats every pair as a positive, but pair ${bad} of the batch has label ${labels[bad]}; keep only label-1 pairs`);
  }
}

/** Checks that the objective accepts this kind of data and returns its loss function. */
export function bindObjective(cfg: ObjectiveConfig, kind: TrainingExamples['kind']): ObjectiveFn {
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
    default:
      throw new UnknownNameError('objective', String((cfg as { name: string }).name), OBJECTIVE_NAMES);
  }
}
