/**
 * The cuda backend in training: gradients of composite functions against the cpu backend, golden
 * forward parity with exact fp32 matmuls, device memory flat over 1000 training steps, and an
 * out-of-memory request turned into a clear error. Skips with the reason off-GPU.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { join } from 'node:path';
import { initBackend, tf } from '../lib/backend/index.js';
import { pool } from '../lib/embed/pooling.js';
import { angleTotalLoss, cosineLoss, inBatchNegativesLoss } from '../lib/losses/index.js';
import { BertModel } from '../lib/models/bert/model.js';
import { AdamW, gradientsByParameterName } from '../lib/train/adamw.js';
import { loadModel } from '../lib/models/auto.js';
import { checkForwardGolden } from '../lib/parity/forward.js';
import { compare, cudaOrSkip, randInt, randn, runOn } from './fixtures/cuda/harness.js';
import { GOLDEN_DIR } from './helpers/env.js';

after(async () => {
  await initBackend('cpu', { quiet: true });
});

async function cuda() {
  return import('../lib/backend/cuda/index.js');
}

const t = (shape: number[], seed: number, scale = 1) => tf.tensor(randn(shape.reduce((a, b) => a * b, 1), seed, scale), shape);

const gradCases: Array<[string, () => tf.Tensor[]]> = [
  ['layernorm (composite ops) grads', () => tf.grads((x: tf.Tensor, g: tf.Tensor) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return tf.sum(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-12))), g));
  })([t([16, 32], 1), t([32], 2)])],
  ['softmax cross-entropy grads', () => [tf.grad((x: tf.Tensor) => tf.neg(tf.sum(tf.mul(tf.logSoftmax(x), tf.oneHot(tf.tensor1d([1, 0, 3, 2], 'int32'), 5)))))(t([4, 5], 3, 2))]],
  ['attention grads (q, k, v with mask)', () => tf.grads((q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) => {
    const mask = tf.reshape(tf.mul(tf.sub(1, tf.tensor2d([[1, 1, 1, 0], [1, 1, 0, 0]])), -1e9), [2, 1, 1, 4]);
    const s = tf.add(tf.mul(tf.matMul(q, k, false, true), 0.25), mask);
    return tf.sum(tf.mul(tf.matMul(tf.softmax(s, -1), v), t([2, 3, 4, 8], 9)));
  })([t([2, 3, 4, 8], 4), t([2, 3, 4, 8], 5), t([2, 3, 4, 8], 6)])],
  ['embedding gather grads (UnsortedSegmentSum)', () => [tf.grad((w: tf.Tensor) => tf.sum(tf.mul(tf.gather(w, tf.tensor2d(Array.from(randInt(12, 0, 30, 1)), [3, 4], 'int32')), t([3, 4, 8], 8))))(t([30, 8], 7))]],
  ['cosine loss grads', () => [tf.grad((e: tf.Tensor) => cosineLoss(e as tf.Tensor2D, [0.5, 3, 2, 4]))(t([8, 16], 10))]],
  ['in-batch negatives grads', () => [tf.grad((e: tf.Tensor) => inBatchNegativesLoss(e as tf.Tensor2D, [1, 0, 1, 1]))(t([8, 16], 11))]],
  ['AnglE total (cosine + ibn + angle) grads', () => [tf.grad((e: tf.Tensor) => angleTotalLoss(e as tf.Tensor2D, [1, 0, 1, 0], { weights: { cosine: 1, ibn: 1, angle: 1 } }))(t([8, 16], 12))]],
  ['max pooling grads', () => [tf.grad((h: tf.Tensor) => tf.sum(pool('max', { lastHiddenState: h as tf.Tensor3D, attentionMask: tf.tensor2d([[1, 1, 0], [1, 1, 1]], [2, 3], 'int32') })))(t([2, 3, 5], 13))]],
];

test('gradients of composite functions match the cpu backend', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  (await cuda()).setCudaMatmulPrecision('fp32');
  for (const [name, f] of gradCases) {
    await tt.test(name, async () => {
      const want = await runOn('cpu', f);
      const got = await runOn('cuda', f);
      const err = compare(got, want, 1e-4, 1e-3);
      assert.equal(err, undefined, `${name}: ${err}`);
    });
  }
});

test('golden forward parity on cuda with exact fp32 matmuls', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  if (!GOLDEN_DIR) {
    tt.skip('ANGLE_GOLDEN_DIR is not set');
    return;
  }
  await initBackend('cuda', { quiet: true });
  (await cuda()).setCudaMatmulPrecision('fp32');
  try {
    const checks = await checkForwardGolden(GOLDEN_DIR);
    const failed = checks.filter((c) => !c.ok);
    assert.ok(checks.length > 0);
    assert.deepEqual(failed.map((c) => `${c.name}: ${c.detail}`), []);
  } finally {
    await initBackend('cpu', { quiet: true });
  }
});

test('device memory after 1000 training steps equals memory after 10', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  if (!GOLDEN_DIR) {
    tt.skip('ANGLE_GOLDEN_DIR is not set (the loop trains the golden bert-tiny)');
    return;
  }
  await initBackend('cuda', { quiet: true });
  const c = await cuda();
  c.setCudaMatmulPrecision('tf32');
  const m = await loadModel(join(GOLDEN_DIR, 'model'));
  const model = m.model as BertModel;
  model.dropoutSeed = 1;
  try {
    const B = 8;
    const T = 16;
    const batch = { inputIds: randInt(B * T, 0, model.config.vocabSize, 3), tokenTypeIds: new Int32Array(B * T), attentionMask: new Int32Array(B * T).fill(1), batch: B, seqLen: T };
    const vars = [...model.params.values()];
    // The trainer's optimiser: its moment variables are created on the first step and then updated in place.
    const opt = new AdamW(model.params, { weightDecay: 0.01 });
    const labels = [0, 1, 2, 3];
    let at10: { bytes: number; tensors: number } | undefined;
    let losses: number[] = [];
    for (let step = 1; step <= 1000; step++) {
      const { value, grads } = tf.variableGrads(() => {
        const out = model.forward(batch, { training: true });
        const mask = tf.tensor2d(batch.attentionMask, [B, T], 'int32');
        return cosineLoss(pool('cls', { lastHiddenState: out.lastHiddenState, attentionMask: mask }), labels);
      }, vars);
      opt.step(gradientsByParameterName(model.params, grads), 1e-4);
      tf.dispose(grads);
      if (step % 100 === 0 || step === 10) losses.push(value.dataSync()[0]);
      value.dispose();
      if (step === 10) at10 = { bytes: c.cudaMemoryStats().inUse, tensors: tf.memory().numTensors };
    }
    const at1000 = { bytes: c.cudaMemoryStats().inUse, tensors: tf.memory().numTensors };
    tt.diagnostic(`after 10 steps: ${JSON.stringify(at10)}; after 1000: ${JSON.stringify(at1000)}; losses every 100 steps: ${losses.map((x) => x.toFixed(4)).join(' ')}`);
    assert.deepEqual(at1000, at10, `memory after 1000 steps ${JSON.stringify(at1000)} vs after 10 ${JSON.stringify(at10)}`);
    assert.ok(losses.every(Number.isFinite), `losses ${losses}`);
    opt.dispose();
    losses = [];
  } finally {
    model.dispose();
    await initBackend('cpu', { quiet: true });
  }
});

test('an allocation beyond the device memory fails with a clear error and leaves the backend usable', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  await initBackend('cuda', { quiet: true });
  try {
    // 2^38 floats = 1 TiB: more than any GPU has.
    assert.throws(() => tf.fill([2 ** 19, 2 ** 19], 0), (e: Error) => {
      tt.diagnostic(`the error: ${e.message}`);
      return /CUDA out of memory: tried to allocate 1048576\.00 MiB .*in use by tensors .* cached .* device free/.test(e.message);
    });
    const c = await cuda();
    const addon = c.cudaAddon();
    addon.setMemoryLimit(c.cudaMemoryStats().inUse + 64 * 2 ** 20);
    try {
      assert.throws(() => tf.fill([64, 2 ** 20], 1), /CUDA out of memory: tried to allocate 256\.00 MiB.*over the memory limit/);
    } finally {
      addon.setMemoryLimit(0);
    }
    assert.deepEqual(Array.from(tf.add(tf.tensor1d([1, 2]), 1).dataSync()), [2, 3]);
  } finally {
    await initBackend('cpu', { quiet: true });
  }
});

test('asynchronous reads return the values of the moment they were queued', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  await initBackend('cuda', { quiet: true });
  try {
    const x = tf.tensor1d(randn(100000, 5));
    const want = Array.from(x.dataSync());
    const pending = x.data();
    // later work on the stream (and freeing/reusing memory) must not change what the read sees
    const y = tf.mul(x, 2);
    x.dispose();
    const z = tf.fill([100000], 7);
    assert.deepEqual(Array.from((await pending) as Float32Array), want);
    tf.dispose([y, z]);
  } finally {
    await initBackend('cpu', { quiet: true });
  }
});
