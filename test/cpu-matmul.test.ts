/**
 * The cpu backend's BatchMatMul (lib/backend/cpu-matmul.ts) against tfjs-backend-cpu's own kernel,
 * taken from the registry before the project replaces it: the same float32 bits on every shape
 * family a model produces (transposes, broadcast batches, a shared dimension across several blocks
 * of 48 and not a multiple of it, odd row and column counts, NaN and infinities), and the stock
 * kernel's error for mismatched shapes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { registerCpuKernelOverrides } from '../lib/backend/cpu-kernels.js';

await tf.setBackend('cpu');
const stock = tf.getKernel(tf.BatchMatMul, 'cpu')!.kernelFunc;
registerCpuKernelOverrides();
const ours = tf.getKernel(tf.BatchMatMul, 'cpu')!.kernelFunc;

/** Deterministic values of mixed sign and magnitude (a small LCG; no Math.random). */
function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s / 2 ** 32) * 2 - 1) * 10 ** ((s % 7) - 3);
  }
  return out;
}

function run(kernel: tf.KernelFunc, a: tf.Tensor, b: tf.Tensor, transposeA: boolean, transposeB: boolean): { shape: number[]; bits: Uint32Array } {
  const info = kernel({ inputs: { a, b }, backend: tf.backend(), attrs: { transposeA, transposeB } }) as tf.TensorInfo;
  const t = tf.engine().makeTensorFromTensorInfo(info);
  const bits = new Uint32Array(Float32Array.from(t.dataSync()).buffer);
  const shape = t.shape.slice();
  t.dispose();
  return { shape, bits };
}

test('BatchMatMul on cpu: the stock kernel’s float32 bits on every shape family', () => {
  const cases: Array<{ a: number[]; b: number[]; tA: boolean; tB: boolean }> = [
    { a: [7, 5], b: [5, 9], tA: false, tB: false },
    { a: [64, 64], b: [256, 64], tA: false, tB: true }, // a linear layer, W stored [out, in]
    { a: [64, 256], b: [64, 130], tA: true, tB: false }, // a weight gradient: xᵀ · dy
    { a: [3, 33, 97], b: [3, 97, 11], tA: false, tB: false }, // K = 97: two full blocks and one of 1
    { a: [2, 4, 17, 8], b: [2, 4, 17, 8], tA: false, tB: true }, // attention scores Q Kᵀ per head
    { a: [2, 4, 17, 17], b: [2, 4, 17, 8], tA: false, tB: false }, // probabilities · V
    { a: [4, 96, 13], b: [96, 5], tA: true, tB: false }, // B broadcast over A's batch
    { a: [1, 6, 49], b: [3, 49, 6], tA: false, tB: false }, // A broadcast over B's batch
    { a: [2, 3, 1, 48], b: [3, 48, 2], tA: false, tB: false }, // rank 4 against rank 3
    { a: [5, 0], b: [0, 3], tA: false, tB: false }, // empty shared dimension: zeros
  ];
  let seed = 1;
  for (const c of cases) {
    const a = tf.tensor(values(c.a.reduce((x, y) => x * y, 1), seed++), c.a);
    const b = tf.tensor(values(c.b.reduce((x, y) => x * y, 1), seed++), c.b);
    const want = run(stock, a, b, c.tA, c.tB);
    const got = run(ours, a, b, c.tA, c.tB);
    assert.deepEqual(got.shape, want.shape, JSON.stringify(c));
    assert.ok(want.bits.every((w, i) => w === got.bits[i]), `bits differ for ${JSON.stringify(c)}`);
    // and through the public op, which now dispatches to ours
    assert.deepEqual(new Uint32Array(Float32Array.from(tf.matMul(a, b, c.tA, c.tB).dataSync()).buffer), got.bits);
    a.dispose();
    b.dispose();
  }
  // NaN and infinities propagate as in the stock kernel
  const special = values(6 * 50, 99);
  special[3] = Number.NaN;
  special[77] = Number.POSITIVE_INFINITY;
  special[150] = Number.NEGATIVE_INFINITY;
  const a = tf.tensor(special, [6, 50]);
  const b = tf.tensor(values(50 * 7, 100), [50, 7]);
  assert.deepEqual(run(ours, a, b, false, false).bits, run(stock, a, b, false, false).bits);
});

test('BatchMatMul on cpu: mismatched shapes fail with the stock kernel’s message', () => {
  const a = tf.zeros([3, 4]);
  const b = tf.zeros([5, 2]);
  assert.throws(() => tf.matMul(a, b), /inner shapes \(4\) and \(5\)/);
});
