/**
 * lib/report/statistics against numpy/scipy (test/fixtures/stats/stats.json, written by
 * make-stats-fixtures.py beside it; this test never runs Python):
 * - with the resample index matrix / swap matrix drawn by numpy and injected, the bootstrap
 *   distribution, BCa and percentile bounds, standard errors and p-values equal scipy's to 1e-12;
 * - exact permutation p-values (12, 16, 20 pairs) equal scipy.stats.permutation_test(n_resamples=inf);
 * - our own seeded Monte-Carlo results on 1,379 pairs lie within 4 standard deviations of scipy's
 *   (its spread across 20 seeds, or the binomial spread of a Monte-Carlo p-value);
 * - the fast resampled ranks equal lib/eval/spearman.ts's rankAverage bit for bit;
 * - meanStd equals numpy, ndtr/ndtri equal scipy.special, and bad input is refused clearly.
 * Each comparison prints its largest deviation as a test diagnostic.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  bootstrapSpearmanCI,
  differenceVerdict,
  formatMeanStd,
  formatWithInterval,
  meanStd,
  ndtr,
  ndtri,
  pairedBootstrapTest,
  pairedPermutationTest,
  quantileLinear,
} from '../lib/report/statistics/index.js';
import { PairResampler, SwapPool } from '../lib/report/statistics/resample-ranks.js';
import { rankAverage, spearman } from '../lib/eval/spearman.js';
import { SeededRng } from '../lib/train/rng.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';

interface Summary {
  mean: number | number[];
  sd: number | number[];
  runs: number;
}
interface IntervalRef {
  ci: [number, number];
  standard_error: number;
}
interface SmallCase {
  name: string;
  n: number;
  scoresA: number[];
  scoresB: number[];
  gold: number[];
  spearmanA: number;
  spearmanB: number;
  bootstrap: {
    indices: number[][];
    single: { distribution: number[]; bca: IntervalRef; percentile: IntervalRef };
    paired: { difference: number; distribution: number[]; p_value: number; bca: IntervalRef; percentile: IntervalRef };
  };
  permutation_mc: { swaps: number[][]; difference: number; p_value: number };
}
interface ExactCase {
  name: string;
  n: number;
  scoresA: number[];
  scoresB: number[];
  gold: number[];
  difference: number;
  p_value: number;
}
interface LargeCase {
  name: string;
  n: number;
  scoresA: number[];
  scoresB: number[];
  gold: number[];
  spearmanA: number;
  spearmanB: number;
  difference: number;
  resamples: number;
  permutations: number;
  bootstrap_single: { bca: Summary; percentile: Summary };
  bootstrap_paired: { bca: Summary; percentile: Summary; p_value: Summary };
  permutation_p: Summary;
}
interface Fixtures {
  numpy: string;
  scipy: string;
  mean_std: { values: number[]; mean: number; std: number }[];
  normal: { ndtr: [number, number][]; ndtri: [number, number][] };
  small: SmallCase[];
  exact: ExactCase[];
  large: LargeCase[];
}

const fx = JSON.parse(readFileSync(new URL('./fixtures/stats/stats.json', import.meta.url), 'utf8')) as Fixtures;
const EXACT = 1e-12;

const relDev = (ours: number, ref: number): number => Math.abs(ours - ref) / Math.max(Math.abs(ref), 1e-300);
const fmtDev = (d: number): string => d.toExponential(2);

describe('meanStd', () => {
  test('mean and sample std equal numpy (mean, std(ddof=1))', (t) => {
    let worst = 0;
    for (const c of fx.mean_std) {
      const r = meanStd(c.values);
      assert.equal(r.n, c.values.length);
      worst = Math.max(worst, relDev(r.mean, c.mean), relDev(r.std, c.std));
      assert.ok(relDev(r.mean, c.mean) <= EXACT, `mean ${r.mean} vs ${c.mean}`);
      assert.ok(relDev(r.std, c.std) <= 1e-10, `std ${r.std} vs ${c.std}`);
    }
    t.diagnostic(`largest relative deviation from numpy: ${fmtDev(worst)}`);
  });

  test('formats "mean ± std (n)" and a single value without ±', () => {
    assert.equal(formatMeanStd(meanStd([0.8216, 0.8237, 0.8258]), { scale: 100 }), '82.37 ± 0.21 (n=3)');
    assert.equal(formatMeanStd(meanStd([82.37])), '82.37 (n=1)');
    assert.ok(Number.isNaN(meanStd([82.37]).std));
    assert.equal(formatMeanStd(meanStd([1, 2, 3, 4]), { digits: 3 }), '2.500 ± 1.291 (n=4)');
    assert.equal(formatWithInterval(0.8237, { low: 0.819, high: 0.8281, level: 0.95, method: 'bca' }, { scale: 100 }), '82.37 [81.90, 82.81] (95% BCa CI)');
  });

  test('refuses empty and non-finite input', () => {
    assert.throws(() => meanStd([]), (e: Error) => e instanceof InputError && /at least one value/.test(e.message));
    assert.throws(() => meanStd([1, Number.NaN, 3], { source: 'results/x.json' }), (e: Error) => e instanceof InputError && /^results\/x\.json: meanStd: values\[1\] is NaN/.test(e.message));
  });
});

describe('normal distribution', () => {
  test('ndtr and ndtri equal scipy.special', (t) => {
    let worstCdf = 0;
    for (const [x, ref] of fx.normal.ndtr) {
      const d = relDev(ndtr(x), ref);
      worstCdf = Math.max(worstCdf, d);
      assert.ok(d <= 1e-13, `ndtr(${x}) = ${ndtr(x)}, scipy ${ref}`);
    }
    let worstInv = 0;
    for (const [p, ref] of fx.normal.ndtri) {
      const ours = ndtri(p);
      const d = ref === 0 ? Math.abs(ours) : relDev(ours, ref);
      worstInv = Math.max(worstInv, d);
      assert.ok(d <= 1e-13, `ndtri(${p}) = ${ours}, scipy ${ref}`);
    }
    assert.equal(ndtri(0), Number.NEGATIVE_INFINITY);
    assert.equal(ndtri(1), Number.POSITIVE_INFINITY);
    assert.ok(Number.isNaN(ndtri(1.5)));
    t.diagnostic(`largest relative deviation from scipy: ndtr ${fmtDev(worstCdf)}, ndtri ${fmtDev(worstInv)}`);
  });

  test('type-7 quantile matches hand values', () => {
    const s = Float64Array.from([1, 2, 3, 4]);
    assert.equal(quantileLinear(s, 0), 1);
    assert.equal(quantileLinear(s, 1), 4);
    assert.equal(quantileLinear(s, 0.5), 2.5);
    assert.equal(quantileLinear(s, 0.25), 1.75);
  });
});

describe('resampled ranks', () => {
  const c = fx.small[0];
  const pick = (x: number[], idx: ArrayLike<number>): number[] => Array.from(idx, (i) => x[i]);

  test('bootstrap and jackknife ranks equal rankAverage of the materialised sample, bit for bit', () => {
    const resampler = new PairResampler([c.scoresA, c.scoresB, c.gold]);
    for (const idx of c.bootstrap.indices.slice(0, 50)) {
      const ranks = resampler.resample(idx);
      assert.deepEqual(Array.from(ranks[0]), Array.from(rankAverage(pick(c.scoresA, idx))));
      assert.deepEqual(Array.from(ranks[1]), Array.from(rankAverage(pick(c.scoresB, idx))));
      assert.deepEqual(Array.from(ranks[2]), Array.from(rankAverage(pick(c.gold, idx))));
    }
    for (let left = 0; left < c.n; left++) {
      const keep = Array.from({ length: c.n }, (_, i) => i).filter((i) => i !== left);
      const ranks = resampler.leaveOut(left);
      assert.deepEqual(Array.from(ranks[0]), Array.from(rankAverage(pick(c.scoresA, keep))));
      assert.deepEqual(Array.from(ranks[2]), Array.from(rankAverage(pick(c.gold, keep))));
    }
  });

  test('swapped ranks equal rankAverage of the permuted columns, bit for bit', () => {
    const pool = new SwapPool(c.scoresA, c.scoresB);
    const rng = new SeededRng(3);
    const swapped = new Uint8Array(c.n);
    for (let r = 0; r < 50; r++) {
      for (let i = 0; i < c.n; i++) swapped[i] = rng.nextInt(2);
      pool.rank(swapped);
      const a = c.scoresA.map((v, i) => (swapped[i] ? c.scoresB[i] : v));
      const b = c.scoresB.map((v, i) => (swapped[i] ? c.scoresA[i] : v));
      assert.deepEqual(Array.from(pool.ranksA), Array.from(rankAverage(a)));
      assert.deepEqual(Array.from(pool.ranksB), Array.from(rankAverage(b)));
    }
  });
});

describe('bootstrap with numpy-drawn resamples equals scipy.stats.bootstrap', () => {
  for (const c of fx.small) {
    test(`${c.name}: one run's Spearman CI (BCa and percentile)`, (t) => {
      const indices = c.bootstrap.indices;
      const ref = c.bootstrap.single;
      let worstDist = 0;
      let worstBound = 0;
      for (const method of ['bca', 'percentile'] as const) {
        const r = bootstrapSpearmanCI(c.scoresA, c.gold, { method, resampleIndices: indices });
        assert.equal(r.resamples, indices.length);
        assert.equal(r.seed, null);
        assert.ok(Math.abs(r.spearman - c.spearmanA) <= EXACT);
        for (let b = 0; b < indices.length; b++) {
          // Each resample's rho is the project's spearman on the resampled pairs, exactly.
          if (b < 20) assert.equal(r.distribution[b], spearman(indices[b].map((i) => c.scoresA[i]), indices[b].map((i) => c.gold[i])));
          worstDist = Math.max(worstDist, Math.abs(r.distribution[b] - ref.distribution[b]));
        }
        const dl = Math.abs(r.ci.low - ref[method].ci[0]);
        const dh = Math.abs(r.ci.high - ref[method].ci[1]);
        worstBound = Math.max(worstBound, dl, dh);
        assert.ok(dl <= EXACT && dh <= EXACT, `${method}: [${r.ci.low}, ${r.ci.high}] vs scipy [${ref[method].ci}]`);
        assert.ok(Math.abs(r.standardError - ref[method].standard_error) <= EXACT);
      }
      assert.ok(worstDist <= EXACT);
      t.diagnostic(`largest deviation from scipy: distribution ${fmtDev(worstDist)}, CI bounds ${fmtDev(worstBound)}`);
    });

    test(`${c.name}: paired bootstrap of the difference (CI and p-value)`, (t) => {
      const indices = c.bootstrap.indices;
      const ref = c.bootstrap.paired;
      let worst = 0;
      for (const method of ['bca', 'percentile'] as const) {
        const r = pairedBootstrapTest(c.scoresA, c.scoresB, c.gold, { method, resampleIndices: indices });
        assert.ok(Math.abs(r.difference - ref.difference) <= EXACT);
        for (let b = 0; b < indices.length; b++) worst = Math.max(worst, Math.abs(r.distribution[b] - ref.distribution[b]));
        const dl = Math.abs(r.ci.low - ref[method].ci[0]);
        const dh = Math.abs(r.ci.high - ref[method].ci[1]);
        worst = Math.max(worst, dl, dh);
        assert.ok(dl <= EXACT && dh <= EXACT, `${method}: [${r.ci.low}, ${r.ci.high}] vs scipy [${ref[method].ci}]`);
        assert.ok(Math.abs(r.standardError - ref[method].standard_error) <= EXACT);
        assert.ok(Math.abs(r.pValue - ref.p_value) <= EXACT, `p ${r.pValue} vs ${ref.p_value}`);
      }
      t.diagnostic(`largest deviation from scipy/numpy: ${fmtDev(worst)}; p = ${ref.p_value}`);
    });

    test(`${c.name}: Monte-Carlo permutation p-value with numpy-drawn swaps equals scipy's formula`, (t) => {
      const r = pairedPermutationTest(c.scoresA, c.scoresB, c.gold, { swaps: c.permutation_mc.swaps });
      assert.equal(r.exact, false);
      assert.equal(r.permutations, c.permutation_mc.swaps.length);
      assert.ok(Math.abs(r.difference - c.permutation_mc.difference) <= EXACT);
      assert.ok(Math.abs(r.pValue - c.permutation_mc.p_value) <= EXACT, `p ${r.pValue} vs ${c.permutation_mc.p_value}`);
      t.diagnostic(`p = ${r.pValue}, deviation ${fmtDev(Math.abs(r.pValue - c.permutation_mc.p_value))}`);
    });
  }
});

describe('exact permutation test equals scipy.stats.permutation_test(n_resamples=inf)', () => {
  for (const c of fx.exact) {
    test(`${c.name} (${c.n} pairs, 2^${c.n} swap patterns)`, (t) => {
      const r = pairedPermutationTest(c.scoresA, c.scoresB, c.gold);
      assert.equal(r.exact, true);
      assert.equal(r.permutations, 2 ** c.n);
      assert.ok(Math.abs(r.difference - c.difference) <= EXACT);
      assert.ok(Math.abs(r.pValue - c.p_value) <= EXACT, `p ${r.pValue} vs scipy ${c.p_value}`);
      t.diagnostic(`p = ${r.pValue} (scipy ${c.p_value}), deviation ${fmtDev(Math.abs(r.pValue - c.p_value))}`);
    });
  }

  test('forcing Monte Carlo on a small set agrees with the exact p within its binomial noise', () => {
    const c = fx.exact[0];
    const r = pairedPermutationTest(c.scoresA, c.scoresB, c.gold, { exact: false, permutations: 20000, seed: 5 });
    assert.equal(r.exact, false);
    const q = c.p_value / 2;
    const sd = 2 * Math.sqrt((q * (1 - q)) / 20000);
    assert.ok(Math.abs(r.pValue - c.p_value) <= 4 * sd + 2 / 20001, `MC ${r.pValue} vs exact ${c.p_value}`);
  });
});

/**
 * Our seeded runs against scipy's on the same 1,379 pairs: different random streams, so results
 * differ by Monte-Carlo error. The reference is scipy's mean over R runs (R = 40 seeds for the
 * bootstrap, 5 for the permutation test), so ours − mean has standard deviation σ·√(1 + 1/R), σ being
 * one run's Monte-Carlo standard deviation; the tolerance is 4 of those (a correct implementation
 * fails with probability 6e-5 per comparison; the test is deterministic since our seeds are fixed).
 *
 * σ comes from theory, not from the 40 runs' spread (a 40-run sd is itself uncertain by ±20%, and
 * was 0.7× the 100-run value in one case here):
 * - a percentile bound is the α-quantile (α = 0.025) of B draws from a nearly normal bootstrap
 *   distribution with standard deviation SE; a sample quantile has sd √(α(1 − α)/B) / f(q_α) with
 *   f(q_α) = φ(z_α)/SE, so σ = SE·√(α(1 − α)/B)/φ(z_α) ≈ 0.085·SE at B = 1000;
 * - a BCa bound adds the noise of z0 (estimated from the same B draws: sd 1/(2φ(0)√B) ≈ 0.04, which
 *   moves the adjusted level by ≈ 2φ(z_α)·0.04): about as much again, so σ ≈ √2 times the above;
 * - a Monte-Carlo p-value (a share of B draws, +1) has binomial sd √(p(1 − p)/B); a two-sided
 *   permutation p = 2·min(tails) has 2√(q(1 − q)/B), q = p/2.
 * The test also prints scipy's empirical spread beside σ (it agrees within the 40-run uncertainty).
 * A systematic error such as a wrong quantile rule, a missing bias correction or resamples that are
 * not uniform moves bounds by a good fraction of SE (SE ≈ 0.007 here), i.e. by ≥ 10σ.
 */
