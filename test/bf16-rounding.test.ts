/**
 * The 16-bit rounding of matmul inputs that emulates bf16/fp16 tensor-core training on the CPU:
 * lib/util/half-rounding.ts equals the independent bit-pattern codecs of lib/ops/half-float.ts
 * (round to nearest even, subnormals, overflow, NaN), and lib/backend/matmul-rounding.ts makes every
 * tfjs matmul multiply the rounded inputs in float32 — and puts the original kernels back, also
 * when the work throws; lib/backend/training-precision.ts (the trainer's `precision`) uses it on cpu.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { withMatmulInputRounding } from '../lib/backend/matmul-rounding.js';
import { parseTrainingPrecision, withTrainingPrecision } from '../lib/backend/training-precision.js';
import { UnknownNameError } from '../lib/util/errors.js';
import { MATMUL_PRECISION } from '../lib/backend/cuda/op-codes.js';
import { createEmulatedAddon } from './fixtures/cuda/emulated-addon.js';
import { applyOverrides, PARAMETER_CELL } from '../lib/experiments/overrides.js';
import { angleBert } from '../lib/experiments/recipes/index.js';
import { bf16ToFloat, floatToBf16, floatToFp16, fp16ToFloat } from '../lib/ops/half-float.js';
import { mulberry32Uniform } from '../lib/util/mulberry32.js';
import { roundArrayTo, roundToBf16, roundToFp16 } from '../lib/util/half-rounding.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

function samples(): number[] {
  const rand = mulberry32Uniform(5);
  const out = [0, -0, 1, -1, 65504, 65519.99, 65520, -70000, 2 ** -14, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 1e-30, 3.4e38, Infinity, -Infinity];
  // Exact ties of both formats: 1 + 2⁻⁸ (bf16), 1 + 3·2⁻⁸ (bf16), 1 + 2⁻¹¹ and 1 + 3·2⁻¹¹ (fp16).
  out.push(1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11, 1 + 3 * 2 ** -11, -(1 + 2 ** -8));
  for (let i = 0; i < 20000; i++) {
    const mag = 2 ** Math.floor(rand() * 80 - 40);
    out.push(Math.fround((rand() * 2 - 1) * mag));
  }
  return out;
}

test('bf16 rounding equals the bf16 codec (round to nearest even on the float32 bits)', () => {
  for (const x of samples()) assert.equal(roundToBf16(x), bf16ToFloat(floatToBf16(x)), `x = ${x}`);
  assert.equal(roundToBf16(1 + 2 ** -8), 1);
  assert.equal(roundToBf16(1 + 3 * 2 ** -8), 1 + 2 ** -6);
  assert.ok(Number.isNaN(roundToBf16(NaN)));
});

test('fp16 rounding equals the fp16 codec (nearest even, subnormals, overflow to infinity)', () => {
  for (const x of samples()) assert.equal(roundToFp16(x), fp16ToFloat(floatToFp16(x)), `x = ${x}`);
  assert.equal(roundToFp16(65520), Infinity);
  assert.equal(roundToFp16(3 * 2 ** -26), 2 ** -24);
  assert.ok(Number.isNaN(roundToFp16(NaN)));
});

test('under withMatmulInputRounding every matmul multiplies the rounded inputs in float32, and the kernels come back', async () => {
  const a = tf.randomNormal([3, 17, 40], 0, 1, 'float32', 1);
  const b = tf.randomNormal([3, 40, 9], 0, 1, 'float32', 2);
  const exact = tf.matMul(a, b);
  for (const precision of ['bf16', 'fp16'] as const) {
    const rounded = (t: tf.Tensor) => tf.tensor(roundArrayTo(precision, Float32Array.from(t.dataSync() as Float32Array)), t.shape);
    const want = tf.matMul(rounded(a), rounded(b));
    const got = await withMatmulInputRounding(precision, async () => tf.matMul(a, b));
    assert.deepEqual(Array.from(got.dataSync()), Array.from(want.dataSync()), `${precision}: the product of the rounded inputs`);
    const diff = tf.max(tf.abs(tf.sub(got, exact))).dataSync()[0];
    assert.ok(diff > 1e-4, `${precision}: rounding changed the product (max |diff| ${diff})`);
    // Gradients are matmuls too: they round as well.
    const g = await withMatmulInputRounding(precision, async () => tf.grad((x: tf.Tensor) => tf.sum(tf.matMul(x, b)))(a));
    const gWant = tf.matMul(tf.onesLike(exact), rounded(b), false, true);
    assert.deepEqual(Array.from(g.dataSync()), Array.from(gWant.dataSync()), `${precision}: the gradient's matmul rounds its inputs`);
  }
  assert.deepEqual(Array.from(tf.matMul(a, b).dataSync()), Array.from(exact.dataSync()), 'the float32 kernel is back');
  await assert.rejects(withMatmulInputRounding('bf16', async () => {
    throw new Error('boom');
  }), /boom/);
  assert.deepEqual(Array.from(tf.matMul(a, b).dataSync()), Array.from(exact.dataSync()), 'and back after a failure');
  await assert.rejects(withMatmulInputRounding('tf16' as 'bf16', async () => 0), /precision 'tf16': expected bf16 or fp16/);
});

test('withTrainingPrecision: tf32 leaves cpu matmuls float32, bf16 and fp16 round them as the emulation does, unknown names fail', async () => {
  const a = tf.randomNormal([5, 33], 0, 1, 'float32', 3);
  const b = tf.randomNormal([33, 7], 0, 1, 'float32', 4);
  const exact = Array.from(tf.matMul(a, b).dataSync());
  assert.deepEqual(Array.from((await withTrainingPrecision('tf32', async () => tf.matMul(a, b))).dataSync()), exact);
  for (const p of ['bf16', 'fp16'] as const) {
    const viaTrainer = Array.from((await withTrainingPrecision(p, async () => tf.matMul(a, b))).dataSync());
    const viaEmulation = Array.from((await withMatmulInputRounding(p, async () => tf.matMul(a, b))).dataSync());
    assert.deepEqual(viaTrainer, viaEmulation, p);
    assert.notDeepEqual(viaTrainer, exact, p);
  }
  assert.throws(() => parseTrainingPrecision('bf17'), (e: Error) => e instanceof UnknownNameError && /bf17/.test(e.message) && /tf32/.test(e.message));
});

test('the emulated addon multiplies bf16- and fp16-rounded inputs for precision codes 2 and 3 (matmul.cu: CUBLAS_COMPUTE_32F_FAST_16BF / _16F)', () => {
  const a = createEmulatedAddon();
  a.init();
  const put = (v: number[]) => {
    const p = a.malloc(v.length * 4);
    a.upload(p, Float32Array.from(v));
    return p;
  };
  const out = a.malloc(4);
  const get = () => {
    const o = new Float32Array(1);
    a.readSync(out, o);
    return o[0];
  };
  // 1 + 2⁻⁸ is a bf16 tie (to 1), kept by fp16; 1 + 2⁻¹² is rounded away by both.
  const x = put([1 + 2 ** -8]);
  const y = put([1 + 2 ** -12]);
  a.matmul(x, x, out, 1, 1, 1, 1, false, false, 0, 0, MATMUL_PRECISION.bf16);
  assert.equal(get(), 1);
  a.matmul(x, x, out, 1, 1, 1, 1, false, false, 0, 0, MATMUL_PRECISION.fp16);
  assert.equal(get(), Math.fround((1 + 2 ** -8) ** 2));
  a.matmul(y, y, out, 1, 1, 1, 1, false, false, 0, 0, MATMUL_PRECISION.fp16);
  assert.equal(get(), 1);
  a.matmul(y, y, out, 1, 1, 1, 1, false, false, 0, 0, MATMUL_PRECISION.fp32);
  assert.equal(get(), Math.fround((1 + 2 ** -12) ** 2));
  assert.throws(() => a.matmul(x, x, out, 1, 1, 1, 1, false, false, 0, 0, 7), /unknown precision code 7/);
});

test('a recipe takes precision as an override, recorded with its source', () => {
  const r = angleBert('stsb');
  const o = applyOverrides(r, { precision: 'bf16' });
  assert.equal(o.config.precision, 'bf16');
  assert.equal(o.sources.precision, PARAMETER_CELL);
  assert.equal(r.config.precision, undefined, 'TF32 stays the default');
});
