/**
 * SentEval's scikit-learn path (params.usepytorch = False) as a TransferLearner:
 * `LogisticRegression(C=reg, random_state=seed)` fit on the training rows, with SentEval's C grids
 * (validation.py): 2^-2 … 2^3 for InnerKFoldClassifier and SplitClassifier, 2^-1 … 2^5 for
 * KFoldClassifier. random_state does nothing for lbfgs, and the validation argument is unused
 * (sklearn fits the training rows only).
 *
 * Two solvers:
 * - `'sklearn'` (default): scikit-learn 1.2.1's lbfgs as SentEval runs it, from zeros, stopped at
 *   max_iter = 100 (sklearn-lbfgs-fit.ts over lbfgsb.ts, SciPy's L-BFGS-B iterate for iterate).
 *   Most of SentEval's fits stop at that cap short of the optimum, so this is what reproduces its
 *   numbers: on TREC a capped fit and the optimum can disagree by more than a point. Iterates
 *   agree with SciPy's to rounding (the products with X are summed in another order than
 *   OpenBLAS's), which is also how much SentEval itself varies between machines (golden README).
 * - `'optimum'`: each fit solved to its optimum (logistic-regression.ts), what SentEval's numbers
 *   would be without the cap (the golden's `informative_converged_result`). Faster: fits along
 *   the C grid start from the previous C's optimum and the first fit's curvature; a learner
 *   remembers, per C, the optimum and the loss curvature (dataHessian) of the first training set
 *   it solved, and later sets (the other folds of the same task, ~90% shared rows) start from
 *   them. The objective is strictly convex, so where a fit starts changes only its cost.
 */
import { dataHessian, fitLogisticRegression, predictLogistic, type LogisticModel } from './logistic-regression.js';
import { fitLogisticRegressionSklearn } from './sklearn-lbfgs-fit.js';
import type { ValidationProtocol } from './tasks.js';
import type { FittedClassifier, TrainingRows, TransferLearner } from './validation.js';

export interface SklearnPathOptions {
  /** 'sklearn' (default): lbfgs capped at 100 iterations, as SentEval; 'optimum': solved to the optimum. */
  solver?: 'sklearn' | 'optimum';
  /** 'optimum' only: warm-start along the C grid and from earlier training sets, reusing their curvature (default true). */
  warmStart?: boolean;
  /** 'optimum' only: stopping tolerance (relative predicted decrease; default LOGISTIC_TOL = 1e-11). */
  tol?: number;
  /** Called with every fitted model (e.g. to collect solver statistics). */
  onFit?: (m: LogisticModel) => void;
}

/** SentEval's C grids for the scikit-learn path. */
export function sklearnRegs(protocol: ValidationProtocol): number[] {
  const [lo, hi] = protocol === 'kfold' ? [-1, 5] : [-2, 3];
  const out: number[] = [];
  for (let t = lo; t <= hi; t++) out.push(2 ** t);
  return out;
}

function fitted(m: LogisticModel): FittedClassifier {
  return {
    reg: m.C,
    predict: (x) => predictLogistic(m, x),
    info: { iterations: m.solver.iterations, evaluations: m.solver.evaluations, converged: m.solver.converged, objective: m.objective },
  };
}

export function sklearnLogisticLearner(o: SklearnPathOptions = {}): TransferLearner {
  if ((o.solver ?? 'sklearn') === 'sklearn') {
    return {
      name: 'sklearn-LogReg (L2, lbfgs capped at max_iter 100, as SentEval)',
      regs: sklearnRegs,
      async fitPath(train: TrainingRows, regs: readonly number[]): Promise<FittedClassifier[]> {
        return regs.map((C) => {
          const m = fitLogisticRegressionSklearn(train.x, train.y, C);
          o.onFit?.(m);
          return fitted(m);
        });
      },
    };
  }
  const warm = o.warmStart ?? true;
  // what earlier paths learnt (other folds of the same task), to start the next one from: the
  // optimum per C and the loss curvature there
  let last: { key: string; curvatureByC: Map<number, Float64Array>; thetaByC: Map<number, Float64Array> } | undefined;
  return {
    name: 'sklearn-LogReg (L2, solved to the optimum)',
    usesGram: true,
    regs: sklearnRegs,
    async fitPath(train: TrainingRows, regs: readonly number[]): Promise<FittedClassifier[]> {
      // weakest C first: the optimum moves smoothly as the penalty relaxes
      const byC = Array.from(regs.keys()).sort((a, b) => regs[a] - regs[b]);
      const out: FittedClassifier[] = new Array(regs.length);
      const key = `${train.x.cols}/${Array.from(new Set(train.y)).sort().join(',')}`;
      if (!warm || last?.key !== key) last = { key, curvatureByC: new Map(), thetaByC: new Map() };
      const memo = last;
      let prev: Float64Array | undefined;
      let curvature: Float64Array | undefined;
      for (const r of byC) {
        const C = regs[r];
        const start = prev ?? memo.thetaByC.get(C);
        curvature = memo.curvatureByC.get(C) ?? curvature;
        const m = fitLogisticRegression(train.x, train.y, C, { gram: train.gram, curvature, warmStart: warm ? start : undefined, tol: o.tol });
        o.onFit?.(m);
        prev = m.theta;
        if (warm) {
          memo.thetaByC.set(C, m.theta);
          if (!memo.curvatureByC.has(C)) {
            curvature = dataHessian(train.x, m.classes.length, m.theta);
            memo.curvatureByC.set(C, curvature);
          }
        }
        out[r] = fitted(m);
      }
      return out;
    },
  };
}
