/**
 * The float64 row-major matrices the transfer classifiers work on (SentEval's X, y are numpy
 * float64 / int arrays; scikit-learn's lbfgs path converts X to float64), and the few dense
 * linear-algebra pieces the logistic-regression solver needs on its (d+1)×(d+1) systems:
 * row gathering, the Gram matrix of [X, 1], and a Cholesky factorisation with its solve.
 */

export interface Matrix {
  /** rows × cols, row-major. */
  data: Float64Array;
  rows: number;
  cols: number;
}

export function matrix(data: Float64Array, rows: number, cols: number): Matrix {
  if (data.length !== rows * cols) throw new RangeError(`matrix: ${data.length} values is not ${rows} × ${cols}`);
  return { data, rows, cols };
}

/**
 * The rows `idx` of m, in that order, as a contiguous matrix: a new one, or a view at the start
 * of `buffer` (reused between calls to spare allocations; the result is valid until the buffer is
 * written again).
 */
export function gatherRows(m: Matrix, idx: ArrayLike<number>, buffer?: Float64Array): Matrix {
  const c = m.cols;
  const need = idx.length * c;
  if (buffer && buffer.length < need) throw new RangeError(`gatherRows: buffer holds ${buffer.length} values, ${need} needed`);
  const out = buffer ? buffer.subarray(0, need) : new Float64Array(need);
  const src = m.data;
  const rows = m.rows;
  for (let i = 0; i < idx.length; i++) {
    const r = idx[i];
    if (!(r >= 0 && r < rows)) throw new RangeError(`gatherRows: row ${r} out of range [0, ${rows})`);
    out.set(src.subarray(r * c, r * c + c), i * c);
  }
  return { data: out, rows: idx.length, cols: c };
}

/** Entries idx of a vector, in that order. */
export function gather(v: Int32Array, idx: ArrayLike<number>): Int32Array {
  const out = new Int32Array(idx.length);
  for (let i = 0; i < idx.length; i++) out[i] = v[idx[i]];
  return out;
}

/**
 * G = X̃ᵀ diag(w) X̃ with X̃ = [X, 1] ((cols+1)², symmetric, full); w = 1 when not given: the
 * curvature of a linear model's loss (w: the per-row second derivatives), used to precondition
 * the solver.
 */
export function gramWithIntercept(x: Matrix, w?: ArrayLike<number>): Float64Array {
  const d = x.cols;
  const p = d + 1;
  const n = x.rows;
  const g = new Float64Array(p * p);
  const xs = x.data;
  // upper triangle, four rows at a time (one load and store of g per four rows)
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const o = i * d;
    const [w0, w1, w2, w3] = w ? [w[i], w[i + 1], w[i + 2], w[i + 3]] : [1, 1, 1, 1];
    for (let a = 0; a < d; a++) {
      const q = o + a;
      const v0 = w0 * xs[q];
      const v1 = w1 * xs[q + d];
      const v2 = w2 * xs[q + 2 * d];
      const v3 = w3 * xs[q + 3 * d];
      const ra = a * p;
      for (let b = a; b < d; b++) {
        const t = o + b;
        g[ra + b] += v0 * xs[t] + v1 * xs[t + d] + (v2 * xs[t + 2 * d] + v3 * xs[t + 3 * d]);
      }
      g[ra + d] += v0 + v1 + (v2 + v3);
    }
    g[d * p + d] += w0 + w1 + (w2 + w3);
  }
  for (; i < n; i++) {
    const o = i * d;
    const wi = w ? w[i] : 1;
    for (let a = 0; a < d; a++) {
      const va = wi * xs[o + a];
      const ra = a * p;
      for (let b = a; b < d; b++) g[ra + b] += va * xs[o + b];
      g[ra + d] += va;
    }
    g[d * p + d] += wi;
  }
  for (let a = 0; a < p; a++) for (let b = 0; b < a; b++) g[a * p + b] = g[b * p + a];
  return g;
}

