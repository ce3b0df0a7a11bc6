/**
 * One training configuration of the GPU check (model width, depth, batch, tape, checkpointing,
 * attention, LoRA and frozen-base storage) and how it is measured: the trainer's optimizer step
 * (lib/train/training-step.ts) on the active backend — its peak memory, its speed and the share of
 * a step the host spends dispatching kernels — beside the shape-only backend's prediction of the
 * same steps (lib/backend/shape-only: `meta` mirrors cuda, `meta-cpu` mirrors cpu).
 *
 * `tiny` shrinks a configuration to a few layers of width 64 and a batch of 2 × 16 for the dry run
 * on a CPU: the same code paths (LoRA, NF4, checkpointing, blocked attention) at shapes a 2-core
 * machine steps in a second.
 */
import { tf } from '../../lib/backend/index.js';
import { trackTensorMemory } from '../../lib/backend/memory-tracking.js';
import { measurePeakBytes, type ShapeOnlyMirror } from '../../lib/backend/shape-only/index.js';
import { addLora } from '../../lib/models/adapters/lora.js';
import type { AdaptableModel } from '../../lib/models/adapters/types.js';
import { architectureOfConfig, defaultPoolingOf } from '../../lib/models/architectures.js';
import { KNOWN_CONFIGS, modelFromConfig, type KnownModel } from '../../lib/models/model-from-config.js';
import type { BaseStorage } from '../../lib/ops/frozen-linear.js';
import type { AttentionKind } from '../../lib/models/types.js';
import { AdamW } from '../../lib/train/adamw.js';
import type { TrainingBatch } from '../../lib/train/batching.js';
import { bindObjective } from '../../lib/train/objective.js';
import { StepGraphs, type StepGraphStats } from '../../lib/train/step-graphs.js';
import { optimizerStep, type StepContext } from '../../lib/train/training-step.js';

export interface TrainConfig {
  /** Short label, unique within a step: 'bert-base 32x64 lean +ckpt'. */
  name: string;
  model: KnownModel;
  /** Layers (reduced depth for the 7B/13B widths); the model's own when absent. */
  layers?: number;
  /** Pairs or triplets per micro-batch, tokens per row. */
  examples: number;
  length: number;
  kind: 'pairs' | 'triplets';
  lora?: { r: number; alpha: number; dropout: number };
  baseStorage?: BaseStorage;
  doubleQuant?: boolean;
  checkpointing?: boolean;
  attention?: AttentionKind;
  /** cuda matmul precision for the speed step (bf16: cuBLASLt on bf16 inputs, fp32 accumulation). */
  precision?: 'tf32' | 'fp32' | 'bf16';
  /**
   * Steps through lib/train/step-graphs.ts, as the trainer's `stepGraphs` runs them, each with other
   * labels (they reach a replay as the objective's device inputs): on cuda captured on the third
   * step and replayed after; elsewhere every step eager.
   */
  stepGraphs?: boolean;
}

const BERT: KnownModel = 'google-bert/bert-base-uncased';
const LLAMA7: KnownModel = 'NousResearch/Llama-2-7b-hf';
const OPT13: KnownModel = 'facebook/opt-13b';

/** The memory configurations the issue lists: BERT-base at three shapes × three variants; 7B/13B widths at 2 layers with LoRA over NF4 and fp16 bases, with checkpointing. */
export function memoryConfigs(): TrainConfig[] {
  const out: TrainConfig[] = [];
  for (const [examples, length] of [[32, 64], [128, 64], [8, 512]] as const) {
    out.push({ name: `bert-base ${examples}x${length} lean`, model: BERT, examples, length, kind: 'pairs' });
    out.push({ name: `bert-base ${examples}x${length} lean +ckpt`, model: BERT, examples, length, kind: 'pairs', checkpointing: true });
    out.push({ name: `bert-base ${examples}x${length} lean +blocked`, model: BERT, examples, length, kind: 'pairs', attention: 'blocked' });
  }
  const llamaLora = { r: 32, alpha: 32, dropout: 0.1 };
  const optLora = { r: 64, alpha: 16, dropout: 0.05 };
  for (const [storage, dq] of [['nf4', true], ['fp16', false]] as const) {
    out.push({ name: `llama-2-7b width, 2 layers, 160x45 LoRA ${dq ? 'nf4-dq' : storage} +ckpt`, model: LLAMA7, layers: 2, examples: 160, length: 45, kind: 'pairs', lora: llamaLora, baseStorage: storage, doubleQuant: dq, checkpointing: true });
    out.push({ name: `opt-13b width, 2 layers, 100x43 triplets LoRA ${dq ? 'nf4-dq' : storage} +ckpt`, model: OPT13, layers: 2, examples: 100, length: 43, kind: 'triplets', lora: optLora, baseStorage: storage, doubleQuant: dq, checkpointing: true });
  }
  return out;
}

