/**
 * angle_emb's legacy `cls_avg` poolings (lib/embed/pooling.ts) and SentEval-style batching
 * (lib/eval/senteval-sts.ts `sentevalBatches`, `sentevalBatchSize`), on the golden tiny BERT:
 *
 * - `cls_avg_legacy` = (h₀ + (1/T) Σ_{t<T} h_t)/2 over the padded batch (angle_emb 0.1.0–0.3.3),
 *   checked against that formula and against the gap formula
 *   cls_avg_legacy − cls_avg = ½[(L/T − 1)·m + P/T], both computed here from the hidden states;
 * - `cls_avg_batch_tokens` = (h₀ + Σ_t M h / Σ_{b,t} M)/2 (angle_emb 0.3.4–0.5.4);
 * - SentEval's pair order and batches, and the STS evaluator encoding in exactly those batches.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { join } from 'node:path';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { pool } from '../lib/embed/pooling.js';
import type { Embeddings, SentenceEncoder } from '../lib/embed/types.js';
import type { StsSet } from '../lib/data/sts.js';
import { evaluateStsSets, sentevalBatches } from '../lib/eval/senteval-sts.js';
import { spearman } from '../lib/eval/spearman.js';
import { loadModel, type LoadedModel } from '../lib/models/auto.js';
import { goldenOrSkip } from './helpers/env.js';

const TEXTS = ['A man is playing a guitar on the stage tonight .', 'Someone plays music .', 'Dogs run', 'A woman is slicing an onion into small pieces .'];

let cached: LoadedModel | undefined;
async function golden(t: TestContext): Promise<LoadedModel | undefined> {
  const dir = goldenOrSkip(t);
  if (!dir) return undefined;
  await initBackend('cpu', { quiet: true });
  cached ??= await loadModel(join(dir, 'model'));
  return cached;
}

/** Hidden states and mask of one padded batch, as plain arrays. */
function forward(m: LoadedModel, texts: string[]): { h: number[][][]; mask: number[][]; poolings: Record<string, number[][]> } {
  const batch = m.tokenizer.encodeBatch(texts);
  return tf.tidy(() => {
    const o = m.model.forward(batch);
    const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
    const poolings: Record<string, number[][]> = {};
    for (const p of ['cls_avg', 'cls_avg_legacy', 'cls_avg_batch_tokens'] as const) poolings[p] = pool(p, { lastHiddenState: o.lastHiddenState, attentionMask: mask }).arraySync();
    return { h: o.lastHiddenState.arraySync(), mask: mask.arraySync(), poolings };
  });
}

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

