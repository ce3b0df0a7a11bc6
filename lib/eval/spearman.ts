/**
 * Rank and linear correlation as scipy computes them (`scipy.stats.spearmanr`, `pearsonr`):
 * ties get the average of the ranks they span (`rankdata(method='average')`), Spearman is
 * Pearson on those ranks, all in float64. A NaN anywhere gives NaN (scipy's
 * nan_policy='propagate'); a constant input gives NaN (undefined correlation).
 *
 * simple-statistics: its `sampleRankCorrelation` (7.12.1, installed) uses mid-ranks for ties
 * and matches scipy on the golden tie case (eval.json `spearman_ties`: 0.8106215541707 vs
 * 0.8106215541707001, |diff| 1.1e-16; the test suite checks this). We still use our own
 * typed-array version: it takes Float32Array/Float64Array without copying into arrays of
 * [value, index] pairs (the STS suite ranks ~10^4 values per task, retrieval more), has a
 * defined result for NaN input (simple-statistics sorts NaN with an inconsistent comparator),
 * and is cross-checked against simple-statistics on random data with ties in the tests.
 */

function checkLengths(x: ArrayLike<number>, y: ArrayLike<number>, what: string): void {
  if (x.length !== y.length) throw new RangeError(`${what}: length mismatch (${x.length} vs ${y.length})`);
  if (x.length < 2) throw new RangeError(`${what}: needs at least 2 paired values, got ${x.length} (empty evaluation set?)`);
}

function hasNaN(x: ArrayLike<number>): boolean {
  for (let i = 0; i < x.length; i++) if (Number.isNaN(x[i])) return true;
  return false;
}

/**
 * 1-based ranks with ties averaged (scipy `rankdata(x, 'average')`). NaN input gives an
 * all-NaN result.
 */
export function rankAverage(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const ranks = new Float64Array(n);
  if (hasNaN(x)) return ranks.fill(Number.NaN);
  const idx = new Uint32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  // Typed-array sort with a comparator is stable in V8; values are finite or ±Infinity here.
  idx.sort((i, j) => (x[i] < x[j] ? -1 : x[i] > x[j] ? 1 : 0));
  let i = 0;
  while (i < n) {
    let j = i;
    const v = x[idx[i]];
    while (j + 1 < n && x[idx[j + 1]] === v) j++;
    const r = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[idx[k]] = r;
    i = j + 1;
  }
  return ranks;
}

/** Pearson's r in float64 (scipy's centring and normalisation; clipped to [-1, 1]). */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number {
  checkLengths(x, y, 'pearson');
  const n = x.length;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i] - mx;
    const dy = y[i] - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  if (!(sxx > 0) || !(syy > 0)) return Number.NaN;
  const r = sxy / (Math.sqrt(sxx) * Math.sqrt(syy));
  return Math.max(-1, Math.min(1, r));
}

/** Spearman's rho with average ranks for ties (scipy `spearmanr(x, y).correlation`). */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number {
  checkLengths(x, y, 'spearman');
  if (hasNaN(x) || hasNaN(y)) return Number.NaN;
  return pearson(rankAverage(x), rankAverage(y));
}
