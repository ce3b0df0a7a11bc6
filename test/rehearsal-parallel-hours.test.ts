/**
 * The rehearsal summary's projected wall-clock hours with a notebook's runs spread over GPUs
 * (lib/experiments/rehearsal/summary.ts parallelWallClockHours): longest job first on the GPU
 * that frees first; training rows count once per seed, evaluations once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parallelWallClockHours, rehearsalNotebookTable, type RehearsalRow } from '../lib/experiments/rehearsal/summary.js';

const row = (run: string, kind: RehearsalRow['kind'], hours: number) =>
  ({ notebook: '02-x', run, kind, projectedHoursH100: hours, projectedPeakBytesH100: 1e9, status: 'ok' }) as unknown as RehearsalRow;
const rows = [row('a', 'train', 4), row('b', 'lora', 2), row('c', 'encode', 1)];

test('jobs placed longest first on the GPU that frees first', () => {
  // Jobs: 4 4 4 2 2 2 1 (three seeds of a and b, c once).
  assert.equal(parallelWallClockHours(rows, 3, 1), 19);
  // 4 GPUs: 4 | 4 | 4 | 2 -> 2 joins the 2 (4), the next 2 a 4 (6), the 1 another 4 (5).
  assert.equal(parallelWallClockHours(rows, 3, 4), 6);
  // More GPUs than jobs: the longest job.
  assert.equal(parallelWallClockHours(rows, 3, 8), 4);
  assert.equal(parallelWallClockHours(rows, 1, 2), 4);
});

test('the per-notebook table shows them on 1, 4 and 8 GPUs', () => {
  const t = rehearsalNotebookTable(rows, 3);
  const col = t.columns.indexOf('wall-clock, 3 seeds, on 1 / 4 / 8 GPUs');
  assert.ok(col > 0, t.columns.join(', '));
  assert.equal(t.rows[0]![col], '19.0 h / 6.0 h / 4.0 h');
});
