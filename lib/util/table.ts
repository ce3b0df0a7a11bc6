/**
 * A small table as plain data, and its renderings: HTML (notebooks), Markdown (files, READMEs)
 * and aligned plain text (terminals). Pure string functions, so every layer can produce a table
 * and the notebook layer decides how to show it.
 *
 * Optional extras: `notes` (lines under the table, in every rendering: a table's footnotes) and
 * `titles` (per-cell hover text, HTML only: detail that would crowd the plain renderings, e.g. the
 * run ids behind a number). A table without them renders exactly as before they existed.
 */

export type TableValue = string | number | boolean | null | undefined;

export interface SimpleTable {
  columns: string[];
  rows: TableValue[][];
  caption?: string;
  /** Lines shown under the table in every rendering (footnotes). */
  notes?: string[];
  /** Hover text per cell for the HTML rendering (a `title` attribute): same shape as `rows`; blank for none. */
  titles?: (string | null | undefined)[][];
}

export interface TableFormat {
  /** Decimal places for numbers (default: as JavaScript prints them). */
  digits?: number;
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
  if (t.titles !== undefined) {
    if (t.titles.length !== t.rows.length) throw new RangeError(`table titles have ${t.titles.length} rows for ${t.rows.length} rows`);
    t.titles.forEach((r, i) => {
      if (r.length !== t.columns.length) throw new RangeError(`table titles row ${i + 1} has ${r.length} values for ${t.columns.length} columns`);
    });
  }
  return t.columns.map((_, j) => t.rows.some((r) => typeof r[j] === 'number') && t.rows.every((r) => typeof r[j] === 'number' || r[j] == null));
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function tableToHtml(t: SimpleTable, f: TableFormat = {}): string {
  const numeric = numericColumns(t);
  const align = (j: number) => (numeric[j] ? ' style="text-align:right"' : '');
  const head = t.columns.map((c, j) => `<th${align(j)}>${escapeHtml(c)}</th>`).join('');
  const title = (i: number, j: number) => {
    const v = t.titles?.[i]?.[j];
    return v ? ` title="${escapeHtml(v)}"` : '';
  };
  const body = t.rows
    .map((r, i) => `<tr>${r.map((v, j) => `<td${align(j)}${title(i, j)}>${escapeHtml(cellText(v, f))}</td>`).join('')}</tr>`)
    .join('\n');
  const caption = t.caption ? `<caption>${escapeHtml(t.caption)}</caption>\n` : '';
  // Notes as a footer row spanning the table, so the rendering stays one <table> element.
  const foot = t.notes?.length
    ? `\n<tfoot>\n${t.notes.map((n) => `<tr><td colspan="${t.columns.length}" style="text-align:left">${escapeHtml(n)}</td></tr>`).join('\n')}\n</tfoot>`
    : '';
  return `<table>\n${caption}<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>${foot}\n</table>`;
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
  // Notes are plain text: characters Markdown would read as markup are escaped.
  const notes = t.notes?.length ? `\n\n${t.notes.map((n) => `- ${n.replace(/([\\<*_`[\]])/g, '\\$1').replace(/\n/g, ' ')}`).join('\n')}` : '';
  return (t.caption ? `**${esc(t.caption)}**\n\n` : '') + lines.join('\n') + notes;
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
  const notes = t.notes?.length ? '\n' + t.notes.join('\n') : '';
  return (t.caption ? t.caption + '\n' : '') + lines.join('\n') + notes;
}
