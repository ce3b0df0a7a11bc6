/**
 * A run's best/ checkpoint carries the pooling it was trained with, as sentence-transformers
 * modules (modules.json + 1_Pooling/config.json, ...; lib/train/best-model.ts): loaded back, the
 * model's pooling module (lib/embed/pooling-module.ts) is the trained pooling, not its
 * architecture's default, and an encoder given no pooling embeds with it. A pooling no module
 * computes (cls_pooler) and a checkpoint of part of the model (LoRA) get no modules. The golden
 * tiny BERT, one training step on a handful of pairs (seconds).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { poolingModuleOf } from '../lib/embed/pooling-module.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { loadModel } from '../lib/models/auto.js';
import { bestModelDir, saveBestModel } from '../lib/train/best-model.js';
import { pairExamples } from '../lib/train/examples.js';
import { Trainer } from '../lib/train/trainer.js';
import { goldenOrSkip } from './helpers/env.js';

const SOURCE = { file: 'inline', line: 1 };
const PAIRS = [
  ['A man is playing a guitar.', 'A man plays the guitar.', 5],
  ['A dog runs in the park.', 'The cat sleeps on the sofa.', 0.5],
  ['Two children are swimming.', 'Kids swim in a pool.', 4],
  ['The stock market fell today.', 'A woman is cutting onions.', 0],
  ['Someone is cooking dinner.', 'A person prepares a meal.', 4.5],
  ['The train is late.', 'It is raining in the city.', 1],
].map(([a, b, score]) => ({ a: a as string, b: b as string, score: score as number, source: SOURCE }));

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

test("a trained run's best/ loads back with the run's pooling as its module (first_last_avg, not BERT's cls)", async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  await initBackend('cpu', { quiet: true });
  const work = mkdtempSync(join(tmpdir(), 'best-model-pooling-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const golden = await loadModel(join(g, 'model'));
  const runDir = join(work, 'run');
  try {
    await new Trainer({
      model: golden,
      train: pairExamples('inline pairs', PAIRS),
      dev: stsEvaluator({ name: 'inline dev', pairs: PAIRS }),
      runDir,
      config: { objective: { name: 'angle', loss: { ibnPositives: { threshold: 4 } } }, pooling: 'first_last_avg', maxLength: 16, batchSize: 6, maxSteps: 1, lr: 1e-3, evalEvery: 1, shuffle: false },
      progress: false,
    }).run();
  } finally {
    golden.model.dispose();
  }
  const best = bestModelDir(runDir);
  const modules = JSON.parse(readFileSync(join(best, 'modules.json'), 'utf8')) as Array<{ path: string; type: string }>;
  assert.deepEqual(
    modules.map((m) => m.path),
    ['', '1_WeightedLayerPooling', '2_Pooling'],
  );
  assert.equal(JSON.parse(readFileSync(join(best, 'config.json'), 'utf8')).output_hidden_states, true, 'WeightedLayerPooling needs every layer');
  assert.equal(JSON.parse(readFileSync(join(best, '2_Pooling', 'config.json'), 'utf8')).pooling_mode_mean_tokens, true);
  const back = await loadModel(best);
  try {
    assert.deepEqual(poolingModuleOf(back), { pooling: 'first_last_avg', applies: 'sentence-transformers', from: 'sentence-transformers folder' });
    const texts = PAIRS.map((p) => p.a);
    const unasked = await new PooledSentenceEncoder(back, { engine: 'tfjs' }).encode(texts);
    const named = await new PooledSentenceEncoder(back, { pooling: 'first_last_avg', engine: 'tfjs' }).encode(texts);
    const cls = await new PooledSentenceEncoder(back, { pooling: 'cls', engine: 'tfjs' }).encode(texts);
    assert.ok(maxAbs(unasked.data, named.data) < 1e-5, `the folder's module embeds as first_last_avg (max difference ${maxAbs(unasked.data, named.data)})`);
    assert.ok(maxAbs(unasked.data, cls.data) > 1e-3, 'and not as cls');
  } finally {
    back.model.dispose();
  }
});

test('best/ gets no modules for a pooling no module computes (cls_pooler) nor for part of a model', async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  await initBackend('cpu', { quiet: true });
  const work = mkdtempSync(join(tmpdir(), 'best-model-pooling-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const golden = await loadModel(join(g, 'model'));
  try {
    const info = { step: 1, metric: 'spearman', value: 0.5, dev: 'inline dev' };
    const pooler = await saveBestModel(join(work, 'pooler'), golden.model.params, { ...info, trainable: 'all' }, golden.dir, { pooling: 'cls_pooler', model: golden.model });
    assert.ok(existsSync(join(pooler, 'config.json')) && !existsSync(join(pooler, 'modules.json')));
    const one = new Map([...golden.model.params].slice(0, 1));
    const subset = await saveBestModel(join(work, 'subset'), one, { ...info, trainable: 'subset' }, golden.dir, { pooling: 'avg', model: golden.model });
    assert.ok(!existsSync(join(subset, 'config.json')) && !existsSync(join(subset, 'modules.json')));
    const avg = await saveBestModel(join(work, 'avg'), golden.model.params, { ...info, trainable: 'all' }, golden.dir, { pooling: 'avg', model: golden.model });
    const back = await loadModel(avg);
    try {
      assert.equal(poolingModuleOf(back).pooling, 'avg');
    } finally {
      back.model.dispose();
    }
  } finally {
    golden.model.dispose();
  }
});
