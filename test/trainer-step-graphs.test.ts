/**
 * The trainer's `stepGraphs` switch (lib/train/trainer.ts over lib/train/step-graphs.ts), through the
 * cuda backend's TypeScript layer over the emulated addon (records a capture, runs it at each
 * launch): an AnglE run (cosine + in-batch negatives + angle, dropout on, shuffled batches whose
 * labels change) with step graphs logs the losses and terms of the same run without them bit for
 * bit and ends with the same weights, its steps eager, eager, captured, replayed; on the cpu
 * backend the switch changes no number and the run says once why every step runs eagerly.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { registerCudaBackendWith } from '../lib/backend/cuda/index.js';
import { loadModel } from '../lib/models/auto.js';
import { Trainer, type TrainerConfig, type TrainResult } from '../lib/train/trainer.js';
import { createEmulatedAddon } from './fixtures/cuda/emulated-addon.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

const MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
const skip = MODEL_DIR && existsSync(MODEL_DIR) ? false : 'ANGLE_GOLDEN_DIR is not set to a golden set with model/ (e.g. ../shared/golden/bert-tiny-seed1234)';
const BACKEND = 'cuda-emulated-trainer-graphs';

/** Every text is cut to 8 tokens, so every batch is 8 rows x 8 tokens: one shape, one graph. */
const CONFIG: TrainerConfig = {
  ...SMALL_TRAIN_CONFIG,
  objective: { name: 'angle', loss: { preset: 'paper', ibnPositives: { threshold: 3 } } },
  maxLength: 8,
  epochs: undefined,
  maxSteps: 4,
};

async function train(config: TrainerConfig): Promise<{ r: TrainResult; weights: Map<string, Float32Array> }> {
  const m = await loadModel(MODEL_DIR!);
  try {
    const r = await new Trainer({ model: m, train: smallPairs(), progress: false, config }).run();
    const weights = new Map<string, Float32Array>();
    for (const [k, v] of m.model.params) weights.set(k, (await v.data()) as Float32Array);
    return { r, weights };
  } finally {
    m.model.dispose();
  }
}

function assertSameRun(a: Awaited<ReturnType<typeof train>>, b: Awaited<ReturnType<typeof train>>): void {
  assert.deepEqual(a.r.log.map((l) => [l.loss, l.terms]), b.r.log.map((l) => [l.loss, l.terms]));
  for (const [k, v] of b.weights) assert.deepEqual(a.weights.get(k), v, `parameter ${k}`);
}

describe('Trainer stepGraphs', { skip }, () => {
  before(async () => {
    await initBackend('cpu', { quiet: true });
  });
  after(async () => {
    await initBackend('cpu', { quiet: true });
  });

  test('on cuda (emulated addon): an AnglE run with step graphs equals the eager run bit for bit, its steps captured and replayed', async () => {
    const addon = createEmulatedAddon({ poison: true });
    registerCudaBackendWith(BACKEND, addon, addon.init(), 'fp32', 0);
    await tf.setBackend(BACKEND);
    try {
      const graphs = await train({ ...CONFIG, stepGraphs: true });
      const eager = await train(CONFIG);
      assert.deepEqual(graphs.r.stepGraphs, { eager: 2, captured: 1, replayed: 1, refused: {}, kernels: graphs.r.stepGraphs!.kernels }, JSON.stringify(graphs.r.stepGraphs));
      assert.deepEqual(Object.keys(graphs.r.stepGraphs!.kernels), ['8x8']);
      assert.equal(eager.r.stepGraphs, undefined);
      assertSameRun(graphs, eager);
      assert.ok(new Set(eager.r.log.map((l) => l.terms.ibn)).size > 1, 'the batches differ (labels included)');
      assert.equal(addon.graphLaunches, 2, 'the captured step and the replay launched a graph each');
      assert.ok(graphs.r.stepGraphs!.kernels['8x8'] > 100, `${graphs.r.stepGraphs!.kernels['8x8']} kernels in the graph`);
    } finally {
      await tf.setBackend('cpu');
    }
  });

  test('on cpu: the same numbers, every step eager, and the reason said once', async () => {
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...a: unknown[]) => void warnings.push(a.join(' '));
    let graphs;
    try {
      graphs = await train({ ...CONFIG, maxSteps: 2, stepGraphs: { bucketLengths: [8] } });
    } finally {
      console.warn = warn;
    }
    const eager = await train({ ...CONFIG, maxSteps: 2 });
    assertSameRun(graphs, eager);
    assert.deepEqual(warnings, ['step graphs: every step runs eagerly: the cpu backend cannot record steps (cuda can)']);
    assert.equal(graphs.r.stepGraphs?.eager, 2);
    assert.throws(() => new Trainer({ model: { model: {} as never, tokenizer: {} as never }, train: smallPairs(), config: { ...CONFIG, stepGraphs: { warmup: 1 } } }), /warmup must be an integer >= 2/);
  });
});
