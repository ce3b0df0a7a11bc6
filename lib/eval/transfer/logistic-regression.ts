/**
 * L2-regularised logistic regression as scikit-learn 1.2.1's `LogisticRegression(C=C)` defines it
 * (objective in logistic-objective.ts; binary: one weight vector, more classes: multinomial
 * softmax), solved to its optimum, deterministically, by preconditioned L-BFGS (lbfgs.ts).
 *
 * This is the converged reference: scikit-learn's default lbfgs stops after 100 iterations
 * (`max_iter=100`, `tol=1e-4` on the gradient of the summed loss), short of the optimum in most of
 * SentEval's fits (golden README, Tolerances); SentEval's own path, capped where SciPy stops, is
 * sklearn-lbfgs-fit.ts. This file solves to the optimum, which the golden's `final.optimum`
 * (sklearn newton-cg, tol 1e-10) and `informative_converged_result` check, and which the
 * scikit-learn learner offers as `solver: 'optimum'`. Stopping rule: predicted decrease
 * δ = −gᵀd/2 ≈ f − f* below 1e-11·f. Since the Hessian is ≈ c·X̃ᵀX̃ (c ≈ 0.2), the margins' RMS
 * error is then about √(2δ / (c·n)) ≈ 1e-5 on these tasks: no prediction with a larger margin can
 * flip (on the golden, every task number equals the converged reference's; 1e-13 costs ~15% more
 * iterations and changes nothing).
 *
 * Preconditioner P ≈ ∇²f. The Hessian is Σ_i D_i ⊗ x̃_i x̃_iᵀ + R/C (x̃ = [x, 1], R = I on the
 * weights, 0 on the intercepts, D_i the softmax covariance of row i). Either (default) P replaces
 * every D_i by their mean A at the starting point (at θ = 0: the class priors π, binary π(1−π),
 * K classes diag(π) − ππᵀ), so P = A ⊗ G + I ⊗ R/C with the Gram matrix G = X̃ᵀX̃, solved blockwise
 * in A's eigenbasis with (d+1)×(d+1) Cholesky factors; or the caller passes the exact loss
 * curvature at a nearby optimum (`curvature`, from dataHessian) and P = that + R/C. A caller that
 * fits many C on similar rows passes G or the curvature once, and a warm start (the optimum of a
 * nearby problem): that changes how fast we converge, never where.
 *
 * Labels are any integers: classes = the sorted distinct labels (sklearn's classes_); prediction
 * is class 1 iff w·x + b > 0 (binary) or the first argmax of the K scores.
 */
import { InputError } from '../../util/errors.js';
import { jacobiEigen } from '../../util/jacobi-eigen.js';
import { blocksOf, decisionFunction, logisticObjective, type LogisticProblem } from './logistic-objective.js';
import { minimizeLbfgs } from './lbfgs.js';
import { prepareLinearKernels } from './linear-kernels-wasm.js';
import { cholesky, choleskySolve, gramWithIntercept, type Matrix } from './matrix.js';

export interface LogisticModel {
  /** Sorted distinct training labels. */
  classes: Int32Array;
  C: number;
  dim: number;
  /** Parameters per block [w (dim), b]; one block for binary, K for multinomial. */
  theta: Float64Array;
  /** Objective at theta on the training rows. */
  objective: number;
  solver: SolverReport;
}

/** How a fit ended: iterations, objective/gradient evaluations, and why it stopped. */
export interface SolverReport {
  iterations: number;
  evaluations: number;
  /** The solver's own convergence test passed (false at an iteration cap). */
  converged: boolean;
  /** Why it stopped (this solver: 'decrement' | 'no-decrease' | 'max-iter'; SciPy's L-BFGS-B: its message). */
  reason: string;
  /** The last predicted decrease −gᵀd/2 (this file's solver only). */
  decrement?: number;
}

export interface LogisticFitOptions {
  /** Start from these parameters (same layout as LogisticModel.theta) instead of zeros. */
  warmStart?: Float64Array;
  /** gramWithIntercept(x) (or a function giving it), when the caller has it cheaper than a pass over x. */
  gram?: Float64Array | (() => Float64Array);
  /**
   * dataHessian(x, …) at a nearby solution (e.g. the previous C's optimum): the preconditioner is
   * then this Hessian plus the penalty's, instead of the Kronecker approximation (fewer iterations,
   * at the price of computing it once and factoring a (blocks·(d+1))² matrix per fit).
   */
  curvature?: Float64Array;
  /** Relative predicted decrease at which the solver stops (default LOGISTIC_TOL = 1e-11). */
  tol?: number;
  maxIter?: number;
  /** The passes over x: WebAssembly SIMD where the runtime has it (default), or the JS kernels; the same bits either way. */
  kernels?: 'wasm' | 'js';
}

