/**
 * Chunked exact search on the tfjs backend (lib/eval/chunked-search.ts): a synthetic corpus many
 * chunks long gives the same top-k as one unchunked search and as the existing float64 evaluator
 * (lib/eval/retrieval.ts searchInnerProduct, itself checked against brute force and the golden
 * Flickr30k numbers) — ties by lower index, on integer data where every score is exact and half of
 * them tie — with and without an excluded row, on the cpu and wasm backends; the peak tensor memory
 * (tf.profile's peakBytes) stays under the stated bound and far below the unchunked search's; a
 * chunk source is read once per chunk in order; NaN rows and shape mismatches are named.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import type { Embeddings } from '../lib/embed/types.js';
import { chunkedInnerProductSearch, chunkedSearchMemoryBound } from '../lib/eval/chunked-search.js';
import { searchInnerProduct, type TopK } from '../lib/eval/retrieval.js';
import { mulberry32Uniform } from '../lib/util/mulberry32.js';

function rng(seed: number): () => number {
  return mulberry32Uniform(seed);
}

/** Entries in {-1, 0, 1}: exact float32 products and sums, and many equal scores. */
function ints(rows: number, dim: number, seed: number): Embeddings {
  const r = rng(seed);
  return { data: Float32Array.from({ length: rows * dim }, () => Math.floor(r() * 3) - 1), rows, dim };
}

function gaussian(rows: number, dim: number, seed: number): Embeddings {
  const r = rng(seed);
  return { data: Float32Array.from({ length: rows * dim }, () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())), rows, dim };
}

function same(a: TopK, b: TopK, what: string): void {
  assert.equal(a.k, b.k);
  assert.deepEqual([...a.indices], [...b.indices], `${what}: indices`);
  assert.deepEqual([...a.scores], [...b.scores], `${what}: scores`);
}

for (const backend of ['cpu', 'wasm'] as const) {
  describe(`chunked search on ${backend}`, () => {
    test('integer corpus of 12 chunks: equals the unchunked search and the float64 evaluator, ties by lower index', async () => {
      await initBackend(backend, { quiet: true });
      const C = ints(3000, 8, 1);
      const Q = ints(70, 8, 2);
      const exclude = Array.from({ length: Q.rows }, (_, q) => (q * 41) % C.rows);
      let ties = 0;
      for (const k of [1, 5, 11]) {
        for (const ex of [undefined, exclude]) {
          const chunked = await chunkedInnerProductSearch(Q, C, k, { chunkRows: 256, queryRows: 16, exclude: ex });
          const whole = await chunkedInnerProductSearch(Q, C, k, { chunkRows: C.rows, queryRows: Q.rows, exclude: ex });
          const reference = await searchInnerProduct(Q, C, k, { exclude: ex });
          same(chunked, whole, `k ${k}${ex ? ', excluding' : ''}: chunked vs unchunked`);
          same(chunked, reference, `k ${k}${ex ? ', excluding' : ''}: chunked vs searchInnerProduct`);
          if (ex) for (let q = 0; q < Q.rows; q++) assert.ok(!chunked.indices.subarray(q * k, (q + 1) * k).includes(ex[q]));
          for (let i = 1; i < chunked.scores.length; i++) if (i % k !== 0 && chunked.scores[i] === chunked.scores[i - 1]) ties++;
        }
      }
      assert.ok(ties > 1000, `the data must exercise tie-breaking (${ties} tied neighbours)`);
    });

    test('Gaussian corpus: chunked equals unchunked bit for bit; scores are the float products', async () => {
      await initBackend(backend, { quiet: true });
      const C = gaussian(4000, 24, 3);
      const Q = gaussian(50, 24, 4);
      const a = await chunkedInnerProductSearch(Q, C, 10, { chunkRows: 333, queryRows: 7 });
      const b = await chunkedInnerProductSearch(Q, C, 10, { chunkRows: 4000, queryRows: 50 });
      same(a, b, 'chunked vs unchunked');
      const ref = await searchInnerProduct(Q, C, 10);
      let maxDiff = 0;
      for (let i = 0; i < ref.scores.length; i++) maxDiff = Math.max(maxDiff, Math.abs(ref.scores[i] - a.scores[i]));
      assert.ok(maxDiff < 1e-4, `scores vs float64 ${maxDiff}`);
      // Only float32 rounding may reorder neighbours whose float64 scores are within its error.
      for (let i = 0; i < ref.indices.length; i++) {
        if (a.indices[i] !== ref.indices[i]) assert.ok(Math.abs(ref.scores[i] - (ref.scores[i + 1] ?? Infinity)) < 1e-4 || Math.abs(ref.scores[i] - ref.scores[i - 1]) < 1e-4, `rank ${i}`);
      }
    });
  });
}

