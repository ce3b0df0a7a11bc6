/**
 * Running recipes as notebooks do (lib/experiments/run-recipe.ts): a finished run is reused (the
 * second call trains nothing and writes no new record), a run stopped mid-way resumes and ends with
 * exactly the final loss of an uninterrupted run, a corrupt checkpoint is named and its run restarts
 * from scratch, and the recipes' positives-only data (SimCSE on pairs) keeps only label-1 pairs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { defaultRecipe, scaleRecipe, simcseBert } from '../lib/experiments/recipes/index.js';
import { RunInterrupted, runRecipe, trainingData } from '../lib/experiments/run-recipe.js';
import type { TaskData } from '../lib/experiments/tasks.js';
import { latestCheckpoint } from '../lib/train/checkpoint.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs } from './helpers/train-fixtures.js';

const skip = GOLDEN_DIR ? false : 'no encoder golden set (its tiny model trains here)';
const MODEL = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : '';

let tmp: string;
before(async () => {
  await initBackend('cpu', { quiet: true });
  tmp = mkdtempSync(join(tmpdir(), 'angle-run-recipe-'));
});
after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Small data standing in for a task: 24 graded pairs, dev and test of 12. */
function data(): TaskData {
  const train = smallPairs(24);
  const scored = train.items.slice(0, 12).map((p, i) => ({ a: p.a, b: p.b, score: p.label, source: { file: 'small', line: i + 1 } }));
  return { train, dev: stsEvaluator({ name: 'small dev', pairs: scored }), test: stsEvaluator({ name: 'small test', pairs: scored }) };
}

/** The STS-B AnglE recipe at a tiny size: 8 steps of 4 pairs, dev every 4, a checkpoint every step. */
function tinyRecipe() {
  const r = scaleRecipe(defaultRecipe('stsb'), { maxSteps: 8, evalEvery: 4, maxBatchSize: 4 });
  return { ...r, config: { ...r.config, checkpointEvery: 1, lr: 1e-3, maxLength: 16, evalMaxLength: 16 } };
}

const records = (resultsDir: string, experiment: string) =>
  existsSync(join(resultsDir, experiment)) ? readdirSync(join(resultsDir, experiment)).filter((f) => /^\d{4}-.*\.json$/.test(f) && !f.includes('.predictions.')) : [];

describe('runRecipe', { skip }, () => {
  test('a finished run is reused: the second call trains nothing and writes no record', async () => {
    const resultsDir = join(tmp, 'reuse');
    const o = { recipe: tinyRecipe(), seed: 3, model: MODEL, data: data(), experiment: 'reuse', resultsDir };
    const first = await runRecipe(o);
    assert.equal(first.status, 'trained');
    assert.equal(records(resultsDir, 'reuse').length, 1);
    assert.ok(existsSync(join(resultsDir, 'reuse', `${first.run.record.runId}.md`)), 'a run card beside the record');
    const second = await runRecipe(o);
    assert.equal(second.status, 'reused');
    assert.equal(second.result, undefined);
    assert.equal(second.run.record.runId, first.run.record.runId);
    assert.equal(records(resultsDir, 'reuse').length, 1);
    // Another seed is another run; FORCE retrains the same one.
    assert.equal((await runRecipe({ ...o, seed: 4 })).status, 'trained');
    assert.equal((await runRecipe({ ...o, force: true })).status, 'trained');
    assert.equal(records(resultsDir, 'reuse').length, 3);
  });

  test('a run stopped mid-way resumes and ends with the final loss of an uninterrupted run', async () => {
    const whole = await runRecipe({ recipe: tinyRecipe(), seed: 5, model: MODEL, data: data(), experiment: 'whole', resultsDir: join(tmp, 'whole') });
    const resultsDir = join(tmp, 'stopped');
    const stop = new AbortController();
    const o = { recipe: tinyRecipe(), seed: 5, model: MODEL, data: data(), experiment: 'stopped', resultsDir };
    await assert.rejects(
      runRecipe({ ...o, signal: stop.signal, onStep: (s) => s.step === 4 && stop.abort() }),
      (e: Error) => e instanceof RunInterrupted && e.steps === 5 && /stopped at step 5 of 8; run it again to resume/.test(e.message),
    );
    assert.equal(records(resultsDir, 'stopped').length, 0);
    const resumed = await runRecipe(o);
    assert.equal(resumed.status, 'resumed');
    assert.equal(resumed.result!.log.length, 8);
    assert.equal(resumed.result!.log[7].loss, whole.result!.log[7].loss);
    assert.equal(resumed.run.record.metrics.final_loss, whole.run.record.metrics.final_loss);
    assert.equal(resumed.run.record.metrics.test_spearman, whole.run.record.metrics.test_spearman);
  });

  test('a corrupt checkpoint is named and its run restarts from scratch', async () => {
    const resultsDir = join(tmp, 'corrupt');
    const stop = new AbortController();
    const logs: string[] = [];
    const o = { recipe: tinyRecipe(), seed: 6, model: MODEL, data: data(), experiment: 'corrupt', resultsDir, log: (l: string) => logs.push(l) };
    await assert.rejects(runRecipe({ ...o, signal: stop.signal, onStep: (s) => s.step === 2 && stop.abort() }), /stopped at step 3/);
    const runs = join(resultsDir, 'corrupt', 'runs');
    const ckpt = latestCheckpoint(join(runs, readdirSync(runs)[0]))!;
    writeFileSync(join(ckpt, 'model.safetensors'), 'not a safetensors file');
    const r = await runRecipe(o);
    assert.equal(r.status, 'trained');
    assert.equal(r.result!.resumedFrom, undefined);
    assert.ok(logs.some((l) => l.includes(join(ckpt, 'model.safetensors')) && /unusable.*restarting this run from scratch/.test(l)), logs.join('\n'));
  });
});

test("SimCSE's recipe trains on the positive pairs only", () => {
  const d = data();
  const simcse = simcseBert('stsb');
  const t = trainingData(simcse, d, undefined);
  assert.ok(t.kind === 'pairs');
  const want = (d.train.items as unknown as Array<{ label: number }>).filter((p) => p.label >= 4).length;
  assert.equal(t.items.length, want);
  assert.ok(t.items.every((p) => (p as { label: number }).label === 1));
  assert.match(t.name, /positives \(label >= 4\)/);
});