/** BERT-base's speed shapes (pairs × tokens), issue 39's list; PyTorch's peer runs the same. */
export const SPEED_SHAPES = [[32, 64], [128, 64], [256, 32], [64, 128]] as const;

/**
 * The speed configurations: BERT-base at the four shapes in TF32 and bf16 (PyTorch's peer runs them
 * eager in fp32/TF32 and under autocast-bf16), the two decoder widths in TF32, and the step graphs
 * with and without the fused attention kernel. TF32 and bf16 first: a step cut by its budget loses
 * the rows at the end.
 */
export function speedConfigs(): TrainConfig[] {
  const out: TrainConfig[] = [];
  for (const precision of ['tf32', 'bf16'] as const) {
    for (const [examples, length] of SPEED_SHAPES) out.push({ name: `bert-base ${examples}x${length} lean ${precision}`, model: BERT, examples, length, kind: 'pairs', precision });
  }
  for (const c of memoryConfigs()) if (c.model !== BERT && c.baseStorage === 'nf4') out.push({ ...c, name: `${c.name} tf32`, precision: 'tf32' });
  // The trainer's step graphs (issue 39) beside the eager rows above: one graph launch a step.
  for (const [examples, length] of [[32, 64], [128, 64]] as const) out.push({ name: `bert-base ${examples}x${length} lean tf32 +step-graphs`, model: BERT, examples, length, kind: 'pairs', precision: 'tf32', stepGraphs: true });
  // The fused attention kernel in training (issue 39 item 3) on top: forward and backward one kernel a layer.
  out.push({ name: 'bert-base 128x64 lean tf32 +fused-attention +step-graphs', model: BERT, examples: 128, length: 64, kind: 'pairs', precision: 'tf32', attention: 'fused', stepGraphs: true });
  return out;
}

/** The configuration at dry-run size: 2 layers of width 64 (the decoders' vocabulary 512), 2 × 16. */
export function tiny(c: TrainConfig): TrainConfig {
  return { ...c, layers: 2, examples: 2, length: 16 };
}

/** The model config of `c`: the known config at `c.layers`, or its dry-run shrink. */
export function modelConfig(c: TrainConfig, small: boolean): Record<string, unknown> {
  const base = { ...KNOWN_CONFIGS[c.model] } as Record<string, unknown>;
  if (c.layers !== undefined) base.num_hidden_layers = c.layers;
  return small ? shrinkConfig(base, { vocab: true }) : base;
}

/**
 * A model config at dry-run size: 2 layers of width 64, 4 heads; a vocabulary of 512 where the
 * architecture's rehearsal tokenizer folds its ids into the config's (its registry entry's
 * `rehearsalTokenizerFolds`: the decoders) and, with `vocab`, for every architecture (synthetic
 * ids); otherwise (BERT) the vocabulary stays the config's own, which its tokenizer's ids need.
 */
export function shrinkConfig(base: Readonly<Record<string, unknown>>, o: { vocab?: boolean } = {}): Record<string, unknown> {
  const shrunk: Record<string, unknown> = { ...base, hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2 };
  if ('intermediate_size' in base) shrunk.intermediate_size = 128;
  if ('num_key_value_heads' in base) shrunk.num_key_value_heads = 4;
  if ('ffn_dim' in base) shrunk.ffn_dim = 128;
  if ('word_embed_proj_dim' in base) shrunk.word_embed_proj_dim = 64;
  if (architectureOfConfig(base).rehearsalTokenizerFolds || o.vocab) shrunk.vocab_size = 512;
  return shrunk;
}

