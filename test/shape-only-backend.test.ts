/**
 * The shape-only backend (lib/backend/shape-only) against real backends on small shapes:
 *
 * - 'meta-cpu' against the cpu backend: one training step of the trainer (a tiny BERT; a tiny
 *   LLaMA with LoRA) gives the same peak bytes, buffer for buffer (distinct buffers held by
 *   tensors) and tensor for tensor (tfjs's numBytes), with tfjs's tape, the lean one and
 *   checkpointing;
 * - 'meta' against the cuda backend's TypeScript layer over the emulated addon (the kernels, fused
 *   ops and allocator of the device): the same engine peaks, and its modelled allocator peak equals
 *   the emulator's peakInUse;
 * - deviceSizeClass equals the emulated allocator's size classes;
 * - a LLaMA-2-13B in fp32 (52 GB) is built on this 24 GiB machine without its weights, and its
 *   buffers add up to 4 bytes a parameter.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { registerCudaBackendWith } from '../lib/backend/cuda/index.js';
import { trackTensorMemory } from '../lib/backend/memory-tracking.js';
import { deviceSizeClass, isShapeOnlyBackend, measurePeakBytes, shapeOnlyBackend, withShapeOnlyBackend } from '../lib/backend/shape-only/index.js';
import { addLora } from '../lib/models/adapters/lora.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import { optimizerStep } from '../lib/train/training-step.js';
import { pairBatch, pairStepContext } from '../bench/pair-step.js';
import { createEmulatedAddon, sizeClass } from './fixtures/cuda/emulated-addon.js';

const TINY_BERT = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: 32, num_attention_heads: 4, intermediate_size: 64, num_hidden_layers: 2, vocab_size: 500 };
const TINY_LLAMA = { ...KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'], hidden_size: 32, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 48, num_hidden_layers: 2, vocab_size: 300, max_position_embeddings: 64 };

interface StepOptions {
  arch: 'bert' | 'llama';
  gradients: 'lean' | 'tfjs';
  checkpointing?: boolean;
  /** Micro-batches accumulated into the step (default 1). */
  micro?: number;
}

/** One trainer step of a fresh tiny model, everything disposed after; returns the loss. */
async function trainStep(o: StepOptions): Promise<number> {
  const model = modelFromConfig(o.arch === 'bert' ? TINY_BERT : TINY_LLAMA, { init: 'normal', seed: 1, dropoutSeed: 3 });
  if (o.arch === 'llama') addLora(model as LlamaModel, { r: 4, alpha: 8, dropout: 0.1, targetModules: 'all-linear' }, 2);
  const step = pairStepContext(model, { pooling: o.arch === 'bert' ? 'cls' : 'last', gradients: o.gradients, checkpointing: o.checkpointing });
  try {
    return (await optimizerStep(step.ctx, Array.from({ length: o.micro ?? 1 }, () => pairBatch(4, 12, { vocab: o.arch === 'bert' ? 500 : 300, padEvery: 3 })), 1e-3)).loss;
  } finally {
    step.dispose();
    model.dispose();
  }
}

before(async () => {
  await initBackend('cpu', { quiet: true });
});

after(async () => {
  await initBackend('cpu', { quiet: true });
});

test('gradient accumulation keeps the running sums only: 8 micro-batches peak where 2 do (a tidy around the whole step kept every micro-batch\'s gradients)', async () => {
  for (const arch of ['bert', 'llama'] as const) {
    const two = await trackTensorMemory(() => trainStep({ arch, gradients: 'lean', micro: 2 }));
    const eight = await trackTensorMemory(() => trainStep({ arch, gradients: 'lean', micro: 8 }));
    // Each micro-batch's loss scalar is kept for the step's mean (4 bytes each); nothing else grows.
    assert.ok(eight.memory.peakBufferBytes <= two.memory.peakBufferBytes + 6 * 4, `${arch}: peak buffer bytes of 8 micro-batches ${eight.memory.peakBufferBytes} vs 2: ${two.memory.peakBufferBytes}`);
    assert.equal(eight.memory.endBufferBytes, 0, `${arch}: the step leaves nothing behind`);
    assert.ok(Number.isFinite(eight.result));
  }
});

const CASES: StepOptions[] = [
  { arch: 'bert', gradients: 'tfjs' },
  { arch: 'bert', gradients: 'lean' },
  { arch: 'bert', gradients: 'lean', checkpointing: true },
  { arch: 'llama', gradients: 'tfjs' },
  { arch: 'llama', gradients: 'lean' },
  { arch: 'llama', gradients: 'lean', checkpointing: true },
];

