/**
 * Side-by-side tables (lib/report/side-by-side.ts), paired comparisons (run-comparison.ts) and
 * ordering verdicts (ordering-verdict.ts) on the fixture results folder
 * (test/helpers/report-fixtures.ts) against AnglE's real Table 4 and Table 2 (lib/paper):
 * the paper's cells as printed (Table 4 'cls' 86.26), ours as mean ± std over seeds computed here,
 * Δ, the single run's interval equal to bootstrapSpearmanCI on its sidecar's arrays, "not run" and
 * the caller's reasons, the note on Table 2's SBERT row (printed average 74.89, cells 74.86), the
 * three renderings; the paired comparison equal to the statistics functions on the same arrays;
 * the exact seed permutation test against scipy.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { paperCell, paperTable } from '../lib/paper/lookup.js';
import { readResults, type LoadedRun, type ResultsFrame } from '../lib/report/results-reader.js';
import { compareRuns, comparisonTable } from '../lib/report/run-comparison.js';
import { orderingTable, orderingVerdicts } from '../lib/report/ordering-verdict.js';
import { notebookSummaryMarkdown } from '../lib/report/notebook-summary.js';
import { STAND_IN_WORDS } from '../lib/report/stand-in.js';
import { sideBySide, sideBySideBars, sideBySideTable, type CellSource, type OursValue, type SideBySideCell } from '../lib/report/side-by-side.js';
import { pairedBootstrapTest } from '../lib/report/statistics/paired-bootstrap.js';
import { pairedPermutationTest } from '../lib/report/statistics/paired-permutation.js';
import { seedPermutationTest } from '../lib/report/statistics/seed-permutation.js';
import { bootstrapSpearmanCI } from '../lib/report/statistics/spearman-bootstrap.js';
import { differenceVerdict } from '../lib/report/statistics/verdict.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';
import { tableToHtml, tableToMarkdown, tableToText } from '../lib/util/table.js';
import { EXPERIMENT, writeResultsFixture, type ResultsFixture } from './helpers/report-fixtures.js';

let tmp: string;
let fx: ResultsFixture;
let frame: ResultsFrame;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'angle-side-by-side-'));
  fx = writeResultsFixture(tmp);
  frame = readResults({ resultsDir: tmp, experiments: EXPERIMENT });
});
after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const COLUMN = "Spearman's Correlation";
const T4 = () => paperTable('angle', 4);

function meanAndStd(xs: number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean, std: Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) };
}

/** The cell's ours as mean ± std over seeds (fails otherwise). */
function seedsOf(c: SideBySideCell): Extract<OursValue, { kind: 'seeds' }> {
  assert.equal(c.ours?.kind, 'seeds', `${c.row}: ours over seeds expected`);
  return c.ours as Extract<OursValue, { kind: 'seeds' }>;
}

/** The cell's ours as one run (fails otherwise). */
function singleOf(c: SideBySideCell): Extract<OursValue, { kind: 'single' }> {
  assert.equal(c.ours?.kind, 'single', `${c.row}: one run expected`);
  return c.ours as Extract<OursValue, { kind: 'single' }>;
}

function runsOf(name: string): LoadedRun[] {
  const ids = fx.runs.filter((r) => r.name === name).map((r) => r.runId);
  return frame.runs.filter((r) => ids.includes(r.record.runId));
}

const TABLE4_CELLS: CellSource[] = [
  { group: 'Pooling Strategy', row: 'cls', column: COLUMN, runs: { where: { 'config.pooling': 'cls', 'config.objective.loss.weights.ibn': 1 } } },
  { group: 'Pooling Strategy', row: 'last-avg', column: COLUMN, runs: { where: { 'config.pooling': 'last-avg' } } },
  { group: 'Pooling Strategy', row: 'last-max', column: COLUMN, reason: 'data not on this machine' },
  { group: 'Objective', row: '- w/o ibn', column: COLUMN, runs: { where: { 'config.objective.loss.weights.ibn': 0 } } },
  { group: 'Objective', row: 'AnglE-BERT-all', column: COLUMN, runs: { runIds: ['2026-01-01T00-00-00Z-c101'] } },
];

