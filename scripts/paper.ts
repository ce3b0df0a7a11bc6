/**
 * npm run paper -- --json                      every number of every table, as a JSON array
 * npm run paper -- --table angle:2 [--file 001] one table as printed, aligned, with its notes
 * npm run paper -- --list                      the tables and the files that print them
 * npm run paper -- --averages                  recomputed Avg. columns that do not simply agree
 *
 * The numbers are lib/paper's hand transcription of the papers in `papers/` (checked against the
 * text files by test/paper.test.ts). Bad arguments: a one-line error and exit code 2.
 */
import { parseArgs } from 'node:util';
import {
  checkAverages,
  listPaperTables,
  paperNumbers,
  paperTable,
  printedTable,
  KNOWN_AVERAGE_DISAGREEMENTS,
  type PaperNumber,
  type PaperTable,
} from '../lib/paper/index.js';
import { tableToText } from '../lib/util/table.js';

const USAGE = [
  'usage: npm run paper -- [--json] [--table <paper>:<table> [--file <file>]] [--list] [--averages] [--help]',
  '  --json               print numbers as a JSON array of {paper, file, table, [group,] row, column, value}',
  '                       (all of them, or only those of --table); group is there when the table groups its rows',
  '  --table paper:N      one table, e.g. angle:2, prompteol:1, simace:14, "angle:Flickr30k (§4.5)"',
  '  --file F             the version of the table (file name or its number, e.g. 001); default: the',
  '                       first file that prints it (AnglE: 000_)',
  '  --list               the tables of each paper and the files that print them',
  '  --averages           every recomputed Avg. that does not agree with the printed one, and why',
  '  --help               this text',
].join('\n');

function fail(message: string): never {
  console.error(`paper: ${message}`);
  process.exit(2);
}

let values: { json?: boolean; table?: string; file?: string; list?: boolean; averages?: boolean; help?: boolean };
try {
  ({ values } = parseArgs({
    allowPositionals: false,
    strict: true,
    options: {
      json: { type: 'boolean' },
      table: { type: 'string' },
      file: { type: 'string' },
      list: { type: 'boolean' },
      averages: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (e) {
  fail(`${(e as Error).message.split('\n')[0]} (see --help)`);
}

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.file !== undefined && values.table === undefined) fail('--file needs --table');
if (!values.json && values.table === undefined && !values.list && !values.averages) fail('nothing to do: give --json, --table, --list or --averages (see --help)');

function jsonRow(c: PaperNumber) {
  return { paper: c.paper, file: c.file, table: c.table, ...(c.group !== undefined ? { group: c.group } : {}), row: c.row, column: c.column, value: c.value };
}

let table: PaperTable | undefined;
if (values.table !== undefined) {
  const m = /^([^:]+):(.+)$/.exec(values.table);
  if (!m) fail(`--table wants <paper>:<table>, e.g. angle:2 (got '${values.table}')`);
  try {
    table = paperTable(m[1]!, m[2]!, values.file);
  } catch (e) {
    fail((e as Error).message);
  }
}

if (values.json) {
  console.log(JSON.stringify((table ? table.numbers : paperNumbers()).map(jsonRow), null, 1));
} else if (table) {
  console.log(tableToText(printedTable(table)));
  console.log(`\n${table.table}: ${table.caption}`);
  for (const n of table.notes) console.log(`- ${n}`);
  for (const r of table.blocks.flatMap((b) => b.rows)) if (r.note) console.log(`- ${r.group ? `${r.group} / ` : ''}${r.label}: ${r.note}`);
  const t = table;
  for (const d of KNOWN_AVERAGE_DISAGREEMENTS.filter((x) => x.paper === t.paper && x.table === t.table && x.file === t.file)) {
    console.log(`- Avg. disagrees: ${d.group ? `${d.group} / ` : ''}${d.row} prints ${d.printed.toFixed(2)}, its cells give ${d.recomputed.toFixed(4)}${d.note ? ` (${d.note})` : ''}`);
  }
}

if (values.list) {
  const rows = listPaperTables().map((e) => [`${e.paper}:${e.table.replace(/^Table /, '')}`, e.table, e.files.join(', ')]);
  console.log(tableToText({ columns: ['--table', 'table', 'files (default first)'], rows }));
}

if (values.averages) {
  const rows = checkAverages()
    .filter((c) => c.status !== 'agrees')
    .map((c) => [
      c.status,
      c.paper,
      c.file.slice(0, 3),
      c.table,
      c.group ? `${c.group} / ${c.row}` : c.row,
      c.printed?.toFixed(2) ?? '',
      c.recomputed?.toFixed(4) ?? '',
      c.missing ? `missing ${c.missing.join(', ')}${c.implied ? `; implied ${c.implied.column} = ${c.implied.value.toFixed(2)}` : ''}` : '',
    ]);
  console.log(tableToText({ columns: ['status', 'paper', 'file', 'table', 'row', 'printed', 'recomputed', ''], rows }));
}
