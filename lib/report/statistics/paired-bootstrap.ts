/**
 * Paired bootstrap test of two runs scored on the same test pairs: is rho_A − rho_B real?
 *
 * Each resample draws n test pairs with replacement and evaluates both runs on the same drawn pairs,
 * so what the two runs share (the difficulty of the drawn pairs) cancels in the difference
 * d* = rho_A* − rho_B*. The interval of d is the BCa (default) or percentile interval of d*
 * (see spearman-bootstrap.ts for the choice). The two-sided p-value shifts the bootstrap
 * distribution to the null (centres it on 0) and counts how often it lies at least as far from 0 as
 * the observed d (Efron & Tibshirani 1993, ch. 16; the NLP form is Berg-Kirkpatrick et al. 2012), with
 * the +1 correction of Monte-Carlo tests (Davison & Hinkley 1997, ch. 4) so that it is never 0:
 *   p = (1 + #{b : |d*_b − d| ≥ |d|}) / (B + 1).
 * The smallest reachable p is 1/(B + 1); with the default 1000 resamples that is about 0.001.
 */
import { pearson, spearman } from '../../eval/spearman.js';
import { PairResampler } from './resample-ranks.js';
import { bootstrapSummary, resolveBootstrapOptions, type BootstrapOptions } from './rank-bootstrap.js';
import type { ConfidenceInterval } from './bootstrap-interval.js';
import { checkDefined, checkPairedColumns } from './validate.js';

export interface PairedBootstrapResult {
  spearmanA: number;
  spearmanB: number;
  /** spearmanA − spearmanB. */
  difference: number;
  ci: ConfidenceInterval;
  /** Two-sided p-value of "no difference". */
  pValue: number;
  standardError: number;
  n: number;
  resamples: number;
  seed: number | null;
  /** rho_A* − rho_B* of every resample, in draw order. */
  distribution: Float64Array;
}

export function pairedBootstrapTest(
  scoresA: ArrayLike<number>,
  scoresB: ArrayLike<number>,
  gold: ArrayLike<number>,
  options: BootstrapOptions = {},
): PairedBootstrapResult {
  const fn = 'pairedBootstrapTest';
  const n = checkPairedColumns(fn, { scoresA, scoresB, gold }, options.source);
  const opts = resolveBootstrapOptions(fn, n, options);
  const rhoA = spearman(scoresA, gold);
  const rhoB = spearman(scoresB, gold);
  checkDefined(fn, 'the Spearman correlation of scoresA and gold', rhoA, options.source);
  checkDefined(fn, 'the Spearman correlation of scoresB and gold', rhoB, options.source);
  const difference = rhoA - rhoB;
  const resampler = new PairResampler([scoresA, scoresB, gold]);
  const summary = bootstrapSummary(resampler, opts, difference, (r) => pearson(r[0], r[2]) - pearson(r[1], r[2]));
  const { distribution } = summary;
  let atLeastAsFar = 0;
  for (let b = 0; b < distribution.length; b++) {
    if (Math.abs(distribution[b] - difference) >= Math.abs(difference)) atLeastAsFar++;
  }
  const pValue = (atLeastAsFar + 1) / (distribution.length + 1);
  return { spearmanA: rhoA, spearmanB: rhoB, difference, pValue, n, resamples: opts.plan.count, seed: opts.seed, ...summary };
}
