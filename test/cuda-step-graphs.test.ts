/**
 * On the GPU (npm run gpu-check runs every test/cuda-*.test.ts there; here they skip with the
 * loader's reason): what issue 39 built without a device, checked on one —
 *   - multi-tensor AdamW (native/src/fused.cu adamWMulti) against one AdamW launch per parameter;
 *   - a training step recorded as a CUDA graph and replayed (native/src/graph.cu,
 *     lib/train/step-graphs.ts) against eager steps: the same losses, the graph's memory given back;
 *   - BERT with fused attention (native/src/attention.cu) against plain attention, dropout on;
 *   - the trainer with `stepGraphs` (lib/train/trainer.ts) on an AnglE run whose batches and labels
 *     change every step: the eager run's losses, its steps captured and replayed;
 *   - the time of an eager and a replayed BERT-base step at 32 × 64 (printed, not asserted: the
 *     report's GPU tests log keeps it).
 * The emulated-addon twins of these run everywhere: test/step-graphs.test.ts, test/attention-fused-model.test.ts,
 * test/trainer-step-graphs.test.ts.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import type { AttentionKind } from '../lib/models/types.js';
import { fusedAdamWMultiUpdate, fusedAdamWUpdate } from '../lib/ops/adamw-step.js';
import { StepGraphs } from '../lib/train/step-graphs.js';
import { optimizerStep } from '../lib/train/training-step.js';
import { pairBatch, pairStepContext } from '../bench/pair-step.js';
import { compare, cudaOrSkip, type Outputs } from './fixtures/cuda/harness.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../lib/models/auto.js';
import { Trainer, type TrainerConfig } from '../lib/train/trainer.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

/** Tensors' values, or numbers as scalars, in the form `compare` takes. */
function outputs(xs: ReadonlyArray<tf.Tensor | number>): Outputs {
  return xs.map((x) => (typeof x === 'number' ? { values: Float32Array.of(x), shape: [], dtype: 'float32' } : { values: x.dataSync() as Float32Array, shape: x.shape.slice(), dtype: x.dtype }));
}

after(async () => {
  await initBackend('cpu', { quiet: true });
});

const TINY_BERT = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: 64, num_attention_heads: 4, intermediate_size: 128, num_hidden_layers: 2, vocab_size: 500 };

async function onCuda<T>(f: () => Promise<T>): Promise<T> {
  await initBackend('cuda', { quiet: true });
  const { setCudaMatmulPrecision } = await import('../lib/backend/cuda/index.js');
  setCudaMatmulPrecision('fp32');
  try {
    return await f();
  } finally {
    await initBackend('cpu', { quiet: true });
  }
}

test('multi-tensor AdamW equals one AdamW launch per parameter on the device', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  await onCuda(async () => {
    const shapes = Array.from({ length: 70 }, (_, i) => (i % 3 === 0 ? [i + 1, 3] : [2 * i + 1]));
    const r = (s: number[], seed: number, scale = 1) => tf.mul(tf.randomUniform(s, -1, 1, 'float32', seed), scale);
    const entries = shapes.map((s, i) => ({ param: tf.variable(r(s, i)), grad: r(s, 100 + i), m: tf.variable(r(s, 200 + i, 0.1)), v: tf.variable(tf.abs(r(s, 300 + i, 0.01))) }));
    const single = entries.map((e, i) => fusedAdamWUpdate({ param: e.param, grad: e.grad, m: e.m, v: e.v, lr: 2e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: i % 2 ? 0.01 : 0, step: 1 + (i % 4) }));
    const hyper = new Float32Array(entries.flatMap((_, i) => [2e-3, i % 2 ? 0.01 : 0, 1 - 0.9 ** (1 + (i % 4)), 1 - 0.999 ** (1 + (i % 4))]));
    fusedAdamWMultiUpdate(entries, hyper, 0.9, 0.999, 1e-8);
    const err = compare(outputs(entries.flatMap((e) => [e.param, e.m, e.v])), outputs(single.flatMap((o) => [o.param, o.m, o.v])), 1e-7, 1e-6);
    assert.equal(err, undefined, err);
    tf.dispose([...entries.flatMap((e) => [e.param, e.grad, e.m, e.v]), ...single.flatMap((o) => [o.param, o.m, o.v])]);
  });
});

