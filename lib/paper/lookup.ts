/**
 * Finding the papers' numbers: every table of every paper version (`PAPER_TABLES`), one table
 * (`paperTable`), one number (`paperCell`), and a table as printed (`printedTable`, for display).
 *
 * Names are matched exactly first, then loosely (case, curly vs straight apostrophes, spaces), so
 * 'AnglE-BERT' finds 001_'s 'Angle-BERT' and "Spearman's" finds "Spearman’s". Asking for
 * something that does not exist throws an UnknownNameError that lists what does; asking for a
 * cell that is printed but is not a number ('-', 'N/A', a blank the extraction lost) says so.
 */
import { InputError, UnknownNameError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import { ANGLE_FILES, ANGLE_TABLES } from './angle.js';
import { PROMPTEOL_FILE, PROMPTEOL_TABLES } from './prompteol.js';
import { SIMACE_FILE, SIMACE_TABLES } from './simace.js';
import { SPREAD_SUFFIX, type PaperId, type PaperNonNumber, type PaperNumber, type PaperTable } from './types.js';

export const PAPER_IDS: readonly PaperId[] = ['angle', 'prompteol', 'simace'];

/** Each paper's files in `papers/`, in the order a default is chosen (AnglE: 000_ first). */
export const PAPER_FILES: Readonly<Record<PaperId, readonly string[]>> = {
  angle: [ANGLE_FILES.v000, ANGLE_FILES.v001, ANGLE_FILES.v003],
  prompteol: [PROMPTEOL_FILE],
  simace: [SIMACE_FILE],
};

export const PAPER_TABLES: readonly PaperTable[] = [...ANGLE_TABLES, ...PROMPTEOL_TABLES, ...SIMACE_TABLES];

/** Every number of every table, in paper, file, table, printed order. */
export function paperNumbers(): PaperNumber[] {
  return PAPER_TABLES.flatMap((t) => t.numbers);
}

/** Every printed cell that is not a number ('-', 'N/A', blanks, text cells). */
export function paperNonNumbers(): PaperNonNumber[] {
  return PAPER_TABLES.flatMap((t) => t.nonNumbers);
}

export interface PaperTableEntry {
  paper: PaperId;
  table: string;
  /** The files that print this table, default first. */
  files: string[];
}

/** The tables of one paper (or all), each with the files that print it. */
export function listPaperTables(paper?: PaperId): PaperTableEntry[] {
  const out: PaperTableEntry[] = [];
  for (const p of paper ? [paper] : PAPER_IDS) {
    for (const file of PAPER_FILES[p]) {
      for (const t of PAPER_TABLES) {
        if (t.paper !== p || t.file !== file) continue;
        const e = out.find((x) => x.paper === p && x.table === t.table);
        if (e) e.files.push(file);
        else out.push({ paper: p, table: t.table, files: [file] });
      }
    }
  }
  return out.sort((a, b) => PAPER_IDS.indexOf(a.paper) - PAPER_IDS.indexOf(b.paper) || tableOrder(a.table) - tableOrder(b.table));
}

function tableOrder(name: string): number {
  const m = /^Table (\d+)$/.exec(name);
  return m ? Number(m[1]) : 1000;
}

/** Lower case, one kind of apostrophe, single spaces: how a name is matched when not exact. */
export function looseName(s: string): string {
  return s.replace(/[’‘`]/g, "'").replace(/\s+/g, ' ').trim().toLowerCase();
}

function resolvePaper(paper: string): PaperId {
  const p = PAPER_IDS.find((id) => id === paper || id === looseName(paper));
  if (!p) throw new UnknownNameError('paper', paper, PAPER_IDS);
  return p;
}

/** 'Table 2', 2, '2' and 'table 2' all name Table 2; pseudo-tables by name (loosely). */
function resolveTableName(paper: PaperId, table: string | number): string {
  const names = listPaperTables(paper).map((e) => e.table);
  const given = String(table);
  const candidates = /^\d+$/.test(given.trim()) ? [`Table ${given.trim()}`] : [given];
  for (const c of candidates) {
    const exact = names.find((n) => n === c) ?? names.find((n) => looseName(n) === looseName(c));
    if (exact) return exact;
  }
  throw new UnknownNameError(`${paper} table`, given, names);
}

/** A file by its full name or its number prefix ('000', '000_'). */
function resolveFile(paper: PaperId, tableName: string, file: string): string {
  const files = listPaperTables(paper).find((e) => e.table === tableName)!.files;
  const f = files.find((x) => x === file || x.startsWith(file.endsWith('_') ? file : `${file}_`));
  if (!f) throw new UnknownNameError(`file printing ${paper} ${tableName}`, file, files);
  return f;
}

/**
 * One table of one paper version. Without `file`, the first file of `PAPER_FILES[paper]` that
 * prints it (for AnglE: 000_).
 */
export function paperTable(paper: string, table: string | number, file?: string): PaperTable {
  const p = resolvePaper(paper);
  const name = resolveTableName(p, table);
  const files = listPaperTables(p).find((e) => e.table === name)!.files;
  const f = file === undefined ? files[0]! : resolveFile(p, name, file);
  return PAPER_TABLES.find((t) => t.paper === p && t.table === name && t.file === f)!;
}

export interface PaperCellQuery {
  paper: string;
  table: string | number;
  row: string;
  column: string;
  file?: string;
  /** Needed when the row label is printed under several groups (AnglE Table 2's SimCSE-BERT). */
  group?: string;
}

function describe(t: PaperTable): string {
  return `${t.paper} ${t.table} (${t.file})`;
}

function pick<T>(items: readonly T[], key: (x: T) => string, given: string): T[] {
  const exact = items.filter((x) => key(x) === given);
  return exact.length > 0 ? exact : items.filter((x) => looseName(key(x)) === looseName(given));
}

/** One number, by paper, table, row, column (and file, group where needed). */
export function paperCell(q: PaperCellQuery): PaperNumber {
  const t = paperTable(q.paper, q.table, q.file);
  let rows = t.blocks.flatMap((b) => b.rows);
  if (q.group !== undefined) {
    const groups = [...new Set(rows.map((r) => r.group).filter((g): g is string => g !== undefined))];
    if (groups.length === 0) throw new InputError(`${describe(t)} has no row groups (given group '${q.group}')`);
    const g = pick(groups, (x) => x, q.group);
    if (g.length === 0) throw new UnknownNameError(`group of ${describe(t)}`, q.group, groups);
    rows = rows.filter((r) => r.group === g[0]);
  }
  const matches = pick(rows, (r) => r.label, q.row);
  const groupsOf = [...new Set(matches.map((r) => r.group ?? ''))];
  if (matches.length === 0) {
    const valid = [...new Set(rows.map((r) => (r.group !== undefined && q.group === undefined ? `${r.group} / ${r.label}` : r.label)))];
    throw new UnknownNameError(`row of ${describe(t)}`, q.row, valid);
  }
  if (groupsOf.length > 1) {
    throw new InputError(`row '${q.row}' of ${describe(t)} is printed under several groups (${groupsOf.join(', ')}); pass group`);
  }
  const row = matches[0]!;
  const column = pick(t.columns, (c) => c, q.column)[0];
  if (column === undefined) throw new UnknownNameError(`column of ${describe(t)}`, q.column, t.columns);
  const sameCell = (c: { group?: string; row: string; column: string }) => c.group === row.group && c.row === row.label && c.column === column;
  const cell = t.numbers.find(sameCell);
  if (cell) return cell;
  const other = t.nonNumbers.find(sameCell);
  const where = `${describe(t)}, row '${row.label}'${row.group ? ` (${row.group})` : ''}, column '${column}'`;
  if (other) {
    const what = other.kind === 'blank' ? 'blank in the text file' : `printed as '${other.printed}'`;
    throw new InputError(`${where} is not a number: ${what}${other.note ? ` (${other.note})` : ''}`);
  }
  throw new InputError(`${where} is not printed (the row has no such cell)`);
}

/**
 * A table as printed, for display: one line per printed row (group and label with markers, then
 * each column's text as printed; "mean ± std" kept together). Numbers stay strings so trailing
 * zeros survive; they are padded to a common width per column so they line up.
 */
export function printedTable(t: PaperTable): SimpleTable {
  const columns = t.blocks.length === 1 ? t.blocks[0]!.columns : [...new Set(t.blocks.flatMap((b) => b.columns))];
  const hasGroups = t.blocks.some((b) => b.rows.some((r) => r.group !== undefined));
  const rows = new Map<string, { group?: string; label: string; values: Map<string, string> }>();
  const key = (group: string | undefined, label: string) => `${group ?? ''}\u0000${label}`;
  for (const b of t.blocks) for (const r of b.rows) {
    if (!rows.has(key(r.group, r.label))) {
      rows.set(key(r.group, r.label), { group: r.group, label: r.label + (r.markers.length ? ` ${r.markers.join('')}` : ''), values: new Map() });
    }
  }
  for (const c of t.numbers) {
    const r = rows.get(key(c.group, c.row))!;
    const spread = c.column.endsWith(SPREAD_SUFFIX) ? c.column.slice(0, -SPREAD_SUFFIX.length) : undefined;
    const text = c.printed + (c.unit ?? '');
    if (spread !== undefined && columns.includes(spread)) r.values.set(spread, `${r.values.get(spread)} ± ${text}`);
    else r.values.set(c.column, text);
  }
  for (const c of t.nonNumbers) rows.get(key(c.group, c.row))!.values.set(c.column, c.printed);
  // A group's name on its first row only, as papers print it.
  const body = [...rows.values()].map((r, i, all) => [
    ...(hasGroups ? [i > 0 && all[i - 1]!.group === r.group ? '' : (r.group ?? '')] : []),
    r.label,
    ...columns.map((c) => r.values.get(c) ?? ''),
  ]);
  // Right-align number-like columns by padding (tableToText left-aligns strings).
  const first = hasGroups ? 2 : 1;
  columns.forEach((c, j) => {
    if (t.textColumns.includes(c)) return;
    const width = Math.max(...body.map((r) => r[first + j]!.length));
    for (const r of body) r[first + j] = r[first + j]!.padStart(width);
  });
  return {
    caption: `${t.paper} ${t.table} (${t.file}): ${t.quantity}`,
    columns: [...(hasGroups ? [''] : []), '', ...columns],
    rows: body,
  };
}
