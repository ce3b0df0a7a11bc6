/**
 * Trainer probes: an alignment/uniformity evaluator run at every dev evaluation on the same weights
 * lands in the evaluation log under its key, equal to evaluating the model directly at the end.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { alignUniformEvaluator } from '../lib/eval/align-uniform-evaluator.js';
import { alignUniformOnSet } from '../lib/eval/geometry.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { loadModel } from '../lib/models/auto.js';
import { Trainer } from '../lib/train/trainer.js';
import { InputError } from '../lib/util/errors.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

test('alignment and uniformity tracked at every dev evaluation', { skip: GOLDEN_DIR ? false : 'no encoder golden set' }, async () => {
  const m = await loadModel(join(GOLDEN_DIR!, 'model'));
  const pairs = smallPairs(16).items.map((p, i) => ({ a: p.a, b: p.b, score: p.label, source: { file: 'small', line: i + 1 } }));
  const set = { task: 'STSBenchmark' as const, name: 'small', files: ['small'], pairs };
  const config = { ...SMALL_TRAIN_CONFIG, maxSteps: 4, epochs: undefined, warmupSteps: 0, evalEvery: 2, evalMaxLength: 16 };
  const r = await new Trainer({ model: m, train: smallPairs(), dev: stsEvaluator(set), probes: { geometry: alignUniformEvaluator(set, { sample: 12 }) }, progress: false, config }).run();
  assert.deepEqual(r.evals.map((e) => e.step), [2, 4]);
  for (const e of r.evals) assert.ok(Number.isFinite(e.metrics['geometry.alignment']) && Number.isFinite(e.metrics['geometry.uniformity']), JSON.stringify(e.metrics));
  // The last evaluation is of the final weights: the same numbers computed directly.
  const direct = await alignUniformOnSet(new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: 16 }), { ...set, pairs: pairs.slice(0, 12) });
  assert.ok(Math.abs(r.evals[1].metrics['geometry.alignment'] - direct.alignment) < 1e-6);
  assert.ok(Math.abs(r.evals[1].metrics['geometry.uniformity'] - direct.uniformity) < 1e-6);
  assert.equal(r.best?.metric, 'spearman', 'probes never select checkpoints');
  assert.throws(() => new Trainer({ model: m, train: smallPairs(), probes: { g: alignUniformEvaluator(set) }, progress: false, config: SMALL_TRAIN_CONFIG }), (e: Error) => e instanceof InputError && /probes are evaluated with the dev set/.test(e.message));
  m.model.dispose();
});
