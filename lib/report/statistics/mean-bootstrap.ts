/**
 * Confidence interval of a mean over independent items by the nonparametric bootstrap (Efron &
 * Tibshirani 1993, ch. 6 and 14), e.g. a retrieval accuracy over its queries: each query's 0/1
 * strict hit is an item, the accuracy their mean, and the interval says how far another sample of
 * queries of the same kind could move it.
 *
 * Resample b takes n items with replacement (the project's seeded draw, ./resampling-plans.ts, or
 * injected indices for a cross-check); the statistic is their mean. Interval: BCa by default, as
 * scipy.stats.bootstrap (./bootstrap-interval.ts), whose jackknife here is the n leave-one-out
 * means (sum − x_i)/(n − 1), O(n). A proportion of 0 or 1 (every item the same) has no spread: every
 * resample equals the estimate, and the interval is that point (scipy returns NaN there).
 */
import { bcaInterval, bootstrapStandardError, percentileInterval, type ConfidenceInterval } from './bootstrap-interval.js';
import { resolveBootstrapOptions, type BootstrapOptions } from './rank-bootstrap.js';
import { checkFinite, failInput } from './validate.js';

export interface MeanBootstrapResult {
  mean: number;
  ci: ConfidenceInterval;
  /** Standard deviation (n − 1) of the bootstrap distribution. */
  standardError: number;
  n: number;
  resamples: number;
  /** The generator seed, or null when the resamples were injected. */
  seed: number | null;
  /** The mean of every resample, in draw order. */
  distribution: Float64Array;
}

export function bootstrapMeanCI(values: ArrayLike<number>, options: BootstrapOptions = {}): MeanBootstrapResult {
  const fn = 'bootstrapMeanCI';
  checkFinite(fn, 'values', values, options.source);
  const n = values.length;
  if (n < 2) failInput(fn, `needs at least 2 values, got ${n}`, options.source);
  const opts = resolveBootstrapOptions(fn, n, options);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i];
  const mean = sum / n;
  const distribution = new Float64Array(opts.plan.count);
  const row = new Uint32Array(n);
  for (let b = 0; b < opts.plan.count; b++) {
    opts.plan.fill(b, row);
    let s = 0;
    for (let k = 0; k < n; k++) s += values[row[k]];
    distribution[b] = s / n;
  }
  let ci: ConfidenceInterval;
  if (distribution.every((v) => v === mean)) {
    ci = { low: mean, high: mean, level: opts.level, method: opts.method };
  } else if (opts.method === 'bca') {
    const jackknife = new Float64Array(n);
    for (let i = 0; i < n; i++) jackknife[i] = (sum - values[i]) / (n - 1);
    const { low, high, level, method } = bcaInterval(distribution, mean, jackknife, opts.level);
    ci = { low, high, level, method };
  } else {
    ci = percentileInterval(distribution, opts.level);
  }
  return { mean, ci, standardError: bootstrapStandardError(distribution), n, resamples: opts.plan.count, seed: opts.seed, distribution };
}
