/**
 * One optimiser step: for each micro-batch, the model in training mode -> pooling -> objective ->
 * gradients of the trainable parameters; gradients averaged over the micro-batches, clipped to a
 * global norm when asked, and applied by AdamW at the scheduled learning rate.
 *
 * The only read-back is one small tensor (the loss, its terms and the gradient norm), so an
 * asynchronous backend stalls once per step at most; `stepOnDevice` is the step without it (what
 * lib/train/step-graphs.ts records as one graph).
 */
import { tf } from '../backend/index.js';
import { leanVariableGrads } from '../backend/lean-tape.js';
import { needsHiddenStates, pool, type Pooling } from '../embed/pooling.js';
import type { AttentionKind, TextModel } from '../models/types.js';
import { gradientsByParameterName, type AdamW } from './adamw.js';
import type { TrainingBatch } from './batching.js';
import { clipByGlobalNorm } from './clip.js';
import { InputError } from '../util/errors.js';
import type { BoundObjective, ObjectiveFn, ObjectiveInput } from '../losses/registry.js';

export interface StepContext {
  model: TextModel;
  /** The parameters the step differentiates and updates (the model's trainable ones). */
  trainable: ReadonlyMap<string, tf.Variable>;
  pooling: Pooling;
  padSide: 'right' | 'left';
  objective: ObjectiveFn;
  /** What the objective needs beside the last layer's embeddings (its BoundObjective's `inputs`). */
  objectiveInputs?: readonly ObjectiveInput[];
  /**
   * Its BoundObjective's `labelInputs`, when it has them: each micro-batch's labels then reach the
   * step as host arrays made once per batch (withLabelInputs), from which the objective builds its
   * label masks on the device — the same numbers, and a step that a graph can replay with other labels.
   */
  labelInputs?: BoundObjective['labelInputs'];
  optimizer: AdamW;
  maxGradNorm?: number;
  /**
   * How the gradients are taken: 'lean' (default: lib/backend/lean-tape.ts, which keeps only what
   * the backward pass reads and frees it as soon as it is read) or 'tfjs' (tf.variableGrads as
   * tfjs-core does it). The same numbers either way; 'tfjs' is there to measure the difference.
   */
  gradients?: 'lean' | 'tfjs';
  /** Recompute each layer in backward (ForwardOptions.checkpointing). */
  checkpointing?: boolean;
  /** Attention kind (ForwardOptions.attention). */
  attention?: AttentionKind;
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

/** Loss of one micro-batch and the gradients by parameter name; runs inside the caller's tidy (its terms are kept: the caller frees them). */
function microStep(ctx: StepContext, b: TrainingBatch): { loss: tf.Scalar; terms: Record<string, tf.Scalar>; grads: Map<string, tf.Tensor> } {
  const layerwise = ctx.objectiveInputs?.includes('layers') ?? false;
  const hidden = needsHiddenStates(ctx.pooling) || layerwise;
  let terms: Record<string, tf.Scalar> = {};
  const differentiate = ctx.gradients === 'tfjs' ? tf.variableGrads : leanVariableGrads;
  const { value, grads } = differentiate(() => {
    const out = ctx.model.forward(b.tokens, { training: true, outputHiddenStates: hidden, checkpointing: ctx.checkpointing, attention: ctx.attention });
    const mask = tf.tensor2d(b.tokens.attentionMask, [b.tokens.batch, b.tokens.seqLen], 'int32');
    const emb = pool(ctx.pooling, { lastHiddenState: out.lastHiddenState, hiddenStates: out.hiddenStates, poolerOutput: out.poolerOutput, attentionMask: mask, padSide: ctx.padSide });
    // Layer-wise objectives (Espresso) get every hidden state pooled as the last one is.
    const layers = layerwise ? poolEveryLayer(ctx, out.hiddenStates, mask, emb) : undefined;
    const r = ctx.objective(emb, { labels: b.labels, keys: b.keys, layers, labelInputs: b.labelInputs });
    // The terms leave the gradient scope (tf.keep) so the step can report them; freed below.
    terms = Object.fromEntries(Object.entries(r.terms).map(([k, t]) => [k, tf.keep(t)]));
    return r.total;
  }, [...ctx.trainable.values()]);
  return { loss: value, terms, grads: gradientsByParameterName(ctx.trainable, grads) };
}

/** pool(H[i]) for every hidden state H[0] (embedding output) .. H[L]; the last is `emb` itself. */
function poolEveryLayer(ctx: StepContext, states: readonly tf.Tensor3D[] | undefined, mask: tf.Tensor2D, emb: tf.Tensor2D): tf.Tensor2D[] {
  if (!states || states.length < 2) throw new InputError('this objective trains every layer, but the model returned no per-layer hidden states');
  if (ctx.pooling === 'cls_pooler' || ctx.pooling === 'first_last_avg') throw new InputError(`pooling '${ctx.pooling}' is defined for the last layer only; a layer-wise objective needs one that pools any layer (cls, avg, cls_avg, max, last)`);
  return states.map((h, i) => (i === states.length - 1 ? emb : pool(ctx.pooling, { lastHiddenState: h, attentionMask: mask, padSide: ctx.padSide })));
}

/**
 * Runs one optimiser step over `micro` at learning rate `lr` and reads back its numbers.
 *
 * Each micro-batch runs in its own tidy that returns only the running sums (gradients, loss terms):
 * one tidy around the whole step kept every micro-batch's gradients and every partial sum alive until
 * the step ended — two parameter-sized buffers per micro-batch, about 113 GB of BERT-base gradients
 * at the 128 micro-batches of AnglE's later NLI recipe (found by the rehearsal). The sums are added in
 * the same order as before, so the numbers are unchanged.
 */
export async function optimizerStep(ctx: StepContext, micro: readonly TrainingBatch[], lr: number): Promise<StepValues> {
  const t = stepOnDevice(ctx, withLabelInputs(ctx, micro), lr);
  try {
    return await readStepValues(t);
  } finally {
    t.values.dispose();
  }
}

/** The micro-batches with their objective's label inputs (ObjectiveBatch.labelInputs), made once here before the step; as they are when the objective has none or a batch has them. */
export function withLabelInputs(ctx: StepContext, micro: readonly TrainingBatch[]): readonly TrainingBatch[] {
  const make = ctx.labelInputs;
  if (!make) return micro;
  return micro.map((b) => (b.labelInputs ? b : { ...b, labelInputs: make({ labels: b.labels, keys: b.keys }) }));
}

/** What stepOnDevice leaves for the host to read: [loss, ...terms, gradNorm?] in one tensor. */
export interface StepTensors {
  values: tf.Tensor1D;
  names: string[];
  tokens: number;
  clipped: boolean;
}

/** Reads a step's numbers back (the one read of a step); `t.values` stays the caller's. */
export async function readStepValues(t: StepTensors): Promise<StepValues> {
  const values = (await t.values.data()) as Float32Array;
  const terms: Record<string, number> = {};
  t.names.forEach((k, i) => (terms[k] = values[i + 1]));
  const result: StepValues = { loss: values[0], terms, tokens: t.tokens };
  if (t.clipped) result.gradNorm = values[values.length - 1];
  return result;
}

/**
 * The device part of optimizerStep: forward, backward and the update, with no read back (so a
 * backend can record it as one graph, lib/train/step-graphs.ts). Returns the tensor of numbers to read.
 */
export function stepOnDevice(ctx: StepContext, micro: readonly TrainingBatch[], lr: number): StepTensors {
  let tokens = 0;
  let sumGrads: Record<string, tf.Tensor> = {};
  let termSums: Record<string, tf.Scalar> = {};
  const losses: tf.Scalar[] = [];
  try {
    for (const b of micro) {
      tokens += b.realTokens;
      const prevGrads = sumGrads;
      const prevTerms = termSums;
      let kept: tf.Tensor[] = [];
      const next = tf.tidy(() => {
        const s = microStep(ctx, b);
        kept = Object.values(s.terms);
        const terms: Record<string, tf.Scalar> = { ...prevTerms };
        for (const [k, t] of Object.entries(s.terms)) terms[k] = prevTerms[k] ? tf.add(prevTerms[k], t) : tf.clone(t);
        const grads: Record<string, tf.Tensor> = { ...prevGrads };
        for (const [k, g] of s.grads) grads[k] = prevGrads[k] ? tf.add(prevGrads[k], g) : g;
        return { loss: s.loss, terms, grads };
      });
      tf.dispose(kept);
      // What the new sums replaced (a name absent from this micro-batch carries its old sum over).
      for (const [k, t] of Object.entries(prevTerms)) if (next.terms[k] !== t) t.dispose();
      for (const [k, g] of Object.entries(prevGrads)) if (next.grads[k] !== g) g.dispose();
      losses.push(next.loss);
      termSums = next.terms;
      sumGrads = next.grads;
    }
    const out = tf.tidy(() => {
      const scale = 1 / micro.length;
      let grads = new Map(Object.entries(sumGrads));
      if (micro.length > 1) grads = new Map([...grads].map(([k, g]) => [k, tf.mul(g, scale)]));
      let norm: tf.Scalar | undefined;
      if (ctx.maxGradNorm !== undefined) ({ grads, norm } = clipByGlobalNorm(grads, ctx.maxGradNorm));
      ctx.optimizer.step(grads, lr);
      const names = Object.keys(termSums);
      const loss = tf.mul(tf.addN(losses), scale) as tf.Scalar;
      const parts = [loss, ...names.map((k) => tf.mul(termSums[k], scale) as tf.Scalar), ...(norm ? [norm] : [])];
      return { values: tf.stack(parts) as tf.Tensor1D, names };
    });
    return { values: out.values, names: out.names, tokens, clipped: ctx.maxGradNorm !== undefined };
  } finally {
    tf.dispose([...Object.values(sumGrads), ...Object.values(termSums), ...losses]);
  }
}