/** Default stopping tolerance of fitLogisticRegression (relative predicted decrease). */
export const LOGISTIC_TOL = 1e-11;

/** Sorted distinct labels and each row's index among them. */
export function encodeClasses(labels: Int32Array): { classes: Int32Array; y: Int32Array } {
  const seen = new Set<number>();
  let last = NaN;
  for (let i = 0; i < labels.length; i++) {
    if (labels[i] !== last) seen.add((last = labels[i]));
  }
  const classes = Int32Array.from(seen).sort();
  const y = new Int32Array(labels.length);
  if (classes[0] === 0 && classes[classes.length - 1] === classes.length - 1) y.set(labels); // already 0..K-1
  else for (let i = 0; i < labels.length; i++) y[i] = classes.indexOf(labels[i]);
  return { classes, y };
}

/** Jacobi eigen-decomposition of a small symmetric K×K matrix (../../util/jacobi-eigen.ts): A = U diag(λ) Uᵀ (U column k = eigenvector k). */
function symmetricEigen(a: Float64Array, K: number): { values: Float64Array; vectors: Float64Array } {
  return jacobiEigen(a, K, { converged: (off) => off < 1e-30, skipBelow: 1e-300 });
}

/**
 * P⁻¹ for P = A ⊗ G + I ⊗ R/C (binary: A = the scalar π(1−π)). Eigenvalues of A below a floor (the
 * softmax's all-ones direction, where only the regulariser curves) are lifted to keep each block
 * SPD; the intercept part of that direction is projected out anyway.
 */
function kroneckerPreconditioner(gram: Float64Array, p: number, a: Float64Array, B: number, C: number): (v: Float64Array, out: Float64Array) => void {
  const { values, vectors } = B === 1 ? { values: Float64Array.of(a[0]), vectors: Float64Array.of(1) } : symmetricEigen(a, B);
  // floor: near-separable data at a warm start can make A ≈ 0; P must stay positive definite
  const floor = 1e-6 * Math.max(...values, 1e-2);
  const factors = Array.from(values, (lam) => {
    const l = Math.max(lam, floor);
    const blk = new Float64Array(p * p);
    for (let i = 0; i < p * p; i++) blk[i] = l * gram[i];
    for (let i = 0; i < p - 1; i++) blk[i * p + i] += 1 / C;
    return cholesky(blk, p);
  });
  const rot = new Float64Array(B * p);
  return (v, out) => {
    if (B === 1) {
      choleskySolve(factors[0], p, v, out);
      return;
    }
    // rot = Uᵀ V (V: B × p), solve each row, out = U Z
    rot.fill(0);
    for (let k = 0; k < B; k++) for (let c = 0; c < B; c++) {
      const ukc = vectors[c * B + k];
      if (ukc === 0) continue;
      for (let j = 0; j < p; j++) rot[k * p + j] += ukc * v[c * p + j];
    }
    for (let k = 0; k < B; k++) choleskySolve(factors[k], p, rot, rot, k * p, k * p);
    out.fill(0);
    for (let c = 0; c < B; c++) for (let k = 0; k < B; k++) {
      const uck = vectors[c * B + k];
      if (uck === 0) continue;
      for (let j = 0; j < p; j++) out[c * p + j] += uck * rot[k * p + j];
    }
  };
}

/**
 * The row-averaged softmax covariance (1/n) Σ_i diag(p_i) − p_i p_iᵀ (binary: p(1−p), a 1×1
 * matrix) at θ, or at the intercept-only model p_i = class priors when θ is not given.
 */
