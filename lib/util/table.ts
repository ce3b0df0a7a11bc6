/**
 * A small table as plain data, and its renderings: HTML (notebooks), Markdown (files, READMEs)
 * and aligned plain text (terminals). Pure string functions, so every layer can produce a table
 * and the notebook layer decides how to show it.
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

export function escapeHtml(s: string): string {
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
