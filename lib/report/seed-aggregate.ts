/**
 * Seeds of one configuration, aggregated: the frame's runs (./results-reader.ts) grouped by every
 * configuration column (everything but the seed and the per-run fields, ./record-columns.ts),
 * and per metric the mean, the sample standard deviation (n − 1, as numpy std(ddof=1) and
 * ./statistics/mean-std.ts) and n, computed by arquero's rollup (`op.mean`, `op.stdev`,
 * `op.valid`: a run without the metric does not count towards its n).
 *
 * Output columns: the grouping columns, `runs` (run ids), `seeds`, `runCount`, then for each metric
 * `<metric>.mean`, `<metric>.std` (null when n < 2) and `<metric>.n`.
 */
import * as aq from 'arquero';
import type { ColumnTable } from 'arquero';
import { InputError, UnknownNameError } from '../util/errors.js';
import type { SimpleTable, TableValue } from '../util/table.js';
import type { ResultsFrame } from './results-reader.js';

export interface AggregateSeedsOptions {
  /** Metrics to aggregate; default every metric column. */
  metrics?: readonly string[];
  /** Columns that define a configuration; default the frame's configuration columns. */
  by?: readonly string[];
  /** Keep only the grouping columns whose value differs between groups (plus `experiment`). */
  varyingOnly?: boolean;
}

/** Columns of `table` among `columns` that hold more than one distinct value. */
export function varyingColumns(table: ColumnTable, columns: readonly string[]): string[] {
  return columns.filter((c) => new Set(table.array(c) as unknown[]).size > 1);
}

export function aggregateSeeds(frame: ResultsFrame, options: AggregateSeedsOptions = {}): ColumnTable {
  const metrics = [...(options.metrics ?? frame.metricColumns)];
  const by = [...(options.by ?? frame.configurationColumns)];
  const names = frame.table.columnNames();
  for (const c of [...metrics, ...by]) if (!names.includes(c)) throw new UnknownNameError('results column', c, names);
  if (metrics.length === 0) throw new InputError('aggregateSeeds: no metric to aggregate (the frame has no metric columns)');
  if (frame.table.numRows() === 0) throw new InputError('aggregateSeeds: the frame has no runs');
  const rollup: Record<string, unknown> = {
    runs: aq.op.array_agg('runId'),
    seeds: aq.op.array_agg('seed'),
    runCount: aq.op.count(),
  };
  for (const m of metrics) {
    rollup[`${m}.mean`] = aq.op.mean(m);
    rollup[`${m}.std`] = aq.op.stdev(m);
    rollup[`${m}.n`] = aq.op.valid(m);
  }
  let out = frame.table.groupby(...by).rollup(rollup as Record<string, never>);
  if (options.varyingOnly) {
    const keep = [...new Set(['experiment', ...varyingColumns(out, by)])].filter((c) => by.includes(c));
    const drop = by.filter((c) => !keep.includes(c));
    if (drop.length > 0) out = out.select(aq.not(...drop));
  }
  // arquero leaves stdev undefined for n < 2; null keeps the column's blanks JSON-safe.
  const stdColumns = metrics.map((m) => `${m}.std`);
  const fixed: Record<string, unknown[]> = {};
  for (const c of out.columnNames()) {
    const values = out.array(c) as unknown[];
    fixed[c] = stdColumns.includes(c) ? Array.from(values, (v) => (v === undefined ? null : v)) : Array.from(values);
  }
  return aq.table(fixed, out.columnNames());
}

/**
 * An arquero table as a SimpleTable for display (lib/util/table.ts renderings, showTable):
 * arrays become comma-separated text, numbers stay numbers (the rendering's `digits` rounds them).
 */
export function frameToSimpleTable(table: ColumnTable, options: { columns?: readonly string[]; caption?: string } = {}): SimpleTable {
  const columns = [...(options.columns ?? table.columnNames())];
  const names = table.columnNames();
  for (const c of columns) if (!names.includes(c)) throw new UnknownNameError('column', c, names);
  const arrays = columns.map((c) => table.array(c) as unknown[]);
  const rows: TableValue[][] = [];
  for (let i = 0; i < table.numRows(); i++) {
    rows.push(
      arrays.map((a) => {
        const v = a[i];
        if (Array.isArray(v)) return v.join(', ');
        if (v === undefined || v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
        return JSON.stringify(v);
      }),
    );
  }
  return { columns, rows, ...(options.caption ? { caption: options.caption } : {}) };
}
