/**
 * The plan every notebook trains through (lib/experiments/plan.ts) and the table rows built for it
 * (lib/experiments/tables/): AnglE Table 5, SimACE Table 1 and its sweeps, PromptEOL Table 2.
 * Numbers the rows carry are checked against the papers as the issue and the papers' text state
 * them; recipe values against the sources they cite; small plans train on the tiny BERT (data
 * supplied, and data from the task table with a stand-in), are reused the second time, keep going
 * when a row's data or cost estimate fails, and show overridden values as overrides.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { llmSupervisedTaskData } from '../lib/experiments/llm-supervised-data.js';
import { Plan, type PlanRow } from '../lib/experiments/plan.js';
import { angleLlmSupervised, defaultRecipe, PROMPTEOL_LORA, promptEolCse, unsupervisedRecipe } from '../lib/experiments/recipes/index.js';
import { table3Rows, table5Rows } from '../lib/experiments/tables/angle.js';
import { PROMPTEOL_ICL_DEMONSTRATIONS, prompteolTable2Rows } from '../lib/experiments/tables/prompteol.js';
import { simaceSweepRows, simaceTable1Rows, sweepTable } from '../lib/experiments/tables/simace.js';
import { loadTaskData, type TaskData } from '../lib/experiments/tasks.js';
import { paperTable } from '../lib/paper/lookup.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';
import { smallPairs } from './helpers/train-fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'angle-supplied-'));
before(async () => initBackend('cpu', { quiet: true }));
after(() => rmSync(tmp, { recursive: true, force: true }));

test("AnglE Table 5: the rows carry the paper's numbers; generated pairs become a 0/1 task; the recipe is AnglE's STS-B one with binary in-batch positives", (t) => {
  const rows = table5Rows();
  const paper = Object.fromEntries(rows.map((r) => [r.row, r.cells[0].paper?.value]));
  // AnglE 000_ Table 5 (the issue repeats them): ChatGPT 81.52, LLaMA 79.29, ChatGLM 81.11, ensemble 82.01; SimCSE 76.85, ConSERT 73.97, DiffCSE 80.59.
  assert.deepEqual(paper, {
    'SimCSE-BERT': 76.85,
    'ConSERT-BERT': 73.97,
    'DiffCSE-BERT': 80.59,
    'AnglE-BERT + ChatGPT': 81.52,
    'AnglE-BERT + LLaMA': 79.29,
    'AnglE-BERT + ChatGLM': 81.11,
    'AnglE-BERT + Ensemble': 82.01,
  });
  assert.deepEqual(rows.filter((r) => r.recipe).map((r) => r.data), ['ChatGPT', 'LLaMA', 'ChatGLM', 'Ensemble']);
  assert.ok(rows.filter((r) => !r.recipe).every((r) => r.unavailable?.startsWith('reference')));
  assert.equal(table5Rows('001_06941bfad7bf7482.txt')[3].row, 'Angle-BERT + ChatGPT');

  const r = angleLlmSupervised();
  const stsb = defaultRecipe('stsb');
  assert.deepEqual({ ...r.config, objective: undefined }, { ...stsb.config, objective: undefined });
  assert.equal(r.config.objective.name === 'angle' && r.config.objective.loss?.ibnPositives, 'binary');

  if (!DATA_DIR) return t.skip('no data folder');
  const d = llmSupervisedTaskData('gen', [{ a: 'x', b: 'y', score: 1 }, { a: 'x', b: 'z', score: 0 }], { dataDir: DATA_DIR });
  assert.deepEqual(d.train.items.map((p) => ('label' in p ? p.label : -1)), [1, 0]);
  assert.equal(d.dev.rows, 1500);
  assert.equal(d.test.rows, 1379);
  assert.throws(() => llmSupervisedTaskData('gen', [{ a: 'x', b: 'y', score: 0.5 }], { dataDir: DATA_DIR }), /pair 0 has score 0.5/);
  assert.throws(() => llmSupervisedTaskData('gen', [], { dataDir: DATA_DIR }), /no generated pairs/);
});

test('SimACE: Table 7 recipes, Table 1 and Table 14 rows with their numbers, the sweeps, and the wiki1m sample', async (t) => {
  const simace = unsupervisedRecipe('simace');
  // SimACE Table 7 (BERT_base): batch 64, lr 3e-5, max_seq 32, eval_steps 125, temperature 0.06, margin 10°, cls; §4: 1 epoch.
  assert.deepEqual(
    { b: simace.config.batchSize, lr: simace.config.lr, len: simace.config.maxLength, ev: simace.config.evalEvery, ep: simace.config.epochs, pool: simace.config.pooling },
    { b: 64, lr: 3e-5, len: 32, ev: 125, ep: 1, pool: 'cls' },
  );
  assert.deepEqual(simace.config.objective, { name: 'simace', options: { temperature: 0.06, margin: 10, marginUnit: 'degrees' } });
  assert.deepEqual(unsupervisedRecipe('simcse').config.objective, { name: 'simcse', temperature: 0.05 });

  const t1 = simaceTable1Rows();
  const avg = (rows: PlanRow[], row: string) => rows.find((r) => r.row === row)!.cells.find((c) => c.column === 'Avg.')!;
  // SimACE Table 1, BERT_base averages: first-last 56.70, SimCSE 76.25, ArcCon 77.76, SimACE 78.20.
  assert.deepEqual(['first-last', 'SimCSE', 'ArcCon', 'SimACE'].map((r) => avg(t1, r).paper?.value), [56.7, 76.25, 77.76, 78.2]);
  assert.equal(avg(t1, 'SimACE').metric, 'test_avg');
  assert.equal(t1.find((r) => r.row === 'SimACE')!.cells.find((c) => c.column === 'STS-B')!.metric, 'test_STSBenchmark');
  assert.equal(t1.find((r) => r.row === 'SimACE')!.cells.find((c) => c.column === 'STS-B')!.paper?.value, 79.99);

  const sweep = simaceSweepRows({ margins: [10, 0, -10, 5], temperatures: [0.06, 0.07] });
  // Table 14, BERT_base averages: m = 10 (SimACE) 78.20, m = 0 77.08, m = −10 73.46.
  assert.deepEqual(sweep.slice(0, 3).map((r) => [r.row, avg(sweep, r.row).paper?.value, r.table]), [['SimACE', 78.2, 'Table 14'], ['+ m = 0', 77.08, 'Table 14'], ['+ m = -10', 73.46, 'Table 14']]);
  assert.ok(sweep[3].offTable && sweep[3].row === 'SimACE m = 5°');
  assert.ok(sweep.slice(4).every((r) => r.offTable && r.sweep.parameter === 'temperature'));
  // The sweep rows at SimACE's own setting are the Table 1 run: the same recipe (hence the same run key).
  const main = t1.find((r) => r.row === 'SimACE')!.recipe!;
  assert.deepEqual(sweep[0].recipe!.config, main.config);
  assert.deepEqual(sweep[4].recipe!.config, main.config);
  assert.throws(() => simaceSweepRows({ temperatures: [0] }), /temperature must be > 0/);

  if (!DATA_DIR) return t.skip('no data folder');
  const w = loadTaskData('wiki1m', { dataDir: DATA_DIR, allowSample: true, testPairsPerSet: 8 });
  assert.equal(w.train.kind, 'unsupervised');
  assert.match(w.train.name, /^Wiki1M sample \(\d{1,3},\d{3} of 1,000,000 sentences\)$/);
  assert.equal(w.dev.name, 'STSBenchmark dev');
  assert.match(w.test.name, /SentEval STS/);
  // The paper preset does not accept the sample unless asked.
  assert.throws(() => loadTaskData('wiki1m', { dataDir: DATA_DIR }), /only a partial sample is available/);
  const plan = await Plan.create(sweep, { experiment: 'x', model: 'm', seeds: [42], resultsDir: tmp, dataDir: DATA_DIR, taskOptions: { allowSample: true }, download: false });
  const table = sweepTable(plan, sweep);
  assert.deepEqual(table.rows[1], ['margin', '0°', '+ m = 0', 'not run', '', '', '77.08']);
});

test('PromptEOL: the demonstrations are Table 4\'s, the fine-tuning recipe the authors\', Table 2\'s LLaMA 7B row the one a LoRA run fills', () => {
  const t4 = paperTable('prompteol', 4);
  for (const { size, demonstration } of PROMPTEOL_ICL_DEMONSTRATIONS.filter((d) => !['30B', '66B'].includes(d.size))) {
    assert.equal(t4.nonNumbers.find((c) => c.row === size && c.column === 'Word')?.printed, demonstration.word);
    assert.equal(t4.nonNumbers.find((c) => c.row === size && c.column === 'Sentence')?.printed, demonstration.text);
  }
  // train_llm.sh: --batch_size 256 --learning_rate 5e-4 --num_epochs 1 --lora_r 64 --lora_alpha 16 --lora_dropout 0.05; ft_llm.py: temp 0.05, warmup 100.
  const r = promptEolCse('nli');
  assert.deepEqual({ b: r.config.batchSize, lr: r.config.lr, ep: r.config.epochs, w: r.config.warmupSteps, p: r.config.pooling }, { b: 256, lr: 5e-4, ep: 1, w: 100, p: 'last' });
  assert.deepEqual(r.config.objective, { name: 'simcse', temperature: 0.05 });
  assert.deepEqual({ ...PROMPTEOL_LORA }, { r: 64, alpha: 16, dropout: 0.05, targetModules: 'all-linear' });
  assert.equal(r.task, 'nli');
  assert.deepEqual(promptEolCse('stsb-positives').positivesOnly, { threshold: 4 });
  const rows = prompteolTable2Rows({ model: 'decoder' });
  const llama = rows.find((x) => x.row === 'PromptEOL+CSE LLaMA 7B')!;
  // PromptEOL Table 2: PromptEOL+CSE LLaMA 7B 79.16 90.22 85.40 88.99 86.25 88.37 81.51 85.70.
  assert.deepEqual(llama.cells.map((c) => c.paper?.value), [79.16, 90.22, 85.4, 88.99, 86.25, 88.37, 81.51, 85.7]);
  assert.deepEqual(llama.recipe!.lora, PROMPTEOL_LORA);
  assert.equal(llama.model, 'decoder');
  assert.equal(llama.standIn!.name, 'prompteol-cse-stsb-positives');
  assert.equal(llama.taskOptions?.test, 'senteval-sts');
  // The OPT rows train the same recipe from facebook/opt-<size>; the 13B rows as two micro-batches of 100.
  assert.deepEqual(rows.filter((x) => x.row.includes('OPT') || x.row.includes('13B')).map((x) => [x.row, x.model, x.recipe?.name]), [
    ['PromptEOL+CSE OPT 1.3B', 'facebook/opt-1.3b', 'prompteol-cse-nli'],
    ['PromptEOL+CSE OPT 2.7B', 'facebook/opt-2.7b', 'prompteol-cse-nli'],
    ['PromptEOL+CSE OPT 13B', 'facebook/opt-13b', 'prompteol-cse-nli-13b'],
    ['PromptEOL+CSE LLaMA 13B', 'NousResearch/Llama-2-13b-hf', 'prompteol-cse-nli-13b'],
  ]);
  // Smoke: the tiny OPT stands in once (OPT 1.3B), the toy decoder once (LLaMA 7B); the others say so, and none reaches for the Hub.
  const smoke = prompteolTable2Rows({ model: 'decoder', optStandIn: 'tiny-opt' });
  assert.deepEqual(smoke.map((x) => [x.row, x.model ?? x.unavailable]), [
    ['PromptEOL+CSE OPT 1.3B', 'tiny-opt'],
    ['PromptEOL+CSE OPT 2.7B', 'smoke: the tiny OPT stood in once, for OPT 1.3B (not repeated per size)'],
    ['PromptEOL+CSE OPT 13B', 'smoke: the tiny OPT stood in once, for OPT 1.3B (not repeated per size)'],
    ['PromptEOL+CSE LLaMA 7B', 'decoder'],
    ['PromptEOL+CSE LLaMA 13B', 'smoke: the toy decoder stood in once, for LLaMA 7B (not repeated per size)'],
  ]);
});

test('a plan over supplied data: tables, a run reused the second time, rows marked where data is missing, cells mapped to metrics', { skip: GOLDEN_DIR ? false : 'no tiny BERT (encoder golden set)' }, async () => {
  const pairs = smallPairs(24);
  const scored = pairs.items.slice(0, 12).map((p, i) => ({ a: p.a, b: p.b, score: p.label, source: { file: 'small', line: i + 1 } }));
  const data: Record<string, TaskData | string> = { small: { train: pairs, dev: stsEvaluator({ name: 'small dev', pairs: scored }), test: stsEvaluator({ name: 'small test', pairs: scored }) }, gone: 'the generator is not configured' };
  const recipe = { ...defaultRecipe('stsb'), config: { ...defaultRecipe('stsb').config, maxLength: 16, batchSize: 8, maxSteps: 2, evalEvery: 2, warmupSteps: 0 } };
  const rows: PlanRow[] = [
    { row: 'A', table: 'T', cells: [{ column: 'c1' }, { column: 'c2', metric: 'best_dev_spearman' }], recipe, data: 'small' },
    { row: 'A again', table: 'T', cells: [{ column: 'c1' }], recipe, data: 'small', offTable: true },
    { row: 'B', table: 'T', cells: [{ column: 'c1' }], recipe, data: 'gone' },
    { row: 'C', table: 'U', cells: [{ column: 'c1' }], unavailable: 'needs RAN' },
  ];
  const plan = await Plan.create(rows, { experiment: 'plan', model: join(GOLDEN_DIR!, 'model'), seeds: [7], resultsDir: tmp, data, overrides: { lr: 1e-4 } });
  const rt = plan.recipeTable();
  assert.ok(rt.rows.some((r) => r[0] === 'lr' && r[1] === '0.0001' && r[2] === 'override (parameter cell)'));
  assert.ok(rt.rows.some((r) => r[0] === 'epochs' && r[1] === '20' && String(r[2]).includes('train_angle.py')));
  const dt = plan.dataTable();
  assert.equal(dt.rows[1][4], 'not on this machine: the generator is not configured');
  const cost = await plan.costTable();
  assert.equal(cost.rows[1][4], "the same run as 'A' above");
  assert.equal(cost.rows[2][4], 'the generator is not configured');
  const runs = await plan.run();
  assert.deepEqual(runs.map((r) => [r.row.row, r.run?.status ?? r.skipped]), [['A', 'trained'], ['A again', 'trained'], ['B', 'the generator is not configured'], ['C', 'needs RAN']]);
  // 'A again' is the same run as 'A' (trained once in this call).
  assert.equal(runs[1].run, runs[0].run);
  const id = runs[0].run!.run.record.runId;
  assert.deepEqual(plan.cellSources('T'), [
    { row: 'A', column: 'c1', runs: { runIds: [id] } },
    { row: 'A', column: 'c2', metric: 'best_dev_spearman', runs: { runIds: [id] } },
    { row: 'B', column: 'c1', reason: 'the generator is not configured' },
  ]);
  assert.deepEqual(plan.cellSources('U'), [{ row: 'C', column: 'c1', reason: 'needs RAN' }]);
  // The cost table after the run: the finished run costs nothing (issue 38: it was counted again).
  const after = await plan.costTable();
  assert.equal(after.rows[0][4], 'finished already: reused, costs nothing (FORCE = true retrains)');
  assert.match(String(after.caption), /about 0\.0 min in all for the runs not finished yet/);
  const second = await plan.run();
  assert.equal(second[0].run?.status, 'reused');
});

test('rows sharing a data set keep their own recipes (data is loaded once per data set, recipes are per row)', { skip: DATA_DIR ? false : 'no data folder' }, async () => {
  const rows = table3Rows(['stsb']);
  const plan = await Plan.create(rows, { experiment: 'x', model: 'm', seeds: [1], resultsDir: tmp, dataDir: DATA_DIR, download: false });
  assert.deepEqual(rows.map((r) => plan.recipeOf(r)?.name), ['simcse-stsb', 'sbert-stsb', undefined, 'angle-stsb']);
  assert.deepEqual(plan.dataTable().rows.map((r) => r[0]), ['STS-B']);
});

test('a plan over the task table: the smoke preset trains a stand-in where the data is missing, the paper preset refuses', { skip: GOLDEN_DIR && DATA_DIR ? false : 'no tiny BERT or data folder' }, async () => {
  // NLI is not on this project's machines: its stand-in is SICK's entailment judgements.
  const nli = { ...defaultRecipe('nli'), config: { ...defaultRecipe('nli').config, maxLength: 16, batchSize: 4, maxSteps: 1, evalEvery: 1 } };
  const rows: PlanRow[] = [{ row: 'NLI row', cells: [{ column: 'c' }], recipe: nli }];
  const base = { experiment: 'stand-in', model: join(GOLDEN_DIR!, 'model'), seeds: [1], resultsDir: tmp, dataDir: DATA_DIR, download: false };
  const paper = await Plan.create(rows, { ...base, standIns: false });
  assert.match(paper.blocked(rows[0])!, /^data not on this machine \(NLI \(SimCSE triplets\); see the data table\)$/);
  const smoke = await Plan.create(rows, { ...base, preset: 'smoke' });
  assert.equal(smoke.blocked(rows[0]), undefined);
  assert.match(smoke.standInOf(rows[0])!, /SICK train's entailment judgements as SimCSE triplets/);
  assert.match(String(smoke.dataTable().rows[0][4]), /^⚠ STAND-IN/);
  assert.match(String(smoke.recipeTable().notes?.[0]), /STAND-IN/);
  const runs = await smoke.run();
  assert.match(String(runs[0].run!.run.record.details!.standIn), /SICK/);
  assert.match(runs[0].run!.run.record.data.find((d) => d.split === 'train')!.id, /SICK/);
});

test("a cost estimate that fails for one row leaves the others estimated (issue 26 C2: notebook 01's cost cell aborted on the LLaMA row's load)", { skip: GOLDEN_DIR ? false : 'no tiny BERT (encoder golden set)' }, async () => {
  const pairs = smallPairs(16);
  const scored = pairs.items.slice(0, 8).map((p, i) => ({ a: p.a, b: p.b, score: p.label, source: { file: 'small', line: i + 1 } }));
  const data: Record<string, TaskData | string> = { small: { train: pairs, dev: stsEvaluator({ name: 'small dev', pairs: scored }), test: stsEvaluator({ name: 'small test', pairs: scored }) } };
  const recipe = { ...defaultRecipe('stsb'), config: { ...defaultRecipe('stsb').config, maxLength: 16, batchSize: 8, maxSteps: 1, warmupSteps: 0 } };
  const rows: PlanRow[] = [
    { row: 'unloadable', cells: [{ column: 'c' }], recipe, data: 'small', model: join(tmp, 'no-such-model') },
    { row: 'loadable', cells: [{ column: 'c' }], recipe: { ...recipe, config: { ...recipe.config, lr: 1e-5 } }, data: 'small' },
  ];
  const plan = await Plan.create(rows, { experiment: 'cost', model: join(GOLDEN_DIR!, 'model'), seeds: [1], resultsDir: tmp, data });
  const cost = await plan.costTable();
  assert.match(String(cost.rows[0][4]), /^no estimate: .*no-such-model/);
  assert.equal(typeof cost.rows[1][1], 'number');
  assert.match(String(cost.rows[1][4]), /^\d+ s for 1 seed\(s\)$/);
});

test("the paper preset refuses wiki1m's partial sample unless a notebook asks for it (issue 26: notebook 10 trained on the 11,914-line sample)", { skip: DATA_DIR ? false : 'no data folder' }, async () => {
  const rows = simaceTable1Rows();
  const base = { experiment: 'wiki', model: 'm', seeds: [1], resultsDir: tmp, dataDir: DATA_DIR, download: false };
  const paper = await Plan.create(rows, { ...base, standIns: false });
  const wikiRow = rows.find((r) => paper.recipeOf(r)?.task === 'wiki1m')!;
  assert.match(paper.blocked(wikiRow)!, /data not on this machine/);
  assert.match(String(paper.dataTable().rows.find((r) => String(r[0]).includes('Wiki1M'))?.[4]), /only a partial sample is available .* pass allowSample: true/);
  const asked = await Plan.create(rows, { ...base, standIns: false, taskOptions: { allowSample: true } });
  assert.equal(asked.blocked(wikiRow), undefined);
});
