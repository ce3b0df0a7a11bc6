/**
 * The library parts of the geometry notebook (06): the cosine spread per gold bucket
 * (lib/eval/cosine-spread.ts) against numpy; runRecipe with probes (lib/experiments/run-recipe.ts)
 * keeps alignment/uniformity in the record, reuses the run, and keys it apart from the same recipe
 * without probes; the path read back from the record (lib/report/align-uniform-path.ts) equals the
 * geometry of the best checkpoint recomputed from its folder at the best step.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { alignUniformEvaluator } from '../lib/eval/align-uniform-evaluator.js';
import { cosineSpreadByGold, quantileType7 } from '../lib/eval/cosine-spread.js';
import { alignUniformOnSet } from '../lib/eval/geometry.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { angleStsbWithWeights, scaleRecipe } from '../lib/experiments/recipes/index.js';
import { runRecipe } from '../lib/experiments/run-recipe.js';
import type { TaskData } from '../lib/experiments/tasks.js';
import { loadModel } from '../lib/models/auto.js';
import { alignUniformPathFromRecord } from '../lib/report/align-uniform-path.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs } from './helpers/train-fixtures.js';

describe('cosineSpreadByGold', () => {
  test('per-bucket statistics and separation equal numpy (np.quantile linear, std ddof 1)', () => {
    const n = 40;
    const gold = Array.from({ length: n }, (_, i) => Math.round(((i * 7) % 26) * 2) / 10);
    const cos = gold.map((g, i) => Math.sin(i) * 0.5 + g / 10);
    const s = cosineSpreadByGold(cos, gold);
    // numpy 2.4: per bucket n, mean, std(ddof=1), q25, median, q75 (the script is in this test's history: the data above)
    const want = [
      [8, 0.12352064460264298, 0.36454637113344296, -0.08460031191349103, 0.23973997394574406, 0.3541777463688692],
      [8, 0.0837848083184319, 0.36432978347249856, -0.18608037858305543, -0.002985240497032582, 0.34132209011700654],
      [8, 0.4047167714194305, 0.3445767909769625, 0.313066836928432, 0.4480713805170994, 0.6760166473760705],
      [7, 0.23136554394778613, 0.3523909651116344, -0.023949991083121402, 0.18029225090053708, 0.4547687327859794],
      [9, 0.43786805791100236, 0.37579473894528365, 0.08818305789351627, 0.47557434535479803, 0.7884932993593945],
    ];
    s.buckets.forEach((b, k) => {
      const got = [b.n, b.mean, b.std, b.q25, b.median, b.q75];
      got.forEach((v, j) => assert.ok(Math.abs(v - want[k]![j]!) < 1e-12, `bucket ${b.label} field ${j}: ${v} vs ${want[k]![j]}`));
      assert.ok(Math.abs(b.iqr - (want[k]![5]! - want[k]![3]!)) < 1e-12);
    });
    assert.ok(Math.abs(s.gap - 0.31434741330835936) < 1e-12);
    assert.ok(Math.abs(s.pooledStd - 0.3611645343008843) < 1e-12);
    assert.ok(Math.abs(s.separation - 0.8703717653696256) < 1e-12);
    assert.equal(s.buckets[4]!.label, '4-5');
  });
  test('quantiles at the ends and of one value; bad input named', () => {
    assert.equal(quantileType7([1, 2, 3, 4], 0), 1);
    assert.equal(quantileType7([1, 2, 3, 4], 1), 4);
    assert.equal(quantileType7([1, 2, 3, 4], 0.5), 2.5);
    assert.equal(quantileType7([7], 0.25), 7);
    assert.throws(() => cosineSpreadByGold([0.1, Number.NaN], [1, 2]), /pair 1 has cosine NaN/);
    assert.throws(() => cosineSpreadByGold([0.1], [1, 2]), /1 cosines for 2 gold scores/);
  });
});

describe('runRecipe with probes', { skip: GOLDEN_DIR ? false : 'no encoder golden set (its tiny model trains here)' }, () => {
  let tmp: string;
  before(async () => {
    await initBackend('cpu', { quiet: true });
    tmp = mkdtempSync(join(tmpdir(), 'angle-probes-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  test('the record keeps the path; reused with probes, trained apart without; the path matches the best checkpoint', async () => {
    const train = smallPairs(24);
    const scored = train.items.slice(0, 12).map((p, i) => ({ a: p.a, b: p.b, score: p.label, source: { file: 'small', line: i + 1 } }));
    const set = { task: 'STSBenchmark' as const, name: 'small dev', files: ['small'], pairs: scored };
    const data: TaskData = { train, dev: stsEvaluator(set), test: stsEvaluator({ name: 'small test', pairs: scored }) };
    const r0 = scaleRecipe(angleStsbWithWeights('only cosine', { cosine: 1, ibn: 0, angle: 0 }), { maxSteps: 6, evalEvery: 2, maxBatchSize: 4 });
    const recipe = { ...r0, config: { ...r0.config, lr: 1e-3, maxLength: 16, evalMaxLength: 16 } };
    const probes = { geometry: alignUniformEvaluator(set, { sample: 10 }) };
    const base = { recipe, seed: 42, model: join(GOLDEN_DIR!, 'model'), data, experiment: 'probes', resultsDir: tmp };
    const first = await runRecipe({ ...base, probes });
    assert.equal(first.status, 'trained');
    const path = alignUniformPathFromRecord(first.run.record, { name: 'cosine', start: { alignment: 9, uniformity: -9 } });
    assert.deepEqual(path.points.map((p) => p.step), [0, 2, 4, 6]);
    assert.deepEqual(path.points[0], { step: 0, alignment: 9, uniformity: -9 });

    // The logged geometry at the best step is the best checkpoint's, recomputed from its folder.
    const best = (first.run.record.details as { best: { step: number } }).best;
    const at = path.points.find((p) => p.step === best.step)!;
    const m = await loadModel(join(tmp, 'probes', 'runs', first.key, 'best'));
    const direct = await alignUniformOnSet(new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: 16, engine: 'tfjs' }), { ...set, pairs: scored.slice(0, 10) });
    m.model.dispose();
    assert.ok(Math.abs(at.alignment - direct.alignment) < 1e-5 * Math.max(1, Math.abs(direct.alignment)), `${at.alignment} vs ${direct.alignment}`);
    assert.ok(Math.abs(at.uniformity - direct.uniformity) < 1e-5 * Math.max(1, Math.abs(direct.uniformity)), `${at.uniformity} vs ${direct.uniformity}`);

    const again = await runRecipe({ ...base, probes });
    assert.equal(again.status, 'reused');
    assert.equal(again.key, first.key);
    const plain = await runRecipe(base);
    assert.equal(plain.status, 'trained', 'a run without probes has another key');
    assert.notEqual(plain.key, first.key);
    assert.throws(() => alignUniformPathFromRecord(plain.run.record), /logged no 'geometry.alignment'.*train it with probes/);
  });
});
