/**
 * The MTEB protocol (lib/eval/mteb-sts.ts) and MTEB-format result files (lib/report/mteb-results.ts):
 *
 * - scores of a hand-made set equal scipy's (pearsonr / spearmanr of the gold scaled to [0, 1], as
 *   mteb/abstasks/sts.py computes them, against cosine, −Manhattan and −Euclidean; values computed
 *   with scipy 1.17.1 and written below);
 * - the local pair sets have MTEB's test sizes (its descriptive statistics: STS12 3108, STS13 1500,
 *   STS14 3750, STS15 3000, STS16 1186, STSBenchmark 1379, SICK-R 9927 — SentEval's SICK-R test is 4927);
 * - the files follow MTEB's TaskResult / ModelMeta schema as written out literally below (from
 *   mteb/results/task_result.py and its test cache results/<model>/<revision>/STS12.json,
 *   model_meta.json): the folder layout, the exact keys, scores rounded to 6 decimals, main_score =
 *   cosine_spearman, hf_subset "default", languages ["eng-Latn"]; bad input refused.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tableEncoder } from '../lib/eval/baselines.js';
import { MTEB_STS_TASKS, mtebStsPairs, mtebStsTask, scoreMtebStsPairs, type MtebStsTaskResult } from '../lib/eval/mteb-sts.js';
import { loadSickRelatedness } from '../lib/data/sts.js';
import { mtebModelPath, writeMtebResults } from '../lib/report/mteb-results.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';
import { DATA_DIR } from './helpers/env.js';

const EMB: Record<string, number[]> = {
  a: [1.0, 0.0, 2.0],
  b: [0.5, 1.0, 2.0],
  c: [-1.0, 0.3, 0.0],
  d: [0.0, 2.0, -1.0],
  e: [3.0, 1.0, 1.0],
  f: [1.0, 1.0, 1.0],
};
const PAIRS: Array<[string, string, number]> = [
  ['a', 'b', 4.0],
  ['c', 'd', 1.5],
  ['e', 'f', 3.0],
  ['a', 'c', 0.5],
  ['b', 'e', 3.0],
  ['d', 'f', 2.0],
  ['a', 'f', 4.5],
];
/** scipy 1.17.1: pearsonr / spearmanr(gold / 5, similarity). */
const SCIPY = {
  cosine_pearson: 0.9090176868771191,
  cosine_spearman: 0.8648999641877367,
  manhattan_pearson: 0.8697760727145044,
  manhattan_spearman: 0.8818181818181818,
  euclidean_pearson: 0.8065281377354253,
  euclidean_spearman: 0.7748062179181807,
};

test("MTEB STS scores equal scipy's on a hand-made set (cosine, Manhattan, Euclidean)", async () => {
  const s = await scoreMtebStsPairs(tableEncoder(EMB), PAIRS.map(([a, b, score], i) => ({ a, b, score, source: { file: 'hand-made', line: i + 1 } })));
  // The embeddings are float32 (0.3 is not exact there): agreement to 1e-7, not to float64 rounding.
  for (const [k, v] of Object.entries(SCIPY)) assert.ok(Math.abs(s[k as keyof typeof SCIPY] - v) < 1e-7, `${k}: ${s[k as keyof typeof SCIPY]} vs scipy ${v}`);
  assert.equal(s.main_score, s.cosine_spearman);
  assert.equal(s.spearman, s.cosine_spearman, "no similarity function of the model's own: cosine");
  assert.equal(s.pearson, s.cosine_pearson);
});

test("the local pair sets have MTEB's test sizes; SICK-R is all of SICK", (t) => {
  if (!DATA_DIR) return t.skip('no data folder: set ANGLE_DATA_DIR or keep ../shared beside the repository');
  const sizes = Object.fromEntries(MTEB_STS_TASKS.map((task) => [task.name, mtebStsPairs(task.name, { dataDir: DATA_DIR }).pairs.length]));
  assert.deepEqual(sizes, { STS12: 3108, STS13: 1500, STS14: 3750, STS15: 3000, STS16: 1186, STSBenchmark: 1379, 'SICK-R': 9927 });
  for (const task of MTEB_STS_TASKS) assert.equal(sizes[task.name], task.testPairs, task.name);
  assert.equal(loadSickRelatedness('test', { dataDir: DATA_DIR }).pairs.length, 4927, "SentEval's SICK-R test");
  assert.throws(() => mtebStsTask('SICKRelatedness'), UnknownNameError);
});

