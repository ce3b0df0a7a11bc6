/**
 * Kernel parity of the cuda backend against the cpu backend: every registered kernel on seeded
 * random inputs (broadcasting, transposed and sliced views, int32 and bool), one test per case so
 * a failure names its kernel. The last test checks that the cases dispatched every kernel the
 * backend registers. Skips with the reason where the addon is not built or no GPU is visible.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { FUSED_KERNELS, fusedDropout } from '../lib/backend/fused-ops.js';
import { cudaKernelNames } from '../lib/backend/cuda/kernels/index.js';
import { compare, cudaOrSkip, recordKernels, runOn } from './fixtures/cuda/harness.js';
import { philox4x32_10 } from './fixtures/cuda/emulated-addon.js';
import { kernelCases } from './fixtures/cuda/kernel-cases.js';

const cases = kernelCases();

test('kernel parity cases', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  // exact fp32 matmuls, so the matmul cases compare to the cpu backend at fp32 tolerances
  (await import('../lib/backend/cuda/index.js')).setCudaMatmulPrecision('fp32');
  for (const c of cases) {
    await tt.test(c.name, async () => {
      const want = await runOn('cpu', c.reference ?? c.f);
      const got = await runOn('cuda', () => recordKernels(c.f, dispatched));
      const err = compare(got, want, c.atol ?? 0, c.rtol ?? 0);
      assert.equal(err, undefined, `${c.name}: ${err}`);
    });
  }
});

const dispatched = new Set<string>();

after(async () => {
  await initBackend('cpu', { quiet: true });
});

test('AngleDropout: keep rate, scaling, determinism, gradient uses the same mask', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  await tf.setBackend('cuda');
  const x = tf.ones([1000, 100]);
  const [y1, y2, y3] = recordKernels(() => [fusedDropout(x, 0.1, 42), fusedDropout(x, 0.1, 42), fusedDropout(x, 0.1, 43)], dispatched);
  const v1 = Array.from(y1.dataSync());
  const kept = v1.reduce((n, v) => n + (v !== 0 ? 1 : 0), 0) / v1.length;
  assert.ok(Math.abs(kept - 0.9) < 0.005, `kept fraction ${kept}`);
  assert.ok(v1.every((v) => v === 0 || Math.abs(v - 1 / 0.9) < 1e-6));
  assert.deepEqual(Array.from(y2.dataSync()), v1);
  assert.notDeepEqual(Array.from(y3.dataSync()), v1);
  // The device mask is the Philox4x32-10 formula the emulated addon (and its test) uses.
  const mask = v1.map((_, i) => ((philox4x32_10([Math.floor(i / 4), 0, 0, 0], [42, 0])[i % 4] >>> 8) / 2 ** 24 >= Math.fround(0.1) ? 1 : 0));
  assert.deepEqual(v1.map((v) => (v !== 0 ? 1 : 0)), mask);
  const g = tf.grad((v: tf.Tensor) => tf.sum(fusedDropout(v, 0.1, 42)))(x).dataSync();
  assert.deepEqual(Array.from(g), v1, 'the gradient of sum(dropout(x)) is the mask / keep');
  tf.dispose([x, y1, y2, y3]);
  await tf.setBackend('cpu');
});

test('the parity cases dispatched every kernel the cuda backend registers', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  const missing = cudaKernelNames().filter((k) => !dispatched.has(k));
  assert.deepEqual(missing, [], `registered kernels no case exercised: ${missing.join(', ')}`);
  assert.ok(FUSED_KERNELS.layerNorm);
});
