/**
 * scikit-learn 1.2.1's `StratifiedKFold(n_splits, shuffle=True, random_state=seed).split(X, y)`,
 * index for index (sklearn/model_selection/_split.py, `_make_test_folds`; read, not copied):
 *
 * 1. Classes are numbered in order of first appearance in y (not sorted order).
 * 2. allocation[i][k] = number of class-k samples in sorted(y_enc)[i::n_splits]: a round robin
 *    over the sorted labels decides how many samples of each class every fold gets.
 * 3. For each class k in that numbering, the fold labels repeat(arange(n_splits), allocation[:, k])
 *    are shuffled in place by one `np.random.RandomState(seed)` created at each split() call (so
 *    every call gives the same folds), and the class-k samples, in row order, get them.
 * 4. Fold f's test rows are those labelled f, ascending; its train rows are the rest, ascending.
 *
 * Without shuffle the fold labels stay in blocks (the same allocation, no RNG).
 */
import { InputError } from '../../util/errors.js';
import { RandomState } from './random-state.js';

export interface Fold {
  /** Row indices of the training part, ascending. */
  train: Int32Array;
  /** Row indices of the test part, ascending. */
  test: Int32Array;
}

export interface StratifiedKFoldOptions {
  nSplits: number;
  shuffle: boolean;
  /** random_state; required with shuffle (SentEval always passes one). */
  randomState?: number;
}

/** The fold number of every row (`_make_test_folds`). */
export function stratifiedTestFolds(y: ArrayLike<number>, o: StratifiedKFoldOptions): Int32Array {
  const n = y.length;
  const k = o.nSplits;
  if (!Number.isInteger(k) || k < 2) throw new InputError(`StratifiedKFold: n_splits must be an integer ≥ 2, got ${k}`);
  if (k > n) throw new InputError(`StratifiedKFold: cannot have n_splits=${k} greater than the number of samples n=${n}`);
  // classes numbered by first appearance
  const code = new Map<number, number>();
  const yEnc = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let c = code.get(y[i]);
    if (c === undefined) {
      c = code.size;
      code.set(y[i], c);
    }
    yEnc[i] = c;
  }
  const nClasses = code.size;
  const counts = new Int32Array(nClasses);
  for (let i = 0; i < n; i++) counts[yEnc[i]]++;
  if (counts.every((c) => k > c)) {
    throw new InputError(`StratifiedKFold: n_splits=${k} cannot be greater than the number of members in each class (largest class has ${Math.max(...counts)})`);
  }
  // allocation from the round robin over sorted(y_enc): position p of the sorted labels goes to fold p % k
  const allocation: Int32Array[] = Array.from({ length: k }, () => new Int32Array(nClasses));
  let p = 0;
  for (let c = 0; c < nClasses; c++) {
    for (let m = 0; m < counts[c]; m++, p++) allocation[p % k][c]++;
  }
  const rng = o.shuffle ? new RandomState(requireSeed(o.randomState)) : undefined;
  const testFolds = new Int32Array(n);
  for (let c = 0; c < nClasses; c++) {
    const foldsForClass = new Int32Array(counts[c]);
    let q = 0;
    for (let f = 0; f < k; f++) for (let m = 0; m < allocation[f][c]; m++) foldsForClass[q++] = f;
    if (rng) rng.shuffle(foldsForClass);
    q = 0;
    for (let i = 0; i < n; i++) if (yEnc[i] === c) testFolds[i] = foldsForClass[q++];
  }
  return testFolds;
}

function requireSeed(seed: number | undefined): number {
  if (seed === undefined) throw new InputError('StratifiedKFold: shuffle=true needs an integer random_state here (a fresh OS-seeded RandomState is not reproducible)');
  return seed;
}

/** The folds `split()` yields, in order f = 0 … n_splits-1. */
export function stratifiedKFold(y: ArrayLike<number>, o: StratifiedKFoldOptions): Fold[] {
  const testFolds = stratifiedTestFolds(y, o);
  const n = y.length;
  const sizes = new Int32Array(o.nSplits);
  for (let i = 0; i < n; i++) sizes[testFolds[i]]++;
  const folds: Fold[] = [];
  for (let f = 0; f < o.nSplits; f++) {
    const test = new Int32Array(sizes[f]);
    const train = new Int32Array(n - sizes[f]);
    let a = 0;
    let b = 0;
    for (let i = 0; i < n; i++) {
      if (testFolds[i] === f) test[a++] = i;
      else train[b++] = i;
    }
    folds.push({ train, test });
  }
  return folds;
}