export function rowsOf(c: Pick<TrainConfig, 'examples' | 'kind'>): number {
  return c.examples * (c.kind === 'pairs' ? 2 : 3);
}

/** A synthetic batch of `c`'s shape, every token real (the longest batch is the worst case). */
function batchOf(c: TrainConfig, vocab: number): TrainingBatch {
  const rows = rowsOf(c);
  const T = c.length;
  const ids = new Int32Array(rows * T);
  for (let i = 0; i < ids.length; i++) ids[i] = 5 + ((i * 7919) % (vocab - 5));
  return {
    epoch: 0,
    index: 0,
    examples: new Uint32Array(c.examples),
    tokens: { inputIds: ids, tokenTypeIds: new Int32Array(rows * T), attentionMask: new Int32Array(rows * T).fill(1), batch: rows, seqLen: T },
    labels: c.kind === 'pairs' ? Array.from({ length: c.examples }, (_, i) => i % 6) : [],
    keys: Array.from({ length: rows }, (_, i) => `row ${i}`),
    realTokens: rows * T,
  };
}

/**
 * Builds the model of `c` on the active backend and runs `warmup + steps` optimizer steps; `onTimed`
 * wraps the timed ones. With `c.stepGraphs` the steps go through StepGraphs (at least 3 warmup
 * steps, so that the timed ones are replays where the backend records) and its stats are returned.
 */
async function buildAndStep(c: TrainConfig, small: boolean, warmup: number, steps: number, onTimed?: (run: () => Promise<void>) => Promise<void>): Promise<StepGraphStats | undefined> {
  const config = modelConfig(c, small);
  // A 16/4-bit frozen base is stored as the model is built, so the float32 base never exists and
  // the peak measured is the quantised model's (lib/models/frozen-base.ts).
  const frozenBase = c.baseStorage && c.baseStorage !== 'fp32' ? { format: c.baseStorage, ...(c.doubleQuant ? { doubleQuant: true } : {}) } : undefined;
  const model = modelFromConfig(config, { init: 'normal', seed: 1, dropoutSeed: 3, frozenBase });
  const objective = bindObjective(c.kind === 'pairs' ? { name: 'angle', loss: { weights: { cosine: 1, ibn: 0, angle: 0 } } } : { name: 'simcse' }, c.kind);
  let optimizer: AdamW | undefined;
  let graphs: StepGraphs | undefined;
  try {
    if (c.lora) addLora(model as AdaptableModel, { ...c.lora, targetModules: 'all-linear' }, 0);
    const trainable = model.trainableParameters();
    optimizer = new AdamW(trainable, { weightDecay: 0.01 });
    const ctx: StepContext = {
      model,
      trainable,
      pooling: defaultPoolingOf(model.architecture),
      padSide: 'right',
      objective: objective.loss,
      labelInputs: objective.labelInputs,
      optimizer,
      gradients: 'lean',
      checkpointing: c.checkpointing,
      attention: c.attention,
    };
    const batch = batchOf(c, Number(config.vocab_size));
    graphs = c.stepGraphs ? new StepGraphs() : undefined;
    // With step graphs every step has other labels (rotated), as training's batches do.
    const step = async (i: number) => {
      if (!graphs) return void (await optimizerStep(ctx, [batch], 1e-5));
      await graphs.step(ctx, [{ ...batch, labels: batch.labels.map((_, k) => batch.labels[(k + i) % batch.labels.length]) }], 1e-5);
    };
    const warm = graphs ? Math.max(3, warmup) : warmup;
    for (let i = 0; i < warm; i++) await step(i);
    const timed = async () => {
      for (let i = 0; i < steps; i++) await step(warm + i);
    };
    if (onTimed) await onTimed(timed);
    else await timed();
    return graphs?.stats();
  } finally {
    graphs?.dispose();
    optimizer?.dispose();
    objective.dispose();
    model.dispose();
  }
}

/** The cuda module when the active backend is cuda (device statistics, synchronisation). */
async function cudaModule(): Promise<typeof import('../../lib/backend/cuda/index.js') | undefined> {
  if (tf.getBackend() !== 'cuda') return undefined;
  return import('../../lib/backend/cuda/index.js');
}

