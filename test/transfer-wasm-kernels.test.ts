/**
 * The WebAssembly SIMD passes over X (lib/eval/transfer/linear-kernels-wasm.ts) against the JS
 * kernels they replace (matrix.ts linearScores, addTransposedProduct): the same bits for every
 * shape that exercises a different path (row counts not a multiple of four, odd and even feature
 * counts, one and several parameter blocks, no rows), whole fits iterate identically with either,
 * and a handle whose memory a later fit took refuses to run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { available, prepareLinearKernels } from '../lib/eval/transfer/linear-kernels-wasm.js';
import { addTransposedProduct, linearScores, type Matrix } from '../lib/eval/transfer/matrix.js';
import { fitLogisticRegressionSklearn } from '../lib/eval/transfer/sklearn-lbfgs-fit.js';
import { fitLogisticRegression } from '../lib/eval/transfer/logistic-regression.js';
import { mulberry32Uniform } from '../lib/util/mulberry32.js';

const skip = available() ? false : 'this runtime has no WebAssembly SIMD';

function randomMatrix(rows: number, cols: number, seed: number): Matrix {
  const u = mulberry32Uniform(seed);
  return { data: Float64Array.from({ length: rows * cols }, () => 2 * u() - 1), rows, cols };
}

/** Indices where a and b differ in bits (Object.is: -0 and NaN told apart). */
function differing(a: Float64Array, b: Float64Array): number[] {
  assert.equal(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) out.push(i);
  return out;
}

test('scores and Xᵀr equal the JS kernels bit for bit at every shape', { skip }, () => {
  const shapes: [number, number, number][] = [[0, 4, 1], [3, 5, 2], [4, 1, 1], [13, 7, 3], [257, 50, 1], [101, 300, 6], [96, 768, 2]];
  for (const [n, d, B] of shapes) {
    const x = randomMatrix(n, d, 7 + n + d + B);
    const u = mulberry32Uniform(n * 31 + d);
    const theta = Float64Array.from({ length: B * (d + 1) }, () => u() - 0.5);
    const k = prepareLinearKernels(x, B)!;
    const zJs = new Float64Array(n * B);
    linearScores(x, theta, B, zJs);
    const z = k.scores(theta, B);
    assert.deepEqual(differing(zJs, z), [], `scores ${n}×${d}, ${B} block(s)`);
    // residuals written in place, as the objective does
    for (let i = 0; i < z.length; i++) z[i] = zJs[i] = u() - 0.5;
    const gJs = Float64Array.from({ length: B * (d + 1) }, () => u());
    const g = gJs.slice();
    addTransposedProduct(x, zJs, B, gJs);
    k.addTransposedProduct(z, B, g);
    assert.deepEqual(differing(gJs, g), [], `Xᵀr ${n}×${d}, ${B} block(s)`);
  }
});

test('a capped sklearn fit and a converged fit iterate identically with either kernel (binary and multinomial)', { skip }, () => {
  for (const classes of [2, 4]) {
    const x = randomMatrix(403, 21, 11 * classes);
    const labels = Int32Array.from({ length: x.rows }, (_, i) => Math.floor((x.data[i * x.cols] + 1) * classes / 2.0001) % classes);
    for (const fit of [fitLogisticRegressionSklearn, fitLogisticRegression]) {
      const js = fit(x, labels, 2, { kernels: 'js' });
      const wasm = fit(x, labels, 2, { kernels: 'wasm' });
      assert.deepEqual(wasm.solver, js.solver, `${fit.name}, ${classes} classes: solver`);
      assert.deepEqual(differing(js.theta, wasm.theta), [], `${fit.name}, ${classes} classes: coefficients`);
      assert.ok(Object.is(js.objective, wasm.objective));
    }
  }
});

test('a handle whose memory a later fit took throws instead of reading the other fit\'s rows', { skip }, () => {
  const first = prepareLinearKernels(randomMatrix(8, 3, 1), 1)!;
  prepareLinearKernels(randomMatrix(8, 3, 2), 1);
  assert.throws(() => first.scores(new Float64Array(4), 1), /replaced by a later prepareLinearKernels/);
  const k = prepareLinearKernels(randomMatrix(8, 3, 3), 2)!;
  assert.throws(() => k.scores(new Float64Array(12), 3), /prepared for at most 2/);
  assert.throws(() => k.addTransposedProduct(new Float64Array(8), 1, new Float64Array(4)), /the array scores\(\) returned/);
});