function withinMonteCarlo(ours: number, mean: number, sd: number, runs: number, what: string): number {
  const tolerance = 4 * sd * Math.sqrt(1 + 1 / runs) + 1e-12;
  const dev = Math.abs(ours - mean);
  assert.ok(dev <= tolerance, `${what}: ours ${ours}, scipy mean ${mean} (σ ${sd}, tolerance ${tolerance})`);
  return sd > 0 ? dev / (sd * Math.sqrt(1 + 1 / runs)) : 0;
}

/** One run's Monte-Carlo sd of a bootstrap interval bound (see above). */
function boundMonteCarloSd(standardError: number, level: number, resamples: number, method: 'bca' | 'percentile'): number {
  const alpha = (1 - level) / 2;
  const density = Math.exp(-(ndtri(alpha) ** 2) / 2) / Math.sqrt(2 * Math.PI);
  const quantileSd = (standardError * Math.sqrt((alpha * (1 - alpha)) / resamples)) / density;
  return method === 'bca' ? Math.SQRT2 * quantileSd : quantileSd;
}

describe('seeded Monte-Carlo results agree with scipy within Monte-Carlo error (1,379 pairs)', () => {
  for (const c of fx.large) {
    test(`${c.name}: bootstrap CIs (one run, paired) and bootstrap p`, (t) => {
      const notes: string[] = [];
      const B = c.resamples;
      for (const method of ['bca', 'percentile'] as const) {
        const single = bootstrapSpearmanCI(c.scoresA, c.gold, { method, resamples: B });
        assert.ok(Math.abs(single.spearman - c.spearmanA) <= EXACT);
        const ref = c.bootstrap_single[method];
        const [ml, mh] = ref.mean as number[];
        const sigma = boundMonteCarloSd(single.standardError, 0.95, B, method);
        const zl = withinMonteCarlo(single.ci.low, ml, sigma, ref.runs, `${method} low`);
        const zh = withinMonteCarlo(single.ci.high, mh, sigma, ref.runs, `${method} high`);

        const paired = pairedBootstrapTest(c.scoresA, c.scoresB, c.gold, { method, resamples: B });
        const pref = c.bootstrap_paired[method];
        const [pml, pmh] = pref.mean as number[];
        const pSigma = boundMonteCarloSd(paired.standardError, 0.95, B, method);
        const pzl = withinMonteCarlo(paired.ci.low, pml, pSigma, pref.runs, `paired ${method} low`);
        const pzh = withinMonteCarlo(paired.ci.high, pmh, pSigma, pref.runs, `paired ${method} high`);
        const p = c.bootstrap_paired.p_value;
        const pm = p.mean as number;
        const pz = withinMonteCarlo(paired.pValue, pm, Math.sqrt((Math.max(pm, 1 / (B + 1)) * (1 - pm)) / B), p.runs, 'bootstrap p');
        const e = (x: number): string => x.toExponential(1);
        notes.push(
          `${method}: one run [${single.ci.low.toFixed(5)}, ${single.ci.high.toFixed(5)}] vs scipy [${ml.toFixed(5)}, ${mh.toFixed(5)}] ` +
            `(|Δ| ${fmtDev(Math.abs(single.ci.low - ml))}, ${fmtDev(Math.abs(single.ci.high - mh))} = ${zl.toFixed(1)}σ, ${zh.toFixed(1)}σ; ` +
            `σ ${e(sigma)}, scipy spread ${(ref.sd as number[]).map(e).join('/')}); ` +
            `paired [${paired.ci.low.toFixed(5)}, ${paired.ci.high.toFixed(5)}] vs [${pml.toFixed(5)}, ${pmh.toFixed(5)}] ` +
            `(|Δ| ${fmtDev(Math.abs(paired.ci.low - pml))}, ${fmtDev(Math.abs(paired.ci.high - pmh))} = ${pzl.toFixed(1)}σ, ${pzh.toFixed(1)}σ; ` +
            `σ ${e(pSigma)}, scipy spread ${(pref.sd as number[]).map(e).join('/')}); ` +
            `p ${paired.pValue.toFixed(4)} vs ${pm.toFixed(4)} (${pz.toFixed(1)}σ)`,
        );
      }
      for (const line of notes) t.diagnostic(line);
    });

    test(`${c.name}: permutation p (${c.permutations} random swap patterns)`, (t) => {
      const r = pairedPermutationTest(c.scoresA, c.scoresB, c.gold, { permutations: c.permutations });
      assert.equal(r.exact, false);
      const ref = c.permutation_p;
      const q = Math.min(0.5, Math.max(ref.mean as number, 1 / (c.permutations + 1)) / 2);
      const sd = 2 * Math.sqrt((q * (1 - q)) / c.permutations);
      const z = withinMonteCarlo(r.pValue, ref.mean as number, sd, ref.runs, 'permutation p');
      t.diagnostic(`p ${r.pValue} vs scipy mean ${ref.mean} over ${ref.runs} runs (|Δ| ${fmtDev(Math.abs(r.pValue - (ref.mean as number)))} = ${z.toFixed(1)}σ, σ ${sd.toExponential(1)}, scipy spread ${(ref.sd as number).toExponential(1)})`);
    });
  }

  test('timing: 1000 BCa resamples of 1,379 pairs', (t) => {
    const c = fx.large[0];
    bootstrapSpearmanCI(c.scoresA, c.gold, { resamples: 50 }); // warm up the JIT
    const t0 = performance.now();
    bootstrapSpearmanCI(c.scoresA, c.gold, { resamples: 1000 });
    const t1 = performance.now();
    pairedBootstrapTest(c.scoresA, c.scoresB, c.gold, { resamples: 1000 });
    const t2 = performance.now();
    bootstrapSpearmanCI(c.scoresA, c.gold, { resamples: 1000, method: 'percentile' });
    const t3 = performance.now();
    t.diagnostic(`one run BCa ${(t1 - t0).toFixed(0)} ms, paired BCa ${(t2 - t1).toFixed(0)} ms, one run percentile ${(t3 - t2).toFixed(0)} ms (not asserted)`);
  });
});

