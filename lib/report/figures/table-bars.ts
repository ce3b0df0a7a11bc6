/**
 * Bars of a table's rows: per row our value beside the paper's, grouped, with error bars on ours —
 * one standard deviation over seeds (symmetric) or a confidence interval [lo, hi] (asymmetric:
 * up to hi, down to lo), whichever the row carries. Hovering a bar shows the numbers, n and Δ.
 *
 * Input: plain rows (label, ours, std or ci, n, paper), what a side-by-side table holds per cell.
 */
import { InputError } from '../../util/errors.js';
import { emptyFigure, requireFinite, type ErrorBars, type Figure } from './figure.js';

export interface BarRow {
  /** The row's label, e.g. "STS-B" or "w/o ibn". */
  label: string;
  /** Our value (e.g. Spearman × 100); absent when not measured yet. */
  ours?: number;
  /** One standard deviation of `ours` over seeds: a symmetric error bar. */
  std?: number;
  /** A confidence interval around `ours` (e.g. bootstrap 95%): an asymmetric error bar. */
  ci?: readonly [number, number];
  /** How many runs `ours` comes from, shown on hover. */
  n?: number;
  /** The paper's value; absent when the paper has none. */
  paper?: number;
}

export interface TableBarsOptions {
  title?: string;
  /** The value axis title; default 'Spearman ρ × 100'. */
  valueLabel?: string;
  oursName?: string;
  paperName?: string;
  /** Value-axis range; default: plotly's (bars start at 0). Give one to see sub-point gaps. */
  range?: readonly [number, number];
  /** Decimals in hover text; default 2. */
  digits?: number;
}

export const OURS_COLOR = '#1f77b4';
export const PAPER_COLOR = '#9e9e9e';

/** Error bar lengths above and below `ours` for one row (null: the row has no uncertainty). */
function errorOf(row: BarRow): { plus: number | null; minus: number | null } {
  const what = `bar row '${row.label}'`;
  if (row.std !== undefined && row.ci !== undefined) throw new InputError(`${what}: give std or ci, not both`);
  if (row.ours === undefined) {
    if (row.std !== undefined || row.ci !== undefined) throw new InputError(`${what}: has an error bar but no value 'ours'`);
    return { plus: null, minus: null };
  }
  if (row.std !== undefined) {
    const std = requireFinite(row.std, `${what}: std`);
    if (std < 0) throw new InputError(`${what}: std must be >= 0, got ${std}`);
    return { plus: std, minus: std };
  }
  if (row.ci !== undefined) {
    const [lo, hi] = [requireFinite(row.ci[0], `${what}: ci[0]`), requireFinite(row.ci[1], `${what}: ci[1]`)];
    if (!(lo <= row.ours && row.ours <= hi)) throw new InputError(`${what}: ci [${lo}, ${hi}] does not contain ours = ${row.ours}`);
    return { plus: hi - row.ours, minus: row.ours - lo };
  }
  return { plus: null, minus: null };
}

export function tableBarsFigure(rows: readonly BarRow[], opts: TableBarsOptions = {}): Figure {
  const title = opts.title ?? 'Ours vs the paper';
  const valueLabel = opts.valueLabel ?? 'Spearman ρ × 100';
  const d = opts.digits ?? 2;
  if (rows.every((r) => r.ours === undefined && r.paper === undefined)) {
    return emptyFigure(title, rows.length === 0 ? 'no rows given' : 'no row has our value or the paper’s');
  }
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.label)) throw new InputError(`bar rows: the label '${r.label}' appears twice (rows are plotted by label)`);
    seen.add(r.label);
    if (r.ours !== undefined) requireFinite(r.ours, `bar row '${r.label}': ours`);
    if (r.paper !== undefined) requireFinite(r.paper, `bar row '${r.label}': paper`);
  }
  const labels = rows.map((r) => r.label);
  const errors = rows.map(errorOf);
  const hasErrors = errors.some((e) => e.plus !== null);
  const oursText = rows.map((r, i) => {
    if (r.ours === undefined) return 'not measured';
    const e = errors[i]!;
    const spread =
      r.std !== undefined ? ` ± ${r.std.toFixed(d)} (std)` : r.ci !== undefined ? ` [${r.ci[0].toFixed(d)}, ${r.ci[1].toFixed(d)}] (CI)` : '';
    const n = r.n !== undefined ? `, n = ${r.n}` : '';
    const delta = r.paper !== undefined ? `<br>Δ vs paper ${r.ours - r.paper >= 0 ? '+' : ''}${(r.ours - r.paper).toFixed(d)}` : '';
    return `${r.ours.toFixed(d)}${e.plus !== null ? spread : ''}${n}${delta}`;
  });
  const errorY: ErrorBars = {
    type: 'data',
    symmetric: false,
    array: errors.map((e) => e.plus),
    arrayminus: errors.map((e) => e.minus),
    visible: hasErrors,
    color: '#333',
    thickness: 1.5,
    width: 6,
  };
  const oursName = opts.oursName ?? 'ours';
  const paperName = opts.paperName ?? 'paper';
  return {
    data: [
      {
        type: 'bar',
        name: oursName,
        x: labels,
        y: rows.map((r) => r.ours ?? null),
        error_y: errorY,
        marker: { color: OURS_COLOR },
        text: oursText,
        textposition: 'none',
        hovertemplate: `%{x}<br>${oursName}: %{text}<extra></extra>`,
      },
      {
        type: 'bar',
        name: paperName,
        x: labels,
        y: rows.map((r) => r.paper ?? null),
        marker: { color: PAPER_COLOR },
        hovertemplate: `%{x}<br>${paperName}: %{y:.${d}f}<extra></extra>`,
      },
    ],
    layout: {
      title: { text: title },
      barmode: 'group',
      bargap: 0.25,
      yaxis: { title: { text: valueLabel }, ...(opts.range ? { range: [...opts.range] } : {}) },
      xaxis: { type: 'category', automargin: true },
      legend: { orientation: 'h', y: 1.08, x: 1, xanchor: 'right' },
      margin: { t: 70, r: 20, b: 60, l: 70 },
    },
  };
}
