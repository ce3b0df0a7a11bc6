/**
 * Average ranks (scipy `rankdata(method='average')`, lib/eval/spearman.ts `rankAverage`) of a
 * bootstrap resample or a jackknife sample of test pairs, without sorting again.
 *
 * A resample is a multiset of the original pairs: pair i appears c_i times. Each column is sorted
 * once and cut into runs of equal values; for any counts, one pass over the runs in order gives
 * every copy of a run the rank (first + last)/2 + 1 of the positions it occupies, which is exactly
 * what `rankAverage` gives the materialised resample (ranks are half-integers, exact in float64).
 * The rank columns are then laid out in the resample's own order and handed to the project's
 * `pearson`, so a resampled Spearman is bit-for-bit `spearman(x[idx], y[idx])`, at O(n) instead of
 * O(n log n) per resample.
 */

/** One column sorted once, with its runs of equal values. */
export class TieGroupedColumn {
  /** Pair indices in ascending order of value (stable: ties keep their index order). */
  private readonly order: Uint32Array;
  /** Exclusive end (into `order`) of each run of equal values. */
  private readonly runEnd: Uint32Array;

  constructor(values: ArrayLike<number>) {
    const n = values.length;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((i, j) => (values[i] < values[j] ? -1 : values[i] > values[j] ? 1 : 0));
    const ends: number[] = [];
    for (let k = 1; k <= n; k++) {
      if (k === n || values[order[k]] !== values[order[k - 1]]) ends.push(k);
    }
    this.order = order;
    this.runEnd = Uint32Array.from(ends);
  }

  /**
   * `ranks[i]` = the average rank that every copy of pair i gets in the multiset where pair i
   * appears `counts[i]` times. Pairs with count 0 get the rank they would share with their run.
   */
  ranksFor(counts: Uint32Array, ranks: Float64Array): void {
    const { order, runEnd } = this;
    let start = 0;
    let position = 0; // 0-based position of the run's first copy in the sorted multiset
    for (let g = 0; g < runEnd.length; g++) {
      const end = runEnd[g];
      let copies = 0;
      for (let k = start; k < end; k++) copies += counts[order[k]];
      // rankAverage: (first + last) / 2 + 1 over 0-based positions first..last.
      const rank = (position + (position + copies - 1)) / 2 + 1;
      for (let k = start; k < end; k++) ranks[order[k]] = rank;
      position += copies;
      start = end;
    }
  }
}

/**
 * Rank columns of resamples of the same test pairs across several columns (scores, gold; or two
 * runs' scores and gold), reusing buffers between resamples.
 */
export class PairResampler {
  readonly n: number;
  private readonly columns: TieGroupedColumn[];
  private readonly counts: Uint32Array;
  private readonly ranksByPair: Float64Array[];
  /** Rank columns of the last resample, in the resample's order (length n). */
  readonly resampled: Float64Array[];
  /** Rank columns of the last jackknife sample, in original order without the left-out pair (length n - 1). */
  readonly leftOneOut: Float64Array[];

  constructor(columns: readonly ArrayLike<number>[]) {
    this.n = columns[0].length;
    this.columns = columns.map((c) => new TieGroupedColumn(c));
    this.counts = new Uint32Array(this.n);
    this.ranksByPair = columns.map(() => new Float64Array(this.n));
    this.resampled = columns.map(() => new Float64Array(this.n));
    this.leftOneOut = columns.map(() => new Float64Array(this.n - 1));
  }

  /** Fill `resampled` for the resample that takes pairs `indices` (length n, each in [0, n)). */
  resample(indices: ArrayLike<number>): Float64Array[] {
    const { n, counts } = this;
    counts.fill(0);
    for (let k = 0; k < n; k++) counts[indices[k]]++;
    for (let c = 0; c < this.columns.length; c++) {
      const byPair = this.ranksByPair[c];
      this.columns[c].ranksFor(counts, byPair);
      const out = this.resampled[c];
      for (let k = 0; k < n; k++) out[k] = byPair[indices[k]];
    }
    return this.resampled;
  }

  /** Fill `leftOneOut` for the sample without pair `left` (scipy's jackknife order). */
  leaveOut(left: number): Float64Array[] {
    const { n, counts } = this;
    counts.fill(1);
    counts[left] = 0;
    for (let c = 0; c < this.columns.length; c++) {
      const byPair = this.ranksByPair[c];
      this.columns[c].ranksFor(counts, byPair);
      const out = this.leftOneOut[c];
      let k = 0;
      for (let i = 0; i < n; i++) if (i !== left) out[k++] = byPair[i];
    }
    return this.leftOneOut;
  }
}

/**
 * Two runs' scores on the same pairs, pooled and sorted once, for the paired permutation test: a
 * permutation swaps the runs' scores on some pairs, so run A's permuted column takes, for each pair,
 * either a_i or b_i. Walking the pooled order and keeping the entries each permuted column takes
 * gives both columns' average ranks in O(n).
 */
export class SwapPool {
  readonly n: number;
  /** Pooled entries in ascending order of value; entry e is pair e >> 1 of run (e & 1) (0 = A, 1 = B). */
  private readonly order: Uint32Array;
  private readonly runEnd: Uint32Array;
  readonly ranksA: Float64Array;
  readonly ranksB: Float64Array;

  constructor(scoresA: ArrayLike<number>, scoresB: ArrayLike<number>) {
    const n = scoresA.length;
    this.n = n;
    const value = (e: number): number => ((e & 1) === 0 ? scoresA[e >> 1] : scoresB[e >> 1]);
    const order = new Uint32Array(2 * n);
    for (let e = 0; e < 2 * n; e++) order[e] = e;
    order.sort((e, f) => {
      const u = value(e);
      const v = value(f);
      return u < v ? -1 : u > v ? 1 : 0;
    });
    const ends: number[] = [];
    for (let k = 1; k <= 2 * n; k++) {
      if (k === 2 * n || value(order[k]) !== value(order[k - 1])) ends.push(k);
    }
    this.order = order;
    this.runEnd = Uint32Array.from(ends);
    this.ranksA = new Float64Array(n);
    this.ranksB = new Float64Array(n);
  }

  /**
   * Average ranks of the permuted columns A' and B', where `swapped[i]` (0 or 1) says whether pair
   * i's scores are exchanged: A'_i = swapped ? b_i : a_i. Results in `ranksA` / `ranksB`.
   */
  rank(swapped: Uint8Array): void {
    const { order, runEnd, ranksA, ranksB } = this;
    let start = 0;
    let posA = 0;
    let posB = 0;
    for (let g = 0; g < runEnd.length; g++) {
      const end = runEnd[g];
      let inA = 0;
      for (let k = start; k < end; k++) {
        const e = order[k];
        if (((e & 1) ^ swapped[e >> 1]) === 0) inA++;
      }
      const inB = end - start - inA;
      const rankA = (posA + (posA + inA - 1)) / 2 + 1;
      const rankB = (posB + (posB + inB - 1)) / 2 + 1;
      for (let k = start; k < end; k++) {
        const e = order[k];
        if (((e & 1) ^ swapped[e >> 1]) === 0) ranksA[e >> 1] = rankA;
        else ranksB[e >> 1] = rankB;
      }
      posA += inA;
      posB += inB;
      start = end;
    }
  }
}