function meanSoftmaxCovariance(x: Matrix, y: Int32Array, K: number, theta?: Float64Array): Float64Array {
  const n = y.length;
  const B = blocksOf(K);
  if (!theta) {
    const prior = new Float64Array(K);
    for (let i = 0; i < n; i++) prior[y[i]] += 1 / n;
    if (B === 1) return Float64Array.of(prior[1] * (1 - prior[1]));
    const a = new Float64Array(K * K);
    for (let i = 0; i < K; i++) for (let j = 0; j < K; j++) a[i * K + j] = (i === j ? prior[i] : 0) - prior[i] * prior[j];
    return a;
  }
  const z = decisionFunction(x, theta, K);
  if (B === 1) {
    let s = 0;
    for (let i = 0; i < n; i++) {
      const e = Math.exp(-Math.abs(z[i]));
      s += e / ((1 + e) * (1 + e));
    }
    return Float64Array.of(s / n);
  }
  const a = new Float64Array(K * K);
  const pr = new Float64Array(K);
  for (let i = 0; i < n; i++) {
    let zmax = -Infinity;
    for (let c = 0; c < K; c++) zmax = Math.max(zmax, z[i * K + c]);
    let sum = 0;
    for (let c = 0; c < K; c++) sum += pr[c] = Math.exp(z[i * K + c] - zmax);
    for (let c = 0; c < K; c++) pr[c] /= sum;
    for (let c = 0; c < K; c++) {
      a[c * K + c] += pr[c] / n;
      for (let e = 0; e < K; e++) a[c * K + e] -= (pr[c] * pr[e]) / n;
    }
  }
  return a;
}

/**
 * The loss part of the Hessian at θ on rows x: Σ_i S_i ⊗ x̃_i x̃_iᵀ with S_i the softmax covariance
 * diag(p_i) − p_i p_iᵀ of row i (binary: p_i(1 − p_i)); (B·(d+1))², block (c, e) = X̃ᵀ diag(S[:, c, e]) X̃.
 */
export function dataHessian(x: Matrix, nClasses: number, theta: Float64Array): Float64Array {
  const n = x.rows;
  const p = x.cols + 1;
  const B = blocksOf(nClasses);
  const z = decisionFunction(x, theta, nClasses);
  if (B === 1) {
    const w = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const e = Math.exp(-Math.abs(z[i]));
      w[i] = e / ((1 + e) * (1 + e));
    }
    return gramWithIntercept(x, w);
  }
  const prob = new Float64Array(n * B);
  for (let i = 0; i < n; i++) {
    let zmax = -Infinity;
    for (let c = 0; c < B; c++) zmax = Math.max(zmax, z[i * B + c]);
    let sum = 0;
    for (let c = 0; c < B; c++) sum += prob[i * B + c] = Math.exp(z[i * B + c] - zmax);
    for (let c = 0; c < B; c++) prob[i * B + c] /= sum;
  }
  const N = B * p;
  const h = new Float64Array(N * N);
  const w = new Float64Array(n);
  for (let c = 0; c < B; c++) {
    for (let e = c; e < B; e++) {
      for (let i = 0; i < n; i++) w[i] = (c === e ? prob[i * B + c] : 0) - prob[i * B + c] * prob[i * B + e];
      const g = gramWithIntercept(x, w);
      for (let a = 0; a < p; a++) {
        for (let b = 0; b < p; b++) {
          h[(c * p + a) * N + e * p + b] = g[a * p + b];
          h[(e * p + b) * N + c * p + a] = g[a * p + b];
        }
      }
    }
  }
  return h;
}

/**
 * P⁻¹ for P = H + R/C with H a data Hessian (dataHessian). The intercepts get a small floor: for K
 * classes their common shift is flat (softmax is invariant to it; that direction is projected out
 * anyway), and on (near-)separable data their curvature vanishes.
 */
function hessianPreconditioner(h: Float64Array, p: number, B: number, C: number): (v: Float64Array, out: Float64Array) => void {
  const N = B * p;
  const a = Float64Array.from(h);
  for (let c = 0; c < B; c++) for (let k = 0; k < p - 1; k++) a[(c * p + k) * N + c * p + k] += 1 / C;
  // the intercepts' curvature vanishes on (near-)separable data: keep a floor there
  let mean = 0;
  for (let c = 0; c < B; c++) mean += a[(c * p + p - 1) * N + c * p + p - 1] / B;
  const floor = 1e-3 * Math.max(mean, 1e-6);
  for (let c = 0; c < B; c++) {
    if (B > 1) for (let e = 0; e < B; e++) a[(c * p + p - 1) * N + e * p + p - 1] += floor / B;
    else a[(c * p + p - 1) * N + c * p + p - 1] += floor;
  }
  const l = cholesky(a, N);
  return (v, out) => choleskySolve(l, N, v, out);
}

