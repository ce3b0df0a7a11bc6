/**
 * Embedding-space geometry:
 *
 * - Wang & Isola (2020) alignment and uniformity on L2-normalised embeddings:
 *   alignment = E_{(x,y) positive} ‖f(x) − f(y)‖^α (α = 2), uniformity = log E_{x,y} e^{−t‖f(x) − f(y)‖²}
 *   (t = 2) over all unordered pairs i < j of distinct rows (their `torch.pdist` form). Squared
 *   distances are summed from coordinate differences in float64, not as 2 − 2cos, which would
 *   cancel catastrophically when embeddings are nearly parallel.
 * - The golden sets: positives = STS-B test pairs with gold ≥ 4; uniformity over the distinct
 *   STS-B test sentences (both columns).
 * - AnglE Figure 5 data: the density of cosine similarity per gold-score bucket, and the gold
 *   scores' own density (histograms and Gaussian KDEs on a grid, ready for a plot).
 */
import type { EncodeOptions, Embeddings, SentenceEncoder } from '../embed/types.js';
import { loadStsBenchmark, type StsSet } from '../data/sts.js';
import { embedUnique, normalizeRows, pairCosines } from './vectors.js';

/** Mean of ‖x_a − x_b‖^alpha over index pairs (rows used as given: normalise first). */
export function alignment(e: Embeddings, ia: ArrayLike<number>, ib: ArrayLike<number>, alpha = 2): number {
  if (ia.length !== ib.length) throw new RangeError(`alignment: ${ia.length} vs ${ib.length} indices`);
  if (ia.length === 0) throw new RangeError('alignment: no positive pairs');
  const { data, dim } = e;
  let sum = 0;
  for (let k = 0; k < ia.length; k++) {
    const oa = ia[k] * dim;
    const ob = ib[k] * dim;
    let d2 = 0;
    for (let j = 0; j < dim; j++) {
      const d = data[oa + j] - data[ob + j];
      d2 += d * d;
    }
    sum += alpha === 2 ? d2 : Math.pow(Math.sqrt(d2), alpha);
  }
  return sum / ia.length;
}

/** log of the mean over all i < j of exp(−t‖x_i − x_j‖²) (rows used as given: normalise first). */
export function uniformity(e: Embeddings, t = 2): number {
  const { data, rows, dim } = e;
  if (rows < 2) throw new RangeError(`uniformity: needs at least 2 embeddings, got ${rows}`);
  let sum = 0;
  for (let i = 0; i < rows; i++) {
    const oi = i * dim;
    let rowSum = 0;
    for (let k = i + 1; k < rows; k++) {
      const ok = k * dim;
      let d2 = 0;
      for (let j = 0; j < dim; j++) {
        const d = data[oi + j] - data[ok + j];
        d2 += d * d;
      }
      rowSum += Math.exp(-t * d2);
    }
    sum += rowSum;
  }
  return Math.log(sum / ((rows * (rows - 1)) / 2));
}

export interface AlignUniformResult {
  /** Positive pairs (gold ≥ threshold). */
  nPos: number;
  alignment: number;
  /** Distinct sentences the uniformity runs over. */
  nUnique: number;
  uniformity: number;
  alpha: number;
  t: number;
  threshold: number;
}

/**
 * Alignment over the pairs of `set` with gold ≥ threshold and uniformity over the set's distinct
 * sentences, on L2-normalised embeddings.
 */
export async function alignUniformOnSet(
  encoder: SentenceEncoder,
  set: StsSet,
  opts: { threshold?: number; alpha?: number; t?: number; encode?: EncodeOptions } = {},
): Promise<AlignUniformResult> {
  const threshold = opts.threshold ?? 4;
  const alpha = opts.alpha ?? 2;
  const t = opts.t ?? 2;
  const texts: string[] = [];
  for (const p of set.pairs) texts.push(p.a, p.b);
  const { emb, index, unique } = await embedUnique(encoder, texts, opts.encode);
  const ne = normalizeRows(emb);
  const ia: number[] = [];
  const ib: number[] = [];
  set.pairs.forEach((p, k) => {
    if (p.score >= threshold) {
      ia.push(index[2 * k]);
      ib.push(index[2 * k + 1]);
    }
  });
  if (ia.length === 0) throw new RangeError(`${set.task} ${set.name}: no pair has gold >= ${threshold}`);
  return { nPos: ia.length, alignment: alignment(ne, ia, ib, alpha), nUnique: unique.length, uniformity: uniformity(ne, t), alpha, t, threshold };
}

/** The golden definition: STS-B test, positives gold ≥ 4, α = 2, t = 2. */
export async function alignUniformStsb(
  encoder: SentenceEncoder,
  opts: { dataDir?: string; threshold?: number; alpha?: number; t?: number; encode?: EncodeOptions } = {},
): Promise<AlignUniformResult> {
  return alignUniformOnSet(encoder, loadStsBenchmark('test', { dataDir: opts.dataDir }), opts);
}

// ---------------------------------------------------------------- densities (AnglE Figure 5)

export interface Histogram {
  /** bins + 1 edges. */
  edges: number[];
  /** Bin centres. */
  centers: number[];
  counts: number[];
  /** Density: counts / (n · bin width), integrates to 1 over the range (0 when n = 0). */
  density: number[];
}

export interface Kde {
  x: number[];
  y: number[];
  /** Gaussian kernel standard deviation used. */
  bandwidth: number;
}

