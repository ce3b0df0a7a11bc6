/**
 * Comma-separated files as pandas' `read_csv` reads them with its defaults (what SimCSE's
 * `load_dataset("csv")` and the Flickr30k loading script use): fields separated by commas,
 * double quotes around fields that hold commas, quotes or line breaks, `""` for a quote inside
 * them, and blank lines skipped. Unlike pandas, a record with the wrong number of fields or an
 * unterminated quote is an error naming the file and the line the record starts on, instead of
 * being padded with NaN.
 */
import { InputError } from '../util/errors.js';

export interface CsvRecord {
  fields: string[];
  /** 1-based line on which the record starts. */
  line: number;
}

/** Splits CSV text into records (a quoted field may span lines). */
export function parseCsv(text: string, file: string): CsvRecord[] {
  const out: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false; // inside a quoted field
  let wasQuoted = false; // the current field had quotes (so an empty line with "" is a record)
  let line = 1;
  let start = 1;
  const endRecord = () => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === '' && !wasQuoted)) out.push({ fields, line: start });
    fields = [];
    field = '';
    wasQuoted = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) line++;
        field += c;
      }
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      wasQuoted = true;
    } else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRecord();
      line++;
      start = line;
    } else {
      field += c;
    }
  }
  if (quoted) throw new InputError(`unterminated quoted field: a '"' opened on this line is never closed`, { file, line: start });
  if (field !== '' || fields.length > 0 || wasQuoted) endRecord();
  return out;
}

export interface CsvRow {
  values: Record<string, string>;
  line: number;
}

/**
 * Reads a CSV table with a header line, checking that the header names every `required` column
 * and that every record has one field per header column.
 */
export function csvTable(text: string, file: string, required: readonly string[], what: string): { header: string[]; rows: CsvRow[] } {
  const records = parseCsv(text, file);
  if (records.length === 0) throw new InputError(`empty file: expected ${what}`, { file, line: 1 });
  const header = records[0].fields;
  for (const col of required) {
    if (!header.includes(col)) {
      throw new InputError(`header has no column '${col}' (missing column): expected ${what}; found ${header.join(', ')}`, {
        file,
        line: records[0].line,
      });
    }
  }
  const rows: CsvRow[] = [];
  for (const r of records.slice(1)) {
    if (r.fields.length !== header.length) {
      throw new InputError(
        `expected ${header.length} comma-separated fields (${header.join(', ')}), found ${r.fields.length}` +
          (r.fields.length < header.length ? ' (missing column)' : ''),
        { file, line: r.line },
      );
    }
    const values: Record<string, string> = {};
    header.forEach((h, j) => (values[h] = r.fields[j]));
    rows.push({ values, line: r.line });
  }
  if (rows.length === 0) throw new InputError(`no data rows after the header line`, { file, line: records[0].line + 1 });
  return { header, rows };
}
