/**
 * Flickr30k retrieval query by query (lib/eval/caption-queries.ts) and its notebook run
 * (lib/experiments/flickr30k-run.ts):
 * - on exact data (unit vectors with entries 0 and ±½: normalisation changes nothing, every score is
 *   a multiple of ¼, many tie) the per-query outcomes average to exactly what the golden-checked
 *   `captionRetrieval` (lib/eval/retrieval.ts, float64 search) gives, for several chunk sizes;
 * - a crafted case whose strict hits and recalls are known by construction;
 * - the golden tiny BERT on the real test captions: strict accuracy 0 as the golden, and the other-4
 *   recall at 4 within float32 rounding of faiss's (the random model's cosines crowd near 1, so
 *   ranks hinge on the last bits: the golden README's 69 vs 71 hits of 4000);
 * - runFlickr30k writes a record with the per-query details, reuses it the second time (as a plan
 *   row, lib/experiments/flickr30k-rows.ts, filling the paper row's cell), and marks an
 *   unreachable Hub id "needs the Hub" instead of failing; the examples table marks hits and misses.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import type { Embeddings } from '../lib/embed/types.js';
import { captionRetrievalQueries } from '../lib/eval/caption-queries.js';
import { captionRetrieval } from '../lib/eval/retrieval.js';
import { flickr30kQueryDetails, runFlickr30k } from '../lib/experiments/flickr30k-run.js';
import { flickr30kRows, flickr30kRunsOf } from '../lib/experiments/flickr30k-rows.js';
import { Plan } from '../lib/experiments/plan.js';
import { ANGLE_FILE } from '../lib/experiments/tables/angle.js';
import { FLICKR30K_TABLE } from '../lib/paper/angle.js';
import { paperTable } from '../lib/paper/lookup.js';
import { pickExampleQueries, retrievalExamplesTable } from '../lib/report/retrieval-examples.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';
import { mulberry32Uniform } from '../lib/util/mulberry32.js';

function rng(seed: number): () => number {
  return mulberry32Uniform(seed);
}

/** Captions of an image share most of its support: unit vectors with four entries ±½ (exact in float32). */
function exactCaptions(images: number, perImage: number, dim: number, seed: number): Embeddings {
  const r = rng(seed);
  const data = new Float32Array(images * perImage * dim);
  for (let i = 0; i < images; i++) {
    const base = Array.from({ length: 4 }, () => Math.floor(r() * dim));
    for (let j = 0; j < perImage; j++) {
      const row = (i * perImage + j) * dim;
      const used = new Set<number>();
      for (let t = 0; t < 4; t++) {
        let d = r() < 0.9 ? base[t]! : Math.floor(r() * dim);
        while (used.has(d)) d = (d + 1) % dim;
        used.add(d);
        data[row + d] = r() < 0.9 ? 0.5 : -0.5;
      }
    }
  }
  return { data, rows: images * perImage, dim };
}