describe('chunked search memory', () => {
  test('peak tensor bytes stay under the stated bound, far below one unchunked search', async () => {
    await initBackend('cpu', { quiet: true });
    const C = gaussian(20000, 32, 5);
    const Q = gaussian(300, 32, 6);
    const shape = { queries: Q.rows, corpusRows: C.rows, dim: C.dim, k: 10, exclude: true, chunkRows: 1024, queryRows: 64 };
    const exclude = Array.from({ length: Q.rows }, (_, q) => q);
    const before = tf.memory().numTensors;
    let maxInUse = 0;
    const info = await tf.profile(async () => {
      await chunkedInnerProductSearch(Q, C, 10, {
        chunkRows: shape.chunkRows,
        queryRows: shape.queryRows,
        exclude,
        onChunk: () => (maxInUse = Math.max(maxInUse, tf.memory().numBytes)),
      });
      return [];
    });
    const bound = chunkedSearchMemoryBound(shape);
    const unchunked = 4 * (C.rows * C.dim + Q.rows * C.rows);
    console.log(`# peak ${info.peakBytes} B, bound ${bound} B, one unchunked search ${chunkedSearchMemoryBound({ ...shape, chunkRows: C.rows, queryRows: Q.rows })} B`);
    assert.ok(info.peakBytes <= bound, `peak ${info.peakBytes} > bound ${bound}`);
    // The chunk and a score block really were on the device (the measurement sees them).
    assert.ok(info.peakBytes >= 4 * (shape.chunkRows * C.dim + shape.queryRows * shape.chunkRows), `peak ${info.peakBytes} too small to be real`);
    assert.ok(info.peakBytes * 10 < unchunked);
    assert.equal(tf.memory().numTensors, before, 'no tensor left behind');
    assert.ok(maxInUse <= bound);
  });
});

describe('chunked search inputs', () => {
  test('a chunk source is asked for each chunk once, in order, and gives the same result', async () => {
    await initBackend('cpu', { quiet: true });
    const C = ints(1000, 6, 7);
    const Q = ints(20, 6, 8);
    const asked: [number, number][] = [];
    const source = {
      rows: C.rows,
      dim: C.dim,
      chunk: async (s: number, e: number) => {
        asked.push([s, e]);
        return { data: C.data.slice(s * C.dim, e * C.dim), rows: e - s, dim: C.dim };
      },
    };
    const a = await chunkedInnerProductSearch(Q, source, 7, { chunkRows: 300, queryRows: 8 });
    same(a, await searchInnerProduct(Q, C, 7), 'source vs matrix');
    assert.deepEqual(asked, [
      [0, 300],
      [300, 600],
      [600, 900],
      [900, 1000],
    ]);
  });

  test('fewer corpus rows than k: empty slots are -1 / -Infinity', async () => {
    await initBackend('cpu', { quiet: true });
    const r = await chunkedInnerProductSearch(ints(2, 4, 9), ints(3, 4, 10), 5, { chunkRows: 2 });
    assert.deepEqual([...r.indices.subarray(3, 5)], [-1, -1]);
    assert.equal(r.scores[4], Number.NEGATIVE_INFINITY);
  });

  test('NaN rows, dimension mismatches and bad sizes are named', async () => {
    await initBackend('cpu', { quiet: true });
    const C = ints(10, 4, 11);
    C.data[7 * 4 + 2] = Number.NaN;
    await assert.rejects(chunkedInnerProductSearch(ints(2, 4, 12), C, 3, { chunkRows: 4 }), /corpus row 7 has NaN at dimension 2/);
    await assert.rejects(chunkedInnerProductSearch(ints(2, 5, 12), ints(10, 4, 11), 3), /queries have dimension 5, the corpus 4/);
    await assert.rejects(chunkedInnerProductSearch(ints(2, 4, 12), ints(10, 4, 11), 0), /k must be a positive integer/);
    await assert.rejects(chunkedInnerProductSearch(ints(2, 4, 12), ints(10, 4, 11), 3, { exclude: [1] }), /exclude has 1 entries for 2 queries/);
  });
});
