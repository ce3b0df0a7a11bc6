/**
 * Evaluators: correlation math against scipy's golden tie case and hand cases, retrieval top-k
 * against brute force (with ties), alignment/uniformity against a hand computation, SentEval
 * statistics plumbing, densities, and the STS suite's own overhead timed with a hashing
 * bag-of-words encoder on the real files (when ANGLE_DATA_DIR is set).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sampleRankCorrelation } from 'simple-statistics';
import {
  alignment,
  alignUniformOnSet,
  captionRetrieval,
  cosineDensityByGold,
  evaluateBinaryPairs,
  evaluateBinaryTask,
  evaluateStsSets,
  evaluateStsSuite,
  evaluateFlickr30k,
  exactSetAccuracy,
  FlatInnerProductIndex,
  gaussianKde,
  pairCosines,
  pairCosinesF32,
  pearson,
  rankAverage,
  recallAtK,
  searchInnerProduct,
  sentevalSpearmanTable,
  spearman,
  uniformity,
  cachingEncoder,
  normalizeRows,
} from '../lib/eval/index.js';
import type { Embeddings } from '../lib/embed/types.js';
import type { StsSet } from '../lib/data/index.js';
import { initBackend } from '../lib/backend/index.js';
import { hashingBowEncoder, tableEncoder } from '../lib/eval/baselines.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';
import { mulberry32Uniform } from '../lib/util/mulberry32.js';

/** Seeded uniform [0, 1) stream (mulberry32). */
function rng(seed: number): () => number {
  return mulberry32Uniform(seed);
}

const DATA = DATA_DIR;
const skipReal = DATA ? false : 'no data root: set ANGLE_DATA_DIR (e.g. shared/data) or keep ../shared beside the repository';

// golden/bert-tiny-seed1234/eval.json `spearman_ties` (scipy.stats.spearmanr)
const TIES = {
  x: [1, 2, 2, 3, 3, 3, 4, 5, 5, 6],
  y: [2, 1, 4, 3, 3, 6, 5, 5, 8, 7],
  spearman: 0.8106215541707001,
};

describe('correlation', () => {
  test('spearman with ties matches scipy (golden tie case)', () => {
    assert.ok(Math.abs(spearman(TIES.x, TIES.y) - TIES.spearman) < 1e-12);
    // simple-statistics 7.12.1 agrees on this case too (see the note in lib/eval/spearman.ts)
    assert.ok(Math.abs(sampleRankCorrelation(TIES.x, TIES.y) - TIES.spearman) < 1e-12);
  });
  test('golden tie case from the encoder golden set', { skip: GOLDEN_DIR ? false : 'no encoder golden set (ANGLE_GOLDEN_DIR or ../shared)' }, () => {
    const g = JSON.parse(readFileSync(join(GOLDEN_DIR!, 'eval.json'), 'utf8')).spearman_ties;
    assert.ok(Math.abs(spearman(g.x, g.y) - g.spearman) < 1e-12);
  });
  test('average ranks (scipy rankdata "average")', () => {
    assert.deepEqual([...rankAverage([10, 20, 20, 5, 20])], [2, 4, 4, 1, 4]);
    assert.deepEqual([...rankAverage(new Float32Array([0.5, 0.5]))], [1.5, 1.5]);
  });
  test('hand cases', () => {
    // ranks x = [1, 2.5, 2.5, 4], y = [1, 3, 2, 4] -> r = 4.5 / sqrt(4.5 * 5) = 3 / sqrt(10)
    assert.ok(Math.abs(spearman([1, 2, 2, 3], [1, 3, 2, 4]) - 3 / Math.sqrt(10)) < 1e-15);
    assert.ok(Math.abs(spearman([1, 2, 3, 4], [10, 100, 1000, 1e4]) - 1) < 1e-15);
    assert.ok(Math.abs(spearman([1, 2, 3, 4], [4, 3, 2, 1]) + 1) < 1e-15);
    assert.ok(Number.isNaN(spearman([1, 1, 1], [1, 2, 3])), 'constant input: undefined');
    assert.ok(Number.isNaN(spearman([1, Number.NaN, 3], [1, 2, 3])), 'NaN propagates');
    // pearson: x = [1, 2, 3], y = [1, 2, 4]: sxy = 3, sxx = 2, syy = 14/3
    assert.ok(Math.abs(pearson([1, 2, 3], [1, 2, 4]) - 3 / Math.sqrt(2 * (14 / 3))) < 1e-15);
  });
  test('agrees with simple-statistics on random data with many ties', () => {
    const r = rng(7);
    for (let trial = 0; trial < 20; trial++) {
      const n = 5 + Math.floor(r() * 300);
      const x = Array.from({ length: n }, () => Math.floor(r() * 10));
      const y = Array.from({ length: n }, (_, i) => x[i] + Math.floor(r() * 6));
      assert.ok(Math.abs(spearman(x, y) - sampleRankCorrelation(x, y)) < 1e-12);
    }
  });
  test('too few pairs is a clear error', () => {
    assert.throws(() => spearman([], []), /needs at least 2 paired values, got 0 \(empty evaluation set\?\)/);
    assert.throws(() => spearman([1, 2], [1]), /length mismatch/);
  });
});

