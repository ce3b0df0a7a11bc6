/**
 * Showing a small table in a notebook: as HTML (or markdown) through tslab's display when the code
 * runs in the tslab kernel or the headless notebook runner, else as aligned plain text on stdout.
 */

export type TableValue = string | number | boolean | null | undefined;

export interface SimpleTable {
  columns: string[];
  rows: TableValue[][];
  caption?: string;
}

export interface TableFormat {
  /** Decimal places for numbers (default: as JavaScript prints them). */
  digits?: number;
}

/** The subset of tslab's `display` this module uses. */
interface TslabDisplay {
  html(s: string): void;
  markdown(s: string): void;
}

/**
 * tslab's display when running under tslab, else undefined. tslab's executor (kernel and headless
 * runner alike) sets `globalThis.__tslab__` and hooks its `require('tslab')` to the kernel's own
 * tslab instance, the one whose display is wired to the notebook; this asks that instance.
 */
function tslabDisplay(): TslabDisplay | undefined {
  const hook = (globalThis as { __tslab__?: { require?: (id: string) => unknown } }).__tslab__;
  if (typeof hook?.require !== 'function') return undefined;
  try {
    return (hook.require('tslab') as { display?: TslabDisplay }).display;
  } catch {
    return undefined;
  }
}

export function runningUnderTslab(): boolean {
  return tslabDisplay() !== undefined;
}

function cellText(v: TableValue, f: TableFormat): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' && f.digits !== undefined) return v.toFixed(f.digits);
  return String(v);
}

/** Checks the shape; returns which columns are numeric (numbers or blanks only), to right-align. */
function numericColumns(t: SimpleTable): boolean[] {
  t.rows.forEach((r, i) => {
    if (r.length !== t.columns.length) {
      throw new RangeError(`table row ${i + 1} has ${r.length} values for ${t.columns.length} columns`);
    }
  });
  return t.columns.map((_, j) => t.rows.some((r) => typeof r[j] === 'number') && t.rows.every((r) => typeof r[j] === 'number' || r[j] == null));
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function tableToHtml(t: SimpleTable, f: TableFormat = {}): string {
  const numeric = numericColumns(t);
  const align = (j: number) => (numeric[j] ? ' style="text-align:right"' : '');
  const head = t.columns.map((c, j) => `<th${align(j)}>${escapeHtml(c)}</th>`).join('');
  const body = t.rows
    .map((r) => `<tr>${r.map((v, j) => `<td${align(j)}>${escapeHtml(cellText(v, f))}</td>`).join('')}</tr>`)
    .join('\n');
  const caption = t.caption ? `<caption>${escapeHtml(t.caption)}</caption>\n` : '';
  return `<table>\n${caption}<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

export function tableToMarkdown(t: SimpleTable, f: TableFormat = {}): string {
  const numeric = numericColumns(t);
  // `<` would start an HTML tag in markdown; `|` would end the cell.
  const esc = (s: string) => s.replace(/([|<\\])/g, '\\$1').replace(/\n/g, ' ');
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const lines = [
    line(t.columns.map(esc)),
    line(numeric.map((n) => (n ? '---:' : '---'))),
    ...t.rows.map((r) => line(r.map((v) => esc(cellText(v, f))))),
  ];
  return (t.caption ? `**${esc(t.caption)}**\n\n` : '') + lines.join('\n');
}

/** Aligned columns; numbers right-aligned. */
export function tableToText(t: SimpleTable, f: TableFormat = {}): string {
  const numeric = numericColumns(t);
  const cells = [t.columns, ...t.rows.map((r) => r.map((v) => cellText(v, f)))];
  const width = t.columns.map((_, j) => Math.max(...cells.map((r) => r[j]!.length)));
  const fmt = (r: string[]) =>
    r
      .map((s, j) => (numeric[j] ? s.padStart(width[j]!) : s.padEnd(width[j]!)))
      .join('  ')
      .trimEnd();
  const lines = cells.map(fmt);
  lines.splice(1, 0, width.map((w) => '-'.repeat(w)).join('  '));
  return (t.caption ? t.caption + '\n' : '') + lines.join('\n');
}

/**
 * Shows `t`: under tslab as HTML (or markdown with `format: 'markdown'`), else as plain text on
 * stdout, so the same notebook code reads well in Jupyter, in the runner's .ipynb and in a terminal.
 */
export function showTable(t: SimpleTable, opts: TableFormat & { format?: 'html' | 'markdown' } = {}): void {
  const display = tslabDisplay();
  if (!display) {
    console.log(tableToText(t, opts));
  } else if (opts.format === 'markdown') {
    display.markdown(tableToMarkdown(t, opts));
  } else {
    display.html(tableToHtml(t, opts));
  }
}
