/**
 * Eigen-decomposition of a small symmetric matrix by cyclic Jacobi rotations (Golub & Van Loan,
 * "Matrix Computations", §8.5): A = U diag(λ) Uᵀ, U's column j the eigenvector of λ_j. Exact to
 * float64 rounding and simple; for the k×k matrices of the library (a projected covariance in
 * ../losses/pca-compress.ts, the class curvature block of ../eval/transfer/logistic-regression.ts),
 * where k is at most a few hundred.
 *
 * The two callers stop on different tests (one relative to the diagonal, one absolute) and skip
 * different pairs; both are parameters, so each computes to the bit what it computed before the
 * solver was shared.
 */

export interface JacobiOptions {
  /** Converged, given the sum of squares above the diagonal and that of the diagonal; checked before every sweep. */
  converged: (offDiagonal: number, diagonal: number) => boolean;
  /** Pairs with |a_pq| below this are not rotated (default Number.MIN_VALUE: only exact zeros). */
  skipBelow?: number;
  /** Sweeps at most (default 100). */
  maxSweeps?: number;
}

export interface SymmetricEigen {
  /** λ_j, in the order Jacobi leaves them on the diagonal (unsorted). */
  values: Float64Array;
  /** Row-major [k, k]: column j is the eigenvector of values[j]. */
  vectors: Float64Array;
}

/** The eigenvalues and eigenvectors of the symmetric row-major [k, k] matrix `a` (not modified). */
export function jacobiEigen(a: ArrayLike<number>, k: number, opts: JacobiOptions): SymmetricEigen {
  if (a.length !== k * k) throw new RangeError(`jacobiEigen: expected a ${k}×${k} matrix (${k * k} entries), got ${a.length}`);
  const skipBelow = opts.skipBelow ?? Number.MIN_VALUE;
  const maxSweeps = opts.maxSweeps ?? 100;
  const m = Float64Array.from(a);
  const u = new Float64Array(k * k);
  for (let i = 0; i < k; i++) u[i * k + i] = 1;
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let off = 0;
    let diag = 0;
    for (let p = 0; p < k; p++) {
      diag += m[p * k + p] ** 2;
      for (let q = p + 1; q < k; q++) off += m[p * k + q] ** 2;
    }
    if (opts.converged(off, diag)) break;
    for (let p = 0; p < k; p++) {
      for (let q = p + 1; q < k; q++) {
        const apq = m[p * k + q];
        if (Math.abs(apq) < skipBelow) continue;
        // The rotation that zeroes a_pq, its tangent the smaller root of t² + 2θt − 1 = 0.
        const theta = (m[q * k + q] - m[p * k + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let r = 0; r < k; r++) {
          const mrp = m[r * k + p];
          const mrq = m[r * k + q];
          m[r * k + p] = c * mrp - s * mrq;
          m[r * k + q] = s * mrp + c * mrq;
        }
        for (let r = 0; r < k; r++) {
          const mpr = m[p * k + r];
          const mqr = m[q * k + r];
          m[p * k + r] = c * mpr - s * mqr;
          m[q * k + r] = s * mpr + c * mqr;
        }
        for (let r = 0; r < k; r++) {
          const urp = u[r * k + p];
          const urq = u[r * k + q];
          u[r * k + p] = c * urp - s * urq;
          u[r * k + q] = s * urp + c * urq;
        }
      }
    }
  }
  const values = new Float64Array(k);
  for (let i = 0; i < k; i++) values[i] = m[i * k + i];
  return { values, vectors: u };
}
