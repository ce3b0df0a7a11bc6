/**
 * Run cards (lib/report/run-card.ts) and a notebook's summary.md (notebook-summary.ts): the card of
 * the committed STS-B record (copied to a temp folder) has every section with the record's own
 * numbers (model, weights hash prefix, data rows and hash, metrics, provenance, wall time) and the
 * settings that differ from a given recipe; a fixture run's card shows its paper cell, Δ and the
 * bootstrap interval of bootstrapSpearmanCI on its sidecar; rewriting gives the same bytes; bad
 * files get no card and are listed; summary.md holds the side-by-side table and links to the runs.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { paperTable } from '../lib/paper/lookup.js';
import { writeNotebookSummary } from '../lib/report/notebook-summary.js';
import { readResults } from '../lib/report/results-reader.js';
import { runCardMarkdown, runCardPath, writeRunCard, writeRunCards } from '../lib/report/run-card.js';
import type { RunRecord } from '../lib/report/run-record.js';
import { sideBySide, sideBySideTable } from '../lib/report/side-by-side.js';
import { formatWithInterval } from '../lib/report/statistics/mean-std.js';
import { bootstrapSpearmanCI } from '../lib/report/statistics/spearman-bootstrap.js';
import { InputError } from '../lib/util/errors.js';
import { packageRoot } from '../lib/util/package-root.js';
import { tableToMarkdown } from '../lib/util/table.js';
import { EXPERIMENT, writeResultsFixture, type ResultsFixture } from './helpers/report-fixtures.js';

const STSB_ID = '2026-11-22T14-27-22Z-8f6e';
let tmp: string;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'angle-run-card-'));
});
after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** The Markdown between a heading and the next one. */
function section(card: string, heading: string): string {
  const start = card.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `section '${heading}' missing:\n${card}`);
  const end = card.indexOf('\n## ', start + 4);
  return card.slice(start, end < 0 ? undefined : end);
}

describe('the card of a full-epoch STS-B record of the earlier schema (test/fixtures/records)', () => {
  let card: string;
  let record: RunRecord;
  let cardFile: string;

  before(() => {
    const dir = join(tmp, 'stsb-results');
    // The record only (the folder may also hold git-ignored checkpoints of other runs).
    mkdirSync(join(dir, 'train-stsb'), { recursive: true });
    copyFileSync(join(packageRoot(), 'test', 'fixtures', 'records', 'train-stsb', `${STSB_ID}.json`), join(dir, 'train-stsb', `${STSB_ID}.json`));
    record = JSON.parse(readFileSync(join(dir, 'train-stsb', `${STSB_ID}.json`), 'utf8')) as RunRecord;
    const out = writeRunCards('train-stsb', {
      resultsDir: dir,
      recipeName: 'angle-stsb',
      recipe: {
        objective: { name: 'angle', loss: { preset: 'paper', weights: { cosine: 1, ibn: 1, angle: 1 } } },
        pooling: 'cls',
        maxLength: 512,
        batchSize: 32,
        epochs: 20,
        lr: 1e-5,
        schedule: 'linear',
        seed: 42,
      },
    });
    assert.deepEqual(out.skipped, []);
    cardFile = join(dir, 'train-stsb', `${STSB_ID}.md`);
    assert.deepEqual(out.written, [cardFile]);
    card = readFileSync(cardFile, 'utf8');
  });

  test('title and summary line: run id, experiment, seed, wall time', () => {
    assert.ok(card.startsWith(`# Run ${STSB_ID}\n`));
    // 1828.6 s.
    assert.ok(card.includes(`Experiment \`train-stsb\` · seed 42 · started ${record.startedAt}`) && card.includes('wall time 30 min 29 s'), card.slice(0, 400));
  });

  test('what ran: objective with its loss weights, pooling, model id and weights hash prefix', () => {
    const s = section(card, 'What ran');
    assert.ok(s.includes('| objective | angle (preset paper; weights cosine 1, ibn 0, angle 1) |'), s);
    assert.ok(s.includes('| pooling | cls |'));
    assert.ok(s.includes(`| model | \`${record.model.id}\` |`));
    assert.ok(s.includes(`| weights sha256 | \`${record.model.weightsSha256!.slice(0, 12)}\` |`));
    assert.ok(s.includes('trained on STSBenchmark train'));
  });

  test('hyperparameters: recipe beside this run where they differ, and the resolved schedule', () => {
    const s = section(card, 'Hyperparameters');
    assert.ok(s.includes('| setting | recipe | this run |'));
    for (const row of ['| `lr` | 0.00001 | 0.0005 |', '| `maxLength` | 512 | 32 |', '| `epochs` | 20 | 1 |', '| `objective.loss.weights.ibn` | 1 | 0 |', '| `warmupFraction` | — (default) | 0.1 |']) {
      assert.ok(s.includes(row), `${row} missing:\n${s}`);
    }
    // Equal settings are not listed.
    assert.ok(!s.includes('| `batchSize` |') && !s.includes('| `pooling` |') && !s.includes('| `seed` |'), s);
    assert.ok(s.includes('Resolved: 180 optimiser steps, 180 per epoch, gradient accumulation 1, schedule linear with 18 warmup steps.'));
  });

  test("metrics as recorded, and the record's reason for having no paper cell", () => {
    const s = section(card, 'Metrics');
    assert.ok(s.includes(`| \`test_spearman\` | ${record.metrics.test_spearman!.toFixed(2)} |`) && s.includes('| `test_spearman` | 37.80 |'), s);
    assert.ok(s.includes(`| \`dev_spearman\` | ${record.metrics.dev_spearman!.toFixed(2)} |`));
    assert.ok(s.includes(`No paper cell: ${record.paperNote}`));
    assert.ok(s.includes('best dev spearman 44.25 at step 60'));
  });

  test('data identity, hardware and versions, files', () => {
    const d = section(card, 'Data');
    assert.ok(d.includes('| train | STSBenchmark train | 5749 | `08ea4a5240f5` |'), d);
    assert.ok(d.includes('| test | STSBenchmark test | 1379 | — |'));
    const h = section(card, 'Hardware and versions');
    assert.ok(h.includes(`| code | \`${record.provenance.gitCommit}\` |`), h);
    assert.ok(h.includes('| backend | cpu |') && h.includes(`| node | ${record.provenance.node} |`) && h.includes('| `@tensorflow/tfjs-core` | 4.22.0 |'));
    const f = section(card, 'Files');
    assert.ok(f.includes(`- record: [${STSB_ID}.json](${STSB_ID}.json)`));
    assert.ok(f.includes('no predictions sidecar'));
  });

  test('rewriting an unchanged record gives the same bytes, and leaves no temporary files', () => {
    writeRunCard(join(cardFile.replace(/\.md$/, '.json')), {
      recipeName: 'angle-stsb',
      recipe: { objective: { name: 'angle', loss: { preset: 'paper', weights: { cosine: 1, ibn: 1, angle: 1 } } }, pooling: 'cls', maxLength: 512, batchSize: 32, epochs: 20, lr: 1e-5, schedule: 'linear', seed: 42 },
    });
    assert.equal(readFileSync(cardFile, 'utf8'), card);
    assert.deepEqual(readdirSync(join(cardFile, '..')).sort(), [`${STSB_ID}.json`, `${STSB_ID}.md`]);
  });
});

