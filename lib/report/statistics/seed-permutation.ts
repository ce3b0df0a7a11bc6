/**
 * Exact two-sample permutation test of two configurations' seed results: is
 * mean(A) − mean(B) larger than reassigning the runs to the two configurations at random gives?
 *
 * The runs of A and B (e.g. test Spearman × 100 of 3 seeds each) are pooled; under the null that
 * the configuration does not matter, every split of the pool into groups of the same sizes is
 * equally likely. All C(nA + nB, nA) splits are enumerated (scipy.stats.permutation_test with
 * permutation_type='independent' and n_resamples=inf). p-value as scipy: two-sided =
 * 2 · min(P(T ≤ d), P(T ≥ d)), clipped to 1, comparisons with a relative tolerance of 100 ε·|d|.
 *
 * With few seeds the smallest attainable p is large: 3 vs 3 seeds have 20 splits, so p ≥ 2/20 = 0.1
 * and no difference can be resolved at 95% — `minimumPValue` says so, and a verdict should too.
 */
import { checkFinite, failInput, type SourceOption } from './validate.js';

/** Splits enumerated at most (C(20, 10) = 184,756 fits; C(24, 12) = 2.7 M does not). */
export const EXACT_SPLITS_MAX = 1_000_000;

export interface SeedPermutationResult {
  meanA: number;
  meanB: number;
  /** meanA − meanB. */
  difference: number;
  pValue: number;
  /** Splits enumerated: C(nA + nB, nA). */
  splits: number;
  /** The smallest p-value these group sizes can give (2 / splits, at most 1). */
  minimumPValue: number;
  nA: number;
  nB: number;
}

/** C(n, k) as a float (exact for the sizes allowed here). */
function binomial(n: number, k: number): number {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return Math.round(c);
}

export function seedPermutationTest(a: ArrayLike<number>, b: ArrayLike<number>, options: SourceOption = {}): SeedPermutationResult {
  const fn = 'seedPermutationTest';
  checkFinite(fn, 'a', a, options.source);
  checkFinite(fn, 'b', b, options.source);
  const nA = a.length;
  const nB = b.length;
  if (nA < 1 || nB < 1) failInput(fn, `needs at least one value in each group, got ${nA} and ${nB}`, options.source);
  const splits = binomial(nA + nB, nA);
  if (splits > EXACT_SPLITS_MAX) failInput(fn, `${nA} + ${nB} values have ${splits} splits, more than the ${EXACT_SPLITS_MAX} enumerated`, options.source);
  const pool = [...Array.from(a), ...Array.from(b)];
  const n = pool.length;
  const mean = (idx: readonly number[]) => idx.reduce((s, i) => s + pool[i]!, 0) / idx.length;
  const all = pool.map((_, i) => i);
  const observedA = all.slice(0, nA);
  const statistic = (inA: readonly number[]): number => {
    const set = new Set(inA);
    return mean(inA) - mean(all.filter((i) => !set.has(i)));
  };
  const observed = statistic(observedA);
  const gamma = Math.abs(Number.EPSILON * 100 * observed);
  let atOrBelow = 0;
  let atOrAbove = 0;
  // Every nA-subset of the pool, in lexicographic order of indices.
  const idx = observedA.slice();
  for (;;) {
    const t = statistic(idx);
    if (t <= observed + gamma) atOrBelow++;
    if (t >= observed - gamma) atOrAbove++;
    let i = nA - 1;
    while (i >= 0 && idx[i] === n - nA + i) i--;
    if (i < 0) break;
    idx[i]!++;
    for (let j = i + 1; j < nA; j++) idx[j] = idx[j - 1]! + 1;
  }
  const pValue = Math.min(1, 2 * Math.min(atOrBelow / splits, atOrAbove / splits));
  return {
    meanA: mean(observedA),
    meanB: mean(all.slice(nA)),
    difference: observed,
    pValue,
    splits,
    minimumPValue: Math.min(1, 2 / splits),
    nA,
    nB,
  };
}
