/**
 * A paper table with our numbers beside the paper's: per cell, ours, the paper's number as printed
 * (with its markers), Δ = ours − paper, and the runs ours came from.
 *
 * Ours is
 * - over several seeds of one configuration: mean ± sample std (n) (./statistics/mean-std.ts);
 * - for a single run: its value, with a bootstrap confidence interval of its Spearman from its
 *   predictions sidecar (./statistics/spearman-bootstrap.ts: seeded, 1000 resamples, 95% BCa by
 *   default) when the sidecar's Spearman is the cell's metric (so an interval never sits beside a
 *   number it was not computed for);
 * - for a cell with no run: "not run", or the caller's reason ("data not on this machine").
 *
 * The caller maps cells of the paper table (row, column, group) to a selection of our runs and a
 * metric (./run-selection.ts; the runs must be seeds of one configuration). Rows whose printed
 * average disagrees with its own cells (lib/paper/averages.ts) get a note saying so.
 *
 * Rendered by `sideBySideTable` as a SimpleTable (lib/util/table.ts: HTML with per-cell hover
 * detail, Markdown, text), and by `sideBySideBars` as rows for ./figures/table-bars.ts.
 */
import { AVERAGE_SPECS, averageDisagreement } from '../paper/averages.js';
import { looseName } from '../paper/lookup.js';
import { SPREAD_SUFFIX, type PaperNonNumber, type PaperNumber, type PaperRow, type PaperTable } from '../paper/types.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import type { SimpleTable, TableValue } from '../util/table.js';
import type { BarRow } from './figures/table-bars.js';
import { paperText, signed } from './format-numbers.js';
import type { LoadedRun, ResultsFrame } from './results-reader.js';
import { describeSelection, selectSeeds, type RunSelection } from './run-selection.js';
import type { ConfidenceInterval, IntervalMethod } from './statistics/bootstrap-interval.js';
import { formatMeanStd, formatWithInterval, meanStd } from './statistics/mean-std.js';
import { DEFAULT_RESAMPLES } from './statistics/rank-bootstrap.js';
import { bootstrapSpearmanCI } from './statistics/spearman-bootstrap.js';

/** The metric a cell compares when the caller names none: the test Spearman × 100. */
export const DEFAULT_METRIC = 'test_spearman';

/** One cell of the paper table and where our number for it comes from. */
export interface CellSource {
  row: string;
  column: string;
  /** The row's group, where the table has groups and the label alone is ambiguous. */
  group?: string;
  /** Our runs for this cell (seeds of one configuration); absent: not run. */
  runs?: RunSelection;
  /** The frame's metric column (default 'test_spearman'). */
  metric?: string;
  /** Shown instead of "not run" when no run is given or selected, e.g. "data not on this machine". */
  reason?: string;
}

export interface SideBySideBootstrap {
  /** Default 1000. */
  resamples?: number;
  /** Default 0. */
  seed?: number;
  /** Default 0.95. */
  level?: number;
  /** Default 'bca'. */
  method?: IntervalMethod;
}

export interface SideBySideOptions {
  /** 'mapped' (default): the given cells; 'all': every number of the table, unmapped ones "not run". */
  include?: 'mapped' | 'all';
  bootstrap?: SideBySideBootstrap;
  /** Decimals of ours and Δ (default 2, as the papers print). */
  digits?: number;
}

/** A single run's bootstrap interval (the distribution itself is not kept). */
export interface SingleRunInterval {
  spearman: number;
  ci: ConfidenceInterval;
  standardError: number;
  /** Test pairs resampled. */
  n: number;
  resamples: number;
  seed: number | null;
}

export type OursValue =
  | { kind: 'seeds'; mean: number; std: number; n: number; values: number[] }
  | { kind: 'single'; value: number; interval?: SingleRunInterval; intervalNote?: string };

export interface SideBySideCell {
  group?: string;
  row: string;
  column: string;
  /** The paper's number; absent when the printed cell is not a number ('-', blank). */
  paper?: PaperNumber;
  /** The printed cell as the table shows it: "74.89 †", "-", "(blank)". */
  paperText: string;
  metric: string;
  runs: LoadedRun[];
  ours?: OursValue;
  /** ours − paper, when both exist. */
  delta?: number;
  /** 'measured', 'not run', or the caller's reason. */
  status: string;
}

export interface SideBySide {
  table: PaperTable;
  cells: SideBySideCell[];
  notes: string[];
  digits: number;
}

/** The value a cell compares: the mean over seeds or the single run's value. */
export function oursValue(o: OursValue): number {
  return o.kind === 'seeds' ? o.mean : o.value;
}

// ---------------------------------------------------------------------------------------------
// Finding a printed cell of a table (exact names first, then loosely, as lib/paper/lookup.ts).

