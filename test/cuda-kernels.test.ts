/**
 * Kernel parity of the cuda backend against the cpu backend: every registered kernel on seeded
 * random inputs (broadcasting, transposed and sliced views, int32 and bool), one test per case so
 * a failure names its kernel. The last test checks that the cases dispatched every kernel the
 * backend registers. Skips with the reason where the addon is not built or no GPU is visible.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { FUSED_KERNELS, fusedAdamWUpdate, fusedDropout, fusedGelu, fusedLayerNorm } from '../lib/backend/fused-ops.js';
import { cudaKernelNames } from '../lib/backend/cuda/kernels/index.js';
import { compare, cudaOrSkip, randInt, randn, recordKernels, runOn } from './fixtures/cuda/harness.js';

interface Case {
  name: string;
  f: () => tf.Tensor | tf.Tensor[];
  atol?: number;
  rtol?: number;
  /** Compare with this function on cpu instead of f (for fused kernels and device dropout). */
  reference?: () => tf.Tensor | tf.Tensor[];
}

const t = (n: number[], seed: number, scale = 1) => tf.tensor(randn(n.reduce((a, b) => a * b, 1), seed, scale), n);
const ti = (n: number[], lo: number, hi: number, seed: number) => tf.tensor(randInt(n.reduce((a, b) => a * b, 1), lo, hi, seed), n, 'int32');
const pos = (n: number[], seed: number) => tf.add(tf.abs(t(n, seed)), 0.1);
const unit = (n: number[], seed: number) => tf.clipByValue(t(n, seed, 0.5), -0.99, 0.99);
const bool = (n: number[], seed: number) => tf.cast(ti(n, 0, 2, seed), 'bool');

const cases: Case[] = [];
const add = (c: Case) => cases.push(c);

// ---- unary -------------------------------------------------------------------------------------
const unaryF: Array<[string, (x: tf.Tensor) => tf.Tensor, (s: number[], seed: number) => tf.Tensor]> = [
  ['Abs', tf.abs, t], ['Acos', tf.acos, unit], ['Acosh', (x) => tf.acosh(tf.add(x, 1)), pos], ['Asin', tf.asin, unit],
  ['Asinh', tf.asinh, t], ['Atan', tf.atan, t], ['Atanh', tf.atanh, unit], ['Ceil', tf.ceil, t], ['Cos', tf.cos, t],
  ['Cosh', tf.cosh, t], ['Elu', tf.elu, t], ['Erf', tf.erf, t], ['Exp', tf.exp, t], ['Expm1', tf.expm1, t],
  ['Floor', tf.floor, t], ['Log', tf.log, pos], ['Log1p', tf.log1p, pos], ['Neg', tf.neg, t],
  ['Reciprocal', tf.reciprocal, pos], ['Relu', tf.relu, t], ['Relu6', (x) => tf.relu6(tf.mul(x, 4)), t],
  ['Round', (x) => tf.round(tf.mul(x, 3)), t], ['Rsqrt', tf.rsqrt, pos], ['Selu', tf.selu, t], ['Sigmoid', tf.sigmoid, t],
  ['Sign', tf.sign, t], ['Sin', tf.sin, t], ['Sinh', tf.sinh, t], ['Softplus', tf.softplus, t], ['Sqrt', tf.sqrt, pos],
  ['Square', tf.square, t], ['Tan', tf.tan, unit], ['Tanh', tf.tanh, t], ['Step', (x) => tf.step(x, 0.3), t],
  ['LeakyRelu', (x) => tf.leakyRelu(x, 0.2), t], ['ClipByValue', (x) => tf.clipByValue(x, -0.5, 0.7), t],
  ['IsNan', (x) => tf.isNaN(tf.div(x, tf.round(x))), t], ['IsInf', (x) => tf.isInf(tf.div(x, tf.round(x))), t],
  ['IsFinite', (x) => tf.isFinite(tf.div(x, tf.round(x))), t],
];
for (const [name, op, make] of unaryF) add({ name: `${name} float32 [7, 33]`, f: () => op(make([7, 33], 11)) , atol: 1e-5, rtol: 1e-5 });
for (const [name, op] of [['Abs', tf.abs], ['Neg', tf.neg], ['Square', tf.square], ['Sign', tf.sign], ['Relu', tf.relu]] as const) {
  add({ name: `${name} int32`, f: () => op(ti([5, 9], -20, 20, 3)) });
}
add({ name: 'LogicalNot bool', f: () => tf.logicalNot(bool([4, 6], 5)) });

