/**
 * Espresso's compression target: angle_emb 0.6.1 `AngleESETrainer.pca_compress` (angle.py:465-478),
 *
 *   A = softmax(mᵀm / √D, dim = −1)          [D, D], row softmax of the pooled batch m [B, D]
 *   U, S = torch.svd_lowrank(A, q = k)       (niter 2; torch 1.13's algorithm)
 *   P = m · U · diag(S)                      [B, k], a constant (computed under no_grad)
 *
 * torch 1.13's svd_lowrank for k < D (Halko et al. 2009, algorithm 5 on Aᵀ): a Gaussian draw R [D, k],
 * Q = qr(Aᵀ R).Q, twice Q = qr(A Q).Q, Q = qr(Aᵀ Q).Q; then B = A Q [D, k] and U, S its singular
 * vectors and values. For k = D the result is A's exact SVD, which is what is computed then.
 *
 * U·diag(S) = B·V with V the eigenvectors of BᵀB (descending eigenvalues), so P = m·B·V needs no
 * division by small singular values. Singular vectors are defined up to sign, so P matches the
 * library's target column by column up to sign; the draw R is torch's global RNG there and a seeded
 * stream here (pass `draw` to use a stored one, as the parity check does). Everything runs in float64
 * on the CPU: O(k·D²) per call (D = 768, k = 128: about 0.5 GFLOP), once per layer and step.
 */
import { InputError } from '../util/errors.js';
import { jacobiEigen } from '../util/jacobi-eigen.js';
import { mulberry32Uniform } from '../util/mulberry32.js';

export interface PcaCompressOptions {
  /** The Gaussian matrix R [D, k] (row-major) the randomised basis starts from; default a seeded draw. */
  draw?: ArrayLike<number>;
  /** Seed of the default draw. */
  seed?: number;
  /** Power iterations (torch's default 2). */
  niter?: number;
}

/** m [B, D] (row-major, B rows) → P [B, k] (row-major float64). */
export function pcaCompress(m: ArrayLike<number>, rows: number, dim: number, k: number, opts: PcaCompressOptions = {}): Float64Array {
  if (!Number.isInteger(k) || k < 1 || k > dim) throw new InputError(`pca_compress: k must be an integer in 1..${dim} (the hidden size), got ${k}`);
  if (m.length !== rows * dim) throw new InputError(`pca_compress: expected ${rows}×${dim} values, got ${m.length}`);
  const A = softmaxGram(m, rows, dim);
  let B: Float64Array; // [D, k]
  if (k < dim) {
    const At = transpose(A, dim, dim);
    const R = opts.draw ? Float64Array.from(opts.draw) : gaussian(dim * k, opts.seed ?? 0);
    if (R.length !== dim * k) throw new InputError(`pca_compress: the draw has ${R.length} values, expected ${dim}×${k}`);
    let Q = qrQ(matMul(At, R, dim, dim, k), dim, k);
    for (let i = 0; i < (opts.niter ?? 2); i++) {
      Q = qrQ(matMul(A, Q, dim, dim, k), dim, k);
      Q = qrQ(matMul(At, Q, dim, dim, k), dim, k);
    }
    B = matMul(A, Q, dim, dim, k);
  } else {
    B = A;
  }
  const V = topEigenvectors(gram(B, dim, k), k);
  return matMul(matMul(Float64Array.from(m), B, rows, dim, k), V, rows, k, k);
}

/** softmax(mᵀm / √D) row by row. */
function softmaxGram(m: ArrayLike<number>, rows: number, dim: number): Float64Array {
  const A = new Float64Array(dim * dim);
  const scale = 1 / Math.sqrt(dim);
  for (let b = 0; b < rows; b++) {
    for (let i = 0; i < dim; i++) {
      const mi = m[b * dim + i] * scale;
      if (mi === 0) continue;
      for (let j = 0; j < dim; j++) A[i * dim + j] += mi * m[b * dim + j];
    }
  }
  for (let i = 0; i < dim; i++) {
    let max = -Infinity;
    for (let j = 0; j < dim; j++) max = Math.max(max, A[i * dim + j]);
    let sum = 0;
    for (let j = 0; j < dim; j++) sum += A[i * dim + j] = Math.exp(A[i * dim + j] - max);
    for (let j = 0; j < dim; j++) A[i * dim + j] /= sum;
  }
  return A;
}

function transpose(a: Float64Array, r: number, c: number): Float64Array {
  const t = new Float64Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) t[j * r + i] = a[i * c + j];
  return t;
}

/** a [n, p] · b [p, q]. */
function matMul(a: Float64Array, b: Float64Array, n: number, p: number, q: number): Float64Array {
  const out = new Float64Array(n * q);
  for (let i = 0; i < n; i++) {
    for (let l = 0; l < p; l++) {
      const v = a[i * p + l];
      if (v === 0) continue;
      const row = l * q;
      const o = i * q;
      for (let j = 0; j < q; j++) out[o + j] += v * b[row + j];
    }
  }
  return out;
}

/** The orthonormal Q [n, k] of a thin QR of a [n, k] (modified Gram-Schmidt, twice for stability). */
function qrQ(a: Float64Array, n: number, k: number): Float64Array {
  const q = Float64Array.from(a);
  for (let j = 0; j < k; j++) {
    for (let pass = 0; pass < 2; pass++) {
      for (let p = 0; p < j; p++) {
        let dot = 0;
        for (let i = 0; i < n; i++) dot += q[i * k + p] * q[i * k + j];
        for (let i = 0; i < n; i++) q[i * k + j] -= dot * q[i * k + p];
      }
    }
    let norm = 0;
    for (let i = 0; i < n; i++) norm += q[i * k + j] ** 2;
    norm = Math.sqrt(norm);
    if (norm === 0) throw new InputError('pca_compress: the randomised basis lost rank (a zero column); the pooled batch is degenerate');
    for (let i = 0; i < n; i++) q[i * k + j] /= norm;
  }
  return q;
}

/** BᵀB [k, k] of b [n, k]. */
function gram(b: Float64Array, n: number, k: number): Float64Array {
  const g = new Float64Array(k * k);
  for (let i = 0; i < n; i++) {
    for (let p = 0; p < k; p++) {
      const v = b[i * k + p];
      for (let q = p; q < k; q++) g[p * k + q] += v * b[i * k + q];
    }
  }
  for (let p = 0; p < k; p++) for (let q = 0; q < p; q++) g[p * k + q] = g[q * k + p];
  return g;
}

/** Eigenvectors of a symmetric [k, k] matrix as columns, by descending eigenvalue (cyclic Jacobi, ../util/jacobi-eigen.ts). */
function topEigenvectors(s: Float64Array, k: number): Float64Array {
  // Converged relative to the diagonal: the projected covariance's scale is the batch's.
  const { values, vectors } = jacobiEigen(s, k, { converged: (off, diag) => off <= 1e-30 * diag });
  const order = Array.from({ length: k }, (_, i) => i).sort((x, y) => values[y] - values[x]);
  const out = new Float64Array(k * k);
  for (let r = 0; r < k; r++) for (let j = 0; j < k; j++) out[r * k + j] = vectors[r * k + order[j]];
  return out;
}

/** Standard normal draws from a seeded stream (Box-Muller over mulberry32). */
function gaussian(n: number, seed: number): Float64Array {
  const u = mulberry32Uniform(seed);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - u()));
    const th = 2 * Math.PI * u();
    out[i] = r * Math.cos(th);
    if (i + 1 < n) out[i + 1] = r * Math.sin(th);
  }
  return out;
}
