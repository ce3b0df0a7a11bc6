/**
 * Notebook 11's measurement (lib/experiments/espresso-grid.ts) and its rows:
 *
 * - the width sweep scores each leading width exactly as the STS evaluator scores an encoder
 *   truncated to that width (one embedding pass, prefixes of its vectors), with a bootstrap interval
 *   around each ρ;
 * - the grid's table and figures hold one cell per layer × width (a heat map panel per row, a curve
 *   per row and layer with its interval);
 * - the smoke preset's ESE row trains a k that fits the tiny 64-wide BERT (the example's 128 does
 *   not), with the reason in the recipe's sources; the plain-AnglE row is the same run without ESE;
 * - the rehearsal can take ESE's step: on the shape-only backend (no values) the PCA target is a
 *   constant of its shape instead of a decomposition of ones, which pca_compress refused as degenerate.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { withShapeOnlyBackend } from '../lib/backend/shape-only/index.js';
import { eseLoss, pcaTarget } from '../lib/losses/ese.js';
import { loadStsBenchmark } from '../lib/data/sts.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { gridWidths, layerWidthTable, widthSweepEvaluator, type LayerWidthCell } from '../lib/experiments/espresso-grid.js';
import { espressoRows } from '../lib/experiments/tables/espresso.js';
import { loadModel, type LoadedModel } from '../lib/models/auto.js';
import { layerWidthCurvesFigure, layerWidthHeatmapFigure } from '../lib/report/figures/layer-width.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

const MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
const missing = MODEL_DIR && existsSync(MODEL_DIR) && DATA_DIR ? false : 'needs the golden tiny BERT and the data folder';

let m: LoadedModel;
before(async () => {
  await initBackend('cpu', { quiet: true });
  if (!missing) m = await loadModel(MODEL_DIR!);
});
after(() => m?.model.dispose());

test('the width sweep scores each prefix as the STS evaluator scores an encoder truncated to it', { skip: missing }, async () => {
  const full = loadStsBenchmark('test', { dataDir: DATA_DIR });
  const set = { ...full, pairs: full.pairs.slice(0, 60) };
  const encoder = new PooledSentenceEncoder(m, { pooling: 'cls', engine: 'tfjs', truncate: { layer: 1 } });
  const sweep = await widthSweepEvaluator(set, [8, 16, 64]).evaluate(encoder);
  for (const dim of [8, 16, 64]) {
    const want = (await stsEvaluator(set).evaluate(new PooledSentenceEncoder(m, { pooling: 'cls', engine: 'tfjs', truncate: { layer: 1, dim } }))).metrics.spearman;
    const got = sweep.metrics[`spearman_d${dim}`]!;
    assert.ok(Math.abs(got - want) < 1e-9, `width ${dim}: ${got} vs ${want}`);
    const low = sweep.metrics[`spearman_d${dim}_low`]!;
    const high = sweep.metrics[`spearman_d${dim}_high`]!;
    assert.ok(low < got && got < high, `width ${dim}: ${low} < ${got} < ${high}`);
  }
  assert.equal(sweep.metrics.spearman, sweep.metrics.spearman_d64);
  await assert.rejects(widthSweepEvaluator(set, [128]).evaluate(encoder), /width 128 is not in 1\.\.64/);
});

test('grid widths, table and figures: one cell per layer and width, a heat map panel per row', () => {
  assert.deepEqual(gridWidths(64), [8, 16, 32, 64]);
  assert.deepEqual(gridWidths(768), [8, 16, 32, 64, 128, 256, 512, 768]);
  const cells: LayerWidthCell[] = [];
  for (const row of ['ESE', 'AnglE (no ESE)']) for (const layer of [0, 1, 2]) for (const dim of [8, 64]) cells.push({ row, layer, dim, spearman: 10 * layer + dim / 8 + (row === 'ESE' ? 1 : 0), low: 0, high: 99, pairs: 5 });
  const table = layerWidthTable(cells, 'grid');
  assert.deepEqual(table.columns, ['row', 'layer', 'width 8', 'width 64']);
  assert.equal(table.rows.length, 6);
  assert.deepEqual(table.rows[5], ['AnglE (no ESE)', '2', '21.00 [0.00, 99.00]', '28.00 [0.00, 99.00]']);
  const heat = layerWidthHeatmapFigure(cells, { title: 'h' });
  assert.equal(heat.data.length, 2);
  const z = (heat.data[1] as unknown as { z: number[][] }).z;
  assert.deepEqual(z, [[1, 8], [11, 18], [21, 28]]);
  const curves = layerWidthCurvesFigure(cells, { title: 'c' });
  assert.equal(curves.data.length, 6);
  assert.deepEqual(curves.data[0]!.y, [2, 9]);
  assert.deepEqual(curves.data[0]!.error_y!.arrayminus, [2, 9]);
});

test("smoke rows: the ESE row's k fits the 64-wide tiny BERT, with its reason; the other row is the same run without ESE", () => {
  const [ese, plain] = espressoRows('smoke');
  const objective = ese!.recipe!.config.objective as { name: string; compressionSize: number };
  assert.equal(objective.name, 'ese');
  assert.ok(objective.compressionSize <= 64, String(objective.compressionSize));
  assert.match(ese!.recipe!.sources.objective!, /smoke preset: the tiny golden BERT is 64 wide/);
  assert.equal(plain!.recipe!.config.objective.name, 'angle');
  assert.equal(plain!.recipe!.config.batchSize, ese!.recipe!.config.batchSize);
  const paper = espressoRows('paper')[0]!.recipe!;
  assert.equal((paper.config.objective as { compressionSize: number }).compressionSize, 128);
  assert.equal(paper.config.batchSize, 128);
  const { objective: _e, ...eseRest } = ese!.recipe!.config;
  const { objective: _p, ...plainRest } = plain!.recipe!.config;
  assert.deepEqual(plainRest, eseRest, 'the same settings apart from the objective');
});

test('on the shape-only backend ESE takes a step: the PCA target is a constant of its shape', async () => {
  const shape = await withShapeOnlyBackend(() => {
    const target = pcaTarget(1)(0, tf.ones([6, 32]) as tf.Tensor2D, 8);
    const layers = [0, 1, 2, 3].map(() => tf.ones([6, 32]) as tf.Tensor2D);
    const value = eseLoss(layers, (x) => tf.sum(x) as tf.Scalar, { compressionSize: 8 });
    return { target: target.shape, total: value.total.shape, terms: Object.keys(value.terms).sort() };
  });
  assert.deepEqual(shape, { target: [6, 8], total: [], terms: ['compression', 'last', 'lastHead', 'students'] });
  // On a backend with values, the same degenerate batch is refused by name (the rehearsal's old failure).
  assert.throws(() => pcaTarget(1)(0, tf.ones([6, 32]) as tf.Tensor2D, 8), /pca_compress: the randomised basis lost rank/);
});
