/**
 * Every notebook builds one Plan, and the evaluation notebooks (00, 05, 06, 07, 09) run their work
 * only as that plan's rows (issue 36): no code cell calls a run or rehearsal helper itself, and no
 * notebook decides the rehearsal (the plan does, from its preset). Then the rows notebooks 00, 06
 * and 07 moved onto, through small plans on the tiny golden BERT: the pooling comparison equals the
 * same encoders called directly; the geometry rows measure a training row's best checkpoint (found
 * through the plan's `trainedRuns`) and an entry as `measureEntryGeometry` does; the transfer rows
 * say why a row cannot run, and under the rehearsal preset a bag-of-words row is not run.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { cosineSimilarityMatrix } from '../lib/embed/similarity.js';
import { alignUniformEvaluator } from '../lib/eval/align-uniform-evaluator.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { measureEntryGeometry } from '../lib/experiments/geometry-measure.js';
import { geometryOf, geometryRows } from '../lib/experiments/geometry-rows.js';
import { Plan, type PlanRow } from '../lib/experiments/plan.js';
import { poolingComparisonOf, poolingComparisonRows } from '../lib/experiments/pooling-comparison-rows.js';
import { defaultRecipe } from '../lib/experiments/recipes/index.js';
import type { TaskData } from '../lib/experiments/tasks.js';
import { bowTransferPlanRow, modelTransferPlanRow, transferRunsOf } from '../lib/experiments/transfer-rows.js';
import { sklearnPath } from '../lib/experiments/transfer-run.js';
import { POOLING_STRATEGIES } from '../lib/models/pooling.js';
import { loadModel } from '../lib/models/auto.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs } from './helpers/train-fixtures.js';

const ROOT = join(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'angle-plan-rows-'));
before(async () => initBackend('cpu', { quiet: true }));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** The helpers that run (or rehearse) an evaluation or a training: a plan row calls them, a notebook cell does not. */
const RUN_HELPERS = [
  'runTransferRows', 'runModelTransfer', 'rehearseModelTransfer', 'measureEntryGeometry', 'measureGeometry', 'rehearseEntryGeometry',
  'runFlickr30k', 'rehearseFlickr30k', 'runEvaluation', 'runStsSuite', 'runRecipe', 'evaluatePromptRows', 'evaluatePromptRowsThroughEndpoint',
  'searchIclDemonstrations', 'rehearseIclSearch', 'rehearseEncoding', 'rehearsing',
];
const EVALUATION_NOTEBOOKS = ['00-encode-and-compare', '05-flickr30k-retrieval', '06-embedding-geometry', '07-senteval-transfer', '09-prompteol'];

function codeCells(file: string): string[] {
  const nb = JSON.parse(readFileSync(file, 'utf8')) as { cells: Array<{ cell_type: string; source: string | string[] }> };
  return nb.cells.filter((c) => c.cell_type === 'code').map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source));
}

