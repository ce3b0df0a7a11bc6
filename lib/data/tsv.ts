/**
 * Tab-separated files with a header line, columns picked by name (GLUE tsv, MSR paraphrase files):
 * one reader, so every such loader reports a missing column, a short row and an empty file alike.
 */
import { InputError, type InputLocation } from '../util/errors.js';
import { pyFileLines, readText } from './text.js';

export interface TsvRow {
  /** The requested columns' values, in the order asked for. */
  values: string[];
  where: Required<InputLocation>;
}

/** Reads `file`, finds `columns` in its header, and returns the non-blank data rows. */
export function readTsvColumns(file: string, columns: readonly string[], what: string): TsvRow[] {
  const lines = pyFileLines(readText(file, what));
  const header = lines[0].split('\t').map((h) => h.trim());
  const idx = columns.map((c) => {
    const i = header.indexOf(c);
    if (i < 0) throw new InputError(`header has no column '${c}' (missing column): expected ${what}; found ${header.join(', ')}`, { file, line: 1 });
    return i;
  });
  const need = Math.max(...idx) + 1;
  const rows: TsvRow[] = [];
  for (let i = 1; i < lines.length; i++) {
    const where = { file, line: i + 1 };
    if (lines[i] === '') continue;
    const f = lines[i].split('\t');
    if (f.length < need) {
      throw new InputError(`expected ${header.length} tab-separated columns (${header.join(', ')}), found ${f.length} (missing column)`, where);
    }
    rows.push({ values: idx.map((j) => f[j]), where });
  }
  if (rows.length === 0) throw new InputError(`no data rows after the header line`, { file, line: 2 });
  return rows;
}