export interface MemoryResult {
  /** The backend that measured, e.g. 'cuda' or 'cpu'. */
  backend: string;
  /** Measured: on cuda the allocator's peak bytes in use since the process started (one configuration per process); on cpu tfjs's peak buffer bytes over the same work. */
  measuredPeakBytes: number;
  /** cuda only: bytes held from the driver (in use + cached) after the steps. */
  reservedBytes?: number;
  /** The shape-only backend mirroring this backend, the same work: device size classes on cuda, buffer bytes on cpu. */
  predictedPeakBytes: number;
  predictedBy: string;
  /** measured / predicted. */
  ratio: number;
}

/** Model build + 2 optimizer steps, measured on the active backend and predicted on its shape-only mirror. */
export async function measureMemory(c: TrainConfig, small: boolean): Promise<MemoryResult> {
  const backend = tf.getBackend();
  const mirrors: ShapeOnlyMirror = backend === 'cuda' ? 'cuda' : 'cpu';
  const predicted = await measurePeakBytes(() => buildAndStep(c, small, 1, 1), { mirrors });
  const predictedPeakBytes = mirrors === 'cuda' ? predicted.peakDeviceBytes : predicted.peakBufferBytes;
  const cuda = await cudaModule();
  if (cuda) {
    await buildAndStep(c, small, 1, 1);
    cuda.cudaSynchronize();
    const s = cuda.cudaMemoryStats();
    return { backend, measuredPeakBytes: s.peakInUse, reservedBytes: s.inUse + s.cached, predictedPeakBytes, predictedBy: predicted.backend, ratio: s.peakInUse / predictedPeakBytes };
  }
  const { memory } = await trackTensorMemory(() => buildAndStep(c, small, 1, 1));
  return { backend, measuredPeakBytes: memory.peakBufferBytes, predictedPeakBytes, predictedBy: predicted.backend, ratio: memory.peakBufferBytes / predictedPeakBytes };
}

export interface SpeedResult {
  backend: string;
  precision?: string;
  steps: number;
  secondsPerStep: number;
  tokensPerSecond: number;
  /** Host milliseconds inside tfjs's kernel dispatch per step, and their share of the step's wall time (on cpu the kernels compute while dispatched, so there it is the compute share). */
  dispatchMsPerStep: number;
  dispatchShare: number;
  kernelsPerStep: number;
  /** With step graphs: how the steps ran (eager, captured, replayed; refused shapes and why), and the kernels a replay runs. */
  stepGraphs?: StepGraphStats;
}

/** `warmup` steps, then `steps` timed ones (between device synchronisations on cuda). */
export async function measureSpeed(c: TrainConfig, small: boolean, warmup: number, steps: number): Promise<SpeedResult> {
  const cuda = await cudaModule();
  if (cuda && c.precision) cuda.setCudaMatmulPrecision(c.precision);
  let seconds = 0;
  let dispatchMs = 0;
  let kernels = 0;
  const graphStats = await buildAndStep(c, small, warmup, steps, async (run) => {
    const engine = tf.engine() as unknown as { runKernel: (...a: unknown[]) => unknown };
    const original = engine.runKernel;
    // Outermost calls only: a kernel that dispatches others is counted once.
    let depth = 0;
    engine.runKernel = function (...a: unknown[]) {
      const t = performance.now();
      depth++;
      try {
        return original.apply(this, a);
      } finally {
        depth--;
        kernels++;
        if (depth === 0) dispatchMs += performance.now() - t;
      }
    };
    cuda?.cudaSynchronize();
    const t0 = performance.now();
    try {
      await run();
      cuda?.cudaSynchronize();
    } finally {
      seconds = (performance.now() - t0) / 1000;
      engine.runKernel = original;
    }
  });
  const tokens = rowsOf(c) * c.length * steps;
  return {
    backend: tf.getBackend(),
    precision: cuda ? (c.precision ?? 'tf32') : undefined,
    steps,
    secondsPerStep: seconds / steps,
    tokensPerSecond: tokens / seconds,
    dispatchMsPerStep: dispatchMs / steps,
    dispatchShare: dispatchMs / 1000 / seconds,
    kernelsPerStep: Math.round(kernels / steps),
    ...(graphStats ? { stepGraphs: graphStats } : {}),
  };
}