test('cls_avg_legacy averages every padded position; its gap to cls_avg is ½[(L/T − 1)m + P/T]', async (t) => {
  const m = await golden(t);
  if (!m) return;
  const { h, mask, poolings } = forward(m, TEXTS);
  const T = mask[0].length;
  const D = h[0][0].length;
  const lengths = mask.map((r) => r.reduce((a, b) => a + b, 0));
  assert.ok(Math.min(...lengths) < T && Math.max(...lengths) === T, `the batch has padding: lengths ${lengths}, T ${T}`);
  const totalTokens = lengths.reduce((a, b) => a + b, 0);
  let padded = 0;
  for (let b = 0; b < TEXTS.length; b++) {
    const L = lengths[b];
    const legacy = new Float64Array(D);
    const masked = new Float64Array(D);
    const gap = new Float64Array(D);
    const batchTokens = new Float64Array(D);
    for (let j = 0; j < D; j++) {
      let all = 0;
      let real = 0;
      let pad = 0;
      for (let s = 0; s < T; s++) {
        all += h[b][s][j];
        if (s < L) real += h[b][s][j];
        else pad += h[b][s][j];
      }
      const mean = real / L;
      legacy[j] = (h[b][0][j] + all / T) / 2; // torch.mean(outputs, dim=1)
      masked[j] = (h[b][0][j] + mean) / 2;
      gap[j] = 0.5 * ((L / T - 1) * mean + pad / T);
      batchTokens[j] = (h[b][0][j] + real / totalTokens) / 2; // torch.sum(outputs * mask) / torch.sum(mask)
    }
    assert.ok(maxAbs(poolings.cls_avg_legacy[b], legacy) < 1e-6, `row ${b}: legacy formula`);
    assert.ok(maxAbs(poolings.cls_avg[b], masked) < 1e-6, `row ${b}: masked formula`);
    assert.ok(maxAbs(poolings.cls_avg_batch_tokens[b], batchTokens) < 1e-6, `row ${b}: batch-token formula`);
    const diff = poolings.cls_avg_legacy[b].map((v, j) => v - poolings.cls_avg[b][j]);
    assert.ok(maxAbs(diff, gap) < 1e-6, `row ${b}: legacy − masked = ½[(L/T − 1)m + P/T], max error ${maxAbs(diff, gap)}`);
    if (L === T) assert.ok(maxAbs(poolings.cls_avg_legacy[b], poolings.cls_avg[b]) < 1e-6, `row ${b} has no padding: legacy = masked`);
    else {
      padded++;
      assert.ok(maxAbs(diff, new Float64Array(D)) > 1e-3, `row ${b} (${T - L} pads): legacy differs from masked`);
    }
  }
  assert.ok(padded >= 2);
});

test('cls_avg_legacy depends on the batch: alone it equals cls_avg, beside a longer text it does not', async (t) => {
  const m = await golden(t);
  if (!m) return;
  const short = ['Dogs run'];
  const alone = await new PooledSentenceEncoder(m, { pooling: 'cls_avg_legacy', batchSize: 1 }).encode(TEXTS);
  const masked = await new PooledSentenceEncoder(m, { pooling: 'cls_avg', batchSize: 64 }).encode(TEXTS);
  assert.ok(maxAbs(alone.data, masked.data) < 1e-6, 'one text per batch: no padding, no gap');
  const together = await new PooledSentenceEncoder(m, { pooling: 'cls_avg_legacy', batchSize: 64 }).encode([...short, TEXTS[0]]);
  const shortAlone = await new PooledSentenceEncoder(m, { pooling: 'cls_avg_legacy', batchSize: 1 }).encode(short);
  assert.ok(maxAbs(together.data.subarray(0, together.dim), shortAlone.data) > 1e-3, 'the short text changes with its batch');
});

test('sentevalBatches: STS12-16 by gold score (stable), STS-B and SICK-R in file order', () => {
  const gold = [3, 1, 2, 1, 5, 0.5, 2];
  assert.deepEqual(sentevalBatches('STS14', gold, 3).map((b) => [...b]), [[5, 1, 3], [2, 6, 0], [4]]);
  assert.deepEqual(sentevalBatches('STSBenchmark', gold, 3).map((b) => [...b]), [[0, 1, 2], [3, 4, 5], [6]]);
  assert.deepEqual(sentevalBatches('SICKRelatedness', gold, 4).map((b) => [...b]), [[0, 1, 2, 3], [4, 5, 6]]);
  assert.throws(() => sentevalBatches('STS12', gold, 0), RangeError);
});

function set(task: StsSet['task'], name: string, rows: Array<[string, string, number]>): StsSet {
  return { task, name, files: [], pairs: rows.map(([a, b, score], i) => ({ a, b, score, source: { file: 'mem', line: i + 1 } })) };
}

const PAIRS: Array<[string, string, number]> = [
  ['A man is playing a guitar on the stage tonight .', 'A man plays a guitar .', 4.2],
  ['Dogs run', 'Two dogs are running across a wide green field .', 2.5],
  ['A woman is slicing an onion .', 'Someone cuts an onion .', 4.8],
  ['The cat sleeps .', 'A child is riding a horse along the beach at sunset .', 0.2],
  ['A plane is taking off .', 'An airplane departs from the runway .', 4.6],
  ['Nobody is here .', 'The room is full of people dancing to loud music .', 1.0],
  ['It rains .', 'The weather is wet today .', 3.1],
];

