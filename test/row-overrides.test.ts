/**
 * Issue 38: the parameter cell's overrides over a table of different recipes
 * (lib/experiments/row-overrides.ts, lib/experiments/plan.ts). The documented example
 * `{ objective: { loss: { weights: { angle: 2 } } } }` used to stop notebook 02 at the SimCSE row
 * ("'objective.loss' is not a setting of this recipe"); now it changes the AnglE rows and the
 * other rows' recipe tables say it did not apply to them and why. A row's label scopes an override.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PARAMETER_CELL } from '../lib/experiments/overrides.js';
import { Plan, type PlanRow } from '../lib/experiments/plan.js';
import { applyTableOverrides, rowScopedSource } from '../lib/experiments/row-overrides.js';
import { angleBert, sbertBert, simcseBert } from '../lib/experiments/recipes/index.js';
import { table3Rows } from '../lib/experiments/tables/angle.js';
import { InputError } from '../lib/util/errors.js';

const rows = () => [
  { label: 'SimCSE-BERT', recipe: simcseBert('stsb') },
  { label: 'SBERT', recipe: sbertBert('stsb') },
  { label: 'AnglE-BERT', recipe: angleBert('stsb') },
];
const angleWeight = (r: { config: { objective: unknown } }) => (r.config.objective as { loss?: { weights?: { angle?: number } } }).loss?.weights?.angle;

test("the documented override applies to the rows whose recipes have the key and says why not to the others", () => {
  const [simcse, sbert, angle] = applyTableOverrides(rows(), { lr: 3e-5, objective: { loss: { weights: { angle: 2 } } } });
  assert.equal(angleWeight(angle!.recipe), 2);
  assert.equal(angle!.recipe.sources['objective.loss.weights.angle'], PARAMETER_CELL);
  assert.deepEqual(angle!.notApplied, []);
  // lr is a setting of every recipe: applied everywhere.
  for (const r of [simcse, sbert, angle]) assert.equal(r!.recipe.config.lr, 3e-5);
  assert.deepEqual(simcse!.recipe.config.objective, simcseBert('stsb').config.objective);
  assert.equal(simcse!.notApplied.length, 1);
  assert.equal(simcse!.notApplied[0]!.key, 'objective.loss.weights.angle');
  assert.match(simcse!.notApplied[0]!.why, /'objective\.loss' is not a setting of this recipe; objective has name, temperature/);
  assert.equal(sbert!.notApplied[0]!.key, 'objective.loss.weights.angle');
});

test('a row label scopes an override to that row, after the values for every row', () => {
  const [simcse, , angle] = applyTableOverrides(rows(), { lr: 3e-5, 'AnglE-BERT': { lr: 1e-5, objective: { loss: { weights: { angle: 0.5 } } } }, 'SimCSE-BERT': { objective: { temperature: 0.1 } } });
  assert.equal(angle!.recipe.config.lr, 1e-5);
  assert.equal(angleWeight(angle!.recipe), 0.5);
  assert.equal(angle!.recipe.sources.lr, rowScopedSource('AnglE-BERT'));
  assert.equal(rowScopedSource('AnglE-BERT'), 'override (parameter cell, "AnglE-BERT" only)');
  assert.equal(simcse!.recipe.config.lr, 3e-5);
  assert.deepEqual(simcse!.recipe.config.objective, { name: 'simcse', temperature: 0.1 });
});

test('a key no row has is an error naming the keys there are; a scoped key the row lacks too', () => {
  assert.throws(
    () => applyTableOverrides(rows(), { learningRate: 1e-3 } as never),
    (e: Error) => e instanceof InputError && /^OVERRIDES: 'learningRate' applies to no recipe of any row of this table: 'learningRate' is not a setting of this recipe; the recipe has objective, pooling.*; nor is 'learningRate' a row \(rows: SimCSE-BERT, SBERT, AnglE-BERT\)$/.test(e.message),
  );
  assert.throws(() => applyTableOverrides(rows(), { 'SimCSE-BERT': { objective: { loss: { weights: { angle: 2 } } } } }), /OVERRIDES\["SimCSE-BERT"\]: 'objective\.loss\.weights\.angle' applies to no recipe of row SimCSE-BERT: 'objective\.loss' is not a setting/);
  assert.throws(() => applyTableOverrides(rows(), { SBERT: 2 } as never), /OVERRIDES\["SBERT"\]: expected the settings of row SBERT/);
  // A LoRA override in a table without adapter rows applies nowhere: an error, not a silent no-op.
  assert.throws(() => applyTableOverrides(rows(), { lora: { r: 8 } }), /'lora\.r' applies to no recipe of any row of this table: 'lora' applies to rows that train adapters/);
});

test("notebook 02's plan takes the documented override: the AnglE rows train with it, the SimCSE and SBERT recipe tables say it did not apply", async () => {
  // Rows whose data is supplied under a key that is absent: the plan is built without loading any data set.
  const table: PlanRow[] = table3Rows(['stsb', 'mrpc']).map((r) => ({ ...r, data: 'not-loaded' }));
  const plan = await Plan.create(table, { experiment: 'x', model: 'm', seeds: [42], preset: 'smoke', overrides: { objective: { loss: { weights: { angle: 2 } } } }, download: false });
  const byRow = (label: string) => table.filter((r) => r.row === label);
  for (const r of byRow('AnglE-BERT')) {
    assert.equal(angleWeight(plan.recipeOf(r)!), 2);
    const t = plan.recipeTable(r);
    assert.ok(t.rows.some((x) => x[0] === 'objective.loss.weights.angle' && x[1] === '2' && x[2] === PARAMETER_CELL));
    assert.ok(!(t.notes ?? []).some((n) => /not applied/.test(n)));
  }
  for (const r of [...byRow('SimCSE-BERT'), ...byRow('SBERT')]) {
    assert.ok(plan.recipeOf(r));
    const notes = plan.recipeTable(r).notes ?? [];
    assert.ok(notes.some((n) => n.startsWith(`override objective.loss.weights.angle not applied to ${r.row}: 'objective.loss' is not a setting of this recipe`)), notes.join('\n'));
  }
  // A row-scoped override for a row of the table; a misspelt row is an error that lists the rows.
  const scoped = await Plan.create(table, { experiment: 'x', model: 'm', seeds: [42], overrides: { 'AnglE-BERT': { lr: 1e-5 } }, download: false });
  assert.deepEqual(table.filter((r) => r.recipe).map((r) => [r.row, scoped.recipeOf(r)!.config.lr === 1e-5]), [['SimCSE-BERT', false], ['SBERT', false], ['AnglE-BERT', true], ['SimCSE-BERT', false], ['SBERT', false], ['AnglE-BERT', true]]);
  await assert.rejects(Plan.create(table, { experiment: 'x', model: 'm', seeds: [42], overrides: { 'Angle-BERT': { lr: 1e-5 } }, download: false }), /'Angle-BERT' is not a setting of this recipe.*nor is 'Angle-BERT' a row \(rows: SimCSE-BERT, SBERT, AnglE-BERT\)/);
});

test("rows with the same label in one table are named by their columns too (the all-runs legend repeated 'SimCSE-BERT (seed 42)' for MRPC and STS-B)", async () => {
  const table: PlanRow[] = table3Rows(['mrpc', 'stsb']).map((r) => ({ ...r, data: 'not-loaded' }));
  const plan = await Plan.create(table, { experiment: 'x', model: 'm', seeds: [42], download: false });
  const names = table.filter((r) => r.recipe).map((r) => plan.rowName(r));
  assert.deepEqual(names, ['SimCSE-BERT · MRPC', 'SBERT · MRPC', 'AnglE-BERT · MRPC', 'SimCSE-BERT · STS-B', 'SBERT · STS-B', 'AnglE-BERT · STS-B']);
  assert.equal(new Set(names).size, names.length);
  const single = await Plan.create(table3Rows(['stsb']).map((r) => ({ ...r, data: 'not-loaded' })), { experiment: 'x', model: 'm', seeds: [42], download: false });
  assert.equal(single.rowName(single.rows[0]!), 'SimCSE-BERT');
});
