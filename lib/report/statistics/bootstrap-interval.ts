/**
 * Confidence intervals from a bootstrap distribution, as `scipy.stats.bootstrap` computes them.
 *
 * - percentile: the α/2 and 1 − α/2 quantiles of the bootstrap distribution (α = 1 − level).
 * - BCa (bias-corrected and accelerated; Efron & Tibshirani 1993, §14.3 and eq. 15.36, as
 *   scipy cites): the
 *   same quantiles taken at adjusted levels α₁ = Φ(z0 + (z0 + z_α)/(1 − a(z0 + z_α))) and α₂ (with
 *   z_{1−α}), where z0 = Φ⁻¹(share of resamples below the estimate, ties counted half) corrects
 *   the median bias of the bootstrap distribution, and the acceleration
 *   a = Σ U³ / (6 (Σ U²)^{3/2}), U_i = (n − 1)(mean of θ₍·₎ − θ₍ᵢ₎), from the n leave-one-out
 *   (jackknife) estimates corrects for the standard error changing with the parameter (skewness).
 *
 * Quantiles are Hyndman & Fan's type 7 (`scipy.stats.quantile(method='linear')`, numpy's
 * default), written with scipy's formula so that bounds agree to rounding.
 */
import { InputError } from '../../util/errors.js';
import { ndtr, ndtri } from './normal.js';

export const INTERVAL_METHODS = ['bca', 'percentile'] as const;
export type IntervalMethod = (typeof INTERVAL_METHODS)[number];

export interface ConfidenceInterval {
  low: number;
  high: number;
  /** Coverage, e.g. 0.95. */
  level: number;
  method: IntervalMethod;
}

export interface BcaDetails {
  /** Bias correction z0 = Φ⁻¹(share of resamples below the estimate). */
  biasCorrection: number;
  /** Acceleration a from the jackknife. */
  acceleration: number;
  /** The quantile levels actually used (α₁, α₂), instead of α/2 and 1 − α/2. */
  adjustedLevels: [number, number];
}

/** The p-quantile (0 <= p <= 1) of ascending `sorted`, type 7 (scipy `_quantile_hf`, method 'linear'). */
export function quantileLinear(sorted: Float64Array, p: number): number {
  const n = sorted.length;
  const jg = p * n + (1 - p);
  const jp1 = Math.floor(jg);
  let j = jp1 - 1;
  let g = jg % 1;
  if (j < 0) g = 0;
  j = Math.min(Math.max(j, 0), n - 1);
  const k = Math.min(Math.max(jp1, 0), n - 1);
  return (1 - g) * sorted[j] + g * sorted[k];
}

function sortedCopy(distribution: Float64Array): Float64Array {
  for (let b = 0; b < distribution.length; b++) {
    if (Number.isNaN(distribution[b])) {
      throw new InputError(
        `bootstrap: resample ${b} gave an undefined correlation (a resample with a constant column); ` +
          'the data have too few distinct pairs for a bootstrap interval',
      );
    }
  }
  return Float64Array.from(distribution).sort();
}

/** α/2 as scipy computes it ((1 − level)/2, so 0.95 gives 0.025000000000000022). */
function tailLevel(level: number): number {
  return (1 - level) / 2;
}

/** Percentile interval: quantiles α/2 and 1 − α/2 of the bootstrap distribution. */
export function percentileInterval(distribution: Float64Array, level: number): ConfidenceInterval {
  const sorted = sortedCopy(distribution);
  const alpha = tailLevel(level);
  return { low: quantileLinear(sorted, alpha), high: quantileLinear(sorted, 1 - alpha), level, method: 'percentile' };
}

/**
 * BCa interval from the bootstrap distribution, the full-sample estimate and the n jackknife
 * (leave-one-out) estimates.
 */
export function bcaInterval(
  distribution: Float64Array,
  estimate: number,
  jackknife: Float64Array,
  level: number,
): ConfidenceInterval & BcaDetails {
  const sorted = sortedCopy(distribution);
  const B = sorted.length;
  let below = 0;
  let atOrBelow = 0;
  for (let b = 0; b < B; b++) {
    if (sorted[b] < estimate) below++;
    if (sorted[b] <= estimate) atOrBelow++;
  }
  const z0 = ndtri((below + atOrBelow) / (2 * B));

  const n = jackknife.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += jackknife[i];
  mean /= n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    const u = (n - 1) * (mean - jackknife[i]);
    num += u * u * u;
    den += u * u;
  }
  // All leave-one-out estimates equal (e.g. two identical runs: every difference is 0): no pair
  // has more influence than another, so no skewness to correct, a = 0. (scipy gives NaN here.)
  const a = den === 0 ? 0 : ((1 / 6) * (num / n ** 3)) / (den / n ** 2) ** (3 / 2);

  if (!Number.isFinite(z0)) {
    throw new InputError(
      "bootstrap: the BCa interval is undefined for these data (every resample lies on one side of the estimate, so its bias correction is infinite); use method 'percentile'",
    );
  }
  const alpha = tailLevel(level);
  const zAlpha = ndtri(alpha);
  const num1 = z0 + zAlpha;
  const alpha1 = ndtr(z0 + num1 / (1 - a * num1));
  const num2 = z0 - zAlpha;
  const alpha2 = ndtr(z0 + num2 / (1 - a * num2));
  return {
    low: quantileLinear(sorted, alpha1),
    high: quantileLinear(sorted, alpha2),
    level,
    method: 'bca',
    biasCorrection: z0,
    acceleration: a,
    adjustedLevels: [alpha1, alpha2],
  };
}

/** Sample standard deviation (n − 1) of the bootstrap distribution: the bootstrap standard error. */
export function bootstrapStandardError(distribution: Float64Array): number {
  const B = distribution.length;
  if (B < 2) return Number.NaN;
  let mean = 0;
  for (let b = 0; b < B; b++) mean += distribution[b];
  mean /= B;
  let ss = 0;
  for (let b = 0; b < B; b++) ss += (distribution[b] - mean) ** 2;
  return Math.sqrt(ss / (B - 1));
}
