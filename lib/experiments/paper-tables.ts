/**
 * Which recipe reproduces which cell of a paper table, as data the table notebooks read:
 *
 * - AnglE Table 3 (non-transfer STS): rows SimCSE-BERT, SBERT, AnglE-RAN, AnglE-BERT × columns
 *   MRPC, STS-B, QQP, QNLI, GitHub Issues. AnglE-RAN uses the RAN_base long-text backbone
 *   (Li et al., 2023), which this library does not implement: its row is marked so.
 * - AnglE Table 4 (ablation on STS-B): the objective rows and the pooling rows.
 *
 * Each row carries the paper's number (lib/paper) and the file it is printed in.
 */
import { paperCell } from '../paper/lookup.js';
import type { PaperCell } from '../report/run-record.js';
import { angleStsbWithPooling, angleStsbWithWeights, table3Recipes, TABLE4_OBJECTIVES, TABLE4_POOLINGS } from './recipes.js';
import type { PlannedRow } from './table-plan.js';
import type { TaskName } from './tasks.js';

/** AnglE's first version: the one with every table (BERT rows are the same in all three). */
export const ANGLE_FILE = '000_c0fdd0968b088fcd.txt';

function cell(table: string, row: string, column: string, group?: string): PaperCell | undefined {
  try {
    const c = paperCell({ paper: 'angle', table, row, column, file: ANGLE_FILE, ...(group ? { group } : {}) });
    return { value: c.value, source: `${c.file}, ${c.table}, ${c.group ? `${c.group} / ` : ''}${c.row}, ${c.column}` };
  } catch {
    // A cell the paper prints as blank or '-': the row runs, without a number to compare.
    return undefined;
  }
}

/** AnglE Table 3's columns and the task each trains on. */
export const TABLE3_COLUMNS: ReadonlyArray<{ column: string; task: TaskName }> = [
  { column: 'MRPC', task: 'mrpc' },
  { column: 'STS-B', task: 'stsb' },
  { column: 'QQP', task: 'qqp' },
  { column: 'QNLI', task: 'qnli' },
  { column: 'GitHub Issues.', task: 'gis' },
];

/** AnglE Table 3: every trainable cell, and AnglE-RAN's marked. */
export function table3Rows(columns: readonly TaskName[] = TABLE3_COLUMNS.map((c) => c.task)): PlannedRow[] {
  const out: PlannedRow[] = [];
  for (const { column, task } of TABLE3_COLUMNS.filter((c) => columns.includes(c.task))) {
    const r = table3Recipes(task);
    out.push({ row: 'SimCSE-BERT', column, recipe: r.simcse, paper: cell('Table 3', 'SimCSE-BERT', column) });
    out.push({ row: 'SBERT', column, recipe: r.sbert, paper: cell('Table 3', 'SBERT', column) });
    out.push({ row: 'AnglE-RAN', column, unavailable: 'needs the RAN_base backbone (Li et al., 2023), not implemented here', paper: cell('Table 3', 'AnglE-RAN', column) });
    out.push({ row: 'AnglE-BERT', column, recipe: r.angle, paper: cell('Table 3', 'AnglE-BERT', column) });
  }
  return out;
}

const TABLE4_COLUMN = "Spearman's Correlation";

/** AnglE Table 4 (upper): the objective ablation. */
export function table4ObjectiveRows(): PlannedRow[] {
  return TABLE4_OBJECTIVES.map(({ row, weights }) => ({
    row,
    group: 'Objective',
    column: TABLE4_COLUMN,
    recipe: angleStsbWithWeights(row, weights),
    paper: cell('Table 4', row, TABLE4_COLUMN, 'Objective'),
  }));
}

/** AnglE Table 4 (lower): the pooling strategies. */
export function table4PoolingRows(): PlannedRow[] {
  return TABLE4_POOLINGS.map(({ row, pooling }) => ({
    row,
    group: 'Pooling Strategy',
    column: TABLE4_COLUMN,
    recipe: angleStsbWithPooling(row, pooling),
    paper: cell('Table 4', row, TABLE4_COLUMN, 'Pooling Strategy'),
  }));
}
