/**
 * npm run data -- check [--data-dir <dir>] [--ids A,B] [--allow-size-mismatch] [--json]
 * npm run data -- download <id...|all> [--data-dir <dir>] [--split <name>] [--ignore-local]
 * npm run data -- cards [id...]
 *
 * check: one line per split of every data set: where it was found (local data root, Hugging Face
 * cache, a partial sample) or that it is missing, and the rows its loader read against the known
 * size; then, for each missing or sample split, what to download or where to put it. Never touches
 * the network. Exits 1 only when a split that is present fails its loader (malformed file, wrong
 * size), 0 when everything is present or honestly missing.
 *
 * download: makes the data sets available (the data root's splits as they are, the rest fetched
 * from the Hub into its cache and prepared), printing where each split came from. Exits 1 when one
 * cannot be had. The data root is --data-dir, else ANGLE_DATA_DIR.
 */
import { parseArgs } from 'node:util';
import { tableToText } from '../lib/util/table.js';
import { checkDatasets, checkTable, type CheckRow } from '../lib/data/check.js';
import { datasetCardsTable } from '../lib/data/cards.js';
import { ensureDataset } from '../lib/data/ensure.js';
import { DATASET_IDS, datasetEntry, type DatasetId } from '../lib/data/registry.js';

const USAGE = [
  'usage: npm run data -- check [--data-dir <dir>] [--ids A,B] [--allow-size-mismatch] [--json]',
  '       npm run data -- download <id...|all> [--data-dir <dir>] [--split <name>] [--ignore-local]',
  '       npm run data -- cards [id...]',
  `data sets: ${DATASET_IDS.join(', ')}`,
].join('\n');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'data-dir': { type: 'string' },
    ids: { type: 'string' },
    split: { type: 'string', multiple: true },
    'allow-size-mismatch': { type: 'boolean' },
    'ignore-local': { type: 'boolean' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

function fail(msg: string, code = 2): never {
  console.error(`data: ${msg}`);
  process.exit(code);
}

/** Validated data set ids ("all" = every one). */
function idsFrom(list: readonly string[]): DatasetId[] {
  if (list.length === 1 && list[0] === 'all') return [...DATASET_IDS];
  for (const id of list) {
    try {
      datasetEntry(id);
    } catch (e) {
      fail((e as Error).message);
    }
  }
  return list as DatasetId[];
}

const [command, ...rest] = positionals;
if (values.help || !command) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}
const dataDir = values['data-dir'];

if (command === 'check') {
  if (rest.length > 0) fail(`check takes no positional arguments (got ${rest.join(' ')}); use --ids`);
  const ids = values.ids ? idsFrom(values.ids.split(',').map((s) => s.trim())) : undefined;
  let rows: CheckRow[];
  try {
    rows = checkDatasets({ dataDir, ids, allowSizeMismatch: values['allow-size-mismatch'] });
  } catch (e) {
    fail((e as Error).message);
  }
  if (values.json) {
    console.log(JSON.stringify(rows, null, 2));
  } else {
    console.log(tableToText(checkTable(rows)));
    const notes = rows.filter((r) => r.note);
    if (notes.length > 0) {
      console.log('');
      for (const r of notes) console.log(`${r.id} ${r.split} (${r.status}): ${r.note}`);
    }
    const count = (s: string) => rows.filter((r) => r.status === s).length;
    console.log(
      `\ndata: ${rows.length} splits: ${count('local')} local, ${count('cache')} cache, ${count('sample')} sample, ` +
        `${count('missing')} missing, ${count('invalid')} invalid`,
    );
  }
  process.exit(rows.some((r) => r.status === 'invalid') ? 1 : 0);
}

if (command === 'download') {
  if (rest.length === 0) fail(`download needs data set ids (or all)\n${USAGE}`);
  let failed = 0;
  for (const id of idsFrom(rest)) {
    try {
      const r = await ensureDataset(id, {
        dataDir,
        splits: values.split,
        ignoreLocal: values['ignore-local'],
        onProgress: (m) => console.error(`  ${m}`),
      });
      const where = Object.entries(r.splits).map(([s, w]) => `${s}: ${w}`).join(', ');
      console.log(`${id}: ${where}${r.preparedDir ? ` -> ${r.preparedDir}` : ''}${r.localDir ? ` (local ${r.localDir})` : ''}`);
    } catch (e) {
      failed++;
      console.log(`${id}: FAILED ${(e as Error).message}`);
    }
  }
  process.exit(failed > 0 ? 1 : 0);
}

if (command === 'cards') {
  console.log(tableToText(datasetCardsTable(rest.length > 0 ? idsFrom(rest) : DATASET_IDS)));
  process.exit(0);
}

fail(`unknown command '${command}'\n${USAGE}`);
