/**
 * The loss registry (lib/losses/registry.ts): the trainer and the overrides find an objective by
 * its entry alone. A toy loss (test/helpers/toy-loss.ts) registered with one line is bindable,
 * overridable by exactly the keys of its schema, and trainable; the built-in schemas give the
 * override keys (SimACE's clipEps, which the hand-kept list lacked, included).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { applyOverrides } from '../lib/experiments/overrides.js';
import { angleBert } from '../lib/experiments/recipes/index.js';
import type { Recipe } from '../lib/experiments/recipes/recipe.js';
import { BUILTIN_LOSSES, OBJECTIVE_NAMES } from '../lib/losses/objectives.js';
import { bindLoss, lossOptionKeys, registeredLossNames, registerLoss } from '../lib/losses/registry.js';
import { loadModel } from '../lib/models/auto.js';
import { bindObjective } from '../lib/train/objective.js';
import { Trainer } from '../lib/train/trainer.js';
import { InputError } from '../lib/util/errors.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { layerCounts, TOY_LAYERWISE_LOSS, TOY_LOSS } from './helpers/toy-loss.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

const MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
const noModel = MODEL_DIR && existsSync(MODEL_DIR) ? false : 'no encoder golden set with model/ (ANGLE_GOLDEN_DIR)';

before(async () => {
  await initBackend('cpu', { quiet: true });
  // The registration line of the toy losses.
  registerLoss(TOY_LOSS);
  registerLoss(TOY_LAYERWISE_LOSS);
});
after(() => undefined);

test('the built-in objectives are registered in their list order, then the registered toy', () => {
  assert.deepEqual(OBJECTIVE_NAMES, ['angle', 'simcse', 'simace', 'arccon', 'sbert-cosine', 'sbert-softmax', 'ese']);
  assert.deepEqual(registeredLossNames(), [...BUILTIN_LOSSES.map((d) => d.name), 'toy-squared-norm', 'toy-layerwise']);
  assert.throws(() => registerLoss({ ...TOY_LOSS }), /registered twice/);
});

test('a registered toy loss binds, refuses other data kinds, and computes its formula', () => {
  const bound = bindLoss({ name: 'toy-squared-norm', scale: 2, nested: { offset: 0.5 } } as never, 'pairs');
  const emb = tf.tensor2d([1, 2, 3, 4], [2, 2]);
  const v = bound.loss(emb, { labels: [1], keys: ['a', 'b'] }).total.dataSync()[0];
  // 2 · mean(1+4, 9+16) + 0.5 = 2 · 15 + 0.5
  assert.ok(Math.abs(v - 30.5) < 1e-5, String(v));
  assert.deepEqual(bound.inputs, []);
  assert.throws(() => bindObjective({ name: 'toy-squared-norm' } as never, 'triplets'), (e: Error) => e instanceof InputError && /cannot train on triplets data \(it takes pairs\)/.test(e.message));
  emb.dispose();
});

test('override keys derive from the schema: the toy’s keys pass, others are refused with the list', () => {
  const base = angleBert('stsb');
  const toy: Recipe = applyOverrides(base, { objective: { name: 'toy-squared-norm', scale: 3 } } as never);
  assert.equal((toy.config.objective as unknown as { scale: number }).scale, 3);
  const nested = applyOverrides(toy, { objective: { nested: { offset: 1 } } } as never);
  assert.deepEqual((nested.config.objective as unknown as { nested: unknown }).nested, { offset: 1 });
  assert.throws(() => applyOverrides(toy, { objective: { scal: 1 } } as never), /'objective.scal' is not a setting of this recipe; objective has name, scale, nested/);
  assert.throws(() => applyOverrides(toy, { objective: { nested: { offst: 1 } } } as never), /objective.nested has offset/);
  assert.deepEqual(lossOptionKeys('toy-squared-norm', ''), ['name', 'scale', 'nested']);
});

test('built-in schemas: SimACE/ArcCon clipEps, ESE compressionSize and its angle loss keys are overridable', () => {
  assert.deepEqual(lossOptionKeys('simace', 'options'), ['temperature', 'margin', 'marginUnit', 'clipEps']);
  assert.deepEqual(lossOptionKeys('angle', 'loss.weights'), ['cosine', 'ibn', 'angle', 'cln']);
  const simace = applyOverrides(angleBert('stsb'), { objective: { name: 'simace', options: { temperature: 0.05 } } } as never);
  const clipped = applyOverrides(simace, { objective: { options: { clipEps: 1e-5 } } } as never);
  assert.equal((clipped.config.objective as unknown as { options: { clipEps: number } }).options.clipEps, 1e-5);
  const ese = applyOverrides(angleBert('stsb'), { objective: { name: 'ese', compressionSize: 32 } } as never);
  const ese2 = applyOverrides(ese, { objective: { klTemperature: 2, loss: { taus: { angle: 20 } } } } as never);
  assert.deepEqual(ese2.config.objective, { name: 'ese', compressionSize: 32, klTemperature: 2, loss: { taus: { angle: 20 } } });
  assert.throws(() => applyOverrides(ese, { objective: { compression: 8 } } as never), /objective has name, loss, compressionSize, klTemperature, pca, seed/);
});

test('the trainer trains a registered toy loss, and feeds a layer-wise one every hidden state pooled', { skip: noModel }, async () => {
  for (const name of ['toy-squared-norm', 'toy-layerwise']) {
    const m = await loadModel(MODEL_DIR!);
    try {
      const trainer = new Trainer({ model: m, train: smallPairs(), progress: false, config: { ...SMALL_TRAIN_CONFIG, objective: { name } as never, epochs: undefined, maxSteps: 3 } });
      const r = await trainer.run();
      assert.equal(r.steps, 3);
    } finally {
      m.model.dispose();
    }
  }
  // bert-tiny: the embedding output and 2 layers.
  assert.ok(layerCounts.length >= 3);
  assert.ok(layerCounts.every((n) => n === 3), JSON.stringify(layerCounts));
});
