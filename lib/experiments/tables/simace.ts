/**
 * SimACE's tables (papers/004_1238e3534f087b8a.txt) as plan rows: Table 1's BERT_base rows (one
 * per objective, trained on wiki1m, each filling STS12 … Avg. from its SentEval suite) and its
 * sweeps — the margin (Table 14: m = 10°, 0, −10°) and the temperature (Figure 7 compares τ 0.05,
 * 0.06, 0.07 without printing STS numbers: those rows are off the table). ../recipes/simace.ts
 * holds the recipes.
 */
import { SENTEVAL_STS_COLUMNS } from '../../eval/senteval-sts-evaluator.js';
import { SIMACE_FILE } from '../../paper/simace.js';
import { InputError } from '../../util/errors.js';
import type { SimpleTable } from '../../util/table.js';
import { paperCellOf } from '../paper-cell.js';
import type { Plan, PlanRow } from '../plan.js';
import { unsupervisedRecipe, type UnsupervisedObjective } from '../recipes/simace.js';

/** The eight cells (STS12 … Avg.) of a row of SimACE Table 1 or 14, each filled by the run's SentEval metric. */
function sentevalCells(table: 1 | 14, row: string, group: string) {
  return SENTEVAL_STS_COLUMNS.map(({ column, metric }) => ({
    column,
    metric: `test_${metric}`,
    paper: paperCellOf({ paper: 'simace', table, row, column, group, file: SIMACE_FILE }),
  }));
}

const GROUP = 'BERT_base';
const TABLE1_ROWS: ReadonlyArray<{ row: string; objective: UnsupervisedObjective }> = [
  { row: 'SimCSE', objective: 'simcse' },
  { row: 'ArcCon', objective: 'arccon' },
  { row: 'SimACE', objective: 'simace' },
];

/** SimACE Table 1's BERT_base rows this library trains (on the wiki1m task); 'first-last' (no training) is marked. */
export function simaceTable1Rows(): PlanRow[] {
  return [
    { row: 'first-last', group: GROUP, table: 'Table 1', cells: sentevalCells(1, 'first-last', GROUP), unavailable: 'reference (BERT without training, Gao et al. 2021)' },
    ...TABLE1_ROWS.map(({ row, objective }) => ({ row, group: GROUP, table: 'Table 1', cells: sentevalCells(1, row, GROUP), recipe: unsupervisedRecipe(objective) })),
  ];
}

/** A row of a sweep: which parameter and value it runs. */
export interface SweepRow extends PlanRow {
  sweep: { parameter: 'margin' | 'temperature'; value: number };
}

const TABLE14_MARGINS: Readonly<Record<number, string>> = { 10: 'SimACE', 0: '+ m = 0', [-10]: '+ m = -10' };

/**
 * SimACE with each margin (degrees; τ 0.06) and each temperature (margin 10°): margins 10, 0, −10
 * are Table 14's rows, any other value and every temperature row are off the table. The row at
 * SimACE's own setting is the Table 1 run again (same recipe: reused, not retrained).
 */
export function simaceSweepRows(sweep: { margins?: readonly number[]; temperatures?: readonly number[] }): SweepRow[] {
  const rows: SweepRow[] = [];
  for (const m of sweep.margins ?? []) {
    if (!Number.isFinite(m)) throw new InputError(`a margin must be a number of degrees, got ${m}`);
    const label = TABLE14_MARGINS[m];
    const recipe = unsupervisedRecipe('simace', { margin: m, temperature: 0.06 });
    rows.push(
      label
        ? { row: label, group: GROUP, table: 'Table 14', cells: sentevalCells(14, label, GROUP), recipe, sweep: { parameter: 'margin', value: m } }
        : { row: `SimACE m = ${m}°`, table: 'Table 14', cells: [{ column: 'Avg.', metric: 'test_avg' }], recipe, offTable: true, sweep: { parameter: 'margin', value: m } },
    );
  }
  for (const t of sweep.temperatures ?? []) {
    if (!(t > 0)) throw new InputError(`a temperature must be > 0, got ${t}`);
    rows.push({
      row: `SimACE τ = ${t}`,
      table: 'Figure 7',
      cells: [{ column: 'Avg.', metric: 'test_avg' }],
      recipe: unsupervisedRecipe('simace', { margin: 10, temperature: t }),
      offTable: true,
      sweep: { parameter: 'temperature', value: t },
    });
  }
  return rows;
}

/**
 * The sweep as a table: per row, the parameter's value, our SentEval STS average and best STS-B
 * dev Spearman (mean over the row's runs), and the paper's average where Table 14 prints one.
 */
export function sweepTable(plan: Plan, rows: readonly SweepRow[]): SimpleTable {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);
  const fmt = (v: number | undefined) => (v === undefined ? '' : v.toFixed(2));
  return {
    caption: "SimACE sweeps (ours: SentEval STS average and best STS-B dev, ×100; paper: Table 14's Avg. where printed — Figure 7 prints no STS numbers for τ)",
    columns: ['parameter', 'value', 'row', 'runs', 'ours: STS avg', 'ours: best STS-B dev', 'paper: STS avg'],
    rows: rows.map((r) => {
      const runs = plan.runsOf(r).map((x) => x.run.record.metrics);
      const skipped = plan.runs.find((x) => x.row === r && x.skipped)?.skipped;
      const paper = r.cells.find((c) => c.column === 'Avg.')?.paper?.value;
      return [
        r.sweep.parameter,
        r.sweep.parameter === 'margin' ? `${r.sweep.value}°` : String(r.sweep.value),
        r.row,
        runs.length || (skipped ?? plan.blocked(r) ?? 'not run'),
        fmt(mean(runs.map((m) => m.test_avg).filter((v): v is number => v !== undefined))),
        fmt(mean(runs.map((m) => m.best_dev_spearman).filter((v): v is number => v !== undefined))),
        fmt(paper),
      ];
    }),
  };
}
