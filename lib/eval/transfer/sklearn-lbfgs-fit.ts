/**
 * `LogisticRegression(C=C).fit(X, y)` as scikit-learn 1.2.1 runs it with its defaults
 * (solver='lbfgs', penalty='l2', tol=1e-4, max_iter=100, fit_intercept=True, multi_class='auto'):
 * `_logistic_regression_path` hands `LinearModelLoss.loss_gradient` (logistic-objective.ts, with
 * l2_reg_strength = 1/C) to `scipy.optimize.minimize(method='L-BFGS-B', jac=True,
 * options={'gtol': tol, 'maxiter': max_iter})` from zeros (lbfgsb.ts), and n_iter_ is
 * min(nit, max_iter). This is what SentEval's scikit-learn path calls, and most of its fits stop
 * at the 100-iteration cap short of the optimum, so the numbers it reports depend on the iterates.
 *
 * Parameter order as sklearn's (it matters only for the order of sums inside the solver): binary,
 * [w (d), b]; multinomial, the (K, d+1) matrix raveled in Fortran order, i.e. v[j·K + c] = W[c, j]
 * with j = d the intercepts. The model is returned in our layout (per class [w_c, b_c]).
 */
import { InputError } from '../../util/errors.js';
import { blocksOf, logisticObjective, type LogisticProblem } from './logistic-objective.js';
import { encodeClasses, type LogisticModel } from './logistic-regression.js';
import { minimizeLbfgsb, type LbfgsbIteration } from './lbfgsb.js';
import { prepareLinearKernels } from './linear-kernels-wasm.js';
import type { Matrix } from './matrix.js';

export interface SklearnLbfgsOptions {
  /** max_iter (sklearn default 100). */
  maxIter?: number;
  /** tol, SciPy's gtol (sklearn default 1e-4). */
  tol?: number;
  /** Per iteration: objective and ‖∇f‖∞ (to compare with SciPy's iterates). */
  onIteration?: (it: { nit: number; f: number; pgNorm: number; nfev: number; stp: number }) => void;
  /** The passes over x: WebAssembly SIMD where the runtime has it (default), or the JS kernels; the same bits either way. */
  kernels?: 'wasm' | 'js';
}

/** scikit-learn 1.2.1's defaults for LogisticRegression. */
export const SKLEARN_LOGISTIC_DEFAULTS = { maxIter: 100, tol: 1e-4 } as const;

/** Our per-class layout [w_c (d), b_c] → sklearn's F-order ravel (multinomial) or itself (binary). */
export function toSklearnOrder(theta: Float64Array, B: number, p: number, out: Float64Array = new Float64Array(theta.length)): Float64Array {
  if (B === 1) out.set(theta);
  else for (let c = 0; c < B; c++) for (let j = 0; j < p; j++) out[j * B + c] = theta[c * p + j];
  return out;
}

/** Inverse of toSklearnOrder. */
export function fromSklearnOrder(v: Float64Array, B: number, p: number, out: Float64Array = new Float64Array(v.length)): Float64Array {
  if (B === 1) out.set(v);
  else for (let c = 0; c < B; c++) for (let j = 0; j < p; j++) out[c * p + j] = v[j * B + c];
  return out;
}

/** Fits LogisticRegression(C) on rows x as scikit-learn 1.2.1's lbfgs does (capped at max_iter). */
export function fitLogisticRegressionSklearn(x: Matrix, labels: Int32Array, C: number, o: SklearnLbfgsOptions = {}): LogisticModel {
  if (labels.length !== x.rows) throw new RangeError(`fitLogisticRegressionSklearn: ${labels.length} labels for ${x.rows} rows`);
  if (!(C > 0)) throw new RangeError(`fitLogisticRegressionSklearn: C must be > 0, got ${C}`);
  const { classes, y } = encodeClasses(labels);
  const K = classes.length;
  if (K < 2) throw new InputError(`logistic regression needs samples of at least 2 classes; the training rows all have label ${classes[0]}`);
  const maxIter = o.maxIter ?? SKLEARN_LOGISTIC_DEFAULTS.maxIter;
  const tol = o.tol ?? SKLEARN_LOGISTIC_DEFAULTS.tol;
  const d = x.cols;
  const p = d + 1;
  const B = blocksOf(K);
  // x into WebAssembly's memory once: the fit evaluates its objective about a hundred times
  const kernels = o.kernels === 'js' ? undefined : prepareLinearKernels(x, B);
  const pr: LogisticProblem = { x, y, nClasses: K, C, ...(kernels ? { kernels } : {}) };
  const theta = new Float64Array(B * p);
  const gOurs = new Float64Array(B * p);
  const fun = (v: Float64Array, g: Float64Array): number => {
    fromSklearnOrder(v, B, p, theta);
    const f = logisticObjective(pr, theta, gOurs);
    toSklearnOrder(gOurs, B, p, g);
    return f;
  };
  const onIteration = o.onIteration ? (it: LbfgsbIteration) => o.onIteration!({ nit: it.nit, f: it.f, pgNorm: it.pgNorm, nfev: it.nfev, stp: it.stp }) : undefined;
  const res = minimizeLbfgsb(fun, new Float64Array(B * p), { gtol: tol, maxiter: maxIter, onIteration });
  kernels?.release();
  return {
    classes,
    C,
    dim: d,
    theta: fromSklearnOrder(res.x, B, p),
    objective: res.f,
    solver: { iterations: Math.min(res.nit, maxIter), evaluations: res.nfev, converged: res.status === 0, reason: res.message },
  };
}