// ---- binary with broadcasting ------------------------------------------------------------------
const shapes: Array<[number[], number[]]> = [
  [[6, 40], [6, 40]], // same shape (vectorised path)
  [[6, 40], [40]], // bias-like
  [[6, 40], [6, 1]], // row scalar
  [[1], [6, 40]], // scalar
  [[3, 1, 5], [1, 4, 1]], // both broadcast
  [[2, 3, 4, 5], [3, 1, 5]], // general rank 4
];
const binaryF: Array<[string, (a: tf.Tensor, b: tf.Tensor) => tf.Tensor, boolean]> = [
  ['Add', tf.add, false], ['Sub', tf.sub, false], ['Multiply', tf.mul, false], ['RealDiv', tf.div, true],
  ['Maximum', tf.maximum, false], ['Minimum', tf.minimum, false], ['SquaredDifference', tf.squaredDifference, false],
  ['Pow', tf.pow, true], ['Atan2', tf.atan2, false], ['FloorDiv', tf.floorDiv, true], ['Mod', tf.mod, true],
  ['Equal', (a, b) => tf.equal(tf.round(a), tf.round(b)), false], ['NotEqual', (a, b) => tf.notEqual(tf.round(a), tf.round(b)), false],
  ['Less', tf.less, false], ['LessEqual', tf.lessEqual, false], ['Greater', tf.greater, false], ['GreaterEqual', tf.greaterEqual, false],
  ['Prelu', tf.prelu, false],
];
for (const [name, op, positiveB] of binaryF) {
  shapes.forEach(([sa, sb], i) => {
    add({ name: `${name} [${sa}] x [${sb}]`, f: () => op(t(sa, 20 + i), positiveB ? pos(sb, 40 + i) : t(sb, 40 + i)), atol: 1e-5, rtol: 1e-5 });
  });
}
for (const [name, op] of [['Add', tf.add], ['Sub', tf.sub], ['Multiply', tf.mul], ['Maximum', tf.maximum], ['FloorDiv', tf.floorDiv], ['Mod', tf.mod]] as const) {
  add({ name: `${name} int32 [5, 8] x [8]`, f: () => op(ti([5, 8], -30, 30, 7), tf.add(ti([8], 1, 9, 8), tf.scalar(0, 'int32'))) });
}
add({ name: 'LogicalAnd bool broadcast', f: () => tf.logicalAnd(bool([4, 6], 1), bool([6], 2)) });
add({ name: 'LogicalOr bool', f: () => tf.logicalOr(bool([4, 6], 3), bool([4, 6], 4)) });
add({ name: 'Add of a transposed view', f: () => tf.add(tf.transpose(t([8, 12], 5)), t([12, 8], 6)), atol: 1e-6 });
add({ name: 'AddN', f: () => tf.addN([t([3, 7], 1), t([3, 7], 2), t([3, 7], 3), t([3, 7], 4)]), atol: 1e-6 });
add({ name: 'Select broadcast', f: () => tf.where(bool([4, 5], 9), t([4, 5], 1), t([4, 5], 2)) });
add({ name: 'Select int32', f: () => tf.where(bool([6], 9), ti([6], 0, 9, 1), ti([6], 0, 9, 2)) });
add({ name: 'EluGrad', f: () => tf.grad((x: tf.Tensor) => tf.sum(tf.elu(x)))(t([5, 6], 3)), atol: 1e-6 });

