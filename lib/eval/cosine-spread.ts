/**
 * AnglE Figure 5's argument as numbers: how spread out a model's cosine similarities are within
 * each gold-score bucket of an STS set, and how far apart the buckets sit.
 *
 * AnglE reads the gold buckets 0–1 and 4–5 as the cosine's saturation zones (where cos is flat in
 * the angle, so a cosine-trained model gets little gradient to tell pairs apart) and argues that the
 * angle objective spreads the cosines there the way the gold scores are spread. Per bucket [lo, hi)
 * (the last one closed) of gold scores:
 *
 * - n, mean, standard deviation (n − 1), quartiles and IQR of the cosines (quantiles as numpy's
 *   default, linear interpolation between order statistics: Hyndman & Fan type 7);
 *
 * and over all pairs:
 *
 * - `gap`: the mean cosine of the highest bucket minus that of the lowest (how much of the cosine
 *   range the model spends between "unrelated" and "equivalent");
 * - `separation`: gap / pooled within-bucket standard deviation (√(Σ(n_b − 1)s_b² / Σ(n_b − 1))),
 *   a signal-to-noise ratio: higher means the cosine tells the extreme buckets apart more clearly.
 */
import { InputError } from '../util/errors.js';

export interface CosineBucketSpread {
  label: string;
  lo: number;
  hi: number;
  n: number;
  mean: number;
  /** Sample standard deviation (n − 1); NaN for n < 2. */
  std: number;
  q25: number;
  median: number;
  q75: number;
  iqr: number;
}

export interface CosineSpread {
  buckets: CosineBucketSpread[];
  /** Mean cosine of the highest non-empty bucket minus that of the lowest. */
  gap: number;
  /** Pooled within-bucket standard deviation (buckets with n ≥ 2). */
  pooledStd: number;
  /** gap / pooledStd. */
  separation: number;
}

/** The p-quantile of ascending `sorted` by linear interpolation (numpy.quantile's default). */
export function quantileType7(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

export function cosineSpreadByGold(cosines: ArrayLike<number>, gold: ArrayLike<number>, goldEdges: readonly number[] = [0, 1, 2, 3, 4, 5]): CosineSpread {
  if (cosines.length !== gold.length) throw new InputError(`cosine spread: ${cosines.length} cosines for ${gold.length} gold scores`);
  if (goldEdges.length < 2) throw new InputError(`cosine spread: needs at least two bucket edges, got ${goldEdges.length}`);
  for (let i = 0; i < cosines.length; i++) {
    if (!Number.isFinite(cosines[i]) || !Number.isFinite(gold[i])) throw new InputError(`cosine spread: pair ${i} has cosine ${cosines[i]} and gold ${gold[i]} (expected finite numbers)`);
  }
  const buckets: CosineBucketSpread[] = [];
  for (let b = 0; b + 1 < goldEdges.length; b++) {
    const lo = goldEdges[b]!;
    const hi = goldEdges[b + 1]!;
    const last = b + 2 === goldEdges.length;
    const v: number[] = [];
    for (let i = 0; i < gold.length; i++) if (gold[i] >= lo && (gold[i] < hi || (last && gold[i] <= hi))) v.push(cosines[i]);
    v.sort((x, y) => x - y);
    const n = v.length;
    let mean = 0;
    for (const x of v) mean += x;
    mean = n > 0 ? mean / n : Number.NaN;
    let ss = 0;
    for (const x of v) ss += (x - mean) ** 2;
    const q25 = quantileType7(v, 0.25);
    const q75 = quantileType7(v, 0.75);
    buckets.push({ label: `${lo}-${hi}`, lo, hi, n, mean, std: n > 1 ? Math.sqrt(ss / (n - 1)) : Number.NaN, q25, median: quantileType7(v, 0.5), q75, iqr: q75 - q25 });
  }
  const filled = buckets.filter((b) => b.n > 0);
  const gap = filled.length > 0 ? filled[filled.length - 1]!.mean - filled[0]!.mean : Number.NaN;
  let num = 0;
  let den = 0;
  for (const b of buckets) {
    if (b.n < 2) continue;
    num += (b.n - 1) * b.std ** 2;
    den += b.n - 1;
  }
  const pooledStd = den > 0 ? Math.sqrt(num / den) : Number.NaN;
  return { buckets, gap, pooledStd, separation: gap / pooledStd };
}
