/**
 * One optimiser step: for each micro-batch, the model in training mode -> pooling -> objective ->
 * gradients of the trainable parameters; gradients averaged over the micro-batches, clipped to a
 * global norm when asked, and applied by AdamW at the scheduled learning rate.
 *
 * Everything happens inside one tf.tidy and the only read-back is one small tensor (the loss, its
 * terms and the gradient norm), so an asynchronous backend stalls once per step at most.
 */
import { tf } from '../backend/index.js';
import { needsHiddenStates, pool, type Pooling } from '../embed/pooling.js';
import type { TextModel } from '../models/types.js';
import { gradientsByParameterName, type AdamW } from './adamw.js';
import type { TrainingBatch } from './batching.js';
import { clipByGlobalNorm } from './clip.js';
import type { ObjectiveFn } from './objective.js';

export interface StepContext {
  model: TextModel;
  /** The parameters the step differentiates and updates (the model's trainable ones). */
  trainable: ReadonlyMap<string, tf.Variable>;
  pooling: Pooling;
  padSide: 'right' | 'left';
  objective: ObjectiveFn;
  optimizer: AdamW;
  maxGradNorm?: number;
}

export interface StepValues {
  /** Mean loss over the micro-batches. */
  loss: number;
  /** Mean of each unweighted objective term. */
  terms: Record<string, number>;
  /** Global gradient norm before clipping, when clipping is on. */
  gradNorm?: number;
  /** Non-padding tokens processed. */
  tokens: number;
}

/** Loss of one micro-batch and the gradients by parameter name; runs inside the caller's tidy. */
function microStep(ctx: StepContext, b: TrainingBatch): { loss: tf.Scalar; terms: Record<string, tf.Scalar>; grads: Map<string, tf.Tensor> } {
  const hidden = needsHiddenStates(ctx.pooling);
  let terms: Record<string, tf.Scalar> = {};
  const { value, grads } = tf.variableGrads(() => {
    const out = ctx.model.forward(b.tokens, { training: true, outputHiddenStates: hidden });
    const mask = tf.tensor2d(b.tokens.attentionMask, [b.tokens.batch, b.tokens.seqLen], 'int32');
    const emb = pool(ctx.pooling, { lastHiddenState: out.lastHiddenState, hiddenStates: out.hiddenStates, poolerOutput: out.poolerOutput, attentionMask: mask, padSide: ctx.padSide });
    const r = ctx.objective(emb, { labels: b.labels, keys: b.keys });
    // The terms leave the gradient scope (tf.keep) so the step can report them; freed below.
    terms = Object.fromEntries(Object.entries(r.terms).map(([k, t]) => [k, tf.keep(t)]));
    return r.total;
  }, [...ctx.trainable.values()]);
  return { loss: value, terms, grads: gradientsByParameterName(ctx.trainable, grads) };
}

/** Runs one optimiser step over `micro` at learning rate `lr` and reads back its numbers. */
export async function optimizerStep(ctx: StepContext, micro: readonly TrainingBatch[], lr: number): Promise<StepValues> {
  let tokens = 0;
  const out = tf.tidy(() => {
    let sumGrads: Map<string, tf.Tensor> | undefined;
    const losses: tf.Scalar[] = [];
    const termSums: Record<string, tf.Scalar> = {};
    const kept: tf.Tensor[] = [];
    for (const b of micro) {
      tokens += b.realTokens;
      const s = microStep(ctx, b);
      losses.push(s.loss);
      kept.push(...Object.values(s.terms));
      for (const [k, t] of Object.entries(s.terms)) termSums[k] = termSums[k] ? tf.add(termSums[k], t) : t;
      if (!sumGrads) sumGrads = s.grads;
      else for (const [k, g] of s.grads) sumGrads.set(k, sumGrads.has(k) ? tf.add(sumGrads.get(k)!, g) : g);
    }
    const scale = 1 / micro.length;
    let grads = sumGrads!;
    if (micro.length > 1) grads = new Map([...grads].map(([k, g]) => [k, tf.mul(g, scale)]));
    let norm: tf.Scalar | undefined;
    if (ctx.maxGradNorm !== undefined) ({ grads, norm } = clipByGlobalNorm(grads, ctx.maxGradNorm));
    ctx.optimizer.step(grads, lr);
    const names = Object.keys(termSums);
    const loss = tf.mul(tf.addN(losses), scale) as tf.Scalar;
    const parts = [loss, ...names.map((k) => tf.mul(termSums[k], scale) as tf.Scalar), ...(norm ? [norm] : [])];
    const values = tf.stack(parts);
    tf.dispose(kept);
    return { values, names };
  });
  const values = (await out.values.data()) as Float32Array;
  out.values.dispose();
  const terms: Record<string, number> = {};
  out.names.forEach((k, i) => (terms[k] = values[i + 1]));
  const result: StepValues = { loss: values[0], terms, tokens };
  if (ctx.maxGradNorm !== undefined) result.gradNorm = values[values.length - 1];
  return result;
}