interface PrintedCell {
  row: PaperRow;
  column: string;
  number?: PaperNumber;
  other?: PaperNonNumber;
}

function pick<T>(items: readonly T[], name: (t: T) => string, wanted: string): T[] {
  const exact = items.filter((t) => name(t) === wanted);
  return exact.length > 0 ? exact : items.filter((t) => looseName(name(t)) === looseName(wanted));
}

function describeTable(t: PaperTable): string {
  return `${t.paper} ${t.table} (${t.file})`;
}

function findPrinted(t: PaperTable, q: { group?: string; row: string; column: string }): PrintedCell {
  let rows = t.blocks.flatMap((b) => b.rows);
  if (q.group !== undefined) {
    const groups = [...new Set(rows.map((r) => r.group).filter((g): g is string => g !== undefined))];
    const g = pick(groups, (x) => x, q.group);
    if (g.length === 0) throw new UnknownNameError(`group of ${describeTable(t)}`, q.group, groups);
    rows = rows.filter((r) => r.group === g[0]);
  }
  const matches = pick(rows, (r) => r.label, q.row);
  if (matches.length === 0) {
    throw new UnknownNameError(`row of ${describeTable(t)}`, q.row, [...new Set(rows.map((r) => (r.group !== undefined && q.group === undefined ? `${r.group} / ${r.label}` : r.label)))]);
  }
  const groups = [...new Set(matches.map((r) => r.group ?? ''))];
  if (groups.length > 1) throw new InputError(`row '${q.row}' of ${describeTable(t)} is printed under several groups (${groups.join(', ')}); pass group`);
  const row = matches[0]!;
  const columns = t.columns.filter((c) => !c.endsWith(SPREAD_SUFFIX) && !t.textColumns.includes(c));
  const column = pick(columns, (c) => c, q.column)[0];
  if (column === undefined) throw new UnknownNameError(`column of ${describeTable(t)}`, q.column, columns);
  const same = (c: { group?: string; row: string; column: string }) => c.group === row.group && c.row === row.label && c.column === column;
  const number = t.numbers.find(same);
  const other = t.nonNumbers.find(same);
  if (!number && !other) throw new InputError(`${describeTable(t)}, row '${row.label}', column '${column}' is not printed (the row has no such cell)`);
  return { row, column, ...(number ? { number } : {}), ...(other ? { other } : {}) };
}

// ---------------------------------------------------------------------------------------------

function singleRunValue(run: LoadedRun, metric: string, value: number, b: SideBySideBootstrap): OursValue {
  const p = run.predictions;
  if (!p) return { kind: 'single', value, intervalNote: 'no predictions sidecar: no confidence interval' };
  const r = bootstrapSpearmanCI(p.predictions, p.gold, {
    resamples: b.resamples ?? DEFAULT_RESAMPLES,
    seed: b.seed ?? 0,
    level: b.level ?? 0.95,
    method: b.method ?? 'bca',
    source: run.predictionsFile,
  });
  // The sidecar holds the test predictions; its Spearman is the cell's metric only if they agree.
  if (Math.abs(r.spearman * 100 - value) > 1e-6 * Math.max(1, Math.abs(value))) {
    return {
      kind: 'single',
      value,
      intervalNote: `the predictions sidecar (${p.evaluator}) gives Spearman ${(r.spearman * 100).toFixed(4)}, not this metric (${metric} = ${value.toFixed(4)}): no interval`,
    };
  }
  return { kind: 'single', value, interval: { spearman: r.spearman, ci: r.ci, standardError: r.standardError, n: r.n, resamples: r.resamples, seed: r.seed } };
}

function metricOf(run: LoadedRun, frame: ResultsFrame, metric: string): number {
  const i = frame.runs.indexOf(run);
  const v = (frame.table.object(i) as Record<string, unknown>)[metric];
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new InputError(`run '${run.record.runId}' has no value for metric '${metric}' (its metrics: ${Object.keys(run.record.metrics).join(', ')})`, { file: run.file });
  }
  return v;
}

/**
 * Cell sources from several places (released checkpoints and runs trained here, say) as one list:
 * the first source of a (group, row, column) cell wins, so list the preferred ones first.
 */