// ---- cast, creation ----------------------------------------------------------------------------
add({ name: 'Cast float32->int32 (truncation)', f: () => tf.cast(tf.mul(t([5, 7], 1), 10), 'int32') });
add({ name: 'Cast float32->bool', f: () => tf.cast(tf.round(t([5, 7], 2)), 'bool') });
add({ name: 'Cast int32->float32', f: () => tf.cast(ti([5, 7], -100, 100, 3), 'float32') });
add({ name: 'Cast bool->int32', f: () => tf.cast(bool([9], 4), 'int32') });
add({ name: 'Fill', f: () => tf.fill([3, 4], 2.5) });
add({ name: 'Fill int32', f: () => tf.fill([3, 4], 7, 'int32') });
add({ name: 'ZerosLike', f: () => tf.zerosLike(t([3, 4], 1)) });
add({ name: 'OnesLike', f: () => tf.onesLike(ti([3, 4], 0, 5, 1)) });
add({ name: 'Range int32', f: () => tf.range(0, 37, 3, 'int32') });
add({ name: 'Range float32 descending', f: () => tf.range(5, -3, -0.5), atol: 1e-6 });

// ---- reductions ----------------------------------------------------------------------------------
const reduceShapes: Array<[number[], number | number[] | undefined]> = [
  [[64, 768], -1], [[64, 768], 0], [[16384, 8], 0], [[3, 5000], 1], [[4, 6, 10], [0, 2]], [[4, 6, 10], 1], [[7, 9], undefined], [[2, 3, 4, 5], [1, 2]],
];
for (const [name, op, tol] of [['Sum', tf.sum, 1e-4], ['Mean', tf.mean, 1e-5], ['Max', tf.max, 0], ['Min', tf.min, 0], ['Prod', (x: tf.Tensor, a?: number | number[]) => tf.prod(tf.add(tf.mul(x, 0.01), 1), a), 1e-4]] as const) {
  reduceShapes.forEach(([s, axis], i) => add({ name: `${name} [${s}] axis ${JSON.stringify(axis)}`, f: () => op(t(s, 60 + i), axis), atol: tol, rtol: tol }));
}
add({ name: 'Sum keepDims', f: () => tf.sum(t([4, 6], 1), 1, true), atol: 1e-5 });
add({ name: 'Sum int32', f: () => tf.sum(ti([8, 9], -5, 5, 1), 0) });
add({ name: 'Sum bool', f: () => tf.sum(bool([8, 9], 1), 1) });
add({ name: 'Max int32', f: () => tf.max(ti([8, 9], -50, 50, 2), 1) });
add({ name: 'Any', f: () => tf.any(bool([5, 7], 1), 1) });
add({ name: 'All', f: () => tf.all(bool([5, 3], 2), 0) });
add({ name: 'ArgMax last axis', f: () => tf.argMax(t([9, 50], 3), -1) });
add({ name: 'ArgMax axis 0', f: () => tf.argMax(t([50, 9], 4), 0) });
add({ name: 'ArgMin', f: () => tf.argMin(t([9, 50], 5), 1) });
add({ name: 'ArgMax ties pick the first', f: () => tf.argMax(tf.round(t([20, 7], 6, 0.3)), 1) });
add({ name: 'Softmax [12, 64]', f: () => tf.softmax(t([12, 64], 1, 3)), atol: 1e-6, rtol: 1e-5 });
add({ name: 'Softmax long rows [3, 5000]', f: () => tf.softmax(t([3, 5000], 2, 3)), atol: 1e-7, rtol: 1e-4 });
add({ name: 'Softmax with -1e9 mask', f: () => tf.softmax(tf.add(t([4, 2, 16], 3), tf.mul(tf.sub(1, tf.cast(bool([4, 1, 16], 9), 'float32')), -1e9))), atol: 1e-6 });
add({ name: 'LogSoftmax (composite)', f: () => tf.logSoftmax(t([6, 30], 4, 5)), atol: 1e-5, rtol: 1e-5 });
add({ name: 'LogSumExp (composite)', f: () => tf.logSumExp(t([6, 30], 5, 5), 1), atol: 1e-5, rtol: 1e-5 });
add({ name: 'TopK k=5', f: () => { const r = tf.topk(t([7, 300], 1), 5); return [r.values, r.indices]; } });
add({ name: 'TopK k=1 ties', f: () => { const r = tf.topk(tf.round(t([7, 30], 2, 0.5)), 3); return [r.values, r.indices]; } });
add({ name: 'TopK int32', f: () => { const r = tf.topk(ti([4, 50], 0, 1000, 3), 4); return [r.values, r.indices]; } });
add({ name: 'Cumsum', f: () => tf.cumsum(t([5, 9], 1), 1), atol: 1e-5 });
add({ name: 'Cumsum exclusive reverse axis 0', f: () => tf.cumsum(t([5, 9], 2), 0, true, true), atol: 1e-5 });