// ------------------------------------------------------------------ retrieval

function bruteTopK(Q: Embeddings, C: Embeddings, k: number, exclude?: number[]): { idx: number[][]; sc: number[][] } {
  const idx: number[][] = [];
  const sc: number[][] = [];
  for (let q = 0; q < Q.rows; q++) {
    const all: [number, number][] = [];
    for (let c = 0; c < C.rows; c++) {
      if (exclude && exclude[q] === c) continue;
      let s = 0;
      for (let j = 0; j < C.dim; j++) s += Q.data[q * Q.dim + j] * C.data[c * C.dim + j];
      all.push([s, c]);
    }
    all.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    idx.push(all.slice(0, k).map((p) => p[1]));
    sc.push(all.slice(0, k).map((p) => p[0]));
  }
  return { idx, sc };
}

function randomInts(rows: number, dim: number, seed: number, levels = 3): Embeddings {
  const r = rng(seed);
  // small integer entries: many exactly equal scores (ties) and exact float arithmetic
  const data = Float32Array.from({ length: rows * dim }, () => Math.floor(r() * levels) - 1);
  return { data, rows, dim };
}

describe('retrieval', () => {
  test('blocked top-k equals brute force, ties by lower index, any block size, with exclusion', async () => {
    const C = randomInts(517, 6, 1);
    const Q = randomInts(37, 6, 2);
    const exclude = Array.from({ length: Q.rows }, (_, q) => (q * 13) % C.rows);
    for (const k of [1, 5, 20]) {
      const want = bruteTopK(Q, C, k, exclude);
      for (const [qb, cb] of [
        [1, 1],
        [4, 64],
        [64, 2048],
        [5, 100],
      ]) {
        const got = await searchInnerProduct(Q, C, k, { exclude, queryBlock: qb, corpusBlock: cb });
        for (let q = 0; q < Q.rows; q++) {
          assert.deepEqual([...got.indices.subarray(q * k, (q + 1) * k)], want.idx[q], `k ${k} block ${qb}x${cb} query ${q}`);
          assert.deepEqual([...got.scores.subarray(q * k, (q + 1) * k)], want.sc[q]);
        }
      }
    }
  });
  test('random float data: blocked = brute force; k larger than the corpus leaves -1 slots', async () => {
    const r = rng(3);
    const C: Embeddings = { data: Float32Array.from({ length: 300 * 16 }, () => r() - 0.5), rows: 300, dim: 16 };
    const Q: Embeddings = { data: Float32Array.from({ length: 9 * 16 }, () => r() - 0.5), rows: 9, dim: 16 };
    const want = bruteTopK(Q, C, 10);
    const got = await searchInnerProduct(Q, C, 10, { queryBlock: 4, corpusBlock: 77 });
    for (let q = 0; q < Q.rows; q++) assert.deepEqual([...got.indices.subarray(q * 10, q * 10 + 10)], want.idx[q]);
    const small = await searchInnerProduct(Q, { data: C.data.subarray(0, 3 * 16), rows: 3, dim: 16 }, 5);
    assert.deepEqual([...small.indices.subarray(3, 5)], [-1, -1]);
  });
  test('tfjs matMul path gives the same top-k on exact (integer) data', async () => {
    await initBackend('cpu', { quiet: true });
    const C = randomInts(200, 8, 4);
    const Q = randomInts(11, 8, 5);
    const a = await searchInnerProduct(Q, C, 7, { matmul: 'tfjs', corpusBlock: 64 });
    const b = await searchInnerProduct(Q, C, 7);
    assert.deepEqual([...a.indices], [...b.indices]);
  });
  test('FlatInnerProductIndex normalises like faiss IndexFlatIP over normalize_L2', async () => {
    const index = new FlatInnerProductIndex(2);
    index.add({ data: new Float32Array([10, 0, 0, 3, 1, 1]), rows: 3, dim: 2 });
    const top = await index.search({ data: new Float32Array([5, 4]), rows: 1, dim: 2 }, 3);
    assert.deepEqual([...top.indices], [2, 0, 1]);
    assert.ok(Math.abs(top.scores[0] - (5 + 4) / Math.sqrt(41) / Math.SQRT2) < 1e-6);
  });
  test('recall@k and exact-set accuracy by hand', () => {
    const top = { k: 3, rows: 2, indices: Int32Array.from([4, 1, 2, 9, 8, 7]), scores: new Float64Array(6) };
    assert.equal(recallAtK(top, [[1, 2, 3, 4], [5]], 3), (3 / 4 + 0) / 2);
    assert.equal(recallAtK(top, [[1, 2, 3, 4], [5]], 1), (1 / 4 + 0) / 2);
    assert.equal(exactSetAccuracy(top, [[2, 4, 1], [9, 8, 6]], 3), 0.5);
  });
  test('caption retrieval: separable images give strict accuracy 1 and recall 1; definitions on a crafted case', async () => {
    // 4 images x 5 captions: captions of image i near axis i
    const dim = 4;
    const r = rng(9);
    const data = new Float32Array(20 * dim);
    for (let c = 0; c < 20; c++) for (let j = 0; j < dim; j++) data[c * dim + j] = (j === Math.floor(c / 5) ? 1 : 0) + 0.01 * r();
    const good = await captionRetrieval({ data, rows: 20, dim });
    assert.equal(good.strictAccuracyAt5, 1);
    assert.equal(good.recallOther4At4ExcludingSelf, 1);
    // Caption 4 (image 0) becomes an exact copy of caption 5 (image 1). Query 0 keeps only 3 of
    // its other 4 in the top 4 and its top-5 set is not its own. Query 5 ties with caption 4 at
    // score 1; the tie goes to the lower index, so caption 4 ranks before the query itself: its
    // top-5 set fails too, and without self its top 4 holds caption 4 and 3 of its own 4.
    const bad = data.slice();
    bad.set(data.subarray(5 * dim, 6 * dim), 4 * dim);
    const res = await captionRetrieval({ data: bad, rows: 20, dim }, 5, { ks: [1, 4] });
    assert.equal(res.strictAccuracyAt5, 2 / 4);
    assert.equal(res.recallOther4At4ExcludingSelf, (3 / 4 + 3 / 4 + 1 + 1) / 4);
    assert.equal(res.recallAtK[1], (1 / 4 + 0 + 1 / 4 + 1 / 4) / 4);
  });
});

