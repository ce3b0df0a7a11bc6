/**
 * Benchmark: the memory of one training step, ours against PyTorch's, on the same model and batch.
 *
 * Ours: the trainer's step (lib/train/training-step.ts `optimizerStep`: forward in training mode,
 * pooling, objective, gradients, AdamW) on the shape-only backend that stands in for `cuda`
 * (lib/backend/shape-only, 'meta': the kernels, fused ops and buffer sharing of the cuda backend,
 * no data), at full depth and the real batch. The second step is measured (the first allocates
 * AdamW's moments): `peakBytes` = the highest bytes of live tensor buffers during it (weights,
 * optimiser state, activations, gradients, scratch), `peakDeviceBytes` the same in the cuda
 * allocator's size classes (what cudaMemoryStats().peakInUse reports on a GPU).
 *
 * PyTorch: bench/torch_train_memory.py (Debian's python3-torch 1.13, plain PyTorch, fp32) at 1 and
 * 2 layers on the real sequence length: the bytes of every tensor autograd saves for backward
 * (each storage once, bool dropout masks at 1 byte), per layer and fixed, projected to full depth
 * and the full batch (saved bytes scale with rows at a fixed length), plus 16 bytes per trained
 * parameter (weight, gradient, AdamW's two moments) and the stored bytes of frozen ones — the
 * issue's definition (PyTorch's backward transients are not counted, ours are).
 *
 * bytesPerTokenPerLayer: what the forward pass leaves for the backward pass, per layer and token —
 * PyTorch's saved bytes per layer / tokens; ours the growth, from 1 layer to full depth, of the
 * bytes alive once the loss is computed beyond the weights and optimiser state, / (layers − 1) /
 * tokens.
 *
 * Sections (--sections, default all):
 *   backends     one real step of BERT-base width (2 layers, 2 pairs × 64 tokens, lean tape) measured on
 *                the real cpu and wasm backends, beside the shape-only predictions for cpu and cuda:
 *                whole-step peak and bytes per token per layer, each row saying what produced it
 *   crosscheck   a real step on the cpu backend against the shape-only 'meta-cpu' on the same tiny
 *                BERT: peak buffer and tensor bytes must be equal (lean and tfjs gradients)
 *   calibration  the step of bench/cuda-train-step.ts on 'meta' against the peaks that run
 *                recorded on an H100 (bench/results/cuda-train-step-*.json)
 *   bert         BERT-base at 32×64, 128×64 and 8×512 pairs: tfjs's tape, the lean tape, +
 *                checkpointing, + blocked attention; PyTorch at the same shapes
 *   llama        a LLaMA-2-7B-width decoder (32 layers; PyTorch at 1–2 layers) with LoRA r 32 on
 *                all linear layers at AnglE-LLaMA's 160 pairs × 45 and PromptEOL's 256 triplets ×
 *                64, base fp32 / fp16 / NF4, with and without checkpointing
 *   recipes      every paper recipe's micro-batch on 'meta' with the settings that fit one 80 GB GPU
 *   compute      kernels and matmul FLOP per BERT-base step with checkpointing and blocked attention
 *   time         the time cost of checkpointing and blocked attention: real steps on the cpu backend
 *
 *   npx tsx bench/train-memory.ts [--sections bert,llama] [--no-torch] [--backends-width 768] [--out file] [--results-dir bench/results]
 *
 * Writes bench/results/train-memory-<date>.json (rows as the issue defines them, plus the
 * sections' details). Nothing here is a test and no timing is asserted.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { arch, cpus, hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { initBackend, tf } from '../lib/backend/index.js';
import { collectProvenance } from '../lib/report/provenance.js';
import { trackTensorMemory } from '../lib/backend/memory-tracking.js';
import { shapeOnlyBackend, withShapeOnlyBackend } from '../lib/backend/shape-only/index.js';
import { addLora } from '../lib/models/adapters/lora.js';
import type { BertModel } from '../lib/models/bert/model.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import type { TextModel } from '../lib/models/types.js';
import type { BaseStorage } from '../lib/ops/frozen-linear.js';
import { AdamW } from '../lib/train/adamw.js';
import type { TrainingBatch } from '../lib/train/batching.js';
import { bindObjective, type ObjectiveConfig } from '../lib/train/objective.js';
import { optimizerStep, type StepContext } from '../lib/train/training-step.js';
import { predictCudaTrainStepPeak } from '../lib/experiments/rehearsal/calibration.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const { values: opts } = parseArgs({
  options: {
    sections: { type: 'string', default: 'crosscheck,backends,calibration,bert,llama,recipes,compute,time' },
    'no-torch': { type: 'boolean', default: false },
    /** The backends section's hidden size (768: BERT-base width; smaller for a quick check, e.g. the test's 64). */
    'backends-width': { type: 'string', default: '768' },
    out: { type: 'string' },
    'results-dir': { type: 'string' },
  },
});
const sections = new Set(opts.sections!.split(','));
const GB = 1e9;
const MiB = 2 ** 20;
const log = (s: string) => console.log(s);

await initBackend('cpu', { quiet: true });

// ---- the step ------------------------------------------------------------------------------------