/** In-place lower Cholesky factor L of an SPD p×p matrix (A = L Lᵀ); throws if not positive definite. */
export function cholesky(a: Float64Array, p: number): Float64Array {
  const l = new Float64Array(p * p);
  for (let j = 0; j < p; j++) {
    let s = a[j * p + j];
    for (let k = 0; k < j; k++) s -= l[j * p + k] * l[j * p + k];
    if (!(s > 0)) throw new RangeError(`cholesky: matrix is not positive definite (pivot ${j}: ${s})`);
    const ljj = Math.sqrt(s);
    l[j * p + j] = ljj;
    for (let i = j + 1; i < p; i++) {
      let t = a[i * p + j];
      for (let k = 0; k < j; k++) t -= l[i * p + k] * l[j * p + k];
      l[i * p + j] = t / ljj;
    }
  }
  return l;
}

/** Solves L Lᵀ x = b for x (b is not modified), writing x into out (may alias b). */
export function choleskySolve(l: Float64Array, p: number, b: ArrayLike<number>, out: Float64Array, bOffset = 0, outOffset = 0): void {
  // forward: L z = b
  for (let i = 0; i < p; i++) {
    let s = b[bOffset + i];
    for (let k = 0; k < i; k++) s -= l[i * p + k] * out[outOffset + k];
    out[outOffset + i] = s / l[i * p + i];
  }
  // backward: Lᵀ x = z
  for (let i = p - 1; i >= 0; i--) {
    let s = out[outOffset + i];
    for (let k = i + 1; k < p; k++) s -= l[k * p + i] * out[outOffset + k];
    out[outOffset + i] = s / l[i * p + i];
  }
}

/**
 * Scores of a linear model with B parameter blocks [w_c (cols), b_c] on every row:
 * out[i·B + c] = w_c·x_i + b_c. Four rows at a time share each weight load and keep four
 * independent sums (about twice as fast in V8 as one row at a time).
 */
export function linearScores(x: Matrix, theta: Float64Array, B: number, out: Float64Array): void {
  const d = x.cols;
  const p = d + 1;
  const xs = x.data;
  const n = x.rows;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const o = i * d;
    for (let c = 0; c < B; c++) {
      const w = c * p;
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let k = 0; k < d; k++) {
        const t = theta[w + k];
        const q = o + k;
        a0 += t * xs[q];
        a1 += t * xs[q + d];
        a2 += t * xs[q + 2 * d];
        a3 += t * xs[q + 3 * d];
      }
      const b = theta[w + d];
      out[i * B + c] = a0 + b;
      out[(i + 1) * B + c] = a1 + b;
      out[(i + 2) * B + c] = a2 + b;
      out[(i + 3) * B + c] = a3 + b;
    }
  }
  for (; i < n; i++) {
    for (let c = 0; c < B; c++) {
      const w = c * p;
      let a = 0;
      for (let k = 0; k < d; k++) a += theta[w + k] * xs[i * d + k];
      out[i * B + c] = a + theta[w + d];
    }
  }
}

/**
 * grad[c·(cols+1) + k] += Σ_i r[i·B + c] · x̃_ik for the B blocks (x̃ = [x, 1]): the data part of a
 * linear model's gradient, Xᵀ R. Four rows at a time (one load and store of grad per four rows).
 */
export function addTransposedProduct(x: Matrix, r: Float64Array, B: number, grad: Float64Array): void {
  const d = x.cols;
  const p = d + 1;
  const xs = x.data;
  const n = x.rows;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const o = i * d;
    for (let c = 0; c < B; c++) {
      const r0 = r[i * B + c];
      const r1 = r[(i + 1) * B + c];
      const r2 = r[(i + 2) * B + c];
      const r3 = r[(i + 3) * B + c];
      const w = c * p;
      for (let k = 0; k < d; k++) {
        const q = o + k;
        grad[w + k] += r0 * xs[q] + r1 * xs[q + d] + (r2 * xs[q + 2 * d] + r3 * xs[q + 3 * d]);
      }
      grad[w + d] += r0 + r1 + (r2 + r3);
    }
  }
  for (; i < n; i++) {
    for (let c = 0; c < B; c++) {
      const rc = r[i * B + c];
      const w = c * p;
      for (let k = 0; k < d; k++) grad[w + k] += rc * xs[i * d + k];
      grad[w + d] += rc;
    }
  }
}