// ------------------------------------------------------------------ geometry

describe('geometry', () => {
  test('alignment and uniformity by hand', () => {
    const e: Embeddings = { data: new Float32Array([1, 0, 0, 1, -1, 0]), rows: 3, dim: 2 };
    // squared distances: (0,1) 2, (0,2) 4, (1,2) 2
    assert.equal(alignment(e, [0, 0], [1, 2]), 3);
    assert.ok(Math.abs(alignment(e, [0, 0], [1, 2], 1) - (Math.SQRT2 + 2) / 2) < 1e-7);
    assert.ok(Math.abs(uniformity(e, 2) - Math.log((2 * Math.exp(-4) + Math.exp(-8)) / 3)) < 1e-12);
    assert.throws(() => uniformity({ data: new Float32Array(2), rows: 1, dim: 2 }), /at least 2/);
    assert.throws(() => alignment(e, [], []), /no positive pairs/);
  });
  test('alignUniformOnSet: normalises, positives gold >= threshold, uniformity over distinct sentences', async () => {
    const enc = tableEncoder({ a: [2, 0], b: [0, 5], c: [-3, 0], d: [0, 1] });
    const set: StsSet = {
      task: 'STSBenchmark',
      name: 'test',
      files: [],
      pairs: [
        { a: 'a', b: 'b', score: 4.5, source: { file: 'f', line: 1 } },
        { a: 'a', b: 'c', score: 4, source: { file: 'f', line: 2 } },
        { a: 'b', b: 'd', score: 3.9, source: { file: 'f', line: 3 } },
      ],
    };
    const r = await alignUniformOnSet(enc, set);
    assert.equal(r.nPos, 2);
    assert.equal(r.alignment, 3);
    assert.equal(r.nUnique, 4);
    // unit vectors a=(1,0), b=(0,1), c=(-1,0), d=(0,1): d2 ab 2, ac 4, ad 2, bc 2, bd 0, cd 2
    const want = Math.log((4 * Math.exp(-4) + Math.exp(-8) + 1) / 6);
    assert.ok(Math.abs(r.uniformity - want) < 1e-12);
    assert.equal(enc.seen.length, 1, 'one encode call');
    assert.deepEqual(enc.seen[0], ['a', 'b', 'c', 'd'], 'each distinct sentence once');
  });
  test('cosine density per gold bucket (Figure 5 data)', () => {
    const gold = [0, 0.5, 1, 2.5, 4, 5, 5];
    const cos = [-0.2, 0.1, 0.3, 0.5, 0.9, 0.95, 0.99];
    const d = cosineDensityByGold(cos, gold, { bins: 20 });
    assert.deepEqual(
      d.buckets.map((b) => [b.label, b.n]),
      [
        ['0-1', 2],
        ['1-2', 1],
        ['2-3', 1],
        ['3-4', 0],
        ['4-5', 3],
      ],
    );
    const h = d.buckets[4].histogram;
    const w = h.edges[1] - h.edges[0];
    assert.ok(Math.abs(h.density.reduce((a, b) => a + b * w, 0) - 1) < 1e-12);
    assert.equal(d.buckets[3].kde, undefined);
    assert.equal(d.gold.histogram.counts.reduce((a, b) => a + b, 0), 7);
    const k = gaussianKde([0, 0.1, 0.2, 0.4], -3, 3, 601)!;
    const area = k.y.reduce((a, b) => a + b, 0) * (6 / 600);
    assert.ok(Math.abs(area - 1) < 1e-3, `KDE integrates to 1 (${area})`);
  });
});