type Kind = 'pairs' | 'triplets';

interface StepSpec {
  config: Record<string, unknown>;
  /** Examples per micro-batch (pairs or triplets) and tokens per row. */
  examples: number;
  length: number;
  kind: Kind;
  layers?: number;
  lora?: { r: number; alpha: number; dropout: number };
  baseStorage?: BaseStorage;
  doubleQuant?: boolean;
  gradients?: 'lean' | 'tfjs';
  checkpointing?: boolean;
  attention?: 'plain' | 'blocked';
}

function rowsOf(s: Pick<StepSpec, 'examples' | 'kind'>): number {
  return s.examples * (s.kind === 'pairs' ? 2 : 3);
}

/** A synthetic batch of the spec's shape: every token real (the longest batch is the worst case). */
function batchOf(s: StepSpec, vocab: number): TrainingBatch {
  const rows = rowsOf(s);
  const T = s.length;
  const ids = new Int32Array(rows * T);
  for (let i = 0; i < ids.length; i++) ids[i] = 5 + ((i * 7919) % (vocab - 5));
  return {
    epoch: 0,
    index: 0,
    examples: new Uint32Array(s.examples),
    tokens: { inputIds: ids, tokenTypeIds: new Int32Array(rows * T), attentionMask: new Int32Array(rows * T).fill(1), batch: rows, seqLen: T },
    labels: s.kind === 'pairs' ? Array.from({ length: s.examples }, (_, i) => i % 6) : [],
    keys: Array.from({ length: rows }, (_, i) => `row ${i}`),
    realTokens: rows * T,
  };
}

/** The objective: AnglE's cosine (CoSENT) term for pairs, SimCSE's supervised InfoNCE for triplets. */
function objectiveOf(kind: Kind): ObjectiveConfig {
  return kind === 'pairs' ? { name: 'angle', loss: { weights: { cosine: 1, ibn: 0, angle: 0 } } } : { name: 'simcse' };
}

interface OursMeasure {
  peakBytes: number;
  peakDeviceBytes: number;
  /** Weights and optimiser state live when the measured step starts. */
  stateBytes: number;
  /** Bytes alive at the end of the forward pass beyond the state: what backward will read. */
  savedBytes: number;
  /** Parameters: all (base storage included), trained, and the stored bytes of the frozen base. */
  parameters: number;
  trained: number;
  frozenBaseBytes: number;
  stepMs: number;
}

/** Two steps on the shape-only backend standing in for cuda; the second one measured. */
async function measureOurs(s: StepSpec): Promise<OursMeasure> {
  return withShapeOnlyBackend(async () => {
    const backend = shapeOnlyBackend('cuda');
    const config = { ...s.config, ...(s.layers ? { num_hidden_layers: s.layers } : {}) };
    const model = modelFromConfig(config) as BertModel | LlamaModel;
    try {
      if (s.lora) addLora(model as LlamaModel, { ...s.lora, targetModules: 'all-linear' }, 0);
      let frozenBaseBytes = 0;
      for (const v of model.params.values()) if (!v.trainable) frozenBaseBytes += 4 * v.size;
      if (s.baseStorage && s.baseStorage !== 'fp32') {
        const llama = model as LlamaModel;
        llama.storeFrozenBase(s.baseStorage, { doubleQuant: s.doubleQuant });
        frozenBaseBytes = llama.storedBaseBytes();
        for (const v of model.params.values()) if (!v.trainable) frozenBaseBytes += 4 * v.size;
      }
      const trainable = model.trainableParameters();
      const optimizer = new AdamW(trainable, { weightDecay: 0.01 });
      const objective = bindObjective(objectiveOf(s.kind), s.kind);
      // Live bytes once the loss is computed: the weights and moments plus what the tape keeps
      // for backward (PyTorch's saved tensors) and the model's outputs.
      let afterForward = 0;
      const ctx: StepContext = {
        model: model as TextModel,
        trainable,
        pooling: s.lora ? 'last' : 'cls',
        padSide: 'right',
        objective: (emb, b) => {
          const r = objective.loss(emb, b);
          afterForward = backend.memoryCounters().liveBytes;
          return r;
        },
        optimizer,
        gradients: s.gradients ?? 'lean',
        checkpointing: s.checkpointing,
        attention: s.attention,
      };
      const batch = batchOf(s, (s.config.vocab_size as number) ?? 30000);
      await optimizerStep(ctx, [batch], 1e-5);
      const before = backend.memoryCounters();
      backend.resetPeak();
      const t0 = performance.now();
      await optimizerStep(ctx, [batch], 1e-5);
      const stepMs = performance.now() - t0;
      const after = backend.memoryCounters();
      optimizer.dispose();
      objective.dispose();
      let trained = 0;
      for (const v of trainable.values()) trained += v.size;
      return { peakBytes: after.peakBytes, peakDeviceBytes: after.peakDeviceBytes, stateBytes: before.liveBytes, savedBytes: afterForward - before.liveBytes, parameters: model.numParameters(), trained, frozenBaseBytes, stepMs };
    } finally {
      model.dispose();
    }
  });
}

