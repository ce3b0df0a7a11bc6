/**
 * The model code on the cuda backend's TypeScript layer, without a GPU: the emulated addon
 * (test/fixtures/cuda/emulated-addon.ts) is registered under the name 'cuda' in this test's own
 * process, so every `tf.getBackend() === 'cuda'` path of lib/ (matMul's transposeB for BERT's
 * weights and keys) runs as it does on the device. Checks golden forward parity and replays a
 * golden training run step for step. Needs ANGLE_GOLDEN_DIR (and ANGLE_DATA_DIR for the replay).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { registerCudaBackendWith } from '../lib/backend/cuda/index.js';
import { checkForwardGolden } from '../lib/parity/forward.js';
import { readGoldenTrainRuns, replayGoldenTrainRun } from '../lib/parity/train.js';
import { createEmulatedAddon } from './fixtures/cuda/emulated-addon.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

const addon = createEmulatedAddon();

before(async () => {
  await initBackend('cpu', { quiet: true });
  // Exact fp32 matmuls, as the GPU parity run uses; priority 0: never picked as a default.
  registerCudaBackendWith('cuda', addon, addon.init(), 'fp32', 0);
});

after(async () => {
  await initBackend('cpu', { quiet: true });
});

test('golden forward parity through the cuda kernels (emulated addon)', async (tt) => {
  if (!GOLDEN_DIR) {
    tt.skip('ANGLE_GOLDEN_DIR is not set (a golden set dir such as golden/bert-tiny-seed1234)');
    return;
  }
  await tf.setBackend('cuda');
  try {
    const checks = await checkForwardGolden(GOLDEN_DIR);
    assert.ok(checks.length > 0);
    assert.deepEqual(checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`), []);
  } finally {
    await tf.setBackend('cpu');
  }
});

test('a golden training run replays step for step through the cuda kernels (emulated addon)', async (tt) => {
  if (!GOLDEN_DIR || !DATA_DIR) {
    tt.skip('needs ANGLE_GOLDEN_DIR (a golden set with train.json) and ANGLE_DATA_DIR (STS-B files)');
    return;
  }
  const runs = readGoldenTrainRuns(GOLDEN_DIR);
  const name = [...runs.keys()].find((k) => k.startsWith('stsb')) ?? [...runs.keys()][0];
  await tf.setBackend('cuda');
  const live = addon.memoryStats().liveBlocks;
  try {
    const r = await replayGoldenTrainRun(GOLDEN_DIR, DATA_DIR, name, runs.get(name)!);
    tt.diagnostic(`${name}: ${r.steps} steps in ${r.seconds.toFixed(1)} s; worst loss rel diff ${r.worst.loss.toExponential(2)}; dev Spearman ${r.devSpearman.toFixed(5)} (ref ${r.devReference.toFixed(5)})`);
    assert.deepEqual(r.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`), []);
  } finally {
    await tf.setBackend('cpu');
  }
  const after = addon.memoryStats().liveBlocks;
  tt.diagnostic(`device blocks before ${live}, after ${after}`);
  assert.equal(after, live, 'device blocks left behind by the training run');
});
