/**
 * The results reader (lib/report/results-reader.ts) and seed aggregation (seed-aggregate.ts):
 * a temp results folder written by writeTrainingRecord (test/helpers/report-fixtures.ts) reads
 * into one row per run with the configuration flattened and each metric a column; predictions
 * sidecars are attached to their records; the truncated record, the foreign JSON and the orphan
 * sidecar are named in `skipped` and the rest loads; mean/std/n per configuration equal a two-pass
 * computation done here from the JSON files themselves; the committed STS-B record reads as it is
 * written.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { aggregateSeeds, frameToSimpleTable } from '../lib/report/seed-aggregate.js';
import { describeSkipped, findRun, loadRun, readResults, type ResultsFrame } from '../lib/report/results-reader.js';
import { selectRuns, selectSeeds } from '../lib/report/run-selection.js';
import type { RunRecord } from '../lib/report/run-record.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';
import { packageRoot } from '../lib/util/package-root.js';
import { tableToText } from '../lib/util/table.js';
import { EXPERIMENT, MODEL, writeResultsFixture, type ResultsFixture } from './helpers/report-fixtures.js';

let tmp: string;
let fx: ResultsFixture;
let frame: ResultsFrame;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'angle-results-reader-'));
  fx = writeResultsFixture(tmp);
  frame = readResults({ resultsDir: tmp, experiments: EXPERIMENT });
});
after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** The records as written, read with JSON.parse here (not through the reader). */
function writtenRecords(): RunRecord[] {
  const dir = join(tmp, EXPERIMENT);
  return fx.runs.map((r) => JSON.parse(readFileSync(join(dir, `${r.runId}.json`), 'utf8')) as RunRecord);
}

/** Two-pass sample mean and std (n − 1). */
function meanAndStd(xs: number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const ss = xs.reduce((a, b) => a + (b - mean) ** 2, 0);
  return { mean, std: Math.sqrt(ss / (xs.length - 1)) };
}