describe('captionRetrievalQueries', () => {
  test('exact data: per-query outcomes average to captionRetrieval, any chunk size', async () => {
    await initBackend('cpu', { quiet: true });
    const emb = exactCaptions(300, 5, 48, 1);
    const ref = await captionRetrieval(emb, 5, { ks: [1, 4, 5, 10] });
    assert.ok(ref.strictAccuracyAt5 > 0.05 && ref.strictAccuracyAt5 < 0.95, `a case with hits and misses (${ref.strictAccuracyAt5})`);
    for (const search of [{}, { chunkRows: 97, queryRows: 13 }, { chunkRows: 1500, queryRows: 300 }]) {
      const q = await captionRetrievalQueries(emb, 5, { ks: [1, 4, 5, 10], search });
      assert.equal(q.strictAccuracy, ref.strictAccuracyAt5, JSON.stringify(search));
      for (const k of [1, 4, 5, 10]) assert.equal(q.recall[k]!.mean, ref.recallAtK[k], `recall@${k} ${JSON.stringify(search)}`);
      assert.equal(q.strict.reduce((a, b) => a + b, 0), Math.round(ref.strictAccuracyAt5 * 300));
    }
  });

  test('crafted: image 0 separable, image 1 split between two directions, image 2 its copy', async () => {
    await initBackend('cpu', { quiet: true });
    // dim 3: image 0 on axis x, image 1 on y for 3 captions and on z for 2, image 2 = image 1's copy
    const v = (x: number, y: number, z: number) => [x, y, z];
    const rows = [
      ...Array.from({ length: 5 }, () => v(1, 0, 0)),
      v(0, 1, 0), v(0, 1, 0), v(0, 1, 0), v(0, 0, 1), v(0, 0, 1),
      v(0, 1, 0), v(0, 1, 0), v(0, 1, 0), v(0, 0, 1), v(0, 0, 1),
    ]; // prettier-ignore
    const emb = { data: Float32Array.from(rows.flat()), rows: 15, dim: 3 };
    const q = await captionRetrievalQueries(emb, 5, { ks: [2, 4] });
    // image 0: all five tie at 1 -> its own captions (lower index first): hit, recall 1
    // image 1: query on y; y-captions 5,6,7 (own) and 10,11,12 (image 2) tie, lower index first:
    //   top 5 = 5,6,7,10,11 -> miss; without itself top 4 = 6,7,10,11 -> 2 of its other 4
    // image 2: query 10 on y; top 5 = 5,6,7,10,11 -> miss; top 4 without itself: 5,6,7,11 -> 1 of 4
    assert.deepEqual([...q.strict], [1, 0, 0]);
    assert.deepEqual([...q.recall[4]!.perQuery], [1, 0.5, 0.25]);
    assert.deepEqual([...q.recall[2]!.perQuery], [0.5, 0.5, 0]);
    assert.deepEqual([...q.top.indices.subarray(5, 10)], [5, 6, 7, 10, 11]);
    const t = retrievalExamplesTable({ captions: Array.from({ length: 15 }, (_, i) => `c${i}`), perImage: 5, top: [[0, 1, 2, 3, 4], [5, 6, 7, 10, 11]], strict: [...q.strict], images: [0, 1] });
    assert.deepEqual(t.rows.map((r) => r[3]), ['✓ the query itself', '✓ same image', '✓ same image', '✓ same image', '✓ same image', '✓ the query itself', '✓ same image', '✓ same image', '✗ image 2', '✗ image 2']);
    assert.match(String(t.rows[5]![0]), /image 1: “c5” — strict miss/);
    assert.deepEqual(pickExampleQueries([0, 1, 0, 1, 1, 0], 2, 1), [0, 1, 3]);
  });

  test('the golden tiny BERT on the Flickr30k test captions: the golden strict accuracy, recall within float32 rounding', { skip: !GOLDEN_DIR || !DATA_DIR ? 'needs the golden set and data' : false }, async () => {
    await initBackend('cpu', { quiet: true });
    const golden = JSON.parse(readFileSync(join(GOLDEN_DIR!, 'eval.json'), 'utf8')).flickr30k_retrieval;
    const tmp = mkdtempSync(join(tmpdir(), 'flickr-run-'));
    after(() => rmSync(tmp, { recursive: true, force: true }));
    const lines: string[] = [];
    const entry = { label: 'golden tiny BERT (cls)', model: join(GOLDEN_DIR!, 'model'), pooling: 'cls' };
    const first = await runFlickr30k({ entry, experiment: 'flickr-test', resultsDir: tmp, dataDir: DATA_DIR, ks: [1, 4, 10], log: (l) => lines.push(l) });
    assert.equal(first.status, 'evaluated');
    const m = first.run!.record.metrics;
    assert.equal(m.test_strict_accuracy, golden.strict_accuracy_at5 * 100);
    console.log(`# recall of the other 4 at 4: ours ${(m.test_recall_at_4 / 100).toFixed(5)}, golden (faiss) ${golden.recall_of_other4_at4_excluding_self}`);
    assert.ok(Math.abs(m.test_recall_at_4 / 100 - golden.recall_of_other4_at4_excluding_self) <= 0.0025, `${m.test_recall_at_4} vs ${golden.recall_of_other4_at4_excluding_self}`);
    const d = flickr30kQueryDetails(first.run!);
    assert.equal(d.strict.length, 1000);
    assert.equal(d.top[0]![0], 0, 'the query itself ranks first');
    assert.ok(Math.abs(d.hitsAtK['4']!.reduce((a, b) => a + b, 0) / 4000 - m.test_recall_at_4 / 100) < 1e-12);

    // Again as a plan row (lib/experiments/flickr30k-rows.ts), as notebook 05 runs it: the record is reused and fills the paper row's cell.
    const table = paperTable('angle', FLICKR30K_TABLE, ANGLE_FILE);
    const plan = await Plan.create(flickr30kRows([{ ...entry, paperRow: 'AnglE' }], table, { ks: [1, 4, 10] }), { experiment: 'flickr-test', model: entry.model, seeds: [0], resultsDir: tmp, dataDir: DATA_DIR });
    await plan.run({ log: (l) => lines.push(l) });
    const [second] = flickr30kRunsOf(plan);
    assert.equal(second!.status, 'reused');
    assert.equal(second!.run!.record.runId, first.run!.record.runId);
    assert.deepEqual(second!.queries, d);
    const cell = plan.cellSources().find((c) => c.row === 'AnglE')!;
    assert.deepEqual(cell.runs, { runIds: [first.run!.record.runId] });
    assert.equal(cell.metric, 'test_strict_accuracy');

    const prev = process.env.HF_HUB_OFFLINE;
    process.env.HF_HUB_OFFLINE = '1';
    try {
      const hub = await runFlickr30k({ entry: { label: 'released', model: 'SeanLee97/angle-bert-base-uncased-nli-en-v1' }, experiment: 'flickr-test', resultsDir: tmp, dataDir: DATA_DIR });
      assert.equal(hub.status, 'unavailable');
      assert.match(hub.reason!, /^needs the Hub: SeanLee97\/angle-bert-base-uncased-nli-en-v1 is not in the Hugging Face cache here/);
      const missing = await runFlickr30k({ entry: { label: 'typo', model: './no/such/best' }, experiment: 'flickr-test', resultsDir: tmp, dataDir: DATA_DIR });
      assert.match(missing.reason!, /^not found: '\.\/no\/such\/best' is not a directory \(looked at .*no\/such\/best\)/);
    } finally {
      if (prev === undefined) delete process.env.HF_HUB_OFFLINE;
      else process.env.HF_HUB_OFFLINE = prev;
    }
  });
});