test('meta-cpu gives the peak bytes of a real training step on cpu (tiny BERT and LoRA LLaMA; tfjs tape, lean tape, checkpointing)', async (t) => {
  for (const c of CASES) {
    const cpu = await trackTensorMemory(() => trainStep(c));
    const meta = await withShapeOnlyBackend(() => trackTensorMemory(() => trainStep(c)), { mirrors: 'cpu' });
    const what = `${c.arch} ${c.gradients}${c.checkpointing ? ' +checkpointing' : ''}`;
    t.diagnostic(`${what}: peak buffers ${cpu.memory.peakBufferBytes} B, tensors ${cpu.memory.peakTensorBytes} B`);
    assert.ok(cpu.memory.peakBufferBytes > 0);
    assert.equal(meta.memory.peakBufferBytes, cpu.memory.peakBufferBytes, `${what}: peak buffer bytes`);
    assert.equal(meta.memory.peakTensorBytes, cpu.memory.peakTensorBytes, `${what}: peak tensor bytes`);
    assert.equal(meta.memory.buffersCreated, cpu.memory.buffersCreated, `${what}: buffers created`);
    assert.equal(cpu.memory.endBufferBytes, 0, `${what}: the step leaves nothing behind`);
    assert.equal(meta.memory.endBufferBytes, 0);
  }
  assert.equal(tf.getBackend(), 'cpu', 'withShapeOnlyBackend switched back');
});

test("meta gives the peaks of the cuda backend's kernels and allocator (emulated addon)", async (t) => {
  for (const [i, c] of CASES.entries()) {
    // A fresh device per case: its peakInUse is this step's.
    const addon = createEmulatedAddon({ poison: false });
    const name = `cuda-emulated-${i}`;
    registerCudaBackendWith(name, addon, addon.init(), 'fp32', 0);
    await tf.setBackend(name);
    let device;
    try {
      device = await trackTensorMemory(() => trainStep(c));
    } finally {
      await tf.setBackend('cpu');
    }
    const meta = await measurePeakBytes(() => trainStep(c));
    const what = `${c.arch} ${c.gradients}${c.checkpointing ? ' +checkpointing' : ''}`;
    t.diagnostic(`${what}: emulated device peak in use ${addon.memoryStats().peakInUse} B, meta ${meta.peakDeviceBytes} B`);
    assert.equal(meta.peakBufferBytes, device.memory.peakBufferBytes, `${what}: peak buffer bytes`);
    assert.equal(meta.peakTensorBytes, device.memory.peakTensorBytes, `${what}: peak tensor bytes`);
    assert.equal(meta.peakDeviceBytes, addon.memoryStats().peakInUse, `${what}: allocator peak`);
    assert.equal(addon.memoryStats().inUse, 0, `${what}: the step leaves nothing on the device`);
  }
});

test('deviceSizeClass is the cuda allocator size class', () => {
  const sizes = [0, 1, 4, 255, 256, 257, 300, 511, 512, 513, 1000, 1024, 1025, 4095, 4096, 4097, 65537, 123456, 2 ** 20 + 1, 3 * 2 ** 24 - 7, 2 ** 31 + 5, 7 * 2 ** 33 + 3];
  for (const n of sizes) assert.equal(deviceSizeClass(n), sizeClass(n), `size ${n}`);
  for (let n = 1; n < 70000; n += 97) assert.equal(deviceSizeClass(n), sizeClass(n), `size ${n}`);
});

test('LLaMA-2-13B in fp32 is built without its weights: 4 bytes a parameter, counted, not allocated', async () => {
  const rssBefore = process.memoryUsage().rss;
  const m = await measurePeakBytes(() => {
    const model = modelFromConfig(KNOWN_CONFIGS['NousResearch/Llama-2-13b-hf']);
    const n = model.numParameters();
    const live = shapeOnlyBackend().memoryCounters().liveBytes;
    model.dispose();
    return { n, live };
  });
  // 13B: embedding and head 2 · 32000 · 5120, 40 layers of 4 · 5120² + 3 · 5120 · 13824 + 2 · 5120, final norm.
  const expected = 2 * 32000 * 5120 + 40 * (4 * 5120 * 5120 + 3 * 5120 * 13824 + 2 * 5120) + 5120;
  assert.equal(m.result.n, expected);
  assert.equal(m.result.live, 4 * expected);
  assert.equal(m.peakBytes, 4 * expected);
  assert.equal(m.endBytes, 0);
  // The host held one parameter's worth of zeros at most (the largest: 32000 × 5120 floats, 655 MB).
  assert.ok(process.memoryUsage().rss - rssBefore < 2 * 2 ** 30, `host memory grew by ${(process.memoryUsage().rss - rssBefore) / 2 ** 30} GiB`);
});

test('values read from the shape-only backend are ones, and the reads are counted', async () => {
  const r = await withShapeOnlyBackend(() => {
    assert.ok(isShapeOnlyBackend());
    const backend = shapeOnlyBackend();
    const reads = backend.memoryCounters().reads;
    const x = tf.tensor2d([[3, -2], [5, 7]]);
    const y = tf.matMul(x, x);
    const v = Array.from(y.dataSync());
    tf.dispose([x, y]);
    return { v, reads: backend.memoryCounters().reads - reads, shape: y.shape };
  });
  assert.deepEqual(r.v, [1, 1, 1, 1]);
  assert.deepEqual(r.shape, [2, 2]);
  assert.equal(r.reads, 1);
  assert.equal(isShapeOnlyBackend(), false);
});
