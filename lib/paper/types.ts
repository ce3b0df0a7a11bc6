/**
 * The papers' numbers as typed data: every number printed in a table of the five papers in
 * `papers/` (AnglE ×3 versions, PromptEOL, SimACE) becomes one `PaperNumber` that says which
 * paper, file, table, row and column it is; cells that are not numbers ('-', 'N/A', a blank the
 * PDF extraction lost, a text cell) become `PaperNonNumber`s so nothing printed goes unnoticed.
 *
 * Tables are transcribed by hand in a compact form (`TableSource`: columns, then one line per
 * printed row with its numbers as printed) and expanded here by `defineTable`, which checks the
 * shape (one token per column, numbers that parse, unique row names) so a typo fails at import.
 *
 * Naming conventions (applied in angle.ts, prompteol.ts, simace.ts):
 * - Labels are as printed with whitespace normalised and extraction markup removed: LaTeX
 *   subscripts are written `_x` (`BERT _{base}` → `BERT_base`), `$110 \mathrm{M}$` → `110M`.
 * - Markers (†, ‡, ★, *, §, ◊, ♣, ♡, 『) attached to a row label are taken off the label and
 *   stored in `markers` of every cell of that row; bold and underline are not markers.
 * - A printed "mean ± std" becomes two cells: column `C` (the mean) and column `C ±` (the std).
 * - Where the extraction lost or misplaced a label, the row's label is reconstructed and its
 *   `note` says so and why.
 */

export type PaperId = 'angle' | 'prompteol' | 'simace';

/** The symbols a paper attaches to a label or number to say where a result comes from. */
export const MARKER_SYMBOLS: readonly string[] = ['†', '‡', '★', '*', '§', '◊', '♣', '♡', '『'];

/** Suffix of the column that holds the "± std" half of a printed "mean ± std". */
export const SPREAD_SUFFIX = ' ±';

/** Identity of one printed cell: paper, file, table, (group,) row and column. */
export interface PaperCellKey {
  paper: PaperId;
  /** The file in `papers/` the number is printed in, e.g. '000_c0fdd0968b088fcd.txt'. */
  file: string;
  /** 'Table N', or a pseudo-table for numbers stated in the text, e.g. 'Flickr30k (§4.5)'. */
  table: string;
  /** The section or model group the row is printed under, when the table has such groups. */
  group?: string;
  row: string;
  column: string;
}

/** One number printed in a paper. */
export interface PaperNumber extends PaperCellKey {
  value: number;
  /** The number exactly as printed (keeps trailing zeros: '33.00'; '3e-5'). */
  printed: string;
  /** A unit printed with the number: '%', '°', 'min'. */
  unit?: string;
  /** Symbols attached to the row label or to the number, e.g. ['†']. */
  markers: string[];
}

/**
 * A printed cell that is not a number: 'blank' (empty in the text file, e.g. lost by the PDF
 * extraction), 'not-applicable' ('-', 'N/A'), or 'text' (a word or sentence in a text column).
 */
export interface PaperNonNumber extends PaperCellKey {
  kind: 'blank' | 'not-applicable' | 'text';
  /** As printed; '' for a blank. */
  printed: string;
  /** Why it is blank, when known (the row's note). */
  note?: string;
}

/** One printed row of a table, in printed order. */
export interface PaperRow {
  group?: string;
  label: string;
  markers: string[];
  /** What a reader should know: a reconstructed label, a cell the extraction lost. */
  note?: string;
}

/** A run of rows under one header line (most tables have one block; SimACE Table 7 has two). */
export interface PaperBlock {
  /** Column labels as printed, before ± columns are split off. */
  columns: string[];
  rows: PaperRow[];
}

/** A table of one paper version, with all its cells. */
export interface PaperTable {
  paper: PaperId;
  file: string;
  table: string;
  caption: string;
  /** What the numbers are, e.g. "Spearman's ρ × 100 (SentEval 'all')". */
  quantity: string;
  notes: string[];
  blocks: PaperBlock[];
  /** Every column a cell of this table can have, in printed order, ± columns included. */
  columns: string[];
  /** Columns that hold words, not numbers. */
  textColumns: string[];
  numbers: PaperNumber[];
  nonNumbers: PaperNonNumber[];
}

// ---------------------------------------------------------------------------------------------
// The compact transcription form.

/** Starts a group: the rows after it are printed under this section / model heading. */
export interface GroupStart {
  group: string;
}

/**
 * One printed row: [label with its markers, values, note?]. Values are one string of
 * whitespace-separated tokens (or an array, for text cells with spaces), one per column:
 * a number as printed ('82.37', '3e-5', '10°', '64min', '12.9%'), a mean with spread
 * ('75.97±0.69'), '-' or 'N/A', '_' for a cell the text file leaves blank, or a word in a text
 * column. A label's trailing marker symbols ('GloVe (avg.) †') become the row's markers.
 */
export type RowSource = readonly [label: string, values: string | readonly string[], note?: string];

export interface BlockSource {
  columns: readonly string[];
  rows: readonly (RowSource | GroupStart)[];
}

export interface TableSource {
  paper: PaperId;
  file: string;
  table: string;
  caption: string;
  quantity: string;
  notes?: readonly string[];
  /** Columns holding words (PromptEOL Table 4's sentences, SimACE Table 7's 'stsb'). */
  textColumns?: readonly string[];
  /** One block (columns + rows) or several (`blocks`). */
  columns?: readonly string[];
  rows?: readonly (RowSource | GroupStart)[];
  blocks?: readonly BlockSource[];
}