/** Ours at full depth and at one layer: the peak, and bytes per token per layer. */
async function oursRow(s: StepSpec, fullLayers: number) {
  const full = await measureOurs({ ...s, layers: fullLayers });
  const one = await measureOurs({ ...s, layers: 1 });
  const tokens = rowsOf(s) * s.length;
  // As PyTorch's: the growth of what the forward pass leaves for backward, per layer and token.
  const perLayer = (full.savedBytes - one.savedBytes) / (fullLayers - 1);
  return { full, bytesPerTokenPerLayer: perLayer / tokens };
}

// ---- PyTorch -------------------------------------------------------------------------------------

interface TorchResult {
  saved: Record<string, number>;
  savedPerLayer: number;
  savedFixed: number;
  savedPerTokenPerLayer: number;
  sequences: number;
  peakRssMiB: number;
  torch: string;
}

const torchCache = new Map<string, TorchResult>();

function runTorch(args: string[]): TorchResult | undefined {
  if (opts['no-torch']) return undefined;
  const key = args.join(' ');
  const cached = torchCache.get(key);
  if (cached) return cached;
  log(`  torch: python3 bench/torch_train_memory.py ${key}`);
  const out = execFileSync('/usr/bin/python3', [join(here, 'torch_train_memory.py'), ...args, '--threads', '2'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const r = JSON.parse(out.trim().split('\n').pop()!) as TorchResult;
  torchCache.set(key, r);
  return r;
}

/** PyTorch's peak by the issue's definition, projected to `layers` and `rows`. */
function torchPeak(t: TorchResult, layers: number, rows: number, trained: number, frozenBytes: number): number {
  const saved = (t.savedFixed + layers * t.savedPerLayer) * (rows / t.sequences);
  return saved + 16 * trained + frozenBytes;
}

// ---- rows ----------------------------------------------------------------------------------------

interface Row {
  model: string;
  /** Pairs or triplets per micro-batch. */
  batch: number;
  length: number;
  engine: 'ours' | 'torch';
  checkpointing: boolean;
  baseStorage: BaseStorage | 'nf4-dq';
  bytesPerTokenPerLayer: number;
  peakBytes: number;
  /** Details: rows of the batch, layers, how it was measured. */
  kind: Kind;
  sequences: number;
  layers: number;
  gradients?: 'lean' | 'tfjs';
  attention?: 'plain' | 'blocked';
  peakDeviceBytes?: number;
  /**
   * What produced the row: 'measured on cpu' / 'measured on wasm' (a real step), 'predicted for cuda'
   * / 'predicted for cpu' (the shape-only backend mirroring it), or PyTorch's projection.
   */
  producedBy: string;
  /** The peak of the whole step (weights, optimiser state, activations, gradients, scratch), not per layer: what a device must hold. */
  wholeStepPeakBytes: number;
  measured: string;
}

const rows: Row[] = [];
const details: Record<string, unknown> = {};

function gb(b: number): string {
  return `${(b / GB).toFixed(2)} GB`;
}

// ---- crosscheck ----------------------------------------------------------------------------------

if (sections.has('crosscheck')) {
  log('crosscheck: a real training step on cpu against meta-cpu (tiny BERT, 2 layers, hidden 64)');
  const tiny = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: 64, num_attention_heads: 4, intermediate_size: 256, num_hidden_layers: 2 };
  const spec: StepSpec = { config: tiny, examples: 8, length: 32, kind: 'pairs' };
  const step = async (gradients: 'lean' | 'tfjs', checkpointing: boolean) => {
    const model = modelFromConfig(tiny, { init: 'normal', seed: 1, dropoutSeed: 3 }) as BertModel;
    const trainable = model.trainableParameters();
    const optimizer = new AdamW(trainable);
    const objective = bindObjective(objectiveOf('pairs'), 'pairs');
    const ctx: StepContext = { model, trainable, pooling: 'cls', padSide: 'right', objective: objective.loss, optimizer, gradients, checkpointing };
    const v = await optimizerStep(ctx, [batchOf(spec, 30522)], 1e-4);
    optimizer.dispose();
    objective.dispose();
    model.dispose();
    return v.loss;
  };
  const out: unknown[] = [];
  for (const gradients of ['tfjs', 'lean'] as const) {
    for (const checkpointing of [false, true]) {
      const cpu = await trackTensorMemory(() => step(gradients, checkpointing));
      const meta = await withShapeOnlyBackend(() => trackTensorMemory(() => step(gradients, checkpointing)), { mirrors: 'cpu' });
      const same = cpu.memory.peakBufferBytes === meta.memory.peakBufferBytes && cpu.memory.peakTensorBytes === meta.memory.peakTensorBytes;
      out.push({ gradients, checkpointing, cpu: cpu.memory, metaCpu: meta.memory, equal: same });
      log(`  ${gradients}${checkpointing ? ' +ckpt' : ''}: cpu peak buffers ${cpu.memory.peakBufferBytes} B, tensors ${cpu.memory.peakTensorBytes} B; meta-cpu ${meta.memory.peakBufferBytes} B, ${meta.memory.peakTensorBytes} B: ${same ? 'equal' : 'DIFFERENT'}`);
    }
  }
  details.crosscheck = { model: 'BERT 2 layers, hidden 64, 4 heads, intermediate 256, vocab 30522', batch: '8 pairs x 32 tokens', results: out };
}

// ---- backends: real cpu and wasm steps beside the shape-only predictions --------------------------

/**
 * Two steps of `s` on a real backend (the second measured, as measureOurs): the whole-step peak of
 * tfjs's live bytes (the state when the step starts + the step's peak above it) and what the
 * forward pass leaves for backward.
 */
async function measureReal(s: StepSpec, on: 'cpu' | 'wasm'): Promise<{ peakBytes: number; savedBytes: number }> {
  await initBackend(on, { quiet: true });
  const model = modelFromConfig({ ...s.config, ...(s.layers ? { num_hidden_layers: s.layers } : {}) }, { init: 'normal', seed: 1, dropoutSeed: 3 }) as BertModel;
  const trainable = model.trainableParameters();
  const optimizer = new AdamW(trainable, { weightDecay: 0.01 });
  const objective = bindObjective(objectiveOf(s.kind), s.kind);
  let afterForward = 0;
  const ctx: StepContext = {
    model, trainable, pooling: 'cls', padSide: 'right', optimizer, gradients: s.gradients ?? 'lean', checkpointing: s.checkpointing, attention: s.attention,
    objective: (emb, b) => {
      const r = objective.loss(emb, b);
      afterForward = tf.memory().numBytes;
      return r;
    },
  };
  const batch = batchOf(s, (s.config.vocab_size as number) ?? 30000);
  try {
    await optimizerStep(ctx, [batch], 1e-5);
    const before = tf.memory().numBytes;
    const { memory } = await trackTensorMemory(() => optimizerStep(ctx, [batch], 1e-5));
    return { peakBytes: before + memory.peakBufferBytes, savedBytes: afterForward - before };
  } finally {
    optimizer.dispose();
    objective.dispose();
    model.dispose();
  }
}

if (sections.has('backends')) {
  const hidden = Number(opts['backends-width']);
  if (!Number.isInteger(hidden) || hidden < 16 || hidden % 4 !== 0) throw new Error(`--backends-width ${opts['backends-width']}: expected a whole multiple of 4, at least 16`);
  const width = hidden === 768 ? { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'] } : { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: hidden, num_attention_heads: 4, intermediate_size: 4 * hidden, vocab_size: 1000 };
  const spec: StepSpec = { config: width, examples: 2, length: 64, kind: 'pairs', gradients: 'lean' };
  const tokens = rowsOf(spec) * spec.length;
  log(`backends: ${hidden === 768 ? 'BERT-base width' : `BERT width ${hidden}`}, 2 layers, ${spec.examples} pairs x ${spec.length} tokens, lean tape: one real step on cpu and wasm beside the shape-only predictions`);
  const out: unknown[] = [];
  const push = (producedBy: string, peak: number, perLayer: number, measured: string, device?: number) => {
    rows.push({
      model: hidden === 768 ? 'bert-base-uncased width, 2 layers' : `bert width ${hidden}, 2 layers`, batch: spec.examples, length: spec.length, engine: 'ours', checkpointing: false, baseStorage: 'fp32', bytesPerTokenPerLayer: perLayer,
      peakBytes: peak, kind: 'pairs', sequences: rowsOf(spec), layers: 2, gradients: 'lean', attention: 'plain', ...(device ? { peakDeviceBytes: device } : {}), producedBy, wholeStepPeakBytes: peak, measured,
    });
    out.push({ producedBy, wholeStepPeakBytes: peak, bytesPerTokenPerLayer: perLayer });
    log(`  ${producedBy}: whole step ${(peak / MiB).toFixed(1)} MiB, ${Math.round(perLayer).toLocaleString('en-US')} bytes/token/layer`);
  };
  for (const on of ['cpu', 'wasm'] as const) {
    const two = await measureReal({ ...spec, layers: 2 }, on);
    const one = await measureReal({ ...spec, layers: 1 }, on);
    push(`measured on ${on}`, two.peakBytes, (two.savedBytes - one.savedBytes) / tokens, `a real step on the ${on} backend (tfjs engine bytes), second of two; per layer from 1 and 2 layers`);
  }
  await initBackend('cpu', { quiet: true });
  for (const mirrors of ['cpu', 'cuda'] as const) {
    const m = async (layers: number) =>
      withShapeOnlyBackend(async () => {
        const b = shapeOnlyBackend(mirrors);
        const model = modelFromConfig({ ...width, num_hidden_layers: layers }) as BertModel;
        const trainable = model.trainableParameters();
        const optimizer = new AdamW(trainable, { weightDecay: 0.01 });
        const objective = bindObjective(objectiveOf('pairs'), 'pairs');
        let afterForward = 0;
        const ctx: StepContext = {
          model, trainable, pooling: 'cls', padSide: 'right', optimizer, gradients: 'lean',
          objective: (emb, bt) => {
            const r = objective.loss(emb, bt);
            afterForward = b.memoryCounters().liveBytes;
            return r;
          },
        };
        const batch = batchOf(spec, Number(width.vocab_size));
        try {
          await optimizerStep(ctx, [batch], 1e-5);
          const before = b.memoryCounters().liveBytes;
          b.resetPeak();
          await optimizerStep(ctx, [batch], 1e-5);
          const c = b.memoryCounters();
          return { peakBytes: c.peakBytes, peakDeviceBytes: c.peakDeviceBytes, savedBytes: afterForward - before };
        } finally {
          optimizer.dispose();
          objective.dispose();
          model.dispose();
        }
      }, { mirrors });
    const two = await m(2);
    const one = await m(1);
    push(`predicted for ${mirrors}`, two.peakBytes, (two.savedBytes - one.savedBytes) / tokens, `shape-only backend mirroring ${mirrors}, second of two steps`, mirrors === 'cuda' ? two.peakDeviceBytes : undefined);
  }
  details.backends = { model: `BERT, hidden ${width.hidden_size}, ${width.num_attention_heads} heads, intermediate ${width.intermediate_size}, vocab ${width.vocab_size}, 2 layers`, batch: `${spec.examples} pairs x ${spec.length} tokens, every token real`, tape: 'lean', results: out };
}

// ---- calibration ---------------------------------------------------------------------------------

if (sections.has('calibration')) {
  const dir = join(here, 'results');
  const file = readdirSync(dir).filter((f) => /^cuda-train-step-.*\.json$/.test(f)).sort().pop();
  if (file) {
    const recorded = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { commit: string; rows: Array<{ config: string; precision: string; peakDeviceMiB: number }> };
    log(`calibration: the step of bench/cuda-train-step.ts on meta against ${file} (commit ${recorded.commit.slice(0, 7)})`);
    const out: unknown[] = [];
    // peakInUse is the maximum over the whole device run: the configurations ran in this order.
    let running = 0;
    for (const cfg of [...new Set(recorded.rows.map((r) => r.config))]) {
      const [pairs, tokens] = cfg.split('x').map(Number);
      const m = await predictCudaTrainStepPeak(pairs, tokens);
      running = Math.max(running, m.peakDeviceBytes);
      const device = recorded.rows.find((r) => r.config === cfg)!.peakDeviceMiB;
      out.push({ config: cfg, predictedMiB: m.peakDeviceBytes / MiB, predictedRunningMaxMiB: running / MiB, staleInitialCopiesMiB: m.stale / MiB, withStaleCopiesMiB: (running + m.stale) / MiB, recordedMiB: device });
      log(`  ${cfg}: meta ${(running / MiB).toFixed(2)} MiB (running max) + initial copies of the updated parameters ${(m.stale / MiB).toFixed(2)} MiB = ${((running + m.stale) / MiB).toFixed(2)} MiB; device ${device.toFixed(2)} MiB`);
    }
    details.calibration = {
      recordedFile: `bench/results/${file}`,
      note: 'at that commit a variable kept the tensor it was created from, so every parameter that received an update held a second (stale) copy; lib/models/parameters.ts frees it now. The prediction adds those copies back (their device size classes) to compare with the device.',
      results: out,
    };
  }
}

// ---- BERT-base -----------------------------------------------------------------------------------

const BERT = KNOWN_CONFIGS['google-bert/bert-base-uncased'];
if (sections.has('bert')) {
  log('bert: BERT-base, one AdamW step on all parameters, [CLS], AnglE cosine objective on zigzag pairs, dropout 0.1');
  for (const [pairs, length] of [[32, 64], [128, 64], [8, 512]]) {
    const base: StepSpec = { config: BERT, examples: pairs, length, kind: 'pairs' };
    const variants: Array<Partial<StepSpec>> = [
      { gradients: 'tfjs' },
      { gradients: 'lean' },
      { gradients: 'lean', attention: 'blocked' },
      { gradients: 'lean', checkpointing: true },
      { gradients: 'lean', checkpointing: true, attention: 'blocked' },
    ];
    for (const v of variants) {
      const s = { ...base, ...v };
      const r = await oursRow(s, 12);
      rows.push({
        model: 'bert-base-uncased', batch: pairs, length, engine: 'ours', checkpointing: !!s.checkpointing, baseStorage: 'fp32',
        bytesPerTokenPerLayer: r.bytesPerTokenPerLayer, peakBytes: r.full.peakBytes, kind: 'pairs', sequences: rowsOf(s), layers: 12,
        gradients: s.gradients, attention: s.attention ?? 'plain', peakDeviceBytes: r.full.peakDeviceBytes, producedBy: 'predicted for cuda', wholeStepPeakBytes: r.full.peakBytes, measured: 'shape-only backend mirroring cuda, full model',
      });
      log(`  ${pairs}x${length} ${s.gradients}${s.checkpointing ? ' +ckpt' : ''}${s.attention === 'blocked' ? ' +blocked' : ''}: peak ${gb(r.full.peakBytes)} (device ${gb(r.full.peakDeviceBytes)}), ${(r.bytesPerTokenPerLayer / 1000).toFixed(1)} kB/token/layer`);
    }
    const t = runTorch(['--model', 'bert', '--sequences', String(2 * pairs), '--length', String(length), '--layers', '1,2']);
    if (t) {
      // PyTorch trains what gets a gradient (no pooler: [CLS] of the last layer), AdamW state only for those.
      const full = await measureOurs({ ...base, layers: 12 });
      const poolerParams = 768 * 768 + 768;
      const trained = full.parameters - poolerParams;
      const peak = torchPeak(t, 12, 2 * pairs, trained, 4 * poolerParams);
      rows.push({
        model: 'bert-base-uncased', batch: pairs, length, engine: 'torch', checkpointing: false, baseStorage: 'fp32',
        bytesPerTokenPerLayer: t.savedPerTokenPerLayer, peakBytes: peak, kind: 'pairs', sequences: 2 * pairs, layers: 12,
        producedBy: `projected from torch ${t.torch} eager on the CPU (saved tensors + state; backward transients not counted)`, wholeStepPeakBytes: peak,
        measured: `torch ${t.torch} on the CPU at 1 and 2 layers, this batch; saved tensors projected to 12 layers + 16 B per trained parameter`,
      });
      log(`  ${pairs}x${length} torch: peak ${gb(peak)}, ${(t.savedPerTokenPerLayer / 1000).toFixed(1)} kB/token/layer (peak RSS ${t.peakRssMiB.toFixed(0)} MiB)`);
    }
  }
}

// ---- LLaMA-2-7B width ----------------------------------------------------------------------------

const LLAMA7 = KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'];
const LORA = { r: 32, alpha: 32, dropout: 0.1 };
if (sections.has('llama')) {
  log('llama: LLaMA-2-7B width (32 layers), LoRA r 32 on all linear layers (dropout 0.1), last-token pooling');
  for (const [examples, length, kind] of [[160, 45, 'pairs'], [256, 64, 'triplets']] as const) {
    const base: StepSpec = { config: LLAMA7, examples, length, kind, lora: LORA };
    const storages: Array<[BaseStorage, boolean]> = [['fp32', false], ['fp16', false], ['nf4', false], ['nf4', true]];
    for (const [storage, dq] of storages) {
      for (const checkpointing of [false, true]) {
        const s: StepSpec = { ...base, baseStorage: storage, doubleQuant: dq, checkpointing };
        const r = await oursRow(s, 32);
        rows.push({
          model: 'llama-2-7b', batch: examples, length, engine: 'ours', checkpointing, baseStorage: dq ? 'nf4-dq' : storage,
          bytesPerTokenPerLayer: r.bytesPerTokenPerLayer, peakBytes: r.full.peakBytes, kind, sequences: rowsOf(s), layers: 32,
          gradients: 'lean', attention: 'plain', peakDeviceBytes: r.full.peakDeviceBytes, producedBy: 'predicted for cuda', wholeStepPeakBytes: r.full.peakBytes, measured: 'shape-only backend mirroring cuda, full model',
        });
        log(`  ${examples} ${kind} x ${length} base ${dq ? 'nf4-dq' : storage}${checkpointing ? ' +ckpt' : ''}: peak ${gb(r.full.peakBytes)} (device ${gb(r.full.peakDeviceBytes)}), ${(r.bytesPerTokenPerLayer / 1000).toFixed(1)} kB/token/layer`);
      }
    }
    const probe = 16;
    const t = runTorch(['--model', 'llama', '--sequences', String(probe), '--length', String(length), '--layers', '1,2', '--lora-r', '32', '--lora-alpha', '32', '--lora-dropout', '0.1']);
    if (t) {
      const full = await measureOurs({ ...base, layers: 32 });
      for (const [storage, bytesPerFrozen] of [['fp32', 4], ['fp16', 2], ['nf4', 0.5625]] as const) {
        const frozen = full.parameters - full.trained;
        const peak = torchPeak(t, 32, rowsOf(base), full.trained, bytesPerFrozen * frozen);
        rows.push({
          model: 'llama-2-7b', batch: examples, length, engine: 'torch', checkpointing: false, baseStorage: storage,
          bytesPerTokenPerLayer: t.savedPerTokenPerLayer, peakBytes: peak, kind, sequences: rowsOf(base), layers: 32,
          producedBy: `projected from torch ${t.torch} eager on the CPU (saved tensors + state; backward transients not counted)`, wholeStepPeakBytes: peak,
          measured: `torch ${t.torch} on the CPU at 1 and 2 layers, ${probe} rows of this length (fp32 compute); saved tensors projected to 32 layers and ${rowsOf(base)} rows + 16 B per LoRA parameter + ${bytesPerFrozen} B per frozen one`,
        });
        log(`  ${examples} ${kind} x ${length} torch base ${storage}: peak ${gb(peak)}, ${(t.savedPerTokenPerLayer / 1000).toFixed(1)} kB/token/layer`);
      }
    }
  }
}

// ---- the paper recipes ---------------------------------------------------------------------------

interface Recipe {
  name: string;
  model: Record<string, unknown>;
  modelName: string;
  examples: number;
  length: number;
  kind: Kind;
  lora?: StepSpec['lora'];
}

const RECIPES: Recipe[] = [
  { name: 'AnglE-BERT NLI / GitHub Issues (32 pairs x 512)', model: BERT, modelName: 'bert-base-uncased', examples: 32, length: 512, kind: 'pairs' },
  { name: 'SimCSE supervised (512 triplets x 32)', model: BERT, modelName: 'bert-base-uncased', examples: 512, length: 32, kind: 'triplets' },
  { name: 'AnglE-LLaMA (160 pairs x 45, LoRA r 32) on LLaMA-2-7B', model: LLAMA7, modelName: 'llama-2-7b', examples: 160, length: 45, kind: 'pairs', lora: LORA },
  { name: 'PromptEOL fine-tuning (256 triplets x 64, LoRA r 64) on LLaMA-2-7B', model: LLAMA7, modelName: 'llama-2-7b', examples: 256, length: 64, kind: 'triplets', lora: { r: 64, alpha: 16, dropout: 0.05 } },
  { name: 'PromptEOL fine-tuning (256 triplets x 64, LoRA r 64) on LLaMA-2-13B', model: KNOWN_CONFIGS['NousResearch/Llama-2-13b-hf'], modelName: 'llama-2-13b', examples: 256, length: 64, kind: 'triplets', lora: { r: 64, alpha: 16, dropout: 0.05 } },
];

const FIT = 72 * GB;
if (sections.has('recipes')) {
  log(`recipes: settings that fit one 80 GB GPU at <= ${FIT / GB} GB projected (device size classes), effective batch kept by accumulation`);
  const out: unknown[] = [];
  for (const rcp of RECIPES) {
    const decoder = rcp.lora !== undefined;
    // In order of preference: nothing changes the numbers, then the base storage, then accumulation
    // (which shrinks in-batch negatives to the micro-batch).
    const candidates: Array<Partial<StepSpec> & { accumulation: number }> = [];
    for (const accumulation of [1, 2, 4, 8, 16]) {
      for (const storage of decoder ? (['fp32', 'fp16', 'nf4'] as BaseStorage[]) : (['fp32'] as BaseStorage[])) {
        candidates.push({ accumulation, baseStorage: storage });
        candidates.push({ accumulation, baseStorage: storage, checkpointing: true });
        candidates.push({ accumulation, baseStorage: storage, checkpointing: true, attention: 'blocked' });
      }
    }
    const tried: unknown[] = [];
    let chosen: unknown;
    const asIs = await measureOurs({ config: rcp.model, examples: rcp.examples, length: rcp.length, kind: rcp.kind, lora: rcp.lora });
    for (const c of candidates) {
      if (rcp.examples % c.accumulation !== 0) continue;
      const micro = rcp.examples / c.accumulation;
      const m = await measureOurs({ config: rcp.model, examples: micro, length: rcp.length, kind: rcp.kind, lora: rcp.lora, baseStorage: c.baseStorage, checkpointing: c.checkpointing, attention: c.attention });
      const entry = { accumulation: c.accumulation, microBatch: micro, baseStorage: c.baseStorage, checkpointing: !!c.checkpointing, attention: c.attention ?? 'plain', peakBytes: m.peakBytes, peakDeviceBytes: m.peakDeviceBytes };
      tried.push(entry);
      if (m.peakDeviceBytes <= FIT) {
        chosen = entry;
        break;
      }
    }
    out.push({ recipe: rcp.name, model: rcp.modelName, examples: rcp.examples, length: rcp.length, asIs: { peakBytes: asIs.peakBytes, peakDeviceBytes: asIs.peakDeviceBytes }, chosen, tried });
    const c = chosen as { accumulation: number; microBatch: number; baseStorage: string; checkpointing: boolean; attention: string; peakDeviceBytes: number } | undefined;
    log(`  ${rcp.name}: as is ${gb(asIs.peakDeviceBytes)}; ${c ? `fits with accumulation ${c.accumulation} (micro-batch ${c.microBatch}), base ${c.baseStorage}, checkpointing ${c.checkpointing}, attention ${c.attention}: ${gb(c.peakDeviceBytes)}` : 'NO SETTING FITS'}`);
  }
  details.recipes = { limitBytes: FIT, measured: 'shape-only backend mirroring cuda, full model, the recipe micro-batch with every token real (the longest batch)', results: out };
}

// ---- time ----------------------------------------------------------------------------------------

if (sections.has('time')) {
  log('time: real steps on the cpu backend (BERT 2 layers, hidden 128, 4 heads, intermediate 512; 4 pairs x 128): the cost of checkpointing and blocked attention');
  const small = { ...BERT, hidden_size: 128, num_attention_heads: 4, intermediate_size: 512, num_hidden_layers: 2, vocab_size: 8000 };
  const spec: StepSpec = { config: small, examples: 4, length: 128, kind: 'pairs' };
  const out: Array<Record<string, unknown>> = [];
  for (const v of [{}, { checkpointing: true }, { attention: 'blocked' as const }, { checkpointing: true, attention: 'blocked' as const }]) {
    const model = modelFromConfig(small, { init: 'normal', seed: 1, dropoutSeed: 3 }) as BertModel;
    const trainable = model.trainableParameters();
    const optimizer = new AdamW(trainable);
    const objective = bindObjective(objectiveOf('pairs'), 'pairs');
    const ctx: StepContext = { model, trainable, pooling: 'cls', padSide: 'right', objective: objective.loss, optimizer, ...v };
    const batch = batchOf(spec, 8000);
    await optimizerStep(ctx, [batch], 1e-4);
    const times: number[] = [];
    let peak = 0;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const m = await trackTensorMemory(() => optimizerStep(ctx, [batch], 1e-4));
      times.push((performance.now() - t0) / 1000);
      peak = Math.max(peak, m.memory.peakBufferBytes);
    }
    optimizer.dispose();
    objective.dispose();
    model.dispose();
    const seconds = Math.min(...times);
    out.push({ ...v, secondsPerStep: seconds, stepPeakBufferBytesAboveState: peak });
    log(`  ${JSON.stringify(v)}: ${seconds.toFixed(2)} s/step (fastest of 3), step peak above the state ${(peak / MiB).toFixed(1)} MiB`);
  }
  const base = out[0].secondsPerStep as number;
  for (const o of out) o.timeRatio = (o.secondsPerStep as number) / base;
  details.time = { backend: 'cpu', model: 'BERT 2 layers, hidden 128, 4 heads, intermediate 512, vocab 8000', batch: '4 pairs x 128 tokens', method: 'the fastest of 3 steps after one warm-up step, variants in turn in one process', results: out };
}

// ---- compute -------------------------------------------------------------------------------------

if (sections.has('compute')) {
  log('compute: kernels dispatched and matmul FLOP of one BERT-base step (shape-only, cuda mirror): the compute cost of checkpointing and blocked attention, independent of machine load');
  const out: unknown[] = [];
  for (const [pairs, length] of [[32, 64], [8, 512]]) {
    let base = 0;
    for (const v of [{}, { checkpointing: true }, { attention: 'blocked' as const }, { checkpointing: true, attention: 'blocked' as const }]) {
      const c = await withShapeOnlyBackend(async () => {
        const model = modelFromConfig(BERT, { dropoutSeed: 7 });
        const trainable = model.trainableParameters();
        const optimizer = new AdamW(trainable);
        const objective = bindObjective(objectiveOf('pairs'), 'pairs');
        const ctx: StepContext = { model, trainable, pooling: 'cls', padSide: 'right', objective: objective.loss, optimizer, ...v };
        const batch = batchOf({ config: BERT, examples: pairs, length, kind: 'pairs' }, 30522);
        await optimizerStep(ctx, [batch], 1e-5);
        const engine = tf.engine() as unknown as { runKernel: (n: string, inputs: Record<string, tf.TensorInfo>, attrs: Record<string, unknown>) => unknown };
        const original = engine.runKernel;
        let kernels = 0;
        let flop = 0;
        engine.runKernel = function (n, inputs, attrs) {
          kernels++;
          if (n === tf.BatchMatMul) {
            const a = inputs.a.shape;
            const b = inputs.b.shape;
            const M = attrs.transposeA ? a[a.length - 1] : a[a.length - 2];
            const K = attrs.transposeA ? a[a.length - 2] : a[a.length - 1];
            const N = attrs.transposeB ? b[b.length - 2] : b[b.length - 1];
            const batches = Math.max(a.slice(0, -2).reduce((x, y) => x * y, 1), b.slice(0, -2).reduce((x, y) => x * y, 1));
            flop += 2 * batches * M * K * N;
          }
          return original.call(this, n, inputs, attrs);
        };
        try {
          await optimizerStep(ctx, [batch], 1e-5);
        } finally {
          engine.runKernel = original;
          optimizer.dispose();
          objective.dispose();
          model.dispose();
        }
        return { kernels, flop };
      });
      if (!base) base = c.flop;
      out.push({ pairs, length, ...v, kernelsPerStep: c.kernels, matmulFlop: c.flop, matmulFlopRatio: c.flop / base });
      log(`  ${pairs}x${length} ${JSON.stringify(v)}: ${c.kernels} kernels, ${(c.flop / 1e12).toFixed(3)} TFLOP in matmuls (${(c.flop / base).toFixed(3)}x)`);
    }
  }
  details.compute = { model: 'BERT-base', results: out };
}

// ---- record --------------------------------------------------------------------------------------

let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
} catch {
  /* not a git checkout */
}
const when = new Date().toISOString();
const record = {
  benchmark: 'train-memory',
  when,
  commit,
  machine: { host: hostname(), cpu: cpus()[0]?.model, cores: cpus().length, arch: arch(), node: process.version, tfjsCore: tf.version_core },
  method: 'see the header of bench/train-memory.ts: ours on the shape-only backend mirroring cuda (second step of the trainer\'s optimizerStep) unless a row\'s producedBy says "measured on cpu/wasm" (a real step there), PyTorch from bench/torch_train_memory.py (saved tensors at 1 and 2 layers, projected)',
  provenance: collectProvenance(),
  rows,
  ...details,
};
const file = opts.out ?? join(opts['results-dir'] ?? join(here, 'results'), `train-memory-${when.replace(/[:.]/g, '-')}.json`);
if (!existsSync(dirname(file))) throw new Error(`results directory ${dirname(file)} does not exist`);
await writeFileAtomic(file, JSON.stringify(record, null, 2) + '\n');
log(`wrote ${file.startsWith(root) ? file.slice(root.length + 1) : file}`);