// ------------------------------------------------------------------ SentEval plumbing

describe('SentEval STS statistics', () => {
  test('all / mean / wmean, dedupe, one encode call; cosine as SentEval (zero vector -> 0)', async () => {
    const table: Record<string, number[]> = { a: [1, 0], b: [1, 1], c: [0, 1], d: [-1, 0.2], z: [0, 0] };
    const enc = tableEncoder(table);
    const mk = (name: string, rows: [string, string, number][]): StsSet => ({
      task: 'STS12',
      name,
      files: [],
      pairs: rows.map(([a, b, score], i) => ({ a, b, score, source: { file: name, line: i + 1 } })),
    });
    const s1 = mk('one', [
      ['a', 'b', 4],
      ['a', 'c', 1],
      ['b', 'c', 3],
    ]);
    const s2 = mk('two', [
      ['a', 'd', 0],
      ['c', 'd', 2],
      ['a', 'a', 5],
      ['z', 'a', 1],
    ]);
    const r = await evaluateStsSets(enc, 'STS12', [s1, s2]);
    assert.equal(enc.seen.length, 1);
    assert.deepEqual(enc.seen[0], ['a', 'b', 'c', 'd', 'z']);
    const cos = (u: number[], v: number[]): number => (u[0] * v[0] + u[1] * v[1]) / Math.hypot(...u) / Math.hypot(...v);
    const c1 = [cos(table.a, table.b), cos(table.a, table.c), cos(table.b, table.c)];
    const c2 = [cos(table.a, table.d), cos(table.c, table.d), 1, 0];
    const r1 = spearman(c1, [4, 1, 3]);
    const r2 = spearman(c2, [0, 2, 5, 1]);
    assert.ok(Math.abs(r.sets[0].spearman - r1) < 1e-12 && Math.abs(r.sets[1].spearman - r2) < 1e-12);
    assert.ok(Math.abs(r.mean.spearman - (r1 + r2) / 2) < 1e-12);
    assert.ok(Math.abs(r.wmean.spearman - (3 * r1 + 4 * r2) / 7) < 1e-12);
    assert.ok(Math.abs(r.all.spearman - spearman([...c1, ...c2], [4, 1, 3, 0, 2, 5, 1])) < 1e-12);
    assert.equal(r.all.n, 7);
  });
  test('float32 cosine emulation stays within float32 rounding of the float64 cosine', () => {
    const r = rng(11);
    const e: Embeddings = { data: Float32Array.from({ length: 50 * 32 }, () => r() - 0.5), rows: 50, dim: 32 };
    const ia = Array.from({ length: 49 }, (_, i) => i);
    const ib = ia.map((i) => i + 1);
    const a = pairCosines(e, ia, ib);
    const b = pairCosinesF32(e, ia, ib);
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) < 1e-6);
    assert.ok(normalizeRows(e).data.length === e.data.length);
  });
  test('empty evaluation set is a clear error', async () => {
    const enc = tableEncoder({ a: [1] });
    await assert.rejects(evaluateStsSets(enc, 'STS12', []), /STS12: no evaluation sets/);
    await assert.rejects(
      evaluateStsSets(enc, 'STS12', [{ task: 'STS12', name: 'x', files: [], pairs: [] }]),
      /STS12 x: evaluation set has 0 pairs, needs at least 2/,
    );
    await assert.rejects(evaluateBinaryPairs(enc, []), /evaluation set has 0 pairs/);
  });
  test('binary STS: Spearman(cosine, 0/1); constant labels rejected', async () => {
    const enc = tableEncoder({ a: [1, 0], b: [1, 0.1], c: [0, 1], d: [1, 1] });
    const p = (a: string, b: string, score: number) => ({ a, b, score, source: { file: 'f', line: 1 } });
    const r = await evaluateBinaryPairs(enc, [p('a', 'b', 1), p('a', 'c', 0), p('a', 'd', 1), p('c', 'b', 0)]);
    assert.equal(r.n, 4);
    assert.equal(r.positives, 2);
    assert.ok(Math.abs(r.spearman - spearman(r.cosines, [1, 0, 1, 0])) < 1e-15);
    assert.equal(r.percent, r.spearman * 100);
    await assert.rejects(evaluateBinaryPairs(enc, [p('a', 'b', 1), p('a', 'c', 1)]), /all 2 labels are 1/);
  });
  test('cachingEncoder embeds each distinct text once', async () => {
    const base = hashingBowEncoder(8);
    const enc = cachingEncoder(base);
    const x = await enc.encode(['a b', 'c', 'a b']);
    await enc.encode(['c', 'd']);
    assert.equal(base.texts, 3);
    assert.deepEqual([...x.data.subarray(0, 8)], [...x.data.subarray(16, 24)]);
  });
});

