/**
 * The machinery both bootstrap functions share: options, their checks, the bootstrap distribution
 * of a statistic of rank columns over a resampling plan, its jackknife, and the interval.
 *
 * A "statistic of rank columns" receives the average-rank columns of one (re)sample of the test
 * pairs (see resample-ranks.ts) and returns a number, e.g. pearson(ranks[0], ranks[1]) = Spearman.
 */
import { UnknownNameError } from '../../util/errors.js';
import { PairResampler } from './resample-ranks.js';
import { injectedResamples, seededResamples, type ResamplingPlan } from './resampling-plans.js';
import {
  INTERVAL_METHODS,
  bcaInterval,
  bootstrapStandardError,
  percentileInterval,
  type ConfidenceInterval,
  type IntervalMethod,
} from './bootstrap-interval.js';
import { checkCount, checkLevel, checkSeed, failInput, type SourceOption } from './validate.js';

export interface BootstrapOptions extends SourceOption {
  /** Number of resamples (default 1000). Ignored when `resampleIndices` is given. */
  resamples?: number;
  /** Seed of the generator that draws the resamples (default 0). */
  seed?: number;
  /** Coverage of the interval (default 0.95). */
  level?: number;
  /** 'bca' (default, as scipy.stats.bootstrap) or 'percentile'. */
  method?: IntervalMethod;
  /**
   * The resamples themselves, each a row of n pair indices in [0, n) (e.g. drawn by numpy for a
   * cross-check against scipy). Replaces the seeded draw.
   */
  resampleIndices?: readonly ArrayLike<number>[];
}

export interface ResolvedBootstrapOptions {
  plan: ResamplingPlan;
  seed: number | null;
  level: number;
  method: IntervalMethod;
}

export const DEFAULT_RESAMPLES = 1000;

export function resolveBootstrapOptions(fn: string, n: number, options: BootstrapOptions): ResolvedBootstrapOptions {
  const { source, level = 0.95, method = 'bca', seed = 0 } = options;
  checkLevel(fn, level, source);
  if (!(INTERVAL_METHODS as readonly string[]).includes(method)) {
    throw new UnknownNameError('interval method', String(method), INTERVAL_METHODS, { file: source });
  }
  if (options.resampleIndices !== undefined) {
    if (options.resamples !== undefined && options.resamples !== options.resampleIndices.length) {
      failInput(fn, `resamples (${options.resamples}) disagrees with the ${options.resampleIndices.length} rows of resampleIndices`, source);
    }
    return { plan: injectedResamples(fn, n, options.resampleIndices, source), seed: null, level, method };
  }
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  checkCount(fn, 'resamples', resamples, 2, source);
  checkSeed(fn, seed, source);
  return { plan: seededResamples(n, resamples, seed), seed, level, method };
}

export type RankStatistic = (ranks: Float64Array[]) => number;

/** The statistic on every resample of the plan, in plan order. */
export function bootstrapDistribution(resampler: PairResampler, plan: ResamplingPlan, statistic: RankStatistic): Float64Array {
  const out = new Float64Array(plan.count);
  const row = new Uint32Array(resampler.n);
  for (let b = 0; b < plan.count; b++) {
    plan.fill(b, row);
    out[b] = statistic(resampler.resample(row));
  }
  return out;
}

/** The statistic with each pair left out in turn (n values). */
export function jackknifeDistribution(resampler: PairResampler, statistic: RankStatistic): Float64Array {
  const out = new Float64Array(resampler.n);
  for (let i = 0; i < resampler.n; i++) out[i] = statistic(resampler.leaveOut(i));
  return out;
}

export interface BootstrapSummary {
  ci: ConfidenceInterval;
  standardError: number;
  distribution: Float64Array;
}

/** Distribution, interval (BCa needs the jackknife, computed only then) and standard error. */
export function bootstrapSummary(
  resampler: PairResampler,
  opts: ResolvedBootstrapOptions,
  estimate: number,
  statistic: RankStatistic,
): BootstrapSummary {
  const distribution = bootstrapDistribution(resampler, opts.plan, statistic);
  const ci =
    opts.method === 'bca'
      ? bcaInterval(distribution, estimate, jackknifeDistribution(resampler, statistic), opts.level)
      : percentileInterval(distribution, opts.level);
  return { ci, standardError: bootstrapStandardError(distribution), distribution };
}