describe('sideBySide on AnglE Table 4', () => {
  test("cells: the paper's printed numbers, ours (mean ± std over seeds, or one run with its bootstrap interval), Δ, runs", () => {
    const s = sideBySide(T4(), frame, TABLE4_CELLS);
    // Printed order of the table: Objective rows first, then Pooling Strategy.
    assert.deepEqual(s.cells.map((c) => c.row), ['AnglE-BERT-all', '- w/o ibn', 'cls', 'last-avg', 'last-max']);
    const cell = (row: string) => s.cells.find((c) => c.row === row)!;

    const cls = cell('cls');
    assert.equal(cls.paper!.value, 86.26);
    assert.equal(cls.paper, paperCell({ paper: 'angle', table: 4, group: 'Pooling Strategy', row: 'cls', column: COLUMN }));
    const clsValues = runsOf('cls').map((r) => r.record.metrics.test_spearman!);
    const { mean, std } = meanAndStd(clsValues);
    const clsOurs = seedsOf(cls);
    assert.equal(clsOurs.n, 3);
    assert.ok(Math.abs(clsOurs.mean - mean) < 1e-12 && Math.abs(clsOurs.std - std) < 1e-12);
    assert.ok(Math.abs(cls.delta! - (mean - 86.26)) < 1e-12);
    assert.deepEqual(cls.runs.map((r) => r.record.runId), runsOf('cls').map((r) => r.record.runId));

    const lastAvg = cell('last-avg');
    assert.equal(lastAvg.paper!.value, 84.15);
    assert.equal(seedsOf(lastAvg).n, 2);

    // One run: its value and the interval of bootstrapSpearmanCI on its sidecar's arrays (seed 0, 1000 resamples, BCa).
    const woIbn = cell('- w/o ibn');
    assert.equal(woIbn.paper!.value, 86.0);
    assert.equal(woIbn.paper!.printed, '86.00');
    const run = runsOf('w/o ibn')[0]!;
    const ref = bootstrapSpearmanCI(run.predictions!.predictions, run.predictions!.gold, { seed: 0, resamples: 1000 });
    const one = singleOf(woIbn);
    assert.ok(one.interval, 'an interval from the sidecar');
    assert.equal(one.value, run.record.metrics.test_spearman);
    assert.deepEqual(one.interval.ci, ref.ci);
    assert.equal(one.interval.resamples, 1000);
    assert.equal(one.interval.n, 150);
    assert.ok(one.interval.ci.low < one.value / 100 && one.value / 100 < one.interval.ci.high);
    assert.ok(Math.abs(woIbn.delta! - (run.record.metrics.test_spearman! - 86.0)) < 1e-12);

    assert.equal(cell('last-max').status, 'data not on this machine');
    assert.equal(cell('last-max').ours, undefined);
    assert.equal(cell('last-max').paper!.value, 79.76);
  });

  test('renderings: text and Markdown carry ours, paper, Δ and runs; HTML adds hover detail without changing them', () => {
    const s = sideBySide(T4(), frame, TABLE4_CELLS);
    const t = sideBySideTable(s);
    const cls = s.cells.find((c) => c.row === 'cls')!;
    const clsOurs = seedsOf(cls);
    const oursText = `${clsOurs.mean.toFixed(2)} ± ${clsOurs.std.toFixed(2)} (n=3)`;
    const deltaText = (cls.delta! > 0 ? '+' : '') + cls.delta!.toFixed(2);
    const woIbn = s.cells.find((c) => c.row === '- w/o ibn')!;
    const one = singleOf(woIbn);
    const ci = one.interval!.ci;
    const ciText = `${one.value.toFixed(2)} [${(ci.low * 100).toFixed(2)}, ${(ci.high * 100).toFixed(2)}] (95% BCa CI)`;

    const text = tableToText(t);
    const markdown = tableToMarkdown(t);
    const html = tableToHtml(t);
    for (const out of [text, markdown, html]) {
      for (const needle of [oursText, deltaText, '86.26', '84.15', '79.76', 'data not on this machine', cls.runs[0]!.record.runId]) {
        assert.ok(out.includes(needle), `${needle} missing from\n${out}`);
      }
    }
    assert.ok(text.includes(ciText) && markdown.includes(ciText), `${ciText} missing`);
    assert.ok(!text.includes('title=') && !markdown.includes('title='));
    // Hover text: each seed's value with its run id.
    const firstCls = cls.runs[0]!;
    assert.ok(html.includes(`title="test_spearman\nseed 1: ${firstCls.record.metrics.test_spearman!.toFixed(4)} (${firstCls.record.runId})`), html);
    assert.match(html, /<tfoot>/);
    assert.deepEqual(t.columns, ['group', 'row', 'ours', 'paper', 'Δ (ours − paper)', 'runs']);
  });

  test('a results folder with no runs yet: every mapped cell says it is not run, nothing throws', () => {
    const empty = readResults({ resultsDir: join(tmp, 'nothing-here') });
    assert.equal(empty.table.numRows(), 0);
    const s = sideBySide(T4(), empty, TABLE4_CELLS);
    assert.deepEqual(s.cells.map((c) => c.status.startsWith('not run') || c.status === 'data not on this machine'), [true, true, true, true, true]);
    assert.match(s.cells.find((c) => c.row === 'cls')!.status, /not run \(no run matches config\.pooling = "cls"/);
  });

  test("include 'all' lists every cell of the table, unmapped ones 'not run'", () => {
    const s = sideBySide(T4(), frame, TABLE4_CELLS.slice(0, 1), { include: 'all' });
    assert.equal(s.cells.length, 11);
    assert.equal(s.cells.filter((c) => c.status === 'not run').length, 10);
    assert.equal(s.cells.find((c) => c.row === 'only ibn')!.paper!.value, 72.48);
  });

  test('bars for the table figure: std for seeds, the interval ×100 for one run, paper values', () => {
    const s = sideBySide(T4(), frame, TABLE4_CELLS);
    const bars = sideBySideBars(s);
    const cls = s.cells.find((c) => c.row === 'cls')!;
    const clsBar = bars.find((b) => b.label === 'cls')!;
    assert.equal(clsBar.paper, 86.26);
    assert.equal(clsBar.std, seedsOf(cls).std);
    const wo = bars.find((b) => b.label === '- w/o ibn')!;
    const woCell = s.cells.find((c) => c.row === '- w/o ibn')!;
    const one = singleOf(woCell);
    assert.deepEqual(wo.ci, [one.interval!.ci.low * 100, one.interval!.ci.high * 100]);
    assert.equal(bars.find((b) => b.label === 'last-max')!.ours, undefined);
  });

  test('bad mappings: an unknown row lists the rows; a cell mapped twice; a metric the runs lack', () => {
    assert.throws(
      () => sideBySide(T4(), frame, [{ row: 'mean pooling', column: COLUMN }]),
      (e: unknown) => e instanceof UnknownNameError && /Pooling Strategy \/ cls-last-avg/.test(e.message),
    );
    assert.throws(() => sideBySide(T4(), frame, [TABLE4_CELLS[0]!, TABLE4_CELLS[0]!]), /mapped twice/);
    assert.throws(
      () => sideBySide(T4(), frame, [{ ...TABLE4_CELLS[0]!, metric: 'test_accuracy' }]),
      (e: unknown) => e instanceof InputError && /no value for metric 'test_accuracy'/.test(e.message),
    );
  });
});

describe('the average note', () => {
  test("AnglE Table 2's SBERT row: printed average 74.89, its cells average 74.86; a row without a disagreement gets no note", () => {
    const s = sideBySide(paperTable('angle', 2), frame, [
      { row: 'SBERT', column: 'STS-B', reason: 'not reproduced here' },
      { row: 'AnglE-BERT', column: 'STS-B' },
    ]);
    const notes = s.notes.filter((n) => /average/.test(n));
    assert.equal(notes.length, 1, notes.join('\n'));
    assert.match(notes[0]!, /Avg\. of Supervised Models \/ SBERT is printed as 74\.89 but its cells average 74\.86/);
    assert.equal(s.cells.find((c) => c.row === 'SBERT')!.paperText, '77.03 †');
    const md = tableToMarkdown(sideBySideTable(s));
    assert.ok(md.includes('74.89') && md.includes('74.86'));
    assert.ok(md.includes('not reproduced here'));
    assert.ok(tableToText(sideBySideTable(s)).includes('printed as 74.89'));
  });
});

describe('paired comparison of two runs', () => {
  test('equals the paired bootstrap and permutation tests on the two sidecars, with their verdict', () => {
    const [a] = runsOf('cls');
    const [b] = runsOf('w/o ibn');
    const c = compareRuns(a!, b!, {
      labelA: 'AnglE-BERT-all',
      labelB: '- w/o ibn',
      paper: {
        a: paperCell({ paper: 'angle', table: 4, row: 'AnglE-BERT-all', column: COLUMN }),
        b: paperCell({ paper: 'angle', table: 4, row: '- w/o ibn', column: COLUMN }),
      },
    });
    const p = [a!.predictions!, b!.predictions!];
    const boot = pairedBootstrapTest(p[0]!.predictions, p[1]!.predictions, p[0]!.gold, { seed: 0, resamples: 1000 });
    const perm = pairedPermutationTest(p[0]!.predictions, p[1]!.predictions, p[0]!.gold, { seed: 0, permutations: 9999 });
    assert.equal(c.difference, boot.difference);
    assert.deepEqual(c.ci, boot.ci);
    assert.equal(c.bootstrapP, boot.pValue);
    assert.equal(c.permutationP, perm.pValue);
    assert.deepEqual(c.verdict, differenceVerdict({ difference: boot.difference, ci: boot.ci, pValue: perm.pValue }));
    assert.ok(Math.abs(c.paperDifference! - 0.26) < 1e-9);
    const t = comparisonTable([c]);
    const text = tableToText(t);
    assert.ok(text.includes('+0.26') && text.includes(c.verdict.verdict) && text.includes((c.difference * 100 > 0 ? '+' : '') + (c.difference * 100).toFixed(2)), text);
  });

  test('runs scored on different test pairs, or without a sidecar, are refused with both files named', () => {
    const [a] = runsOf('cls');
    const [b] = runsOf('w/o ibn');
    const otherGold = { ...b!, predictions: { ...b!.predictions!, gold: b!.predictions!.gold.map((g, i) => (i === 7 ? g + 1 : g)) } };
    assert.throws(() => compareRuns(a!, otherGold), (e: unknown) => e instanceof InputError && /not the same test pairs: gold\[7\]/.test(e.message) && e.message.includes(a!.predictionsFile!));
    const noSidecar = { record: b!.record, file: b!.file };
    assert.throws(() => compareRuns(a!, noSidecar), /has no predictions sidecar/);
  });
});

describe('ordering verdicts', () => {
  test("adjacent pairs in the paper's order: the sign of our difference, and the test that decides noise", () => {
    const s = sideBySide(T4(), frame, TABLE4_CELLS);
    const checks = orderingVerdicts(s);
    // Objective: all (86.26) > w/o ibn (86.00); Pooling: cls (86.26) > last-avg (84.15) > last-max (79.76, not run).
    assert.deepEqual(checks.map((c) => [c.better, c.worse]), [['AnglE-BERT-all', '- w/o ibn'], ['cls', 'last-avg'], ['last-avg', 'last-max']]);
    const [obj, pool, notRun] = checks;

    const all = s.cells.find((c) => c.row === 'AnglE-BERT-all')!;
    const wo = s.cells.find((c) => c.row === '- w/o ibn')!;
    const cmp = compareRuns(all.runs[0]!, wo.runs[0]!);
    assert.equal(obj!.oursDifference, all.runs[0]!.record.metrics.test_spearman! - wo.runs[0]!.record.metrics.test_spearman!);
    assert.equal(obj!.reproduced, obj!.oursDifference! > 0);
    assert.equal(obj!.verdict, cmp.verdict.verdict);
    assert.match(obj!.reason, /paired bootstrap \+ permutation over 150 test pairs/);

    // 3 vs 2 seeds: 10 splits, smallest p = 0.2: never resolved, and the reason says why.
    const clsValues = runsOf('cls').map((r) => r.record.metrics.test_spearman!);
    const laValues = runsOf('last-avg').map((r) => r.record.metrics.test_spearman!);
    assert.equal(pool!.verdict, 'within noise');
    assert.ok(Math.abs(pool!.oursDifference! - (meanAndStd(clsValues).mean - meanAndStd(laValues).mean)) < 1e-12);
    assert.equal(pool!.reproduced, true, 'the fixture makes cls (less noise) better than last-avg');
    assert.match(pool!.reason, /exact permutation test over seeds \(10 splits\).*3 vs 2 seeds cannot reach p < 0\.05 \(smallest p 0\.200\)/);
    assert.equal(pool!.summary, 'reproduced, within noise');
    assert.equal(pool!.ordering, 'reproduced');

    assert.equal(notRun!.summary, 'not run');
    assert.match(notRun!.reason, /last-max: data not on this machine/);
    // The same pair named explicitly gives the same check.
    assert.deepEqual(orderingVerdicts(s, { pairs: [[{ row: 'cls' }, { row: 'last-avg' }]] }), [pool]);
    const text = tableToText(orderingTable(checks));
    const reproduced = [obj!, pool!].filter((c) => c.oursDifference! > 0).length;
    assert.ok(text.includes(`${reproduced} of 2 measured orderings reproduced`), text);
  });
});

describe('seedPermutationTest', () => {
  // Reference: scipy 1.17.1, numpy 2.4.6:
  //   from scipy.stats import permutation_test
  //   stat = lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis)
  //   permutation_test((a, b), stat, permutation_type='independent', n_resamples=np.inf,
  //                    alternative='two-sided', vectorized=True)
  const SCIPY: [number[], number[], number, number, number][] = [
    [[86.1, 85.9, 86.4], [85.2, 85.6, 85.0], 0.86666666666666, 0.1, 20],
    [[80.5, 81.25, 79.9, 80.75, 81.0], [80.0, 80.4, 79.5, 80.6, 79.8], 0.6199999999999903, 0.0873015873015873, 252],
    [[1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 4.0, 4.0, 5.0], -1.6, 0.1111111111111111, 126],
    [[70.0, 72.0], [71.0, 69.0, 73.0], 0.0, 1.0, 10],
  ];
  test('exact p-values equal scipy.stats.permutation_test (independent, exact)', () => {
    for (const [a, b, statistic, p, splits] of SCIPY) {
      const r = seedPermutationTest(a, b);
      assert.ok(Math.abs(r.difference - statistic) < 1e-12, `${a} vs ${b}: statistic ${r.difference} vs ${statistic}`);
      assert.ok(Math.abs(r.pValue - p) < 1e-15, `${a} vs ${b}: p ${r.pValue} vs scipy ${p}`);
      assert.equal(r.splits, splits);
    }
    assert.equal(seedPermutationTest([1, 2, 3], [4, 5, 6]).minimumPValue, 0.1);
  });
});

describe('SimpleTable notes and titles (lib/util/table.ts)', () => {
  test('notes go under the table in every rendering; titles only into HTML; Markdown notes are escaped', () => {
    const t = { columns: ['a', 'b'], rows: [['x', 1]], notes: ['n_1 *bold* <b>'], titles: [['hover "a"', null]] };
    assert.equal(tableToText(t), 'a  b\n-  -\nx  1\nn_1 *bold* <b>');
    assert.equal(tableToMarkdown(t), '| a | b |\n| --- | ---: |\n| x | 1 |\n\n- n\\_1 \\*bold\\* \\<b>');
    assert.equal(
      tableToHtml(t),
      '<table>\n<thead><tr><th>a</th><th style="text-align:right">b</th></tr></thead>\n<tbody>\n' +
        '<tr><td title="hover &quot;a&quot;">x</td><td style="text-align:right">1</td></tr>\n</tbody>\n' +
        '<tfoot>\n<tr><td colspan="2" style="text-align:left">n_1 *bold* &lt;b&gt;</td></tr>\n</tfoot>\n</table>',
    );
    assert.throws(() => tableToHtml({ ...t, titles: [['only one']] }), RangeError);
  });
});

describe('stand-in models', () => {
  // The smoke preset's models are recorded as shared:… (lib/report/stand-in.ts): every verdict and summary over them says so in its own line.
  const standIn = (r: LoadedRun): LoadedRun => ({ ...r, record: { ...r.record, model: { ...r.record.model, id: 'shared:golden/bert-tiny-seed1234/model' } } });
  test('verdicts, comparison tables and summaries over a stand-in say that they reproduce nothing; over a real model they do not', () => {
    const real = sideBySide(T4(), frame, TABLE4_CELLS);
    const fake = { ...real, cells: real.cells.map((c) => ({ ...c, runs: c.runs.map(standIn) })) };
    const [objReal] = orderingVerdicts(real);
    const [objFake] = orderingVerdicts(fake);
    assert.ok(!objReal!.summary.includes(STAND_IN_WORDS) && !objReal!.standIn, objReal!.summary);
    assert.equal(objFake!.summary, `${objReal!.summary} (${STAND_IN_WORDS})`);
    const orderingText = tableToText(orderingTable(orderingVerdicts(fake)));
    assert.match(orderingText, /On stand-in models, reproducing nothing: \d of 2 measured orderings reproduced/);
    assert.ok(orderingText.includes(`(${STAND_IN_WORDS})`), orderingText);
    assert.ok(!tableToText(orderingTable(orderingVerdicts(real))).includes(STAND_IN_WORDS));

    const [a] = runsOf('cls');
    const [b] = runsOf('w/o ibn');
    assert.ok(!tableToText(comparisonTable([compareRuns(a!, b!)])).includes(STAND_IN_WORDS));
    const cmp = compareRuns(standIn(a!), b!);
    assert.ok(tableToText(comparisonTable([cmp])).includes(`${cmp.verdict.verdict} (${STAND_IN_WORDS})`));

    const summaryReal = notebookSummaryMarkdown('x', { text: 'Preset smoke.', sideBySide: [real] }, tmp);
    const summaryFake = notebookSummaryMarkdown('x', { text: 'Preset smoke.', sideBySide: [fake] }, tmp);
    assert.ok(!summaryReal.includes('reproduce nothing'));
    assert.match(summaryFake.split('\n')[2]!, /^\*\*Stand-in model \(`shared:golden\/bert-tiny-seed1234\/model`; the smoke preset's tiny test models\): these numbers and verdicts reproduce nothing of the papers\.\*\* Preset smoke\.$/);
  });
});
