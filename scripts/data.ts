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
 * cannot be had.
 *
 * The data root is --data-dir, else ANGLE_DATA_DIR, else the shared folder's data/ (ANGLE_SHARED_DIR,
 * else ../shared beside the repository); the first line says which.
 */
import { locateDataDir } from '../lib/config.js';
import { checkDatasets, checkTable } from '../lib/data/check.js';
import { datasetCardsTable } from '../lib/data/cards.js';
import { RAN_BASE_CARD } from '../lib/models/ran/ran-base.js';
import { ensureDataset } from '../lib/data/ensure.js';
import { DATASET_IDS, datasetEntry, type DatasetId } from '../lib/data/registry.js';
import { UnknownNameError } from '../lib/util/errors.js';
import { tableToText } from '../lib/util/table.js';
import { EXIT, helpText, parseOptions, runCommand, UsageError, validateArguments, type OptionSpecs } from './cli/command.js';

const COMMANDS = ['check', 'download', 'cards'] as const;

const OPTIONS = {
  'data-dir': { type: 'string', value: '<dir>', help: 'the local data root', default: 'ANGLE_DATA_DIR, else <shared>/data' },
  ids: { type: 'string', value: 'A,B', help: 'check: only these data sets', default: 'all' },
  split: { type: 'string', multiple: true, value: '<name>', help: 'download: only this split (repeatable)', default: 'every split' },
  'allow-size-mismatch': { type: 'boolean', help: 'check: accept a split whose row count differs from the known size' },
  'ignore-local': { type: 'boolean', help: 'download: fetch into the cache even when the data root has the split' },
  json: { type: 'boolean', help: 'check: print the rows as JSON' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} satisfies OptionSpecs;

const USAGE = [
  'usage: npm run data -- check [--data-dir <dir>] [--ids A,B] [--allow-size-mismatch] [--json]',
  '       npm run data -- download <id...|all> [--data-dir <dir>] [--split <name>] [--ignore-local]',
  '       npm run data -- cards [id...]',
].join('\n');
const FOOTER = `data sets: ${DATASET_IDS.join(', ')}\nExit codes: 0 done, 1 a present split is malformed (check) or a download failed, 2 usage or input error.`;

/** Validated data set ids ("all" = every one). */
function idsFrom(list: readonly string[]): DatasetId[] {
  if (list.length === 1 && list[0] === 'all') return [...DATASET_IDS];
  for (const id of list) datasetEntry(id);
  return list as DatasetId[];
}

async function main(): Promise<number> {
  const { values, positionals } = parseOptions(OPTIONS, process.argv.slice(2), true);
  const [command, ...rest] = positionals;
  if (values.help) {
    console.log(helpText(USAGE, OPTIONS, FOOTER));
    return EXIT.ok;
  }
  if (!command) throw new UsageError(`a command is needed: ${COMMANDS.join(', ')} (see --help)`);
  if (!(COMMANDS as readonly string[]).includes(command)) throw new UsageError(new UnknownNameError('command', command, COMMANDS).message);
  // Data set names are arguments too: checked before the data root is looked at or anything downloads.
  const named = validateArguments(() => (rest.length > 0 ? idsFrom(rest) : undefined));
  const listed = validateArguments(() => (values.ids ? idsFrom(values.ids.split(',').map((s) => s.trim())) : undefined));

  if (command === 'cards') {
    console.log(tableToText(datasetCardsTable(named ?? DATASET_IDS)));
    // The one model the papers use that is not on the Hugging Face Hub (AnglE-RAN's backbone).
    if (!named) {
      const c = RAN_BASE_CARD;
      console.log(`\nmodel ${c.id}: ${c.title}\n  source: ${c.source}\n  licence: ${c.licence}\n  download: ${c.download}\n  install: ${c.install}\n  used in: ${c.usedIn}`);
    }
    return EXIT.ok;
  }
  const located = locateDataDir(values['data-dir'], process.env, '--data-dir');
  console.error(`data root: ${located ? `${located.path} (from ${located.from})` : 'none (--data-dir, ANGLE_DATA_DIR, or a shared folder): only the Hugging Face cache is looked at'}`);
  const dataDir = located?.path;

  if (command === 'check') {
    if (rest.length > 0) throw new UsageError(`check takes no positional arguments (got ${rest.join(' ')}); use --ids`);
    const rows = checkDatasets({ dataDir, ids: listed, allowSizeMismatch: values['allow-size-mismatch'] });
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
    return rows.some((r) => r.status === 'invalid') ? EXIT.failed : EXIT.ok;
  }

  // download
  if (rest.length === 0) throw new UsageError('download needs data set ids (or all)');
  let failed = 0;
  for (const id of named!) {
    try {
      const r = await ensureDataset(id, { dataDir, splits: values.split, ignoreLocal: values['ignore-local'], onProgress: (m) => console.error(`  ${m}`) });
      const where = Object.entries(r.splits).map(([s, w]) => `${s}: ${w}`).join(', ');
      console.log(`${id}: ${where}${r.preparedDir ? ` -> ${r.preparedDir}` : ''}${r.localDir ? ` (local ${r.localDir})` : ''}`);
    } catch (e) {
      failed++;
      console.log(`${id}: FAILED ${(e as Error).message}`);
    }
  }
  return failed > 0 ? EXIT.failed : EXIT.ok;
}

await runCommand('data', main);