export function group(name: string): GroupStart {
  return { group: name };
}

const NUMBER_TOKEN = /^(-?\d+(?:\.\d+)?(?:e-?\d+)?)(%|°|min)?$/;

/** Splits trailing marker symbols (and spaces) off a label or number token. */
export function splitMarkers(s: string): { text: string; markers: string[] } {
  const markers: string[] = [];
  let text = s.trim();
  for (;;) {
    const last = [...text].pop();
    if (last === undefined || !MARKER_SYMBOLS.includes(last)) break;
    markers.unshift(last);
    text = text.slice(0, text.length - last.length).trimEnd();
  }
  return { text, markers };
}

function parseNumberToken(token: string): { value: number; printed: string; unit?: string; markers: string[] } | undefined {
  const { text, markers } = splitMarkers(token);
  const m = NUMBER_TOKEN.exec(text);
  if (!m) return undefined;
  return { value: Number(m[1]), printed: m[1]!, unit: m[2], markers };
}

/** Expands a transcription into a checked table. Throws on a malformed transcription. */
export function defineTable(src: TableSource): PaperTable {
  const where = `${src.paper} ${src.table} (${src.file})`;
  const blockSources: readonly BlockSource[] = src.blocks ?? [{ columns: src.columns ?? [], rows: src.rows ?? [] }];
  if (blockSources.length === 0 || blockSources.some((b) => b.columns.length === 0)) {
    throw new Error(`${where}: a table needs columns`);
  }
  const textColumns = [...(src.textColumns ?? [])];
  const numbers: PaperNumber[] = [];
  const nonNumbers: PaperNonNumber[] = [];
  const blocks: PaperBlock[] = [];
  const columns: string[] = [];
  const addColumn = (c: string) => {
    if (!columns.includes(c)) columns.push(c);
  };
  const seenRows = new Map<string, Set<string>>();

  for (const b of blockSources) {
    const rows: PaperRow[] = [];
    let current: string | undefined;
    for (const entry of b.rows) {
      if (!Array.isArray(entry)) {
        current = (entry as GroupStart).group;
        continue;
      }
      const [rawLabel, rawValues, note] = entry as RowSource;
      const { text: label, markers } = splitMarkers(rawLabel.replace(/\s+/g, ' '));
      if (!label) throw new Error(`${where}: a row without a label`);
      const rowKey = `${current ?? ''}\u0000${label}`;
      const cols = seenRows.get(rowKey) ?? new Set<string>();
      seenRows.set(rowKey, cols);
      const tokens = typeof rawValues === 'string' ? rawValues.trim().split(/\s+/) : [...rawValues];
      if (tokens.length !== b.columns.length) {
        throw new Error(`${where}: row '${label}' has ${tokens.length} values for ${b.columns.length} columns (${b.columns.join(', ')})`);
      }
      rows.push({ ...(current !== undefined ? { group: current } : {}), label, markers, ...(note ? { note } : {}) });
      const key = (column: string): PaperCellKey => ({
        paper: src.paper,
        file: src.file,
        table: src.table,
        ...(current !== undefined ? { group: current } : {}),
        row: label,
        column,
      });
      b.columns.forEach((column, j) => {
        const token = tokens[j]!;
        if (cols.has(column)) throw new Error(`${where}: row '${label}' appears twice with column '${column}'`);
        cols.add(column);
        addColumn(column);
        if (textColumns.includes(column)) {
          if (token === '_') nonNumbers.push({ ...key(column), kind: 'blank', printed: '', ...(note ? { note } : {}) });
          else nonNumbers.push({ ...key(column), kind: 'text', printed: token });
          return;
        }
        if (token === '_') {
          nonNumbers.push({ ...key(column), kind: 'blank', printed: '', ...(note ? { note } : {}) });
          return;
        }
        if (token === '-' || token === 'N/A') {
          nonNumbers.push({ ...key(column), kind: 'not-applicable', printed: token });
          return;
        }
        const halves = token.split('±');
        if (halves.length > 2) throw new Error(`${where}: row '${label}', column '${column}': '${token}' has two ±`);
        const parsed = halves.map(parseNumberToken);
        if (parsed.some((p) => p === undefined)) {
          throw new Error(`${where}: row '${label}', column '${column}': '${token}' is not a number as printed`);
        }
        const [mean, spread] = parsed as { value: number; printed: string; unit?: string; markers: string[] }[];
        const cellOf = (p: typeof mean, col: string): PaperNumber => ({
          ...key(col),
          value: p!.value,
          printed: p!.printed,
          ...(p!.unit ? { unit: p!.unit } : {}),
          markers: [...markers, ...p!.markers],
        });
        numbers.push(cellOf(mean, column));
        if (spread) {
          const sc = column + SPREAD_SUFFIX;
          addColumn(sc);
          numbers.push(cellOf(spread, sc));
        }
      });
    }
    blocks.push({ columns: [...b.columns], rows });
  }
  for (const c of textColumns) {
    if (!columns.includes(c)) throw new Error(`${where}: text column '${c}' is not a column`);
  }
  return {
    paper: src.paper,
    file: src.file,
    table: src.table,
    caption: src.caption,
    quantity: src.quantity,
    notes: [...(src.notes ?? [])],
    blocks,
    columns,
    textColumns,
    numbers,
    nonNumbers,
  };
}
