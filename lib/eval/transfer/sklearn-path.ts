/**
 * SentEval's scikit-learn path (params.usepytorch = False) as a TransferLearner:
 * `LogisticRegression(C=reg, random_state=seed)` fit on the training rows, with SentEval's C grids
 * (validation.py): 2^-2 … 2^3 for InnerKFoldClassifier and SplitClassifier, 2^-1 … 2^5 for
 * KFoldClassifier. random_state does nothing for lbfgs, and the validation argument is unused
 * (sklearn fits the training rows only).
 *
 * The fits are solved to the optimum (logistic-regression.ts), not stopped at lbfgs' 100
 * iterations as SentEval's are; see the golden README's Tolerances for what that changes (up to
 * 0.2 points per task on the golden, TREC up to a point or more).
 *
 * Speed (the fits are many: 610 for each cross-validated task). The objective is strictly convex,
 * so its optimum is unique and where a fit starts, or how it is preconditioned, changes only how
 * many iterations it takes. A learner therefore remembers, per C, the optimum and the loss
 * curvature (dataHessian) of the first training set it solved, and later sets (the other folds of
 * the same task, which share ~90% of their rows) start from them: along a set's C grid each fit
 * starts from the previous (smaller) C's optimum, the first from the remembered one; the
 * preconditioner is the remembered curvature at that C plus the penalty's. Only the very first fit
 * uses the Gram-matrix preconditioner (its Gram matrix the protocol derives by subtraction). On
 * the golden tasks this takes 5–9 objective evaluations per fit.
 */
import { dataHessian, fitLogisticRegression, predictLogistic, type LogisticModel } from './logistic-regression.js';
import type { ValidationProtocol } from './tasks.js';
import type { FittedClassifier, TrainingRows, TransferLearner } from './validation.js';

export interface SklearnPathOptions {
  /** Warm-start along the C grid and from earlier training sets, reusing their curvature (default true). */
  warmStart?: boolean;
  /** Solver stopping tolerance (relative predicted decrease; default LOGISTIC_TOL = 1e-11). */
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

export function sklearnLogisticLearner(o: SklearnPathOptions = {}): TransferLearner {
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
        out[r] = {
          reg: C,
          predict: (x) => predictLogistic(m, x),
          info: { iterations: m.solver.iterations, evaluations: m.solver.evaluations, converged: m.solver.converged },
        };
      }
      return out;
    },
  };
}
