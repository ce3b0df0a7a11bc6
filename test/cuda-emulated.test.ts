/**
 * The cuda backend's TypeScript layer (lib/backend/cuda: CudaBackend and every kernel
 * registration) on a machine without a GPU: the backend is registered as 'cuda-emulated' over a
 * JavaScript emulation of the native addon (test/fixtures/cuda/emulated-addon.ts, the semantics of
 * native/src/*.cu) and runs the same parity cases as test/cuda-kernels.test.ts against cpu, with
 * the same tolerances, plus AngleDropout, the allocator's bookkeeping, and the check that the
 * cases dispatched every kernel the backend registers.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import type { CudaBackend } from '../lib/backend/cuda/backend.js';
import { registerCudaBackendWith } from '../lib/backend/cuda/index.js';
import { cudaKernelNames } from '../lib/backend/cuda/kernels/index.js';
import { createEmulatedAddon, philox4x32_10, sizeClass } from './fixtures/cuda/emulated-addon.js';
import { checkDeviceDropout, compare, recordKernels, runOn } from './fixtures/cuda/harness.js';
import { kernelCases } from './fixtures/cuda/kernel-cases.js';

const NAME = 'cuda-emulated';
const addon = createEmulatedAddon();
let backend: CudaBackend;
const dispatched = new Set<string>();
const leaks: string[] = [];

before(async () => {
  await initBackend('cpu', { quiet: true });
  // exact fp32 matmuls, as test/cuda-kernels.test.ts sets for the device; priority 0: never the default backend
  backend = registerCudaBackendWith(NAME, addon, addon.init(), 'fp32', 0);
});

after(async () => {
  await initBackend('cpu', { quiet: true });
});

test('kernel parity cases on the emulated addon', async (tt) => {
  for (const c of kernelCases()) {
    await tt.test(c.name, async () => {
      const want = await runOn('cpu', c.reference ?? c.f);
      const before = backend.numDataIds();
      const live = addon.memoryStats().liveBlocks;
      const got = await runOn(NAME, () => recordKernels(c.f, dispatched));
      const leaked = [backend.numDataIds() - before, addon.memoryStats().liveBlocks - live];
      if (leaked[0] !== 0 || leaked[1] !== 0) leaks.push(`${c.name}: ${leaked[0]} data ids, ${leaked[1]} device blocks`);
      const err = compare(got, want, c.atol ?? 0, c.rtol ?? 0);
      assert.equal(err, undefined, `${c.name}: ${err}`);
    });
  }
});

test('AngleDropout: keep rate, scaling, determinism, the Philox mask, gradient uses the same mask', async () => {
  await checkDeviceDropout(NAME, dispatched);
});

test('the parity cases dispatched every kernel the cuda backend registers', () => {
  const missing = cudaKernelNames().filter((k) => !dispatched.has(k));
  assert.deepEqual(missing, [], `registered kernels no case exercised: ${missing.join(', ')}`);
});

test('no parity case leaves data ids or device blocks behind', () => {
  assert.deepEqual(leaks, []);
});

// ---- the emulation itself ----------------------------------------------------------------------------

test('Philox4x32-10 matches the Random123 known-answer vectors', () => {
  assert.deepEqual(philox4x32_10([0, 0, 0, 0], [0, 0]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
  assert.deepEqual(philox4x32_10([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff]), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
  assert.deepEqual(philox4x32_10([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]), [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]);
});

test('the emulated allocator: size classes, caching, statistics, limits and errors like allocator.cu', () => {
  const a = createEmulatedAddon();
  a.init();
  assert.deepEqual([1, 256, 257, 320, 321, 1000, 1024, 1025, 4096, 5000, 2 ** 20 + 1].map(sizeClass), [256, 256, 320, 320, 384, 1024, 1024, 1280, 4096, 5120, 1310720]);
  assert.equal(a.sizeClass(1000), 1024);
  const p = a.malloc(1000);
  const q = a.malloc(0);
  let s = a.memoryStats();
  assert.deepEqual([s.inUse, s.requested, s.cached, s.liveBlocks, s.cudaMallocs, s.allocations], [1280, 1004, 0, 2, 2, 2]);
  a.free(p);
  s = a.memoryStats();
  assert.deepEqual([s.inUse, s.cached, s.liveBlocks, s.peakInUse], [256, 1024, 1, 1280]);
  // the cached block serves the next request of its class without a new cudaMalloc
  assert.equal(a.malloc(900), p);
  assert.equal(a.memoryStats().cudaMallocs, 2);
  a.free(p);
  assert.throws(() => a.free(p), /^Error: cuda backend: free: free of 0x[0-9a-f]+: not a live block of this allocator \(double free\?\)$/);
  assert.throws(() => a.malloc(-1), /cuda backend: malloc: negative size -1/);
  assert.throws(() => a.malloc(1.5), /cuda backend: malloc: malloc: argument 0 must be an integer, got 1.5/);
  a.emptyCache();
  assert.equal(a.memoryStats().cached, 0);
  // beyond the device memory, and beyond a limit: the native out-of-memory messages
  assert.throws(() => a.malloc(2 ** 40), /CUDA out of memory: tried to allocate 1048576\.00 MiB .*cudaMalloc failed after returning the cache to the driver; in use by tensors .* cached .* device free/);
  a.setMemoryLimit(a.memoryStats().inUse + 64 * 2 ** 20);
  assert.throws(() => a.malloc(256 * 2 ** 20), /CUDA out of memory: tried to allocate 256\.00 MiB.*over the memory limit set with setMemoryLimit.*\(a memory limit is set\)/);
  a.setMemoryLimit(0);
  a.free(q);
  // emulator checks the device would not make: out-of-bounds and use-after-free accesses
  const r = a.malloc(16);
  a.upload(r, new Float32Array([1, 2, 3, 4]));
  assert.throws(() => a.unary(0, 0, 0, r, r, 5, 0, 0), /cuda backend: unary: unary: argument 3 .* outside the 16 bytes allocated/);
  assert.throws(() => a.unary(0, 0, 0, r, r, 4, undefined as unknown as number, 0), /cuda backend: unary: unary: argument 6 must be a number/);
  a.unary(0, 0, 0, r, r, 4, 0, 0);
  const out = new Float32Array(4);
  a.readSync(r, out);
  assert.deepEqual(Array.from(out), [-1, -2, -3, -4]);
  a.free(r);
  assert.throws(() => a.readSync(r, out), /points into a freed block/);
});

test('emulated matmul: row-major op(A)·op(B) with batch strides; TF32 rounds the inputs, fp32 does not', () => {
  const a = createEmulatedAddon();
  a.init();
  const put = (v: number[]) => {
    const p = a.malloc(v.length * 4);
    a.upload(p, Float32Array.from(v));
    return p;
  };
  const get = (p: number, n: number) => {
    const o = new Float32Array(n);
    a.readSync(p, o);
    return Array.from(o);
  };
  // A [2, 3] stored transposed as [3, 2]; B shared by both batches (stride 0)
  const A = put([1, 4, 2, 5, 3, 6, 1, 0, 0, 1, 0, 0]);
  const B = put([1, 0, 0, 1, 1, 1]);
  const C = a.malloc(2 * 2 * 2 * 4);
  a.matmul(A, B, C, 2, 2, 2, 3, true, false, 6, 0, 1);
  assert.deepEqual(get(C, 8), [4, 5, 10, 11, 1, 0, 0, 1]);
  const x = 1 + 2 ** -20;
  const X = put([x]);
  a.matmul(X, X, C, 1, 1, 1, 1, false, false, 0, 0, 1);
  assert.equal(get(C, 1)[0], Math.fround(x * x));
  a.matmul(X, X, C, 1, 1, 1, 1, false, false, 0, 0, 0);
  assert.equal(get(C, 1)[0], 1, 'TF32 keeps 10 mantissa bits');
  assert.equal(a.memoryStats().matmulPlans, 3);
});

test('asynchronous reads of the emulated addon return the values of the moment they were queued', async () => {
  const a = createEmulatedAddon();
  a.init();
  const p = a.malloc(8);
  a.upload(p, new Int32Array([5, 6]));
  const pending = a.read(p, new Int32Array(2));
  a.fill(1, p, 2, 9);
  assert.deepEqual(Array.from(await pending), [5, 6]);
  a.free(p);
});
