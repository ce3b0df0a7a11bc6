/**
 * SentEval's three ways of choosing the regularisation and scoring a transfer task
 * (senteval/tools/validation.py at 5d6dc11; read, not copied), for any learner (the scikit-learn
 * path's logistic regression or the PyTorch path's linear classifier):
 *
 * - `innerKFold` (InnerKFoldClassifier; MR, CR, SUBJ, MPQA): outer StratifiedKFold(k, shuffle,
 *   random_state=1111) over X; in each outer fold, for every reg, an inner StratifiedKFold(k,
 *   shuffle, 1111) over the outer-train rows; score = round(100·mean(inner accuracies), 2); the
 *   first maximum wins (ties → the earlier reg); fold devacc = that maximum; refit on the
 *   outer-train rows (PyTorch: with validation_split 0.05) and fold test acc = round(100·acc, 2);
 *   devacc = round(mean(fold devaccs), 2), acc = round(mean(fold test accs), 2).
 * - `kFold` (KFoldClassifier; TREC, MRPC): StratifiedKFold(k, shuffle, random_state=seed) over
 *   train; per reg round(100·mean(fold accuracies), 2); first maximum; devacc = that maximum (not
 *   re-rounded); refit on all of train (PyTorch: validation_split 0.05); acc on test.
 * - `splitValidation` (SplitClassifier; SST2): per reg fit on train (PyTorch: early stopping on
 *   dev), dev score round(100·acc, 2); first maximum; refit the same way; acc on test.
 *
 * In the inner and k-fold loops the PyTorch path early-stops on the very fold it is scored on
 * (validation_data = the held-out fold), as SentEval does. Every fit is a pure function of its
 * rows, reg and seed (SentEval re-seeds each classifier), so the order of fits does not matter:
 * a learner gets all regs for one training set at once (`fitPath`) and may warm-start along them.
 * The means and roundings are numpy's (numpy-reductions.ts).
 */
import { InputError } from '../../util/errors.js';
import { gather, gatherRows, gramWithIntercept, type Matrix } from './matrix.js';
import { firstArgmax, numpyMean, numpyRound2 } from './numpy-reductions.js';
import { stratifiedKFold, type Fold } from './stratified-kfold.js';
import type { ValidationProtocol } from './tasks.js';

/** What SentEval's classifier.fit gets besides the training rows. */
export type ValidationSpec = { kind: 'data'; x: Matrix; y: Int32Array } | { kind: 'split'; fraction: number };

/** A training set. x may live in a buffer the protocol reuses: valid only during the fitPath call. */
export interface TrainingRows {
  x: Matrix;
  y: Int32Array;
  /** gramWithIntercept(x) on demand, when the learner wants it (`usesGram`): the protocols derive it by subtraction. */
  gram?: () => Float64Array;
}

export interface FittedClassifier {
  reg: number;
  predict(x: Matrix): Int32Array;
  /** Solver/trainer facts for the report (iterations, epochs, convergence). */
  info?: Record<string, number | boolean | string>;
}

/** What SentEval hands every classifier it builds besides the data: the task's class count and params.seed. */
export interface FitContext {
  nClasses: number;
  seed: number;
}

export interface TransferLearner {
  readonly name: string;
  /** SentEval's regularisation grid for a protocol. */
  regs(protocol: ValidationProtocol): readonly number[];
  /** Whether fitPath uses TrainingRows.gram (the protocols then compute it by subtraction). */
  readonly usesGram?: boolean;
  /** One classifier per reg (same order), all trained on `train` with SentEval's validation argument. */
  fitPath(train: TrainingRows, regs: readonly number[], validation: ValidationSpec, ctx: FitContext): Promise<FittedClassifier[]>;
}