export function mergeCellSources(...lists: ReadonlyArray<readonly CellSource[]>): CellSource[] {
  const seen = new Set<string>();
  return lists.flat().filter((c) => {
    const k = `${c.group ?? ''}\u0000${c.row}\u0000${c.column}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

/** Builds the side-by-side cells of `table` from the runs of `frame` chosen by `sources`. */
export function sideBySide(table: PaperTable, frame: ResultsFrame, sources: readonly CellSource[], options: SideBySideOptions = {}): SideBySide {
  const digits = options.digits ?? 2;
  const rowOrder = table.blocks.flatMap((b) => b.rows);
  const rowIndex = (r: PaperRow) => rowOrder.indexOf(r);
  const key = (r: PaperRow, column: string) => `${r.group ?? ''}\u0000${r.label}\u0000${column}`;

  const entries = new Map<string, { printed: PrintedCell; source?: CellSource }>();
  for (const s of sources) {
    const printed = findPrinted(table, s);
    const k = key(printed.row, printed.column);
    if (entries.has(k)) throw new InputError(`cell '${printed.row.label}' / '${printed.column}' of ${describeTable(table)} is mapped twice`);
    entries.set(k, { printed, source: s });
  }
  if (options.include === 'all') {
    for (const n of table.numbers) {
      if (n.column.endsWith(SPREAD_SUFFIX)) continue;
      const row = rowOrder.find((r) => r.group === n.group && r.label === n.row)!;
      const k = key(row, n.column);
      if (!entries.has(k)) entries.set(k, { printed: { row, column: n.column, number: n } });
    }
  }
  const ordered = [...entries.values()].sort(
    (a, b) => rowIndex(a.printed.row) - rowIndex(b.printed.row) || table.columns.indexOf(a.printed.column) - table.columns.indexOf(b.printed.column),
  );

  const cells: SideBySideCell[] = ordered.map(({ printed, source }) => {
    const metric = source?.metric ?? DEFAULT_METRIC;
    const paper = printed.number;
    const paperShown = paper ? paperText(paper) : printed.other!.kind === 'blank' ? '(blank)' : printed.other!.printed;
    const base = {
      ...(printed.row.group !== undefined ? { group: printed.row.group } : {}),
      row: printed.row.label,
      column: printed.column,
      ...(paper ? { paper } : {}),
      paperText: paperShown,
      metric,
    };
    const runs = source?.runs ? selectSeeds(frame, source.runs) : [];
    if (source?.runs && runs.length === 0 && !source.reason) {
      return { ...base, runs, status: `not run (no run matches ${describeSelection(source.runs)})` };
    }
    if (runs.length === 0) return { ...base, runs, status: source?.reason ?? 'not run' };
    const values = runs.map((r) => metricOf(r, frame, metric));
    const ours: OursValue =
      runs.length === 1
        ? singleRunValue(runs[0]!, metric, values[0]!, options.bootstrap ?? {})
        : { kind: 'seeds', ...meanStd(values), values };
    return { ...base, runs, ours, ...(paper ? { delta: oursValue(ours) - paper.value } : {}), status: 'measured' };
  });

  return { table, cells, notes: sideBySideNotes(table, cells), digits };
}

function sideBySideNotes(t: PaperTable, cells: readonly SideBySideCell[]): string[] {
  const notes: string[] = [];
  const kinds = new Set(cells.map((c) => c.ours?.kind));
  if (kinds.has('seeds')) notes.push('Ours over several seeds: mean ± sample standard deviation (n runs).');
  const withInterval = cells.find((c) => c.ours?.kind === 'single' && c.ours.interval);
  if (withInterval && withInterval.ours?.kind === 'single') {
    const i = withInterval.ours.interval!;
    notes.push(
      `Ours from one run: its value [${Math.round(i.ci.level * 100)}% ${i.ci.method === 'bca' ? 'BCa' : 'percentile'} bootstrap interval of its Spearman over its test pairs, ${i.resamples} resamples, seed ${i.seed ?? 'injected'}].`,
    );
  }
  if (cells.some((c) => c.ours?.kind === 'single' && !c.ours.interval)) notes.push('(n=1) without an interval: the run has no predictions sidecar for this metric.');
  const seen = new Set<string>();
  const spec = AVERAGE_SPECS.find((s) => s.paper === t.paper && s.table === t.table);
  for (const c of cells) {
    const k = `${c.group ?? ''}\u0000${c.row}`;
    if (seen.has(k)) continue;
    seen.add(k);
    const d = averageDisagreement({ paper: t.paper, table: t.table, file: t.file, row: c.row, ...(c.group !== undefined ? { group: c.group } : {}) });
    if (!d) continue;
    // Two decimals as the paper prints, four where two would hide the difference.
    const shown = d.recomputed.toFixed(2) === d.printed.toFixed(2) ? d.recomputed.toFixed(4) : d.recomputed.toFixed(2);
    notes.push(
      `The paper's ${spec?.column ?? 'average'} of ${c.group ? `${c.group} / ` : ''}${c.row} is printed as ${d.printed} but its cells average ${shown}` +
        `${spec ? ` (mean of ${spec.over.join(', ')})` : ''}: the printed average does not follow from the row${d.note ? ` — ${d.note.replace(/\.$/, '')}` : ''}.`,
    );
  }
  return notes;
}

// ---------------------------------------------------------------------------------------------
// Rendering.

