/**
 * SentEval STS as one Evaluator (lib/eval/senteval-sts-evaluator.ts) and evaluation-only runs
 * (lib/report/evaluation-record.ts, lib/experiments/run-evaluation.ts):
 * - each task's metric is the Spearman of the cosines of its (capped) test pairs, recomputed here
 *   from the encoder's vectors by hand for STS-B; STS12's is SentEval's `all` (one Spearman over
 *   the concatenated subsets); `avg` is the mean of the seven; `spearman` and the predictions are
 *   STS-B test's;
 * - an evaluation run writes a run record (metrics `test_*` × 100, the data identity, a predictions
 *   sidecar, a run card), is reused by its key, and evaluates again with `force` or other settings.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadStsBenchmark, loadStsYear } from '../lib/data/sts.js';
import { hashingBowEncoder } from '../lib/eval/baselines.js';
import { SENTEVAL_STS_COLUMNS, sentevalMetricsTable, sentevalStsEvaluator } from '../lib/eval/senteval-sts-evaluator.js';
import { spearman } from '../lib/eval/spearman.js';
import { evaluationKey, runEvaluation } from '../lib/experiments/run-evaluation.js';
import { loadRun } from '../lib/report/results-reader.js';
import { runCardPath } from '../lib/report/run-card.js';
import { DATA_DIR } from './helpers/env.js';

const tmp = mkdtempSync(join(tmpdir(), 'angle-senteval-ev-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function cosine(a: Float32Array, b: Float32Array): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / Math.sqrt(aa * bb);
}

test('metrics: per task the Spearman of its capped test pairs, avg their mean, spearman and predictions STS-B test', async (t) => {
  if (!DATA_DIR) return t.skip('no data folder (ANGLE_DATA_DIR or ../shared/data)');
  const cap = 12;
  const ev = sentevalStsEvaluator({ dataDir: DATA_DIR, pairsPerSet: cap });
  assert.equal(ev.primaryMetric, 'avg');
  assert.match(ev.name, /the 7 tasks, test; smoke: first 12 pairs of each set/);
  const years = ['STS12', 'STS13', 'STS14', 'STS15', 'STS16'] as const;
  const subsets = years.reduce((n, y) => n + loadStsYear(y, { dataDir: DATA_DIR }).length, 0);
  assert.equal(ev.rows, (subsets + 2) * cap);
  const enc = hashingBowEncoder(64);
  const r = await ev.evaluate(enc);

  // STS-B test by hand: cosines of the first 12 pairs' vectors, Spearman against the gold scores.
  const pairs = loadStsBenchmark('test', { dataDir: DATA_DIR }).pairs.slice(0, cap);
  const va = await enc.encode(pairs.map((p) => p.a));
  const vb = await enc.encode(pairs.map((p) => p.b));
  const cos = pairs.map((_, i) => cosine(va.data.subarray(i * 64, (i + 1) * 64), vb.data.subarray(i * 64, (i + 1) * 64)));
  const gold = pairs.map((p) => p.score);
  assert.ok(Math.abs(r.metrics.STSBenchmark - spearman(cos, gold)) < 1e-9);
  assert.equal(r.metrics.spearman, r.metrics.STSBenchmark);
  assert.deepEqual([...r.gold!], gold);
  cos.forEach((c, i) => assert.ok(Math.abs(r.predictions![i] - c) < 1e-6));

  // STS12: one Spearman over its subsets' first 12 pairs, concatenated (SentEval's 'all').
  const sets12 = loadStsYear('STS12', { dataDir: DATA_DIR }).map((s) => s.pairs.slice(0, cap));
  const all = sets12.flat();
  const ea = await enc.encode(all.map((p) => p.a));
  const eb = await enc.encode(all.map((p) => p.b));
  const cos12 = all.map((_, i) => cosine(ea.data.subarray(i * 64, (i + 1) * 64), eb.data.subarray(i * 64, (i + 1) * 64)));
  assert.ok(Math.abs(r.metrics.STS12 - spearman(cos12, all.map((p) => p.score))) < 1e-9);

  const seven = SENTEVAL_STS_COLUMNS.filter((c) => c.metric !== 'avg').map((c) => r.metrics[c.metric]);
  assert.equal(seven.length, 7);
  assert.ok(Math.abs(r.metrics.avg - seven.reduce((a, b) => a + b, 0) / 7) < 1e-12);

  const table = sentevalMetricsTable([{ label: 'bow', metrics: Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [`test_${k}`, v * 100])) }], 'x');
  assert.deepEqual(table.columns, ['row', 'STS12', 'STS13', 'STS14', 'STS15', 'STS16', 'STS-B', 'SICK-R', 'Avg.']);
  assert.equal(table.rows[0][6], (r.metrics.STSBenchmark * 100).toFixed(2));
});

test('bad settings are refused by name', (t) => {
  if (!DATA_DIR) return t.skip('no data folder');
  assert.throws(() => sentevalStsEvaluator({ dataDir: DATA_DIR, pairsPerSet: 1 }), /pairsPerSet must be an integer >= 2/);
  assert.throws(() => sentevalStsEvaluator({ dataDir: DATA_DIR, tasks: ['STS17' as never] }), /unknown STS task 'STS17'/);
  assert.throws(() => sentevalStsEvaluator({ dataDir: DATA_DIR, tasks: [] }), /at least one task/);
  const one = sentevalStsEvaluator({ dataDir: DATA_DIR, tasks: ['SICKRelatedness'], pairsPerSet: 5 });
  assert.equal(one.rows, 5);
  assert.match(one.name, /\(SICKRelatedness, test; smoke/);
});

test('an evaluation run: record, sidecar and run card; reused by its key; evaluated again with force or other settings', async (t) => {
  if (!DATA_DIR) return t.skip('no data folder');
  const ev = sentevalStsEvaluator({ dataDir: DATA_DIR, tasks: ['STSBenchmark', 'SICKRelatedness'], pairsPerSet: 30 });
  const model = { id: 'bow', dir: join(tmp, 'bow'), source: 'local' as const, weightsSha256: 'f'.repeat(64) };
  const opts = { label: 'bag of words', model, encoder: hashingBowEncoder(32), config: { encoder: 'hashing bag of words', dim: 32 }, evaluator: ev, experiment: 'eval-only', resultsDir: tmp };
  const first = await runEvaluation(opts);
  assert.equal(first.status, 'evaluated');
  const rec = first.run.record;
  const direct = await ev.evaluate(hashingBowEncoder(32));
  assert.ok(Math.abs(rec.metrics.test_STSBenchmark - direct.metrics.STSBenchmark * 100) < 1e-9);
  assert.ok(Math.abs(rec.metrics.test_avg - direct.metrics.avg * 100) < 1e-9);
  assert.equal(rec.metrics.test_spearman, rec.metrics.test_STSBenchmark);
  assert.deepEqual(rec.data, [{ id: ev.name, split: 'test', rows: 60 }]);
  assert.equal((rec.details as { runKey: string }).runKey, first.key);
  assert.equal(first.key, evaluationKey({ weightsSha256: model.weightsSha256, config: opts.config, evaluator: ev.name, rows: 60, seed: 0 }));
  const side = JSON.parse(readFileSync(join(tmp, 'eval-only', `${rec.runId}.predictions.json`), 'utf8')) as { predictions: number[] };
  assert.equal(side.predictions.length, 30);
  assert.ok(existsSync(runCardPath(first.run.file)));
  assert.equal(loadRun(first.run.file).predictions?.predictions.length, 30);

  const again = await runEvaluation(opts);
  assert.equal(again.status, 'reused');
  assert.equal(again.run.record.runId, rec.runId);
  const forced = await runEvaluation({ ...opts, force: true });
  assert.equal(forced.status, 'evaluated');
  assert.notEqual(forced.run.record.runId, rec.runId);
  const other = await runEvaluation({ ...opts, config: { ...opts.config, dim: 16 }, encoder: hashingBowEncoder(16) });
  assert.notEqual(other.key, first.key);
  assert.equal(other.status, 'evaluated');
});