describe('cards of the fixture runs', () => {
  let fx: ResultsFixture;
  let resultsDir: string;
  before(() => {
    resultsDir = join(tmp, 'fixture-results');
    fx = writeResultsFixture(resultsDir);
  });

  test("a card shows the paper's cell, Δ and the bootstrap interval of the test Spearman from the sidecar", () => {
    const frame = readResults({ resultsDir, experiments: EXPERIMENT });
    const run = frame.runs.find((r) => r.record.runId === fx.runs[5]!.runId)!;
    const card = runCardMarkdown(run);
    const s = section(card, 'Metrics');
    const v = run.record.metrics.test_spearman!;
    const delta = v - 86.0;
    assert.ok(s.includes(`| \`test_spearman\` | ${v.toFixed(2)} | 86 | ${delta > 0 ? '+' : ''}${delta.toFixed(2)} | 000_c0fdd0968b088fcd.txt, Table 4 |`), s);
    const ref = bootstrapSpearmanCI(fx.runs[5]!.predictions, fx.runs[5]!.gold, { seed: 0, resamples: 1000 });
    assert.ok(s.includes(`${formatWithInterval(ref.spearman, ref.ci, { scale: 100 })}, 1000 resamples of 150 test pairs, seed 0`), s);
    assert.ok(section(card, 'Files').includes(`[${run.record.runId}.predictions.json](${run.record.runId}.predictions.json) (150 pairs of synthetic test`));
    // No recipe: every setting listed.
    assert.ok(section(card, 'Hyperparameters').includes('| `objective.loss.weights.ibn` | 0 |'));
  });

  test('writeRunCards writes one card per record; the truncated and foreign files get none and are listed', () => {
    const out = writeRunCards(EXPERIMENT, { resultsDir });
    assert.equal(out.written.length, 6);
    for (const r of fx.runs) assert.ok(existsSync(join(resultsDir, EXPERIMENT, `${r.runId}.md`)));
    assert.deepEqual(out.skipped.map((s) => s.file).sort(), [fx.foreign, fx.orphanSidecar, fx.truncated].sort());
    assert.ok(!existsSync(fx.truncated.replace(/\.json$/, '.md')));
    assert.throws(() => writeRunCard(fx.truncated), (e: unknown) => e instanceof InputError && e.message.startsWith(fx.truncated));
    assert.throws(() => runCardPath(fx.orphanSidecar), InputError);
  });

  test('summary.md: the side-by-side in Markdown with its notes and the runs linked to records and cards', () => {
    const frame = readResults({ resultsDir, experiments: EXPERIMENT });
    const sbs = sideBySide(paperTable('angle', 4), frame, [
      { group: 'Pooling Strategy', row: 'cls', column: "Spearman's Correlation", runs: { where: { 'config.pooling': 'cls', 'config.objective.loss.weights.ibn': 1 } } },
      { group: 'Pooling Strategy', row: 'last-max', column: "Spearman's Correlation", reason: 'data not on this machine' },
    ]);
    const path = writeNotebookSummary('04-ablation', { sideBySide: [sbs], resultsDir, title: 'Notebook 04: ablation' });
    assert.equal(path, join(resultsDir, '04-ablation', 'summary.md'));
    const text = readFileSync(path, 'utf8');
    assert.ok(text.startsWith('# Notebook 04: ablation\n'));
    const table = tableToMarkdown({ ...sideBySideTable(sbs), titles: undefined });
    assert.ok(text.includes(table), text);
    assert.ok(!text.includes('title='));
    const clsRuns = fx.runs.filter((r) => r.name === 'cls');
    for (const r of clsRuns) {
      assert.ok(text.includes(`- ${EXPERIMENT} / [${r.runId}](../${EXPERIMENT}/${r.runId}.json) ([card](../${EXPERIMENT}/${r.runId}.md)): seed ${r.seed}`), text);
    }
    assert.equal(text.split('\n').filter((l) => l.startsWith(`- ${EXPERIMENT} / `)).length, 3);
    assert.throws(() => writeNotebookSummary('../escape', { resultsDir }), InputError);
  });
});
