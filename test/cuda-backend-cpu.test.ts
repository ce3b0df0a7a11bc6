/**
 * The parts of the cuda backend that need no GPU, checked everywhere: shape helpers, the kernel
 * registry against the recorded kernel-name fixture, the op codes shared with native/src/ops.h,
 * the loader's error on a machine without the addon, and the fused ops' cpu fallbacks.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { FUSED_KERNELS } from '../lib/backend/fused-kernels.js';
import { adamWComposite, fusedAdamWUpdate, fusedDropout, fusedGelu, fusedLayerNorm } from '../lib/ops/index.js';
import { addonPath } from '../lib/backend/cuda/addon.js';
import { cudaKernelNames } from '../lib/backend/cuda/kernels/index.js';
import { broadcastStrides, contiguousStrides, mergeDims, planReduction, simplifyPermutation } from '../lib/backend/cuda/shapes.js';
import { UnavailableError } from '../lib/util/errors.js';
import { randn } from './fixtures/cuda/harness.js';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/cuda/kernels.json', import.meta.url), 'utf8')) as { kernels: Record<string, string[]> };

test('strides and broadcasting', () => {
  assert.deepEqual(contiguousStrides([2, 3, 4]), [12, 4, 1]);
  assert.deepEqual(broadcastStrides([3, 1], [2, 3, 5]), [0, 1, 0]);
  assert.deepEqual(broadcastStrides([5], [2, 3, 5]), [0, 0, 1]);
  assert.deepEqual(broadcastStrides([1], [4]), [0]);
  assert.throws(() => broadcastStrides([3], [4]), /cannot broadcast/);
  // [B, T, C] + [C]: the bias merges into one modulo access over C
  assert.deepEqual(mergeDims([8, 16, 768], [contiguousStrides([8, 16, 768]), broadcastStrides([768], [8, 16, 768])]), { shape: [128, 768], strides: [[768, 1], [0, 1]] });
  // size-1 dims drop; a fully contiguous pair merges to one dimension
  assert.deepEqual(mergeDims([1, 4, 1, 5], [contiguousStrides([1, 4, 1, 5]), contiguousStrides([1, 4, 1, 5])]), { shape: [20], strides: [[1], [1]] });
  // [B, 1, 1, T] mask over [B, H, T, T] scores stays rank 3
  assert.deepEqual(mergeDims([2, 12, 64, 64], [contiguousStrides([2, 12, 64, 64]), broadcastStrides([2, 1, 1, 64], [2, 12, 64, 64])]).shape, [2, 768, 64]);
});

test('permutations simplify to the fewest axes', () => {
  assert.deepEqual(simplifyPermutation([8, 64, 12, 64], [0, 2, 3, 1]), { shape: [8, 64, 768], perm: [0, 2, 1] });
  assert.deepEqual(simplifyPermutation([8, 64, 12, 64], [0, 2, 1, 3]), { shape: [8, 64, 12, 64], perm: [0, 2, 1, 3] });
  assert.deepEqual(simplifyPermutation([5, 7], [1, 0]), { shape: [5, 7], perm: [1, 0] });
  assert.deepEqual(simplifyPermutation([1, 5, 1, 7], [2, 3, 0, 1]), { shape: [5, 7], perm: [1, 0] });
  assert.deepEqual(simplifyPermutation([2, 3, 4], [0, 1, 2]), { shape: [24], perm: [0] });
});

test('reductions run directly over one block of axes, else after a transpose', () => {
  assert.deepEqual(planReduction([64, 768], [1]), { kind: 'direct', outer: 64, r: 768, inner: 1 });
  assert.deepEqual(planReduction([64, 768], [0]), { kind: 'direct', outer: 1, r: 64, inner: 768 });
  assert.deepEqual(planReduction([4, 6, 10], [1]), { kind: 'direct', outer: 4, r: 6, inner: 10 });
  assert.deepEqual(planReduction([4, 1, 10], [0, 2]), { kind: 'direct', outer: 1, r: 40, inner: 1 });
  assert.deepEqual(planReduction([4, 6, 10], [0, 2]), { kind: 'transpose', perm: [1, 0, 2], outer: 6, r: 40 });
  assert.deepEqual(planReduction([4, 1, 10], [0, 1]), { kind: 'direct', outer: 1, r: 4, inner: 10 });
});

test('every kernel the project dispatches (test/fixtures/cuda/kernels.json) is registered by the cuda backend', () => {
  const registered = new Set(cudaKernelNames());
  const needed = Object.keys(fixture.kernels);
  assert.ok(needed.length >= 40, `fixture lists ${needed.length} kernels`);
  const missing = needed.filter((k) => !registered.has(k));
  assert.deepEqual(missing, []);
  for (const k of Object.values(FUSED_KERNELS)) assert.ok(registered.has(k), `fused kernel ${k} is registered`);
  assert.equal(new Set(cudaKernelNames()).size, cudaKernelNames().length, 'no kernel is registered twice');
});

test("initBackend('cuda') without a built addon fails with the reason and the build command", async (t) => {
  if (existsSync(addonPath())) {
    t.skip(`an addon is built at ${addonPath()}; the GPU suites test it`);
    return;
  }
  await assert.rejects(initBackend('cuda', { quiet: true }), (e: Error) => e instanceof UnavailableError && /backend 'cuda' is unavailable: the native addon .*angle_cuda\.node is not built; run `npm run build:cuda`/.test(e.message));
});

test('fused ops fall back to the composite definitions on cpu', async () => {
  await initBackend('cpu', { quiet: true });
  // LayerNorm, GELU and dropout fall back to tfjs ops on cpu; AdamW has a one-loop JavaScript kernel
  // there (lib/backend/cpu-kernels.ts), checked in the next test.
  for (const name of Object.values(FUSED_KERNELS)) {
    if (name === FUSED_KERNELS.adamW) assert.notEqual(tf.getKernel(name, 'cpu'), undefined);
    else assert.equal(tf.getKernel(name, 'cpu'), undefined);
  }
  const x = tf.tensor2d(randn(6 * 16, 1, 2), [6, 16]);
  const g = tf.tensor1d(randn(16, 2));
  const b = tf.tensor1d(randn(16, 3));
  const { mean, variance } = tf.moments(x, -1, true);
  const ln = tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-12))), g), b);
  assert.deepEqual(Array.from(fusedLayerNorm(x, g, b, 1e-12).dataSync()), Array.from(ln.dataSync()));
  const gelu = tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2))));
  assert.deepEqual(Array.from(fusedGelu(x).dataSync()), Array.from(gelu.dataSync()));
  assert.deepEqual(Array.from(fusedDropout(x, 0.3, 17).dataSync()), Array.from(tf.dropout(x, 0.3, undefined, 17).dataSync()));
});

test('the AdamW update (cpu kernel and composite fallback) is PyTorch AdamW, checked against a float64 reference', async () => {
  await initBackend('cpu', { quiet: true });
  const n = 50;
  const p = randn(n, 1);
  const gr = randn(n, 2);
  const m = randn(n, 3, 0.1);
  const v = randn(n, 4, 0.1).map(Math.abs);
  const [lr, b1, b2, eps, wd, step] = [3e-4, 0.9, 0.999, 1e-8, 0.01, 5];
  const out = fusedAdamWUpdate({ param: tf.tensor1d(p), grad: tf.tensor1d(gr), m: tf.tensor1d(m), v: tf.tensor1d(v), lr, beta1: b1, beta2: b2, eps, weightDecay: wd, step });
  const comp = adamWComposite({ param: tf.tensor1d(p), grad: tf.tensor1d(gr), m: tf.tensor1d(m), v: tf.tensor1d(v), lr, beta1: b1, beta2: b2, eps, weightDecay: wd, step });
  const got = { p: out.param.dataSync(), m: out.m.dataSync(), v: out.v.dataSync() };
  const compP = comp.param.dataSync();
  got.p.forEach((x, i) => assert.ok(Math.abs(x - compP[i]) <= 1e-6 * Math.max(1, Math.abs(compP[i])), `kernel p[${i}] ${x} vs composite ${compP[i]}`));
  for (let i = 0; i < n; i++) {
    const mi = b1 * m[i] + (1 - b1) * gr[i];
    const vi = b2 * v[i] + (1 - b2) * gr[i] * gr[i];
    const pi = p[i] * (1 - lr * wd) - (lr * (mi / (1 - b1 ** step))) / (Math.sqrt(vi / (1 - b2 ** step)) + eps);
    assert.ok(Math.abs(got.m[i] - mi) <= 1e-6 * Math.max(1, Math.abs(mi)), `m[${i}] ${got.m[i]} vs ${mi}`);
    assert.ok(Math.abs(got.v[i] - vi) <= 1e-6 * Math.max(1e-3, Math.abs(vi)), `v[${i}] ${got.v[i]} vs ${vi}`);
    assert.ok(Math.abs(got.p[i] - pi) <= 1e-6 * Math.max(1, Math.abs(pi)), `p[${i}] ${got.p[i]} vs ${pi}`);
  }
  assert.throws(() => fusedAdamWUpdate({ param: tf.tensor1d(p), grad: tf.tensor1d([1]), m: tf.tensor1d(m), v: tf.tensor1d(v), lr, beta1: b1, beta2: b2, eps, weightDecay: wd, step }), /grad has shape 1, param has 50/);
});