describe('readResults', () => {
  test('one row per run, in start-time order, with run, model, flattened config, data and metric columns', () => {
    assert.equal(frame.table.numRows(), 6);
    assert.deepEqual(frame.runs.map((r) => r.record.runId), fx.runs.map((r) => r.runId));
    const cols = frame.table.columnNames();
    for (const c of [
      'experiment', 'runId', 'seed', 'model.id', 'model.weightsSha256', 'config.pooling', 'config.objective.name',
      'config.objective.loss.weights.ibn', 'config.lr', 'config.resolved.totalSteps', 'data.train.sha256', 'data.test.rows',
      'provenance.backend', 'test_spearman', 'dev_spearman', 'best_dev_spearman', 'final_loss', 'paper.test_spearman',
    ]) assert.ok(cols.includes(c), `column ${c} missing from ${cols.join(', ')}`);
    assert.deepEqual(frame.metricColumns, ['dev_spearman', 'best_dev_spearman', 'test_spearman', 'final_loss']);
    for (const c of ['config.pooling', 'config.objective.loss.weights.ibn', 'model.id', 'data.train.sha256', 'experiment']) assert.ok(frame.configurationColumns.includes(c), c);
    for (const c of ['config.seed', 'config.resolved.seed', 'config.resumedFrom', 'seed', 'runId', 'test_spearman', 'provenance.backend']) {
      assert.ok(!frame.configurationColumns.includes(c), `${c} must not identify a configuration`);
    }
    const written = writtenRecords();
    fx.runs.forEach((r, i) => {
      const row = frame.table.object(i) as Record<string, unknown>;
      const rec = written[i]!;
      assert.equal(row.runId, r.runId);
      assert.equal(row.seed, r.seed);
      assert.equal(row.experiment, EXPERIMENT);
      assert.equal(row['model.id'], MODEL.id);
      assert.equal(row['config.pooling'], r.name === 'last-avg' ? 'last-avg' : 'cls');
      assert.equal(row['config.objective.name'], 'angle');
      assert.equal(row['config.objective.loss.weights.ibn'], r.name === 'w/o ibn' ? 0 : 1);
      assert.equal(row['config.seed'], r.seed);
      assert.equal(row['data.test.rows'], 150);
      assert.equal(row.test_spearman, rec.metrics.test_spearman);
      assert.equal(row.dev_spearman, rec.metrics.dev_spearman);
      assert.equal(row['paper.test_spearman'], rec.paper!.test_spearman!.value);
      assert.equal(row.file, `${EXPERIMENT}/${r.runId}.json`);
      assert.equal(row.hasPredictions, true);
    });
  });

  test('records are kept whole, each with its predictions sidecar', () => {
    const written = writtenRecords();
    frame.runs.forEach((run, i) => {
      assert.deepEqual(run.record, written[i]);
      assert.ok(run.predictions, 'sidecar attached');
      assert.deepEqual(run.predictions!.predictions, fx.runs[i]!.predictions);
      assert.deepEqual(run.predictions!.gold, fx.runs[i]!.gold);
      assert.equal(run.predictionsFile, join(tmp, EXPERIMENT, `${fx.runs[i]!.runId}.predictions.json`));
    });
    assert.equal(findRun(frame, fx.runs[4]!.runId).record.seed, 2);
    assert.throws(() => findRun(frame, 'no-such-run'), UnknownNameError);
  });

  test('the truncated record, the foreign JSON and the orphan sidecar are named in skipped; the rest loads', () => {
    const byFile = new Map(frame.skipped.map((s) => [s.file, s]));
    assert.deepEqual([...byFile.keys()].sort(), [fx.foreign, fx.orphanSidecar, fx.truncated].sort());
    const truncated = byFile.get(fx.truncated)!;
    assert.match(truncated.reason, /not valid JSON/);
    assert.ok(truncated.line !== undefined && truncated.line > 1, `a line for the truncated file: ${JSON.stringify(truncated)}`);
    assert.match(describeSkipped(truncated), new RegExp(`^${fx.truncated.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: `));
    assert.match(byFile.get(fx.foreign)!.reason, /none of the fields of a run record.*name, version, dependencies/);
    assert.match(byFile.get(fx.orphanSidecar)!.reason, /sidecar without its record 2026-01-03T00-00-00Z-orph\.json/);
    // A record naming the file cannot be loaded on its own either, and says where.
    assert.throws(() => loadRun(fx.truncated), (e: unknown) => e instanceof InputError && e.message.startsWith(fx.truncated));
  });

  test('an experiment folder that does not exist is an error listing those that do', () => {
    assert.throws(
      () => readResults({ resultsDir: tmp, experiments: 'tabel4' }),
      (e: unknown) => e instanceof UnknownNameError && /unknown experiment 'tabel4': expected one of table4/.test(e.message),
    );
  });

  test('a full-epoch STS-B record of the earlier schema (test/fixtures/records) reads as written', () => {
    const dir = join(packageRoot(), 'test', 'fixtures', 'records');
    const real = readResults({ resultsDir: dir, experiments: 'train-stsb' });
    const files = readdirSync(join(dir, 'train-stsb')).filter((f) => f.endsWith('.json') && !f.endsWith('.predictions.json'));
    assert.equal(real.table.numRows(), files.length);
    assert.deepEqual(real.skipped, []);
    const rec = JSON.parse(readFileSync(join(dir, 'train-stsb', '2026-11-22T14-27-22Z-8f6e.json'), 'utf8')) as RunRecord;
    const i = real.runs.findIndex((r) => r.record.runId === rec.runId);
    assert.ok(i >= 0);
    const row = real.table.object(i) as Record<string, unknown>;
    assert.equal(row.test_spearman, rec.metrics.test_spearman);
    assert.equal(row.test_spearman, 37.800266317622594);
    assert.equal(row['config.pooling'], 'cls');
    assert.equal(row['config.objective.loss.weights.ibn'], 0);
    assert.equal(row['data.train.rows'], 5749);
    assert.equal(row.seed, 42);
    assert.equal(row.hasPredictions, existsSync(join(dir, 'train-stsb', `${rec.runId}.predictions.json`)));
  });
});