// ---- layout --------------------------------------------------------------------------------------
add({ name: 'Transpose 2-D', f: () => tf.transpose(t([67, 45], 1)) });
add({ name: 'Transpose [0,2,1,3] (heads)', f: () => tf.transpose(t([2, 13, 4, 8], 2), [0, 2, 1, 3]) });
add({ name: 'Transpose [0,2,3,1] (keys)', f: () => tf.transpose(t([2, 13, 4, 8], 3), [0, 2, 3, 1]) });
add({ name: 'Transpose rank 5', f: () => tf.transpose(t([2, 3, 4, 5, 6], 4), [4, 2, 0, 3, 1]) });
add({ name: 'Transpose int32', f: () => tf.transpose(ti([5, 7], 0, 100, 1)) });
add({ name: 'Reshape + ExpandDims + Identity', f: () => [tf.reshape(t([6, 4], 1), [3, 8]), tf.expandDims(t([6, 4], 2), 1), tf.clone(t([6, 4], 3))] });
add({ name: 'Slice', f: () => tf.slice(t([5, 7, 9], 1), [1, 2, 3], [3, 4, -1]) });
add({ name: 'Slice [CLS]', f: () => tf.slice(t([8, 16, 32], 2), [0, 0, 0], [8, 1, 32]) });
add({ name: 'StridedSlice', f: () => tf.stridedSlice(t([10, 12], 1), [1, 0], [9, 12], [2, 3]) });
add({ name: 'StridedSlice shrink and negative', f: () => tf.stridedSlice(t([6, 8], 2), [5, 7], [0, 0], [-1, -2], 0, 0, 0, 0, 1) });
add({ name: 'Concat axis 0 / 1 / last', f: () => [tf.concat([t([2, 5], 1), t([3, 5], 2)], 0), tf.concat([t([4, 2, 3], 3), t([4, 1, 3], 4), t([4, 5, 3], 5)], 1), tf.concat([t([3, 2], 6), t([3, 7], 7)], -1)] });
add({ name: 'Concat int32', f: () => tf.concat([ti([2, 3], 0, 9, 1), ti([2, 2], 0, 9, 2)], 1) });
add({ name: 'Pack / Unpack', f: () => [tf.stack([t([3, 4], 1), t([3, 4], 2)], 1), ...tf.unstack(t([3, 4, 2], 3), 1)] });
add({ name: 'SplitV', f: () => tf.split(t([4, 10], 1), [3, 5, 2], 1) });
add({ name: 'PadV2', f: () => tf.pad(t([3, 4, 5], 1), [[1, 0], [0, 2], [3, 1]], 0.5) });
add({ name: 'Tile', f: () => tf.tile(t([2, 3], 1), [3, 2]) });
add({ name: 'Reverse', f: () => tf.reverse(t([3, 4, 5], 1), [0, 2]) });
add({ name: 'GatherV2 embeddings', f: () => tf.gather(t([50, 16], 1), ti([4, 9], 0, 50, 2)) });
add({ name: 'GatherV2 axis 1', f: () => tf.gather(t([6, 20, 3], 3), ti([7], 0, 20, 4), 1) });
add({ name: 'GatherV2 batchDims 1', f: () => tf.gather(t([4, 10, 3], 5), ti([4, 6], 0, 10, 6), 1, 1) });
add({ name: 'GatherNd', f: () => tf.gatherND(t([5, 6, 3], 1), ti([4, 2], 0, 5, 2)) });
add({ name: 'ScatterNd', f: () => tf.scatterND(tf.tensor2d([[0], [3], [0]], [3, 1], 'int32'), t([3, 4], 1), [5, 4]), atol: 1e-6 });
add({ name: 'UnsortedSegmentSum', f: () => tf.unsortedSegmentSum(t([40, 8], 1), ti([40], 0, 6, 2) as tf.Tensor1D, 6), atol: 1e-5 });
add({ name: 'OneHot', f: () => tf.oneHot(ti([9], 0, 5, 1), 5) });

