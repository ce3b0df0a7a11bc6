/**
 * The training step that bench/cuda-launches.ts counts and the shape-only, launch-count and
 * step-graph tests run: a batch of sentence pairs (AnglE's pairs format, zigzag [a0, b0, a1, ...])
 * and the step context of lib/train/training-step.ts around a model (the angle objective, AdamW on
 * every trainable parameter). One place, so the bench and the tests measure the same step.
 */
import type { TextModel } from '../lib/models/types.js';
import { AdamW } from '../lib/train/adamw.js';
import type { TrainingBatch } from '../lib/train/batching.js';
import { bindObjective } from '../lib/train/objective.js';
import type { StepContext } from '../lib/train/training-step.js';
import type { Pooling } from '../lib/embed/pooling.js';

export interface PairBatchOptions {
  /** Token ids are drawn below this (default BERT's 30522). */
  vocab?: number;
  /** Pad the last 3 tokens of every `padEvery`-th sequence (default: no padding). */
  padEvery?: number;
  /** Shifts the ids and labels, so batches of the same shape differ (default 0). */
  variant?: number;
}

/** `pairs` pairs of `T` tokens each: deterministic ids, labels alternating 0/1. */
export function pairBatch(pairs: number, T: number, opts: PairBatchOptions = {}): TrainingBatch {
  const B = 2 * pairs;
  const vocab = opts.vocab ?? 30522;
  const v = opts.variant ?? 0;
  const ids = new Int32Array(B * T).map((_, i) => 3 + (((i + 31 * v) * 7919) % (vocab - 3)));
  const mask = new Int32Array(B * T).fill(1);
  if (opts.padEvery) for (let b = 0; b < B; b += opts.padEvery) for (let t = Math.max(1, T - 3); t < T; t++) mask[b * T + t] = 0;
  return {
    epoch: 0,
    index: v,
    examples: new Uint32Array(pairs),
    tokens: { inputIds: ids, tokenTypeIds: new Int32Array(B * T), attentionMask: mask, batch: B, seqLen: T },
    labels: Array.from({ length: pairs }, (_, i) => (i + v) % 2),
    keys: Array.from({ length: B }, (_, i) => `text ${i} ${v}`),
    realTokens: B * T,
  };
}

export interface PairStepOptions {
  pooling?: Pooling;
  gradients?: 'lean' | 'tfjs';
  checkpointing?: boolean;
  attention?: StepContext['attention'];
  /**
   * Whether the objective's labels reach the step as device inputs (BoundObjective.labelInputs;
   * default true). False: its label masks are built on the host per batch, as before issue 39's
   * AnglE capture (a step graph then refuses batches whose labels differ).
   */
  labelInputs?: boolean;
}

/** The step context of `model` (angle objective, AdamW on its trainable parameters); `dispose` frees the optimiser and objective, not the model. */
export function pairStepContext(model: TextModel, opts: PairStepOptions = {}): { ctx: StepContext; dispose(): void } {
  const trainable = model.trainableParameters();
  const optimizer = new AdamW(trainable);
  const objective = bindObjective({ name: 'angle' }, 'pairs');
  const ctx: StepContext = {
    model,
    trainable,
    pooling: opts.pooling ?? 'cls',
    padSide: 'right',
    objective: objective.loss,
    labelInputs: opts.labelInputs === false ? undefined : objective.labelInputs,
    optimizer,
    gradients: opts.gradients,
    checkpointing: opts.checkpointing,
    attention: opts.attention,
  };
  return {
    ctx,
    dispose: () => {
      optimizer.dispose();
      objective.dispose();
    },
  };
}