function oursText(o: OursValue | undefined, digits: number): string {
  if (!o) return '';
  if (o.kind === 'seeds') return formatMeanStd({ mean: o.mean, std: o.std, n: o.n }, { digits });
  if (o.interval) {
    const { ci } = o.interval;
    return formatWithInterval(o.value, { low: ci.low * 100, high: ci.high * 100, level: ci.level, method: ci.method }, { digits });
  }
  return `${o.value.toFixed(digits)} (n=1)`;
}

function oursTitle(c: SideBySideCell, digits: number): string {
  const o = c.ours;
  if (!o) return '';
  const perRun = c.runs.map((r, i) => `seed ${r.record.seed}: ${(o.kind === 'seeds' ? o.values[i]! : o.value).toFixed(4)} (${r.record.runId})`);
  const lines = [`${c.metric}`, ...perRun];
  if (o.kind === 'single' && o.interval) {
    const i = o.interval;
    lines.push(
      `${Math.round(i.ci.level * 100)}% ${i.ci.method} interval [${(i.ci.low * 100).toFixed(digits + 2)}, ${(i.ci.high * 100).toFixed(digits + 2)}] from ${i.resamples} resamples (seed ${i.seed}) of ${i.n} test pairs; standard error ${(i.standardError * 100).toFixed(digits + 2)}`,
    );
  }
  if (o.kind === 'single' && o.intervalNote) lines.push(o.intervalNote);
  return lines.join('\n');
}

/** The side-by-side as a table: [group,] row, [column,] ours, paper, Δ, runs; notes under it. */
export function sideBySideTable(s: SideBySide, options: { caption?: string } = {}): SimpleTable {
  const t = s.table;
  const hasGroups = s.cells.some((c) => c.group !== undefined);
  const manyColumns = new Set(s.cells.map((c) => c.column)).size > 1;
  const columns = [...(hasGroups ? ['group'] : []), 'row', ...(manyColumns ? ['column'] : []), 'ours', 'paper', 'Δ (ours − paper)', 'runs'];
  const rows: TableValue[][] = [];
  const titles: string[][] = [];
  for (const c of s.cells) {
    const ours = c.ours ? oursText(c.ours, s.digits) : c.status;
    rows.push([
      ...(hasGroups ? [c.group ?? ''] : []),
      c.row,
      ...(manyColumns ? [c.column] : []),
      ours,
      c.paperText,
      c.delta === undefined ? '' : signed(c.delta, s.digits),
      c.runs.map((r) => r.record.runId).join(', '),
    ]);
    const paperTitle = c.paper ? `${c.paper.file}, ${c.paper.table}, ${c.group ? `${c.group} / ` : ''}${c.row}, ${c.column}: ${c.paper.printed}` : '';
    titles.push([
      ...(hasGroups ? [''] : []),
      '',
      ...(manyColumns ? [''] : []),
      oursTitle(c, s.digits),
      paperTitle,
      c.delta === undefined ? '' : `${oursValue(c.ours!).toFixed(4)} − ${c.paper!.printed}`,
      c.runs.map((r) => `${r.record.experiment}/${r.record.runId} (seed ${r.record.seed})${r.predictionsFile ? ' with predictions sidecar' : ''}`).join('\n'),
    ]);
  }
  const caption = options.caption ?? `${t.paper} ${t.table} (${t.file}): ${t.quantity} — ours beside the paper`;
  return { caption, columns, rows, ...(s.notes.length ? { notes: s.notes } : {}), titles };
}

/**
 * The measured or printed cells as bar rows (./figures/table-bars.ts): label = row (with the
 * column when cells span several), error bar = std over seeds or the single run's interval.
 * An interval that does not contain the value (BCa can, in odd cases) is left off the bar; the
 * table still shows it.
 */
export function sideBySideBars(s: SideBySide): BarRow[] {
  const manyColumns = new Set(s.cells.map((c) => c.column)).size > 1;
  const labels = s.cells.map((c) => (manyColumns ? `${c.row} · ${c.column}` : c.row));
  const repeated = labels.filter((l, i) => labels.indexOf(l) !== i);
  return s.cells.map((c, i) => {
    const label = repeated.includes(labels[i]!) && c.group ? `${c.group} / ${labels[i]}` : labels[i]!;
    const row: BarRow = { label, ...(c.paper ? { paper: c.paper.value } : {}) };
    const o = c.ours;
    if (!o) return row;
    if (o.kind === 'seeds') return { ...row, ours: o.mean, std: o.std, n: o.n };
    const ci = o.interval ? ([o.interval.ci.low * 100, o.interval.ci.high * 100] as const) : undefined;
    return { ...row, ours: o.value, n: 1, ...(ci && ci[0] <= o.value && o.value <= ci[1] ? { ci } : {}) };
  });
}
