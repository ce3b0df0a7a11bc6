/**
 * Statistics of the report layer: mean ± std over seeds, bootstrap confidence intervals of a run's
 * Spearman, paired bootstrap and permutation tests of two runs on the same test pairs, and a
 * verdict on whether a difference is resolved. Checked against scipy (test/statistics.test.ts,
 * fixtures from test/fixtures/stats/make-stats-fixtures.py).
 */
export { meanStd, formatMeanStd, formatWithInterval, type MeanStd, type FormatOptions } from './mean-std.js';
export { bootstrapSpearmanCI, type SpearmanBootstrapResult } from './spearman-bootstrap.js';
export { pairedBootstrapTest, type PairedBootstrapResult } from './paired-bootstrap.js';
export {
  pairedPermutationTest,
  EXACT_PERMUTATION_MAX_PAIRS,
  DEFAULT_PERMUTATIONS,
  type PairedPermutationResult,
  type PermutationOptions,
} from './paired-permutation.js';
export { DEFAULT_RESAMPLES, type BootstrapOptions } from './rank-bootstrap.js';
export {
  INTERVAL_METHODS,
  quantileLinear,
  percentileInterval,
  bcaInterval,
  type ConfidenceInterval,
  type IntervalMethod,
  type BcaDetails,
} from './bootstrap-interval.js';
export { ndtr, ndtri } from './normal.js';
export { differenceVerdict, type DifferenceVerdict, type DifferenceEvidence, type VerdictResult } from './verdict.js';
export { seedPermutationTest, EXACT_SPLITS_MAX, type SeedPermutationResult } from './seed-permutation.js';
export { bootstrapMeanCI, type MeanBootstrapResult } from './mean-bootstrap.js';