describe('seeding', () => {
  test('same seed, same result; another seed, another draw', () => {
    const c = fx.small[1];
    const a = bootstrapSpearmanCI(c.scoresA, c.gold, { seed: 42, resamples: 300 });
    const b = bootstrapSpearmanCI(c.scoresA, c.gold, { seed: 42, resamples: 300 });
    const d = bootstrapSpearmanCI(c.scoresA, c.gold, { seed: 43, resamples: 300 });
    assert.deepEqual(a.ci, b.ci);
    assert.deepEqual(Array.from(a.distribution), Array.from(b.distribution));
    assert.notDeepEqual(Array.from(a.distribution), Array.from(d.distribution));
    assert.equal(a.seed, 42);
    assert.equal(bootstrapSpearmanCI(c.scoresA, c.gold).resamples, 1000);
    const p1 = pairedPermutationTest(c.scoresA, c.scoresB, c.gold, { seed: 9, permutations: 500 });
    const p2 = pairedPermutationTest(c.scoresA, c.scoresB, c.gold, { seed: 9, permutations: 500 });
    assert.equal(p1.pValue, p2.pValue);
    assert.equal(p1.seed, 9);
  });
});

describe('verdicts', () => {
  test('clear differences are resolved, near-equal runs are within noise', () => {
    const clear = fx.small[0];
    const close = fx.small[1];
    const pClear = pairedPermutationTest(clear.scoresA, clear.scoresB, clear.gold, { permutations: 4999 });
    assert.equal(differenceVerdict(pClear).verdict, 'resolved');
    const pClose = pairedPermutationTest(close.scoresA, close.scoresB, close.gold, { permutations: 4999 });
    assert.equal(differenceVerdict(pClose).verdict, 'within noise');

    const big = fx.large.find((c) => c.name === 'large-clear')!;
    const bClear = pairedBootstrapTest(big.scoresA, big.scoresB, big.gold);
    const v = differenceVerdict(bClear);
    assert.equal(v.verdict, 'resolved');
    assert.match(v.reason, /^resolved at 95%: Δ = \+0\.\d{4}, 95% CI \[0\.\d{4}, 0\.\d{4}\] excludes 0; p = 0\.0010 < 0\.0500$/);
    const small = fx.large.find((c) => c.name === 'large-close')!;
    assert.equal(differenceVerdict(pairedBootstrapTest(small.scoresA, small.scoresB, small.gold)).verdict, 'within noise');
  });

  test('disagreeing evidence is within noise and says so; levels must match', () => {
    const v = differenceVerdict({ difference: 0.01, ci: { low: 0.001, high: 0.02, level: 0.95 }, pValue: 0.07 });
    assert.equal(v.verdict, 'within noise');
    assert.match(v.reason, /borderline/);
    assert.equal(differenceVerdict({ difference: -0.01, pValue: 0.04 }).verdict, 'resolved');
    assert.equal(differenceVerdict({ difference: -0.01, pValue: 0.04 }, { level: 0.99 }).verdict, 'within noise');
    assert.equal(differenceVerdict({ difference: -0.02, ci: { low: -0.03, high: -0.01, level: 0.95 } }).verdict, 'resolved');
    assert.throws(() => differenceVerdict({ difference: 0.01, ci: { low: 0.001, high: 0.02, level: 0.9 } }), InputError);
    assert.throws(() => differenceVerdict({ difference: 0.01 }), /neither/);
  });
});

