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
import { addTransposedProduct, linearScores, type Matrix } from './matrix.js';

export interface LogisticProblem {
  x: Matrix;
  /** Class index of every row: 0/1 for binary, 0..K-1 for multinomial. */
  y: Int32Array;
  /** Number of classes (2: binary with one weight vector). */
  nClasses: number;
  /** Inverse regularisation strength C (> 0). */
  C: number;
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

// scores, then residuals, of the rows (reused between calls: evaluation is synchronous)
let scratch = new Float64Array(0);

function scoresBuffer(n: number): Float64Array {
  if (scratch.length < n) scratch = new Float64Array(n);
  return scratch.subarray(0, n);
}

/** f(θ) and, when grad is given, ∇f(θ) written into it. */
export function logisticObjective(pr: LogisticProblem, theta: Float64Array, grad?: Float64Array): number {
  const { x, y, C } = pr;
  const B = blocksOf(pr.nClasses);
  const d = x.cols;
  const p = d + 1;
  if (theta.length !== B * p) throw new RangeError(`logisticObjective: ${theta.length} parameters, expected ${B} × ${p}`);
  const z = scoresBuffer(x.rows * B);
  linearScores(x, theta, B, z);
  // z becomes the residuals ∂loss_i/∂z (σ(z) − y, or softmax − one-hot) while the loss is summed
  const loss = B === 1 ? binaryLoss(z, y) : multinomialLoss(z, y, B);
  let reg = 0;
  for (let c = 0; c < B; c++) for (let k = 0; k < d; k++) reg += theta[c * p + k] * theta[c * p + k];
  if (grad) {
    grad.fill(0);
    addTransposedProduct(x, z, B, grad);
    for (let c = 0; c < B; c++) for (let k = 0; k < d; k++) grad[c * p + k] += theta[c * p + k] / C;
  }
  return loss + reg / (2 * C);
}

function binaryLoss(z: Float64Array, y: Int32Array): number {
  let loss = 0;
  for (let i = 0; i < y.length; i++) {
    const zi = z[i];
    const yi = y[i];
    // one exp serves both log(1 + e^z) = max(z, 0) + log1p(e^-|z|) and σ(z)
    const e = Math.exp(-Math.abs(zi));
    loss += (zi > 0 ? zi : 0) + Math.log1p(e) - yi * zi;
    z[i] = (zi >= 0 ? 1 / (1 + e) : e / (1 + e)) - yi;
  }
  return loss;
}

function multinomialLoss(z: Float64Array, y: Int32Array, K: number): number {
  let loss = 0;
  for (let i = 0; i < y.length; i++) {
    const o = i * K;
    let zmax = -Infinity;
    for (let c = 0; c < K; c++) if (z[o + c] > zmax) zmax = z[o + c];
    const yi = y[i];
    const zy = z[o + yi];
    let sum = 0;
    for (let c = 0; c < K; c++) sum += z[o + c] = Math.exp(z[o + c] - zmax);
    loss += zmax + Math.log(sum) - zy;
    for (let c = 0; c < K; c++) z[o + c] /= sum;
    z[o + yi] -= 1;
  }
  return loss;
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