/** Fits LogisticRegression(C) on rows x with the given labels, to the optimum. */
export function fitLogisticRegression(x: Matrix, labels: Int32Array, C: number, o: LogisticFitOptions = {}): LogisticModel {
  if (labels.length !== x.rows) throw new RangeError(`fitLogisticRegression: ${labels.length} labels for ${x.rows} rows`);
  if (!(C > 0)) throw new RangeError(`fitLogisticRegression: C must be > 0, got ${C}`);
  const { classes, y } = encodeClasses(labels);
  const K = classes.length;
  if (K < 2) throw new InputError(`logistic regression needs samples of at least 2 classes; the training rows all have label ${classes[0]}`);
  const d = x.cols;
  const p = d + 1;
  const B = blocksOf(K);
  // x into WebAssembly's memory once for the fit's evaluations
  const kernels = o.kernels === 'js' ? undefined : prepareLinearKernels(x, B);
  const pr: LogisticProblem = { x, y, nClasses: K, C, ...(kernels ? { kernels } : {}) };
  const precondition = o.curvature
    ? hessianPreconditioner(o.curvature, p, B, C)
    : kroneckerPreconditioner((typeof o.gram === 'function' ? o.gram() : o.gram) ?? gramWithIntercept(x), p, meanSoftmaxCovariance(x, y, K, o.warmStart), B, C);
  const project =
    B === 1
      ? undefined
      : (v: Float64Array) => {
          let mean = 0;
          for (let c = 0; c < B; c++) mean += v[c * p + d] / B;
          for (let c = 0; c < B; c++) v[c * p + d] -= mean;
        };
  const theta0 = new Float64Array(B * p);
  if (o.warmStart) {
    if (o.warmStart.length !== theta0.length) throw new RangeError(`warm start has ${o.warmStart.length} parameters, expected ${theta0.length}`);
    theta0.set(o.warmStart);
    project?.(theta0);
  }
  const res = minimizeLbfgs(
    { n: theta0.length, evaluate: (t, g) => logisticObjective(pr, t, g), precondition, project },
    theta0,
    { tol: o.tol ?? LOGISTIC_TOL, maxIter: o.maxIter },
  );
  kernels?.release();
  const { iterations, evaluations, converged, decrement, reason } = res;
  return { classes, C, dim: d, theta: res.theta, objective: res.f, solver: { iterations, evaluations, converged, decrement, reason } };
}

/** Predicted labels (classes_ values) of every row. */
export function predictLogistic(model: LogisticModel, x: Matrix): Int32Array {
  if (x.cols !== model.dim) throw new RangeError(`predict: rows have ${x.cols} features, the model ${model.dim}`);
  const K = model.classes.length;
  const B = blocksOf(K);
  const scores = decisionFunction(x, model.theta, K);
  const out = new Int32Array(x.rows);
  for (let i = 0; i < x.rows; i++) {
    if (B === 1) out[i] = model.classes[scores[i] > 0 ? 1 : 0];
    else {
      let best = 0;
      for (let c = 1; c < B; c++) if (scores[i * B + c] > scores[i * B + best]) best = c;
      out[i] = model.classes[best];
    }
  }
  return out;
}

/** Coefficients as sklearn's coef_ (blocks × dim) and intercept_ (blocks). */
export function coefficients(model: LogisticModel): { coef: Float64Array[]; intercept: number[] } {
  const p = model.dim + 1;
  const B = blocksOf(model.classes.length);
  return {
    coef: Array.from({ length: B }, (_, c) => model.theta.slice(c * p, c * p + model.dim)),
    intercept: Array.from({ length: B }, (_, c) => model.theta[c * p + model.dim]),
  };
}

/** Parameters in our layout from sklearn's coef_ (blocks × dim) and intercept_. */
export function thetaFrom(coef: ArrayLike<number>[], intercept: ArrayLike<number>): Float64Array {
  const d = coef[0].length;
  const p = d + 1;
  const t = new Float64Array(coef.length * p);
  coef.forEach((w, c) => {
    for (let k = 0; k < d; k++) t[c * p + k] = w[k];
    t[c * p + d] = intercept[c];
  });
  return t;
}
