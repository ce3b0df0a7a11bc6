/**
 * The cpu backend's replacement kernels against tfjs-backend-cpu's own, taken from the registry
 * before the project replaces them. BatchMatMul (lib/backend/cpu-matmul.ts): the same float32 bits
 * on every shape family a model produces (transposes, broadcast batches, a shared dimension across
 * several blocks of 48 and not a multiple of it, odd row and column counts, NaN and infinities), and
 * the stock kernel's error for mismatched shapes. Transpose and broadcasting Add/Sub/Multiply/RealDiv
 * and Sum over leading axes (lib/backend/cpu-layout.ts): the same values on the permutations,
 * broadcasts and reductions models use.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { registerCpuKernelOverrides } from '../lib/backend/cpu-kernels.js';

await tf.setBackend('cpu');
const NAMES = [tf.BatchMatMul, tf.Transpose, tf.Add, tf.Sub, tf.Multiply, tf.RealDiv, tf.Sum];
const stockKernels = new Map(NAMES.map((n) => [n, tf.getKernel(n, 'cpu')!.kernelFunc]));
registerCpuKernelOverrides();
const ourKernels = new Map(NAMES.map((n) => [n, tf.getKernel(n, 'cpu')!.kernelFunc]));
const stock = stockKernels.get(tf.BatchMatMul)!;
const ours = ourKernels.get(tf.BatchMatMul)!;

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

function bitsOf(kernel: tf.KernelFunc, inputs: tf.NamedTensorInfoMap, attrs: tf.NamedAttrMap = {}): { shape: number[]; dtype: string; bits: number[] } {
  const info = kernel({ inputs, backend: tf.backend(), attrs }) as tf.TensorInfo;
  const t = tf.engine().makeTensorFromTensorInfo(info);
  const data = t.dataSync();
  const bits = t.dtype === 'float32' ? Array.from(new Uint32Array(Float32Array.from(data).buffer)) : Array.from(data);
  const out = { shape: t.shape.slice(), dtype: t.dtype, bits };
  t.dispose();
  return out;
}

test('Transpose on cpu: the stock kernel’s values for every permutation models use, float32 and int32', () => {
  const cases: Array<{ shape: number[]; perm: number[]; dtype: 'float32' | 'int32' }> = [
    { shape: [2, 17, 4, 8], perm: [0, 2, 1, 3], dtype: 'float32' }, // heads out of [B, T, H, D]
    { shape: [2, 4, 17, 8], perm: [0, 2, 1, 3], dtype: 'float32' }, // and back
    { shape: [64, 256], perm: [1, 0], dtype: 'float32' },
    { shape: [3, 5, 7], perm: [2, 0, 1], dtype: 'int32' },
    { shape: [1, 9, 1, 4], perm: [3, 1, 2, 0], dtype: 'float32' },
    { shape: [0, 3], perm: [1, 0], dtype: 'float32' },
  ];
  let seed = 11;
  for (const c of cases) {
    const n = c.shape.reduce((x, y) => x * y, 1);
    const v = values(n, seed++);
    const x = c.dtype === 'int32' ? tf.tensor(Int32Array.from(v, (z) => Math.round(z * 1000)), c.shape, 'int32') : tf.tensor(v, c.shape);
    const want = bitsOf(stockKernels.get(tf.Transpose)!, { x }, { perm: c.perm });
    assert.deepEqual(bitsOf(ourKernels.get(tf.Transpose)!, { x }, { perm: c.perm }), want, JSON.stringify(c));
    x.dispose();
  }
});

test('Add, Sub, Multiply, RealDiv on cpu with broadcasting: the stock kernels’ float32 bits', () => {
  const pairs: Array<[number[], number[]]> = [
    [[2048, 64], [2048, 1]], // x − mean in a LayerNorm
    [[2, 4, 17, 17], [2, 1, 1, 17]], // attention scores + mask
    [[2, 1, 1, 17], [2, 4, 17, 17]],
    [[64, 256], [256]], // a bias
    [[7, 1, 5], [1, 3, 1]], // both operands broadcast
    [[], [3, 2]], // a scalar
    [[5, 3], [1]],
    [[33, 7], [33, 7]], // no broadcast
  ];
  let seed = 40;
  for (const [sa, sb] of pairs) {
    const a = tf.tensor(values(sa.reduce((x, y) => x * y, 1), seed++), sa);
    const b = tf.tensor(values(sb.reduce((x, y) => x * y, 1), seed++), sb);
    for (const name of [tf.Add, tf.Sub, tf.Multiply, tf.RealDiv]) {
      const want = bitsOf(stockKernels.get(name)!, { a, b });
      assert.deepEqual(bitsOf(ourKernels.get(name)!, { a, b }), want, `${name} ${JSON.stringify([sa, sb])}`);
    }
    a.dispose();
    b.dispose();
  }
  // division by zero, NaN and infinities as the stock kernel gives them
  const a = tf.tensor([1, -1, 0, Number.NaN, Number.POSITIVE_INFINITY, 3], [6, 1]);
  const b = tf.tensor([0, -0, Number.NEGATIVE_INFINITY], [1, 3]);
  for (const name of [tf.Add, tf.Sub, tf.Multiply, tf.RealDiv]) assert.deepEqual(bitsOf(ourKernels.get(name)!, { a, b }), bitsOf(stockKernels.get(name)!, { a, b }), name);
  assert.throws(() => tf.add(tf.zeros([2, 3]), tf.zeros([4])), /could not be broadcast|Operands could not/);
});

test('Sum on cpu over axes that are not innermost: the stock kernel’s float32 bits', () => {
  const cases: Array<{ shape: number[]; axis: number | number[]; keepDims: boolean }> = [
    { shape: [2048, 64], axis: 0, keepDims: false }, // a bias gradient
    { shape: [2, 17, 64], axis: [0, 1], keepDims: false },
    { shape: [2, 4, 17, 17], axis: [1], keepDims: true },
    { shape: [3, 5, 7], axis: [0, 2], keepDims: true },
    { shape: [6, 9], axis: -1, keepDims: false }, // innermost: the stock kernel
  ];
  let seed = 70;
  for (const c of cases) {
    const x = tf.tensor(values(c.shape.reduce((p, q) => p * q, 1), seed++), c.shape);
    const attrs = { axis: c.axis, keepDims: c.keepDims };
    assert.deepEqual(bitsOf(ourKernels.get(tf.Sum)!, { x }, attrs), bitsOf(stockKernels.get(tf.Sum)!, { x }, attrs), JSON.stringify(c));
    x.dispose();
  }
});