test('a replayed CUDA graph of a training step gives the eager losses, and its memory comes back', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  await onCuda(async () => {
    const { cudaMemoryStats } = await import('../lib/backend/cuda/index.js');
    const run = async (graphs?: StepGraphs) => {
      const model = modelFromConfig(TINY_BERT, { init: 'normal', seed: 1, dropoutSeed: 3 });
      const step = pairStepContext(model);
      const out: Array<{ loss: number; mode: string }> = [];
      for (let i = 0; i < 5; i++) {
        const b = pairBatch(4, 16, { vocab: 500, padEvery: 3, variant: 2 * i });
        const lr = 1e-3 * (1 - i / 10);
        out.push(graphs ? await graphs.step(step.ctx, [b], lr) : { ...(await optimizerStep(step.ctx, [b], lr)), mode: 'eager' });
      }
      graphs?.dispose();
      step.dispose();
      model.dispose();
      return out;
    };
    const eager = await run();
    const graphs = new StepGraphs();
    const replayed = await run(graphs);
    assert.deepEqual(replayed.map((r) => r.mode), ['eager', 'eager', 'captured', 'replayed', 'replayed'], JSON.stringify(graphs.stats().refused));
    // The graph runs the eager kernels but the loss checks' read-backs; atomics (embedding gradients) may sum in another order.
    const err = compare(outputs(replayed.map((r) => r.loss)), outputs(eager.map((r) => r.loss)), 1e-5, 1e-4);
    assert.equal(err, undefined, err);
    const s = cudaMemoryStats();
    assert.equal(s.graphs, 0);
    assert.equal(s.graphReserved, 0);
  });
});

test('BERT with fused attention equals plain attention on the device (dropout on)', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  await onCuda(async () => {
    const lossWith = async (attention: AttentionKind) => {
      const model = modelFromConfig(TINY_BERT, { init: 'normal', seed: 5, dropoutSeed: 9 });
      const step = pairStepContext(model, { attention });
      const losses = [];
      for (let i = 0; i < 2; i++) losses.push((await optimizerStep(step.ctx, [pairBatch(3, 20, { vocab: 500, padEvery: 2, variant: i })], 1e-3)).loss);
      step.dispose();
      model.dispose();
      return losses;
    };
    const err = compare(outputs(await lossWith('fused')), outputs(await lossWith('plain')), 1e-5, 1e-4);
    assert.equal(err, undefined, err);
  });
});

test('time of a BERT-base step at 32 x 64, eager and replayed as a CUDA graph (TF32; printed)', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  await initBackend('cuda', { quiet: true });
  const { cudaSynchronize, setCudaMatmulPrecision } = await import('../lib/backend/cuda/index.js');
  setCudaMatmulPrecision('tf32');
  try {
    const model = modelFromConfig(KNOWN_CONFIGS['google-bert/bert-base-uncased'], { init: 'normal', seed: 1, dropoutSeed: 7 });
    const step = pairStepContext(model);
    const graphs = new StepGraphs();
    const batch = pairBatch(32, 64);
    const time = async (f: () => Promise<unknown>, n: number) => {
      await f();
      cudaSynchronize();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await f();
      cudaSynchronize();
      return (performance.now() - t0) / n;
    };
    const eagerMs = await time(() => optimizerStep(step.ctx, [batch], 1e-4), 5);
    for (let i = 0; i < 3; i++) await graphs.step(step.ctx, [batch], 1e-4);
    const replayMs = await time(() => graphs.step(step.ctx, [batch], 1e-4), 10);
    const stats = graphs.stats();
    tt.diagnostic(`bert-base 32x64 TF32: eager ${eagerMs.toFixed(1)} ms/step, replayed graph ${replayMs.toFixed(1)} ms/step (${(eagerMs / replayMs).toFixed(2)}x; ${JSON.stringify(stats.kernels)} kernels; refused ${JSON.stringify(stats.refused)})`);
    assert.ok(stats.replayed >= 10, JSON.stringify(stats));
    graphs.dispose();
    step.dispose();
    model.dispose();
  } finally {
    await initBackend('cpu', { quiet: true });
  }
});

test('the trainer with stepGraphs on the device: an AnglE run with changing labels replays with the eager losses', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  const modelDir = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
  if (!modelDir || !existsSync(modelDir)) return tt.skip('no golden model (ANGLE_GOLDEN_DIR)');
  await onCuda(async () => {
    // Every text cut to 8 tokens: one shape. Cosine + in-batch negatives (label >= 3) + angle.
    const config: TrainerConfig = { ...SMALL_TRAIN_CONFIG, objective: { name: 'angle', loss: { preset: 'paper', ibnPositives: { threshold: 3 } } }, maxLength: 8, epochs: undefined, maxSteps: 6 };
    const run = async (stepGraphs: boolean) => {
      const m = await loadModel(modelDir);
      try {
        return await new Trainer({ model: m, train: smallPairs(), progress: false, config: { ...config, stepGraphs } }).run();
      } finally {
        m.model.dispose();
      }
    };
    const eager = await run(false);
    const graphs = await run(true);
    const st = graphs.stepGraphs!;
    assert.deepEqual([st.eager, st.captured, st.replayed], [2, 1, 3], JSON.stringify(st));
    tt.diagnostic(`trainer step graphs: ${JSON.stringify(st)}`);
    const err = compare(outputs(graphs.log.map((l) => l.loss)), outputs(eager.log.map((l) => l.loss)), 1e-5, 1e-4);
    assert.equal(err, undefined, err);
  });
});
