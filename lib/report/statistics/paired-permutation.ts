/**
 * Paired permutation test of two runs scored on the same test pairs: is rho_A − rho_B real?
 *
 * Under the null hypothesis that the two runs are exchangeable, which run produced which score of a
 * pair is arbitrary, so for each pair the two scores are swapped with probability ½ (the approximate
 * randomization test of NLP evaluation, Noreen 1989; scipy.stats.permutation_test with
 * permutation_type='samples'), and the statistic d = spearman(A, gold) − spearman(B, gold) is
 * recomputed. Gold stays in place.
 *
 * p-value: as scipy, two-sided = 2 · min(P(T ≤ d), P(T ≥ d)), clipped to 1, comparisons with a
 * relative tolerance of 100 ε·|d| (numerically distinct but theoretically equal statistics count as
 * equal). With n ≤ 20 pairs all 2ⁿ swap patterns are enumerated (exact; the complement of a pattern
 * gives exactly −T, so half are computed); otherwise `permutations` random patterns with the +1
 * correction, P = (1 + #)/(R + 1) (Phipson & Smyth 2010), so p is never 0.
 *
 * Each permuted Spearman equals lib/eval/spearman.ts's `spearman` on the permuted column bit for
 * bit; ranks come from one pooled sort (resample-ranks.ts `SwapPool`) instead of a sort per pattern.
 */
import { pearson, rankAverage, spearman } from '../../eval/spearman.js';
import { SwapPool } from './resample-ranks.js';
import { injectedSwaps, seededSwaps, type ResamplingPlan } from './resampling-plans.js';
import { checkCount, checkDefined, checkPairedColumns, checkSeed, failInput, type SourceOption } from './validate.js';

/** Up to this many pairs the test enumerates all 2ⁿ swap patterns (2²⁰ ≈ 10⁶, well under a second). */
export const EXACT_PERMUTATION_MAX_PAIRS = 20;
export const DEFAULT_PERMUTATIONS = 9999;

export interface PermutationOptions extends SourceOption {
  /** Random swap patterns when not exact (default 9999, as scipy). */
  permutations?: number;
  /** Seed of the generator that draws the swap patterns (default 0). */
  seed?: number;
  /** Enumerate all 2ⁿ patterns; default: when n <= 20. `true` with more pairs is an error. */
  exact?: boolean;
  /** The swap patterns themselves, rows of n flags (e.g. drawn by numpy for a cross-check). */
  swaps?: readonly ArrayLike<number | boolean>[];
}

export interface PairedPermutationResult {
  spearmanA: number;
  spearmanB: number;
  difference: number;
  /** Two-sided p-value of "the runs are exchangeable". */
  pValue: number;
  /** True when all 2ⁿ swap patterns were enumerated. */
  exact: boolean;
  /** Swap patterns evaluated (2ⁿ when exact). */
  permutations: number;
  n: number;
  /** The generator seed; null when exact or when the swaps were injected. */
  seed: number | null;
}

/** Counts of null statistics at or below / at or above the observed one (with scipy's tolerance). */
interface TailCounts {
  atOrBelow: number;
  atOrAbove: number;
}

export function pairedPermutationTest(
  scoresA: ArrayLike<number>,
  scoresB: ArrayLike<number>,
  gold: ArrayLike<number>,
  options: PermutationOptions = {},
): PairedPermutationResult {
  const fn = 'pairedPermutationTest';
  const { source } = options;
  const n = checkPairedColumns(fn, { scoresA, scoresB, gold }, source);
  const rhoA = spearman(scoresA, gold);
  const rhoB = spearman(scoresB, gold);
  checkDefined(fn, 'the Spearman correlation of scoresA and gold', rhoA, source);
  checkDefined(fn, 'the Spearman correlation of scoresB and gold', rhoB, source);
  const observed = rhoA - rhoB;

  const exact = options.swaps === undefined && (options.exact ?? n <= EXACT_PERMUTATION_MAX_PAIRS);
  if (options.exact === true && options.swaps !== undefined) failInput(fn, 'exact: true and injected swaps exclude each other', source);
  if (exact && n > EXACT_PERMUTATION_MAX_PAIRS) {
    failInput(fn, `exact enumeration is limited to ${EXACT_PERMUTATION_MAX_PAIRS} pairs (2^n patterns), got ${n}; use the Monte-Carlo test`, source);
  }

  const pool = new SwapPool(scoresA, scoresB);
  const goldRanks = rankAverage(gold);
  const gamma = Math.abs(Number.EPSILON * 100 * observed);
  const swapped = new Uint8Array(n);
  const counts: TailCounts = { atOrBelow: 0, atOrAbove: 0 };
  const tally = (t: number): void => {
    if (t <= observed + gamma) counts.atOrBelow++;
    if (t >= observed - gamma) counts.atOrAbove++;
  };
  const statistic = (): number => {
    pool.rank(swapped);
    return pearson(pool.ranksA, goldRanks) - pearson(pool.ranksB, goldRanks);
  };

  let total: number;
  let seed: number | null = null;
  if (exact) {
    // Patterns with pair n−1 unswapped; each one's complement (all flags flipped) gives −T exactly.
    const half = 2 ** (n - 1);
    for (let mask = 0; mask < half; mask++) {
      for (let i = 0; i < n - 1; i++) swapped[i] = (mask >>> i) & 1;
      const t = statistic();
      tally(t);
      tally(-t);
    }
    total = 2 * half;
  } else {
    let plan: ResamplingPlan;
    if (options.swaps !== undefined) {
      plan = injectedSwaps(fn, n, options.swaps, source);
    } else {
      const permutations = options.permutations ?? DEFAULT_PERMUTATIONS;
      checkCount(fn, 'permutations', permutations, 1, source);
      seed = options.seed ?? 0;
      checkSeed(fn, seed, source);
      plan = seededSwaps(n, permutations, seed);
    }
    for (let b = 0; b < plan.count; b++) {
      plan.fill(b, swapped);
      tally(statistic());
    }
    total = plan.count;
  }
  const adjustment = exact ? 0 : 1;
  const less = (counts.atOrBelow + adjustment) / (total + adjustment);
  const greater = (counts.atOrAbove + adjustment) / (total + adjustment);
  const pValue = Math.min(1, 2 * Math.min(less, greater));
  return { spearmanA: rhoA, spearmanB: rhoB, difference: observed, pValue, exact, permutations: total, n, seed };
}