export interface DensityBucket {
  label: string;
  /** Gold range [lo, hi) (the last bucket includes hi). */
  lo: number;
  hi: number;
  n: number;
  histogram: Histogram;
  /** Absent when the bucket has fewer than 2 points or no spread. */
  kde?: Kde;
}

export interface CosineDensityResult {
  buckets: DensityBucket[];
  /** All cosines together. */
  all: { histogram: Histogram; kde?: Kde };
  /** The gold scores' own distribution. */
  gold: { histogram: Histogram; kde?: Kde };
}

/** Fixed-width histogram over [lo, hi]; values outside are dropped, hi falls in the last bin. */
export function histogram(values: ArrayLike<number>, bins: number, lo: number, hi: number): Histogram {
  const w = (hi - lo) / bins;
  const counts = new Array<number>(bins).fill(0);
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!(v >= lo && v <= hi)) continue;
    counts[Math.min(bins - 1, Math.floor((v - lo) / w))]++;
    n++;
  }
  const edges = Array.from({ length: bins + 1 }, (_, i) => lo + i * w);
  return {
    edges,
    centers: edges.slice(0, bins).map((e) => e + w / 2),
    counts,
    density: counts.map((c) => (n > 0 ? c / (n * w) : 0)),
  };
}

/**
 * Gaussian KDE on an even grid. Default bandwidth: Scott's rule as scipy's gaussian_kde (and
 * seaborn) use, σ·n^(−1/5) with the sample standard deviation (ddof 1).
 */
export function gaussianKde(values: ArrayLike<number>, lo: number, hi: number, points = 200, bandwidth?: number): Kde | undefined {
  const n = values.length;
  if (n < 2) return undefined;
  let m = 0;
  for (let i = 0; i < n; i++) m += values[i];
  m /= n;
  let v = 0;
  for (let i = 0; i < n; i++) v += (values[i] - m) ** 2;
  const sd = Math.sqrt(v / (n - 1));
  const h = bandwidth ?? sd * Math.pow(n, -1 / 5);
  if (!(h > 0)) return undefined;
  const x = Array.from({ length: points }, (_, i) => lo + ((hi - lo) * i) / (points - 1));
  const norm = 1 / (n * h * Math.sqrt(2 * Math.PI));
  const y = x.map((xi) => {
    let s = 0;
    for (let i = 0; i < n; i++) {
      const z = (xi - values[i]) / h;
      s += Math.exp(-0.5 * z * z);
    }
    return s * norm;
  });
  return { x, y, bandwidth: h };
}

export interface DensityOptions {
  /** Gold-score bucket edges; default [0, 1, 2, 3, 4, 5] (5 buckets, the last closed). */
  goldEdges?: readonly number[];
  /** Cosine range; default [-1, 1]. */
  cosineRange?: readonly [number, number];
  bins?: number;
  kdePoints?: number;
}

/** Cosine density per gold bucket, overall, and the gold density (for AnglE Figure 5). */
export function cosineDensityByGold(cosines: ArrayLike<number>, gold: ArrayLike<number>, opts: DensityOptions = {}): CosineDensityResult {
  if (cosines.length !== gold.length) throw new RangeError(`${cosines.length} cosines vs ${gold.length} gold scores`);
  if (cosines.length === 0) throw new RangeError('cosine density: no pairs');
  const edges = opts.goldEdges ?? [0, 1, 2, 3, 4, 5];
  const [clo, chi] = opts.cosineRange ?? [-1, 1];
  const bins = opts.bins ?? 50;
  const pts = opts.kdePoints ?? 200;
  const buckets: DensityBucket[] = [];
  for (let b = 0; b + 1 < edges.length; b++) {
    const lo = edges[b];
    const hi = edges[b + 1];
    const last = b + 2 === edges.length;
    const vals: number[] = [];
    for (let i = 0; i < gold.length; i++) if (gold[i] >= lo && (gold[i] < hi || (last && gold[i] <= hi))) vals.push(cosines[i]);
    buckets.push({
      label: `${lo}-${hi}`,
      lo,
      hi,
      n: vals.length,
      histogram: histogram(vals, bins, clo, chi),
      kde: gaussianKde(vals, clo, chi, pts),
    });
  }
  const glo = edges[0];
  const ghi = edges[edges.length - 1];
  return {
    buckets,
    all: { histogram: histogram(cosines, bins, clo, chi), kde: gaussianKde(cosines, clo, chi, pts) },
    gold: { histogram: histogram(gold, bins, glo, ghi), kde: gaussianKde(gold, glo, ghi, pts) },
  };
}

/** Figure 5 data for an STS set (default STS-B test) and an encoder. */
export async function cosineDensityForSet(
  encoder: SentenceEncoder,
  set: StsSet,
  opts: DensityOptions & { encode?: EncodeOptions } = {},
): Promise<CosineDensityResult & { cosines: Float64Array; goldScores: Float64Array }> {
  const texts: string[] = [];
  for (const p of set.pairs) texts.push(p.a, p.b);
  const { emb, index } = await embedUnique(encoder, texts, opts.encode);
  const n = set.pairs.length;
  const ia = new Uint32Array(n);
  const ib = new Uint32Array(n);
  const goldArr = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    ia[k] = index[2 * k];
    ib[k] = index[2 * k + 1];
    goldArr[k] = set.pairs[k].score;
  }
  const cosines = pairCosines(emb, ia, ib);
  return { ...cosineDensityByGold(cosines, goldArr, opts), cosines, goldScores: goldArr };
}