test('every notebook builds one Plan; the evaluation notebooks call no run helper and none decides the rehearsal', () => {
  const dir = join(ROOT, 'notebooks');
  const names = readdirSync(dir).filter((f) => f.endsWith('.ipynb')).sort();
  for (const n of EVALUATION_NOTEBOOKS) assert.ok(names.includes(`${n}.ipynb`), `notebooks/${n}.ipynb exists`);
  for (const name of names) {
    const cells = codeCells(join(dir, name));
    const plans = cells.join('\n').match(/\bPlan\.create\(/g)?.length ?? 0;
    assert.equal(plans, 1, `${name}: ${plans} Plan.create calls (one plan per notebook)`);
    const helpers = EVALUATION_NOTEBOOKS.some((n) => name.startsWith(n)) ? RUN_HELPERS : ['rehearseEncoding', 'rehearsing'];
    cells.forEach((src, i) => {
      for (const h of helpers) assert.ok(!new RegExp(`\\b${h}\\s*\\(`).test(src), `${name}, code cell ${i + 1}: calls ${h}() itself instead of through the plan's rows`);
    });
  }
});

test("notebook 00's row: the plan's similarities are the pooled encoders' own; the model stays loaded for the notebook", { skip: GOLDEN_DIR ? false : 'no tiny BERT (encoder golden set)' }, async () => {
  const model = join(GOLDEN_DIR!, 'model');
  const texts = ['a man is playing a guitar .', 'a man plays the guitar .', 'the stock market fell sharply today .'];
  const plan = await Plan.create(poolingComparisonRows(model, texts), { experiment: 'pooling', model, seeds: [0], resultsDir: tmp });
  await plan.run();
  const c = poolingComparisonOf(plan);
  assert.ok(c.loaded, c.why);
  assert.deepEqual(c.strategies, POOLING_STRATEGIES);
  const direct = await loadModel(model);
  try {
    for (const pooling of POOLING_STRATEGIES) {
      const want = cosineSimilarityMatrix(await new PooledSentenceEncoder(direct, { pooling, maxLength: 64 }).encode(texts));
      assert.deepEqual(c.similarities[pooling], want, pooling);
    }
  } finally {
    direct.model.dispose();
    c.loaded.model.dispose();
  }
  const missing = await Plan.create(poolingComparisonRows(join(tmp, 'no-such-model'), texts), { experiment: 'pooling', model: 'x', seeds: [0], resultsDir: tmp });
  await missing.run();
  assert.match(poolingComparisonOf(missing).why ?? '', /is not on this machine/);
});

test("notebook 06's rows: a training row's best checkpoint and an entry measured through the plan, as measureEntryGeometry measures them", { skip: GOLDEN_DIR ? false : 'no tiny BERT (encoder golden set)' }, async () => {
  const model = join(GOLDEN_DIR!, 'model');
  const pairs = smallPairs(24);
  const scored = pairs.items.slice(0, 12).map((p, i) => ({ a: p.a, b: p.b, score: p.label, source: { file: 'small', line: i + 1 } }));
  const set = { task: 'STSBenchmark' as const, name: 'test', pairs: scored, files: [] };
  const data: Record<string, TaskData> = { small: { train: pairs, dev: stsEvaluator({ name: 'small dev', pairs: scored }), test: stsEvaluator({ name: 'small test', pairs: scored }) } };
  const recipe = { ...defaultRecipe('stsb'), config: { ...defaultRecipe('stsb').config, maxLength: 16, batchSize: 8, maxSteps: 2, evalEvery: 2, warmupSteps: 0 } };
  const training: PlanRow = { row: 'trained', cells: [], recipe, data: 'small' };
  const probe = alignUniformEvaluator(set, { sample: 8 });
  const entry = { label: 'untrained', model, pooling: 'cls' };
  const o = { set, probe, goldEdges: [0, 1, 2, 3, 4, 5] };
  const plan = await Plan.create(geometryRows([training], { trained: 'Trained' }, [entry], o), { experiment: 'geometry', model, seeds: [3], resultsDir: tmp, data });
  await plan.run();
  const g = geometryOf(plan);
  assert.equal(g.trained.length, 1);
  const t = g.trained[0]!;
  assert.equal(t.entry.label, 'Trained, seed 3');
  assert.equal(t.entry.model, `${plan.resultsDir}/geometry/runs/${t.run.key}/best`);
  assert.ok(existsSync(t.entry.model), 'the best checkpoint exists');
  assert.deepEqual(g.skipped, []);
  assert.deepEqual(g.measured.map((m) => m.entry), [t.entry, entry], 'the trained run first, then the entry, as the same objects');
  for (const m of g.measured) {
    const want = await measureEntryGeometry(m.entry, o);
    assert.deepEqual({ c: m.density.cosines, g: m.geometry, s: m.spearman }, { c: want!.density.cosines, g: want!.geometry, s: want!.spearman }, m.entry.label);
  }
  // Without the set, every geometry row says why (the training row still trains).
  const blocked = await Plan.create(geometryRows([training], {}, [entry], { goldEdges: o.goldEdges, unavailable: 'STS-B is not here' }), { experiment: 'geometry', model, seeds: [3], resultsDir: tmp, data });
  const runs = await blocked.run();
  assert.deepEqual(runs.map((r) => [r.row.row, r.run?.status ?? r.skipped]), [['trained', 'reused'], ['trained: geometry', 'STS-B is not here'], ['untrained: geometry', 'STS-B is not here']]);
  assert.deepEqual(geometryOf(blocked).measured, []);
});

test("notebook 07's rows: a row that cannot run says why; under the rehearsal preset a bag-of-words row is not run", async () => {
  const rows = [
    bowTransferPlanRow({ note: 'not found: GLOVE_FILE' }, { label: 'GloVe (avg.)', paperRow: 'GloVe (avg.)', paths: [sklearnPath()], tasks: ['MRPC'] }),
    modelTransferPlanRow({ label: 'nowhere', model: join(tmp, 'no-such-model') }, [{ label: 'nowhere', pooling: 'cls' }], { paths: [sklearnPath()], tasks: ['MRPC'] }),
  ];
  const plan = await Plan.create(rows, { experiment: 'transfer', model: 'x', seeds: [0], resultsDir: tmp });
  await plan.run();
  const r = transferRunsOf(plan);
  assert.deepEqual(r.runs, []);
  assert.deepEqual(r.unavailable.map((u) => u.label), ['GloVe (avg.)', 'nowhere']);
  assert.equal(r.unavailable[0]!.reason, 'not found: GLOVE_FILE');
  assert.match(r.unavailable[1]!.reason, /^not found: '.*no-such-model' is not a directory/);
  const glove = join(tmp, 'glove.txt');
  writeFileSync(glove, 'the 0.1 0.2\nman 0.3 0.4\n');
  const lines: string[] = [];
  const rehearsed = await Plan.create([bowTransferPlanRow({ file: glove, note: 'here' }, { label: 'GloVe', paths: [sklearnPath()], tasks: ['MRPC'] })], { experiment: 'transfer-rehearsal', model: 'x', preset: 'rehearsal', seeds: [0], resultsDir: tmp });
  await rehearsed.run({ log: (l) => lines.push(l) });
  assert.deepEqual(transferRunsOf(rehearsed), { runs: [], unavailable: [] });
  assert.match(lines.join('\n'), /GloVe: word-vector averaging on the host, nothing to rehearse \(not run\)/);
  assert.deepEqual(readdirSync(join(tmp, 'transfer-rehearsal')), [], 'no record written');
});
