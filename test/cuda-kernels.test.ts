/**
 * Kernel parity of the cuda backend against the cpu backend: every registered kernel on seeded
 * random inputs (broadcasting, transposed and sliced views, int32 and bool), one test per case so
 * a failure names its kernel. The last test checks that the cases dispatched every kernel the
 * backend registers. Skips with the reason where the addon is not built or no GPU is visible.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { FUSED_KERNELS } from '../lib/backend/fused-kernels.js';
import { cudaKernelNames } from '../lib/backend/cuda/kernels/index.js';
import { checkDeviceDropout, compare, cudaOrSkip, recordKernels, runOn } from './fixtures/cuda/harness.js';
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

test('AngleDropout: keep rate, scaling, determinism, the Philox mask, gradient uses the same mask', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  await checkDeviceDropout('cuda', dispatched);
});

test('the parity cases dispatched every kernel the cuda backend registers', async (tt) => {
  if (!(await cudaOrSkip(tt))) return;
  const missing = cudaKernelNames().filter((k) => !dispatched.has(k));
  assert.deepEqual(missing, [], `registered kernels no case exercised: ${missing.join(', ')}`);
  assert.ok(FUSED_KERNELS.layerNorm);
});
