/**
 * Deep overrides of recipes (lib/experiments/overrides.ts): what a notebook's parameter cell and
 * `npm run train`'s flags change is exactly the value they name, with its source recorded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyOverrides, COMMAND_LINE, PARAMETER_CELL, sourceOf } from '../lib/experiments/overrides.js';
import { angleBert, angleLlamaNli, angleNliLater, simcseBert } from '../lib/experiments/recipes/index.js';
import { InputError } from '../lib/util/errors.js';

test('a nested override changes that value and nothing else, and records its source', () => {
  const r = angleBert('stsb');
  const o = applyOverrides(r, { objective: { loss: { weights: { angle: 2 } } } });
  assert.deepEqual(o.config.objective, {
    name: 'angle',
    // The other weights, the taus, the graded labels' int cast and ISP detection are the recipe's:
    // restating a whole loss to change one weight used to reset them to the loss's defaults.
    loss: { preset: 'paper', weights: { cosine: 1, ibn: 1, angle: 2 }, taus: { cosine: 20, ibn: 20, angle: 1 }, ibnPositives: 'angle-int', duplicates: 'positive' },
  });
  assert.deepEqual({ ...o.config, objective: undefined }, { ...r.config, objective: undefined });
  assert.equal(o.sources['objective.loss.weights.angle'], PARAMETER_CELL);
  assert.equal(sourceOf(o.sources, 'objective.loss.weights.angle'), PARAMETER_CELL);
  // The unchanged weights keep the recipe's source.
  assert.equal(sourceOf(o.sources, 'objective.loss.weights.cosine'), r.sources['objective.loss.weights']);
  // The recipe itself is untouched.
  assert.equal(r.config.objective.name === 'angle' && r.config.objective.loss?.weights?.angle, 1);
});

test('pooling is one knob: training and the evaluation of the trained weights, unless the evaluation is named', () => {
  const r = angleNliLater();
  assert.equal(r.config.pooling, 'cls');
  assert.equal(r.evaluation!.pooling, 'cls_avg');
  const both = applyOverrides(r, { pooling: 'avg' });
  assert.equal(both.config.pooling, 'avg');
  assert.equal(both.evaluation!.pooling, 'avg');
  assert.equal(both.sources['evaluation.pooling'], PARAMETER_CELL);
  const apart = applyOverrides(r, { pooling: 'avg', evaluation: { pooling: 'max' } });
  assert.deepEqual([apart.config.pooling, apart.evaluation!.pooling], ['avg', 'max']);
  // A recipe without an evaluation after training: the training pooling only.
  assert.equal(applyOverrides(angleBert('mrpc'), { pooling: 'first_last_avg' }).config.pooling, 'first_last_avg');
});

test('another objective replaces the whole objective; LoRA merges; scalars and arrays replace', () => {
  const simcse = applyOverrides(angleBert('stsb'), { objective: { name: 'simcse', temperature: 0.1 } }, COMMAND_LINE);
  assert.deepEqual(simcse.config.objective, { name: 'simcse', temperature: 0.1 });
  assert.equal(simcse.sources.objective, COMMAND_LINE);
  const lora = applyOverrides(angleLlamaNli(), { lora: { r: 8 }, betas: [0.9, 0.98] });
  assert.deepEqual(lora.lora, { r: 8, alpha: 32, dropout: 0.1, targetModules: 'all-linear' });
  assert.deepEqual(lora.config.betas, [0.9, 0.98]);
  // No overrides: the recipe itself.
  const r = simcseBert('stsb');
  assert.equal(applyOverrides(r, {}), r);
  assert.equal(applyOverrides(r, undefined), r);
});

test('a key the recipe cannot have is an error listing the keys there are', () => {
  assert.throws(() => applyOverrides(angleBert('stsb'), { learningRate: 1e-3 } as never), (e: Error) => e instanceof InputError && /'learningRate' is not a setting of this recipe; the recipe has objective, pooling, maxLength, batchSize/.test(e.message));
  assert.throws(() => applyOverrides(angleBert('stsb'), { objective: { loss: { weight: { angle: 2 } } } } as never), /'objective.loss.weight' is not a setting.*weights, taus/);
  assert.throws(() => applyOverrides(angleBert('stsb'), { objective: { loss: { weights: { angel: 2 } } } } as never), /'objective.loss.weights.angel'.*cosine, ibn, angle, cln/);
  assert.throws(() => applyOverrides(angleBert('stsb'), { lora: { r: 8 } }), /'lora' applies to rows that train adapters/);
  assert.throws(() => applyOverrides(angleBert('stsb'), { objective: { name: 'nope' } } as never), /objective 'nope' is not one of angle, simcse/);
});