// ---- matmul --------------------------------------------------------------------------------------
for (const [ta, tb] of [[false, false], [true, false], [false, true], [true, true]] as const) {
  add({ name: `BatchMatMul 2-D transA ${ta} transB ${tb}`, f: () => tf.matMul(t(ta ? [33, 17] : [17, 33], 1), t(tb ? [29, 33] : [33, 29], 2), ta, tb), atol: 1e-4, rtol: 1e-4 });
}
add({ name: 'BatchMatMul batched [2,3,13,8] x [2,3,8,13]', f: () => tf.matMul(t([2, 3, 13, 8], 3), t([2, 3, 8, 13], 4)), atol: 1e-4, rtol: 1e-4 });
add({ name: 'BatchMatMul broadcast batch [4,5,6] x [6,7]', f: () => tf.matMul(t([4, 5, 6], 5), t([6, 7], 6)), atol: 1e-4, rtol: 1e-4 });
add({ name: 'BatchMatMul broadcast batch [2,1,5,6] x [3,6,7]', f: () => tf.matMul(t([2, 1, 5, 6], 7), t([3, 6, 7], 8)), atol: 1e-4, rtol: 1e-4 });
add({ name: 'BatchMatMul BERT-sized [512, 768] x [768, 768]', f: () => tf.matMul(t([512, 768], 9, 0.05), t([768, 768], 10, 0.05)), atol: 1e-4, rtol: 1e-3 });

// ---- fused kernels against their composite definitions -------------------------------------------
add({
  name: 'AngleLayerNorm forward',
  f: () => fusedLayerNorm(t([37, 96], 1, 3), t([96], 2), t([96], 3), 1e-12),
  reference: () => tf.add(tf.mul(tf.mul(tf.sub(t([37, 96], 1, 3), tf.moments(t([37, 96], 1, 3), -1, true).mean), tf.rsqrt(tf.add(tf.moments(t([37, 96], 1, 3), -1, true).variance, 1e-12))), t([96], 2)), t([96], 3)),
  atol: 1e-5, rtol: 1e-4,
});
add({
  name: 'AngleLayerNormGrad (x, gamma, beta)',
  f: () => tf.grads((x: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(fusedLayerNorm(x, g, b, 1e-5), t([300, 48], 9)))) ([t([300, 48], 1), t([48], 2), t([48], 3)]),
  atol: 1e-4, rtol: 1e-3,
});
add({ name: 'AngleGelu', f: () => fusedGelu(t([9, 70], 1, 2)), reference: () => { const x = t([9, 70], 1, 2); return tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2)))); }, atol: 1e-6, rtol: 1e-5 });
add({ name: 'AngleGeluGrad', f: () => tf.grad((x: tf.Tensor) => tf.sum(tf.mul(fusedGelu(x), t([9, 70], 4))))(t([9, 70], 3, 2)), atol: 1e-5, rtol: 1e-4 });
add({
  name: 'AngleAdamW',
  f: () => { const o = fusedAdamWUpdate({ param: t([5, 40], 1), grad: t([5, 40], 2), m: t([5, 40], 3, 0.1), v: tf.abs(t([5, 40], 4, 0.1)), lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, step: 7 }); return [o.param, o.m, o.v]; },
  atol: 1e-6, rtol: 1e-5,
});

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
  const y1 = fusedDropout(x, 0.1, 42);
  const y2 = fusedDropout(x, 0.1, 42);
  const y3 = fusedDropout(x, 0.1, 43);
  const v1 = Array.from(y1.dataSync());
  const kept = v1.reduce((n, v) => n + (v !== 0 ? 1 : 0), 0) / v1.length;
  assert.ok(Math.abs(kept - 0.9) < 0.005, `kept fraction ${kept}`);
  assert.ok(v1.every((v) => v === 0 || Math.abs(v - 1 / 0.9) < 1e-6));
  assert.deepEqual(Array.from(y2.dataSync()), v1);
  assert.notDeepEqual(Array.from(y3.dataSync()), v1);
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