test('evaluateStsSets with sentevalBatchSize encodes SentEval batches: pooled rows equal a direct forward of each batch', async (t) => {
  const m = await golden(t);
  if (!m) return;
  const s = set('STS13', 'toy', PAIRS);
  const calls: string[][] = [];
  const inner = new PooledSentenceEncoder(m, { pooling: 'cls_avg_legacy', batchSize: 64 });
  const recording: SentenceEncoder = {
    encode: (texts: string[]): Promise<Embeddings> => {
      calls.push(texts);
      return inner.encode(texts);
    },
  };
  const r = await evaluateStsSets(recording, 'STS13', [s], undefined, 3);
  // SentEval order by gold: 3 (0.2), 5 (1.0), 1 (2.5) | 6 (3.1), 0 (4.2), 4 (4.6) | 2 (4.8).
  const batches = [[3, 5, 1], [6, 0, 4], [2]];
  assert.deepEqual(calls, batches.flatMap((b) => [b.map((k) => PAIRS[k][0]), b.map((k) => PAIRS[k][1])]));
  // Independently: each batch's sentences padded together, legacy pooling from the raw states, cosine.
  const expected = new Float64Array(PAIRS.length);
  for (const b of batches) {
    const ea = forward(m, b.map((k) => PAIRS[k][0]));
    const eb = forward(m, b.map((k) => PAIRS[k][1]));
    const legacy = (f: ReturnType<typeof forward>, r: number) => {
      const T = f.mask[0].length;
      return f.h[r][0].map((h0, j) => (h0 + f.h[r].reduce((acc, tok) => acc + tok[j], 0) / T) / 2);
    };
    b.forEach((k, r) => {
      const u = legacy(ea, r);
      const v = legacy(eb, r);
      const dot = u.reduce((a, x, j) => a + x * v[j], 0);
      expected[k] = dot / Math.sqrt(u.reduce((a, x) => a + x * x, 0) * v.reduce((a, x) => a + x * x, 0));
    });
  }
  assert.ok(maxAbs(r.sets[0].cosines, expected) < 1e-5, `cosines ${[...r.sets[0].cosines]} vs ${[...expected]}`);
  assert.ok(Math.abs(r.all.spearman - spearman(expected, s.pairs.map((p) => p.score))) < 1e-12);
});

test('for a batch-independent pooling, SentEval batching gives the scores of the one-call path', async (t) => {
  const m = await golden(t);
  if (!m) return;
  const enc = new PooledSentenceEncoder(m, { pooling: 'cls_avg', batchSize: 64 });
  const sets = [set('STSBenchmark', 'test', PAIRS)];
  const once = await evaluateStsSets(enc, 'STSBenchmark', sets);
  const batched = await evaluateStsSets(enc, 'STSBenchmark', sets, undefined, 2);
  assert.ok(maxAbs(once.sets[0].cosines, batched.sets[0].cosines) < 1e-6);
  assert.ok(Math.abs(once.sets[0].spearman - batched.sets[0].spearman) < 1e-12);
  // The legacy pooling scores differently when batched (the point of the switch).
  const legacy = new PooledSentenceEncoder(m, { pooling: 'cls_avg_legacy', batchSize: 64 });
  const l1 = await evaluateStsSets(legacy, 'STSBenchmark', sets, undefined, 1);
  const l4 = await evaluateStsSets(legacy, 'STSBenchmark', sets, undefined, 4);
  assert.ok(maxAbs(l1.sets[0].cosines, once.sets[0].cosines) < 1e-6, 'batch size 1: no padding, legacy = cls_avg');
  assert.ok(maxAbs(l4.sets[0].cosines, l1.sets[0].cosines) > 1e-4, 'batch size 4: padding moves the cosines');
});