describe('bad input', () => {
  const g = [1, 2, 3, 4, 5];
  const s = [0.1, 0.3, 0.2, 0.5, 0.4];
  const isInput = (re: RegExp) => (e: Error) => e instanceof InputError && re.test(e.message);

  test('lengths, finiteness, size, constant columns', () => {
    assert.throws(() => bootstrapSpearmanCI(s, [1, 2, 3]), isInput(/lengths differ \(scores 5, gold 3\)/));
    assert.throws(() => bootstrapSpearmanCI([0.1, Number.NaN, 0.2, 0.3, 0.4], g), isInput(/scores\[1\] is NaN; expected a finite number/));
    assert.throws(() => pairedBootstrapTest(s, s, [1, 2, Infinity, 4, 5]), isInput(/gold\[2\] is Infinity/));
    assert.throws(() => pairedPermutationTest([1, 2], [2, 1], [1, 2]), isInput(/at least 3 pairs, got 2/));
    assert.throws(() => bootstrapSpearmanCI([1, 1, 1, 1, 1], g), isInput(/undefined \(a column is constant/));
    assert.throws(() => pairedPermutationTest(s, [2, 2, 2, 2, 2], g), isInput(/scoresB and gold is undefined/));
    assert.throws(() => bootstrapSpearmanCI(s, [1, 2], { source: 'results/stsb/run.json' }), isInput(/^results\/stsb\/run\.json: bootstrapSpearmanCI:/));
  });

  test('options', () => {
    assert.throws(() => bootstrapSpearmanCI(s, g, { level: 95 }), isInput(/level must be a number strictly between 0 and 1/));
    assert.throws(() => bootstrapSpearmanCI(s, g, { method: 'bc' as never }), (e: Error) => e instanceof UnknownNameError && /bca, percentile/.test(e.message));
    assert.throws(() => bootstrapSpearmanCI(s, g, { resamples: 1.5 }), isInput(/resamples must be an integer >= 2/));
    assert.throws(() => bootstrapSpearmanCI(s, g, { seed: -1 }), isInput(/seed must be an integer/));
    assert.throws(() => bootstrapSpearmanCI(s, g, { resampleIndices: [[0, 1, 2, 3, 5]] }), isInput(/resampleIndices\[0\]\[4\] is 5; expected an integer in \[0, 5\)/));
    assert.throws(() => bootstrapSpearmanCI(s, g, { resampleIndices: [[0, 1, 2]] }), isInput(/must hold 5 pair indices/));
    assert.throws(() => bootstrapSpearmanCI(s, g, { resampleIndices: [[0, 1, 2, 3, 4]], resamples: 10 }), isInput(/disagrees/));
    assert.throws(() => pairedPermutationTest(s, g, g, { swaps: [[0, 1, 2, 0, 1]] }), isInput(/swaps\[0\]\[2\] is 2/));
    const many = Array.from({ length: 21 }, (_, i) => i);
    assert.throws(() => pairedPermutationTest(many, many.map((v) => -v), many, { exact: true }), isInput(/limited to 20 pairs/));
    assert.throws(() => pairedPermutationTest(s, g, g, { exact: false, permutations: 0 }), isInput(/permutations must be an integer >= 1/));
  });

  test('identical runs: difference 0, interval [0, 0], p = 1', () => {
    const c = fx.small[1];
    const b = pairedBootstrapTest(c.scoresA, c.scoresA, c.gold, { resamples: 200 });
    assert.deepEqual([b.difference, b.ci.low, b.ci.high, b.pValue], [0, 0, 0, 1]);
    assert.equal(pairedPermutationTest(c.scoresA, c.scoresA, c.gold, { permutations: 200 }).pValue, 1);
    assert.equal(pairedPermutationTest(s, s, g).pValue, 1);
  });

  test('a degenerate bootstrap says so instead of returning a number', () => {
    // Every resample takes pair 0 only: constant columns, undefined correlation.
    const rows = [[0, 0, 0, 0, 0], [0, 1, 2, 3, 4]];
    assert.throws(() => bootstrapSpearmanCI(s, g, { resampleIndices: rows, method: 'percentile' }), isInput(/resample 0 gave an undefined correlation/));
  });
});