export interface ProtocolOptions {
  /** Number of folds (SentEval params.kfold; the papers' setting is 10). */
  k: number;
  /** SentEval params.seed: random_state of KFoldClassifier's folds and every classifier's seed. */
  seed: number;
  /** The task's number of classes (SentEval's nclasses). */
  nClasses: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** Fraction of rows whose predicted label equals y (sklearn `score`: count / n). */
export function accuracy(pred: Int32Array, y: Int32Array): number {
  if (pred.length !== y.length) throw new RangeError(`accuracy: ${pred.length} predictions for ${y.length} labels`);
  let c = 0;
  for (let i = 0; i < y.length; i++) if (pred[i] === y[i]) c++;
  return c / y.length;
}

const round100 = (x: number) => numpyRound2(100 * x);

/** A value computed on first use. */
function lazy<T>(f: () => T): () => T {
  let v: T | undefined;
  return () => (v ??= f());
}

/** gram(all rows) − gram(rows x): the Gram matrix of the complementary rows, without a pass over them. */
function gramWithout(all: () => Float64Array, x: Matrix): () => Float64Array {
  return lazy(() => {
    const a = all();
    const b = gramWithIntercept(x);
    const out = new Float64Array(a.length);
    for (let i = 0; i < a.length; i++) out[i] = a[i] - b[i];
    return out;
  });
}

function checkLabels(y: Int32Array, what: string): void {
  if (new Set(y).size < 2) throw new InputError(`${what}: all ${y.length} rows have the same label; a classifier needs at least 2 classes`);
}

/** A fit's solver iterations as its learner reports them (NaN when it reports none). */
function iterationsOf(f: FittedClassifier): number {
  const it = f.info?.iterations;
  return typeof it === 'number' ? it : NaN;
}

function countFits(fits: FittedClassifier[], stats: FitStats): void {
  for (const f of fits) {
    stats.fits++;
    if (f.info?.converged === false) stats.unconverged++;
  }
}

export interface FitStats {
  fits: number;
  /** Fits whose solver reported not converged. */
  unconverged: number;
}

export interface InnerKFoldFold {
  test: Int32Array;
  /** Inner folds' test rows as positions in the outer-train rows. */
  innerTest: Int32Array[];
  /** innerScores[r][j]: raw accuracy of regs[r] on inner fold j. */
  innerScores: number[][];
  /** innerIterations[r][j]: solver iterations of that fit (NaN if the learner reports none). */
  innerIterations: number[][];
  regScores: number[];
  chosenReg: number;
  devacc: number;
  testAccRaw: number;
  testAcc: number;
  testPred: Int32Array;
  /** What the learner reported about the refit (iterations, objective, …). */
  finalInfo?: FittedClassifier['info'];
}

export interface InnerKFoldResult extends FitStats {
  protocol: 'inner-kfold';
  regs: number[];
  folds: InnerKFoldFold[];
  devacc: number;
  acc: number;
}

/** InnerKFoldClassifier. `folds` replaces the computed folds (outer, and per outer fold the inner ones). */
export async function innerKFold(
  x: Matrix,
  y: Int32Array,
  learner: TransferLearner,
  o: ProtocolOptions & { folds?: { outer: Fold[]; inner: Fold[][] } },
): Promise<InnerKFoldResult> {
  checkLabels(y, 'inner k-fold');
  const regs = [...learner.regs('inner-kfold')];
  // InnerKFoldClassifier hard-codes random_state=1111 for both levels, whatever params.seed is
  const outer = o.folds?.outer ?? stratifiedKFold(y, { nSplits: o.k, shuffle: true, randomState: 1111 });
  const gAll = lazy(() => gramWithIntercept(x));
  const stats: FitStats = { fits: 0, unconverged: 0 };
  const ctx: FitContext = { nClasses: o.nClasses, seed: o.seed };
  const folds: InnerKFoldFold[] = [];
  // row buffers reused by every fold (the folds differ in size by a row or two)
  const bufIn = new Float64Array(x.rows * x.cols);
  const bufOut = new Float64Array(x.rows * x.cols);
  for (let f = 0; f < outer.length; f++) {
    const { train, test } = outer[f];
    const xTr = gatherRows(x, train);
    const yTr = gather(y, train);
    const xTe = gatherRows(x, test);
    const yTe = gather(y, test);
    const gTr = gramWithout(gAll, xTe);
    const inner = o.folds?.inner[f] ?? stratifiedKFold(yTr, { nSplits: o.k, shuffle: true, randomState: 1111 });
    const innerScores = regs.map(() => [] as number[]);
    const innerIterations = regs.map(() => [] as number[]);
    for (const fold of inner) {
      const xIn = gatherRows(xTr, fold.train, bufIn);
      const xOut = gatherRows(xTr, fold.test, bufOut);
      const yOut = gather(yTr, fold.test);
      const gram = learner.usesGram ? gramWithout(gTr, xOut) : undefined;
      const fits = await learner.fitPath({ x: xIn, y: gather(yTr, fold.train), gram }, regs, { kind: 'data', x: xOut, y: yOut }, ctx);
      countFits(fits, stats);
      fits.forEach((m, r) => {
        innerScores[r].push(accuracy(m.predict(xOut), yOut));
        innerIterations[r].push(iterationsOf(m));
      });
    }
    const regScores = innerScores.map((s) => round100(numpyMean(s)));
    const best = firstArgmax(regScores);
    const [final] = await learner.fitPath({ x: xTr, y: yTr, gram: learner.usesGram ? gTr : undefined }, [regs[best]], { kind: 'split', fraction: 0.05 }, ctx);
    countFits([final], stats);
    const testPred = final.predict(xTe);
    const testAccRaw = accuracy(testPred, yTe);
    folds.push({
      test,
      innerTest: inner.map((h) => h.test),
      innerScores,
      innerIterations,
      regScores,
      chosenReg: regs[best],
      devacc: regScores[best],
      testAccRaw,
      testAcc: round100(testAccRaw),
      testPred,
      finalInfo: final.info,
    });
    o.log?.(`  fold ${f + 1}/${outer.length}: C=${regs[best]} dev ${regScores[best]} test ${round100(testAccRaw)}`);
  }
  return {
    protocol: 'inner-kfold',
    regs,
    folds,
    devacc: numpyRound2(numpyMean(folds.map((f) => f.devacc))),
    acc: numpyRound2(numpyMean(folds.map((f) => f.testAcc))),
    ...stats,
  };
}

export interface KFoldResult extends FitStats {
  protocol: 'kfold';
  regs: number[];
  foldsTest: Int32Array[];
  /** foldScores[r][j]: raw accuracy of regs[r] on fold j. */
  foldScores: number[][];
  /** foldIterations[r][j]: solver iterations of that fit (NaN if the learner reports none). */
  foldIterations: number[][];
  regScores: number[];
  chosenReg: number;
  devacc: number;
  testAccRaw: number;
  acc: number;
  /** Test predictions of the refit (SentEval's yhat). */
  testPred: Int32Array;
  /** What the learner reported about the refit. */
  finalInfo?: FittedClassifier['info'];
}

/** KFoldClassifier. `folds` replaces the computed folds over train. */
export async function kFold(train: { x: Matrix; y: Int32Array }, test: { x: Matrix; y: Int32Array }, learner: TransferLearner, o: ProtocolOptions & { folds?: Fold[] }): Promise<KFoldResult> {
  checkLabels(train.y, 'k-fold');
  const regs = [...learner.regs('kfold')];
  const folds = o.folds ?? stratifiedKFold(train.y, { nSplits: o.k, shuffle: true, randomState: o.seed });
  const gAll = lazy(() => gramWithIntercept(train.x));
  const stats: FitStats = { fits: 0, unconverged: 0 };
  const ctx: FitContext = { nClasses: o.nClasses, seed: o.seed };
  const foldScores = regs.map(() => [] as number[]);
  const foldIterations = regs.map(() => [] as number[]);
  const bufIn = new Float64Array(train.x.rows * train.x.cols);
  const bufOut = new Float64Array(train.x.rows * train.x.cols);
  for (const fold of folds) {
    const xIn = gatherRows(train.x, fold.train, bufIn);
    const xOut = gatherRows(train.x, fold.test, bufOut);
    const yOut = gather(train.y, fold.test);
    const gram = learner.usesGram ? gramWithout(gAll, xOut) : undefined;
    const fits = await learner.fitPath({ x: xIn, y: gather(train.y, fold.train), gram }, regs, { kind: 'data', x: xOut, y: yOut }, ctx);
    countFits(fits, stats);
    fits.forEach((m, r) => {
      foldScores[r].push(accuracy(m.predict(xOut), yOut));
      foldIterations[r].push(iterationsOf(m));
    });
  }
  const regScores = foldScores.map((s) => round100(numpyMean(s)));
  const best = firstArgmax(regScores);
  const [final] = await learner.fitPath({ x: train.x, y: train.y, gram: learner.usesGram ? gAll : undefined }, [regs[best]], { kind: 'split', fraction: 0.05 }, ctx);
  countFits([final], stats);
  const testPred = final.predict(test.x);
  const testAccRaw = accuracy(testPred, test.y);
  o.log?.(`  C=${regs[best]} dev ${regScores[best]} test ${round100(testAccRaw)}`);
  return {
    protocol: 'kfold',
    regs,
    foldsTest: folds.map((f) => f.test),
    foldScores,
    foldIterations,
    regScores,
    chosenReg: regs[best],
    devacc: regScores[best],
    testAccRaw,
    acc: round100(testAccRaw),
    testPred,
    finalInfo: final.info,
    ...stats,
  };
}

export interface SplitResult extends FitStats {
  protocol: 'split';
  regs: number[];
  devScoresRaw: number[];
  devScores: number[];
  /** iterations[r]: solver iterations of the fit with regs[r] (NaN if the learner reports none). */
  iterations: number[];
  chosenReg: number;
  devacc: number;
  testAccRaw: number;
  acc: number;
  testPred: Int32Array;
  /** What the learner reported about the chosen fit. */
  finalInfo?: FittedClassifier['info'];
}

/** SplitClassifier (train / dev / test). */
export async function splitValidation(
  train: { x: Matrix; y: Int32Array },
  dev: { x: Matrix; y: Int32Array },
  test: { x: Matrix; y: Int32Array },
  learner: TransferLearner,
  o: Omit<ProtocolOptions, 'k'>,
): Promise<SplitResult> {
  checkLabels(train.y, 'train/dev split');
  const regs = [...learner.regs('split')];
  const stats: FitStats = { fits: 0, unconverged: 0 };
  const validation: ValidationSpec = { kind: 'data', x: dev.x, y: dev.y };
  const ctx: FitContext = { nClasses: o.nClasses, seed: o.seed };
  const fits = await learner.fitPath({ x: train.x, y: train.y, gram: learner.usesGram ? lazy(() => gramWithIntercept(train.x)) : undefined }, regs, validation, ctx);
  countFits(fits, stats);
  const devScoresRaw = fits.map((m) => accuracy(m.predict(dev.x), dev.y));
  const devScores = devScoresRaw.map(round100);
  const best = firstArgmax(devScores);
  // SentEval refits with the chosen reg on the same rows, seed and validation data: the same
  // classifier as the one just scored (every fit is deterministic), so it is reused.
  const final = fits[best];
  const testPred = final.predict(test.x);
  const testAccRaw = accuracy(testPred, test.y);
  o.log?.(`  C=${regs[best]} dev ${devScores[best]} test ${round100(testAccRaw)}`);
  return {
    protocol: 'split',
    regs,
    devScoresRaw,
    devScores,
    iterations: fits.map(iterationsOf),
    chosenReg: regs[best],
    devacc: devScores[best],
    testAccRaw,
    acc: round100(testAccRaw),
    testPred,
    finalInfo: final.info,
    ...stats,
  };
}