/** MTEB's TaskResult keys (mteb/results/task_result.py, TaskResult.to_disk) and an STS task's score keys. */
const TASK_RESULT_KEYS = ['dataset_revision', 'date', 'evaluation_phases', 'evaluation_time', 'kg_co2_emissions', 'mteb_version', 'scores', 'task_name'];
const STS_SCORE_KEYS = [
  'cosine_pearson',
  'cosine_spearman',
  'euclidean_pearson',
  'euclidean_spearman',
  'hf_subset',
  'languages',
  'main_score',
  'manhattan_pearson',
  'manhattan_spearman',
  'pearson',
  'spearman',
];
/** The keys of model_meta.json in MTEB's results cache (tests/mock_mteb_cache/.../model_meta.json). */
const MODEL_META_KEYS = ['embed_dim', 'framework', 'languages', 'license', 'loader', 'max_tokens', 'memory_usage', 'n_parameters', 'name', 'open_source', 'release_date', 'revision', 'similarity_fn_name'];

function result(name: 'STS12' | 'SICK-R', v: number): MtebStsTaskResult {
  const scores = { pearson: v + 0.01, spearman: v, cosine_pearson: v + 0.01, cosine_spearman: v, manhattan_pearson: v - 0.1, manhattan_spearman: v - 0.11, euclidean_pearson: v - 0.2, euclidean_spearman: v - 0.21, main_score: v };
  return { task: mtebStsTask(name), scores, pairs: mtebStsTask(name).testPairs, textSource: 'test', seconds: 1.25 };
}

test("result files follow MTEB's layout and TaskResult schema", (t) => {
  const root = mkdtempSync(join(tmpdir(), 'mteb-results-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const date = new Date('2026-01-02T03:04:05Z');
  const dir = writeMtebResults(root, { name: 'SeanLee97/angle-bert-base-uncased-nli-en-v1', revision: '93b5216abc', embedDim: 768, maxTokens: 512 }, [result('STS12', 0.7509123456789), result('SICK-R', 0.8123)], date);
  assert.equal(dir, join(root, 'SeanLee97__angle-bert-base-uncased-nli-en-v1', '93b5216abc'));
  assert.deepEqual(readdirSync(dir).sort(), ['SICK-R.json', 'STS12.json', 'model_meta.json']);
  const r = JSON.parse(readFileSync(join(dir, 'STS12.json'), 'utf8'));
  assert.deepEqual(Object.keys(r).sort(), TASK_RESULT_KEYS);
  assert.equal(r.task_name, 'STS12');
  assert.equal(r.dataset_revision, 'a0d554a64d88156834ff5ae9920b964011b16384', "the revision MTEB's STS12 task pins");
  assert.equal(r.mteb_version, null);
  assert.equal(r.evaluation_time, 1.25);
  assert.equal(r.date, date.getTime() / 1000);
  assert.deepEqual(Object.keys(r.scores), ['test']);
  assert.equal(r.scores.test.length, 1);
  const s = r.scores.test[0];
  assert.deepEqual(Object.keys(s).sort(), STS_SCORE_KEYS);
  assert.equal(s.cosine_spearman, 0.750912, 'rounded to 6 decimals');
  assert.equal(s.main_score, s.cosine_spearman);
  assert.equal(s.hf_subset, 'default');
  assert.deepEqual(s.languages, ['eng-Latn']);
  for (const k of STS_SCORE_KEYS.filter((x) => x !== 'hf_subset' && x !== 'languages')) assert.equal(typeof s[k], 'number', k);
  const meta = JSON.parse(readFileSync(join(dir, 'model_meta.json'), 'utf8'));
  assert.deepEqual(Object.keys(meta).sort(), MODEL_META_KEYS);
  assert.deepEqual([meta.name, meta.revision, meta.embed_dim, meta.max_tokens], ['SeanLee97/angle-bert-base-uncased-nli-en-v1', '93b5216abc', 768, 512]);
  // No revision: MTEB's placeholder folder.
  const local = writeMtebResults(root, { name: 'AnglE-BERT trained here' }, [result('STS12', 0.5)]);
  assert.equal(local, join(root, 'AnglE-BERT_trained_here', 'no_revision_available'));
  assert.equal(mtebModelPath('a/b c'), 'a__b_c');
});

test('bad input to the MTEB writer is refused', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'mteb-results-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.throws(() => writeMtebResults(root, { name: 'x', revision: '../up' }, [result('STS12', 0.5)]), (e: Error) => e instanceof InputError && /one path segment/.test(e.message));
  assert.throws(() => writeMtebResults(root, { name: 'x' }, [result('STS12', 0.5), result('STS12', 0.6)]), /given twice/);
  const nan = result('STS12', 0.5);
  nan.scores.manhattan_spearman = Number.NaN;
  assert.throws(() => writeMtebResults(root, { name: 'y' }, [nan]), /manhattan_spearman is NaN/);
  assert.ok(!existsSync(join(root, 'y', 'no_revision_available', 'STS12.json')));
});