describe('real data with a hashing bag-of-words encoder', { skip: skipReal }, () => {
  test('full STS suite: 7 tasks, average of the reported 7, non-model overhead timed', async () => {
    const enc = hashingBowEncoder(256);
    const t0 = performance.now();
    const r = await evaluateStsSuite(enc, { dataDir: DATA });
    const wall = (performance.now() - t0) / 1000;
    const tasks = ['STS12', 'STS13', 'STS14', 'STS15', 'STS16', 'STSBenchmark', 'SICKRelatedness'] as const;
    assert.deepEqual(Object.keys(r.spearman), [...tasks]);
    assert.equal(enc.calls, 7, 'one encode call per task');
    assert.equal(enc.texts, r.sentences);
    const avg = tasks.reduce((a, t) => a + r.spearman[t]!, 0) / 7;
    assert.ok(Math.abs(r.average! - avg) < 1e-15 && Math.abs(r.averagePercent! - avg * 100) < 1e-12);
    for (const t of tasks) assert.ok(r.spearman[t]! > 0.2 && r.spearman[t]! < 0.9, `${t} ${r.spearman[t]}`);
    const table = sentevalSpearmanTable(r);
    assert.deepEqual(Object.keys(table.STSBenchmark), ['dev', 'test']);
    assert.deepEqual(Object.keys(table.STS13), ['all', 'mean', 'wmean']);
    console.log(
      `# STS suite with hashing BoW: ${r.sentences} distinct sentences, wall ${wall.toFixed(2)} s ` +
        `(load ${r.seconds.load.toFixed(2)} s, encode ${r.seconds.encode.toFixed(2)} s, score ${r.seconds.score.toFixed(2)} s); ` +
        `avg rho x100 ${r.averagePercent!.toFixed(2)}`,
    );
  });
  test('binary tasks: MRPC test and QNLI dev', async () => {
    const enc = hashingBowEncoder(256);
    const m = await evaluateBinaryTask(enc, 'MRPC', { dataDir: DATA });
    assert.equal(m.n, 1725);
    assert.ok(m.spearman > 0 && m.spearman < 1);
    const q = await evaluateBinaryTask(enc, 'QNLI', { dataDir: DATA });
    assert.equal(q.n, 5463);
  });
  test('Flickr30k: strict accuracy and recall in [0, 1], timed', async () => {
    const t0 = performance.now();
    const r = await evaluateFlickr30k(hashingBowEncoder(256), { dataDir: DATA });
    assert.equal(r.images, 1000);
    assert.ok(r.strictAccuracyAt5 >= 0 && r.strictAccuracyAt5 <= 1);
    assert.ok(r.recallOther4At4ExcludingSelf > 0.05, `${r.recallOther4At4ExcludingSelf}`);
    console.log(`# Flickr30k retrieval (5000 captions, dim 256): ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  });
});
