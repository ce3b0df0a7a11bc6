/**
 * The objective scikit-learn 1.2.1's `LogisticRegression(C, penalty='l2', fit_intercept=True)`
 * minimises with its lbfgs solver (sklearn/linear_model/_logistic.py with `LinearModelLoss`,
 * l2_reg_strength = 1/C; read, not copied):
 *
 *   f(W, b) = Σ_i loss_i + ‖W‖² / (2C)        (a sum over samples, not a mean; b unpenalised)
 *
 * - binary (two classes, y ∈ {0, 1} = index in the sorted classes): one weight vector,
 *   z = w·x + b, loss = log(1 + e^z) − y z (HalfBinomialLoss; log(1+e^z) as numpy's
 *   logaddexp(0, z)).
 * - multinomial (K > 2 classes; multi_class='auto' with lbfgs): K weight vectors and intercepts,
 *   z_k = w_k·x + b_k, loss = logsumexp(z) − z_y (HalfMultinomialLoss, full softmax).
 *
 * Parameters θ are laid out per class as [w_k (d values), b_k] (binary: K = 1 block).
 * `evaluate` returns f and writes ∇f; it is the single place the loss is defined.
 */
import type { LinearKernels } from './linear-kernels-wasm.js';
import { addTransposedProduct, linearScores, type Matrix } from './matrix.js';
import { numpySum } from './numpy-reductions.js';

export interface LogisticProblem {
  x: Matrix;
  /** Class index of every row: 0/1 for binary, 0..K-1 for multinomial. */
  y: Int32Array;
  /** Number of classes (2: binary with one weight vector). */
  nClasses: number;
  /** Inverse regularisation strength C (> 0). */
  C: number;
  /**
   * x in WebAssembly's memory for this fit (./linear-kernels-wasm.ts): the two passes over x run
   * there, bit for bit the JS kernels, 2-4× sooner. Absent: the JS kernels.
   */
  kernels?: LinearKernels;
}

/** Number of parameter blocks: 1 for binary, K for multinomial. */
export function blocksOf(nClasses: number): number {
  return nClasses === 2 ? 1 : nClasses;
}

/** log(1 + e^z) as numpy's logaddexp(0, z). */
export function log1pExp(z: number): number {
  if (z === 0) return Math.LN2;
  return z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z));
}

// scores (then residuals) and per-row losses (reused between calls: evaluation is synchronous)
let scratch = new Float64Array(0);
let lossScratch = new Float64Array(0);

function scoresBuffer(n: number): Float64Array {
  if (scratch.length < n) scratch = new Float64Array(n);
  return scratch.subarray(0, n);
}

function lossBuffer(n: number): Float64Array {
  if (lossScratch.length < n) lossScratch = new Float64Array(n);
  return lossScratch.subarray(0, n);
}

/**
 * f(θ) and, when grad is given, ∇f(θ) written into it, with scikit-learn's arithmetic
 * (LinearModelLoss.loss_gradient): per-row losses and residuals by HalfBinomialLoss /
 * HalfMultinomialLoss's formulas, the losses summed as numpy's `.sum()` (numpySum), the penalty
 * 0.5·(1/C)·‖W‖² with ‖W‖² summed in sklearn's parameter order (multinomial: feature-major), the
 * weight gradient Xᵀr + (1/C)·w, the intercept gradient r.sum() (binary: numpy's pairwise sum;
 * multinomial: `.sum(axis=0)`, row after row). The products with X are left-to-right loops where
 * sklearn calls BLAS, so values agree to rounding.
 */
export function logisticObjective(pr: LogisticProblem, theta: Float64Array, grad?: Float64Array): number {
  const { x, y, C } = pr;
  const B = blocksOf(pr.nClasses);
  const d = x.cols;
  const p = d + 1;
  const n = x.rows;
  if (theta.length !== B * p) throw new RangeError(`logisticObjective: ${theta.length} parameters, expected ${B} × ${p}`);
  let z: Float64Array;
  if (pr.kernels) z = pr.kernels.scores(theta, B);
  else linearScores(x, theta, B, (z = scoresBuffer(n * B)));
  // z becomes the residuals ∂loss_i/∂z (σ(z) − y, or softmax − one-hot); the losses go to `losses`
  const losses = lossBuffer(n);
  if (B === 1) binaryLoss(z, y, losses);
  else multinomialLoss(z, y, B, losses);
  const loss = numpySum(losses, n);
  const l2 = 1 / C;
  let norm2 = 0;
  for (let k = 0; k < d; k++) for (let c = 0; c < B; c++) norm2 += theta[c * p + k] * theta[c * p + k];
  if (grad) {
    grad.fill(0);
    if (pr.kernels) pr.kernels.addTransposedProduct(z, B, grad);
    else addTransposedProduct(x, z, B, grad);
    for (let c = 0; c < B; c++) for (let k = 0; k < d; k++) grad[c * p + k] = grad[c * p + k] + l2 * theta[c * p + k];
    if (B === 1) grad[d] = numpySum(z, n);
    else
      for (let c = 0; c < B; c++) {
        let s = 0;
        for (let i = 0; i < n; i++) s += z[i * B + c];
        grad[c * p + d] = s;
      }
  }
  return loss + 0.5 * l2 * norm2;
}

/**
 * HalfBinomialLoss (sklearn 1.2.1 `closs_grad_half_binomial`; these branches reproduce its
 * values bit for bit in Python): loss log(1 + e^z) − y z and residual σ(z) − y, by cases on z.
 */
function binaryLoss(z: Float64Array, y: Int32Array, losses: Float64Array): void {
  for (let i = 0; i < y.length; i++) {
    const r = z[i];
    const yt = y[i];
    let e: number;
    if (r <= 0) {
      e = Math.exp(r);
      losses[i] = r <= -37 ? e - yt * r : Math.log1p(e) - yt * r;
      z[i] = ((1 - yt) * e - yt) / (1 + e);
    } else {
      e = Math.exp(-r);
      losses[i] = r <= 18 ? Math.log1p(e) + (1 - yt) * r : e + (1 - yt) * r;
      z[i] = (1 - yt - yt * e) / (1 + e);
    }
  }
}

/** HalfMultinomialLoss: loss log Σ_k e^{z_k} − z_y through the row maximum, residual softmax − one-hot. */
function multinomialLoss(z: Float64Array, y: Int32Array, K: number, losses: Float64Array): void {
  for (let i = 0; i < y.length; i++) {
    const o = i * K;
    let zmax = z[o];
    for (let c = 1; c < K; c++) if (zmax < z[o + c]) zmax = z[o + c];
    const yi = y[i];
    const zy = z[o + yi];
    let sum = 0;
    for (let c = 0; c < K; c++) sum += z[o + c] = Math.exp(z[o + c] - zmax);
    losses[i] = Math.log(sum) + zmax - zy;
    for (let c = 0; c < K; c++) z[o + c] /= sum;
    z[o + yi] -= 1;
  }
}

/**
 * Decision values: binary z = w·x + b per row (class 1 iff z > 0); multinomial the K scores per
 * row (row-major rows × K).
 */
export function decisionFunction(x: Matrix, theta: Float64Array, nClasses: number): Float64Array {
  const B = blocksOf(nClasses);
  const out = new Float64Array(x.rows * B);
  linearScores(x, theta, B, out);
  return out;
}