describe('aggregateSeeds', () => {
  test('groups seeds of one configuration; mean, std (n − 1) and n equal a two-pass computation from the files', () => {
    const agg = aggregateSeeds(frame, { metrics: ['test_spearman', 'dev_spearman'] });
    assert.equal(agg.numRows(), 3);
    const written = writtenRecords();
    const rows = agg.objects() as Record<string, unknown>[];
    for (const name of ['cls', 'last-avg', 'w/o ibn'] as const) {
      const idx = fx.runs.map((r, i) => (r.name === name ? i : -1)).filter((i) => i >= 0);
      const ids = idx.map((i) => fx.runs[i]!.runId);
      const row = rows.find((r) => (r.runs as string[]).join() === ids.join());
      assert.ok(row, `a group with runs ${ids.join(', ')}`);
      for (const metric of ['test_spearman', 'dev_spearman']) {
        const values = idx.map((i) => written[i]!.metrics[metric]!);
        assert.equal(row[`${metric}.n`], values.length);
        if (values.length === 1) {
          assert.equal(row[`${metric}.mean`], values[0]);
          assert.equal(row[`${metric}.std`], null);
        } else {
          const { mean, std } = meanAndStd(values);
          assert.ok(Math.abs((row[`${metric}.mean`] as number) - mean) < 1e-12, `${name} ${metric} mean ${row[`${metric}.mean`]} vs ${mean}`);
          assert.ok(Math.abs((row[`${metric}.std`] as number) - std) < 1e-12, `${name} ${metric} std ${row[`${metric}.std`]} vs ${std}`);
        }
      }
      assert.deepEqual(row.seeds, idx.map((i) => fx.runs[i]!.seed));
      assert.equal(row.runCount, idx.length);
    }
  });

  test('varyingOnly keeps the grouping columns that tell the configurations apart', () => {
    const agg = aggregateSeeds(frame, { metrics: ['test_spearman'], varyingOnly: true });
    assert.deepEqual(agg.columnNames(), [
      'experiment', 'config.objective.loss.weights.ibn', 'config.pooling', 'config.resolved.pooling',
      'runs', 'seeds', 'runCount', 'test_spearman.mean', 'test_spearman.std', 'test_spearman.n',
    ]);
    const text = tableToText(frameToSimpleTable(agg), { digits: 2 });
    assert.match(text, /last-avg/);
  });

  test('an unknown metric or column is an error listing the columns', () => {
    assert.throws(() => aggregateSeeds(frame, { metrics: ['test_spearmann'] }), (e: unknown) => e instanceof UnknownNameError && /test_spearman,/.test(e.message));
  });
});

describe('run selection', () => {
  test('by column values, by run ids; a selection spanning configurations is an error naming the columns that differ', () => {
    assert.equal(selectSeeds(frame, { where: { 'config.pooling': 'cls', 'config.objective.loss.weights.ibn': 1 } }).length, 3);
    assert.equal(selectSeeds(frame, { runIds: [fx.runs[5]!.runId] }).length, 1);
    assert.equal(selectRuns(frame, { where: { 'config.pooling': 'cls' } }).length, 4);
    assert.throws(
      () => selectSeeds(frame, { where: { 'config.pooling': 'cls' } }),
      (e: unknown) => e instanceof InputError && /not seeds of one configuration: they differ in config\.objective\.loss\.weights\.ibn \(1 \/ 0\)/.test(e.message),
    );
    assert.throws(() => selectSeeds(frame, { where: { pooling: 'cls' } }), UnknownNameError);
  });
});
