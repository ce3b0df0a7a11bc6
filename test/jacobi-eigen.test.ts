/**
 * The shared Jacobi eigen solver (lib/util/jacobi-eigen.ts) that PCA compression (ESE) and the
 * transfer probe's preconditioner call: A U = U diag(λ) with U orthonormal on random symmetric
 * matrices, a matrix with known eigenvalues, a diagonal one left as it is, and a wrong size refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jacobiEigen } from '../lib/util/jacobi-eigen.js';
import { mulberry32Uniform } from '../lib/util/mulberry32.js';

const RELATIVE = { converged: (off: number, diag: number) => off <= 1e-30 * diag };

function randomSymmetric(k: number, seed: number): Float64Array {
  const u = mulberry32Uniform(seed);
  const b = Float64Array.from({ length: k * k }, () => u() - 0.5);
  const a = new Float64Array(k * k);
  for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) for (let r = 0; r < k; r++) a[i * k + j] += b[i * k + r] * b[j * k + r];
  return a;
}

test('A U = U diag(λ) and UᵀU = I on random symmetric matrices, under both stopping tests', () => {
  for (const k of [1, 2, 7, 24]) {
    const a = randomSymmetric(k, k);
    for (const opts of [RELATIVE, { converged: (off: number) => off < 1e-30, skipBelow: 1e-300 }]) {
      const { values, vectors: v } = jacobiEigen(a, k, opts);
      for (let i = 0; i < k; i++) {
        for (let j = 0; j < k; j++) {
          let av = 0;
          let vtv = 0;
          for (let r = 0; r < k; r++) {
            av += a[i * k + r] * v[r * k + j];
            vtv += v[r * k + i] * v[r * k + j];
          }
          assert.ok(Math.abs(av - values[j] * v[i * k + j]) < 1e-10, `k ${k}: (AU)[${i},${j}] ${av} vs λ u ${values[j] * v[i * k + j]}`);
          assert.ok(Math.abs(vtv - (i === j ? 1 : 0)) < 1e-12, `k ${k}: (UᵀU)[${i},${j}] = ${vtv}`);
        }
      }
    }
  }
});

test('known eigenvalues: [[2, 1], [1, 2]] has 1 and 3; a diagonal matrix is left as it is; a wrong size is refused', () => {
  const { values } = jacobiEigen([2, 1, 1, 2], 2, RELATIVE);
  assert.deepEqual([...values].sort((x, y) => x - y).map((x) => Math.round(x * 1e12) / 1e12), [1, 3]);
  const diag = jacobiEigen([5, 0, 0, 0, -1, 0, 0, 0, 2], 3, RELATIVE);
  assert.deepEqual([...diag.values], [5, -1, 2]);
  assert.deepEqual([...diag.vectors], [1, 0, 0, 0, 1, 0, 0, 0, 1]);
  assert.throws(() => jacobiEigen([1, 2, 3], 2, RELATIVE), /expected a 2×2 matrix \(4 entries\), got 3/);
});
