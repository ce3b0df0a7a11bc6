/**
 * The data check behind `npm run data -- check`: every split of every data set, where it was
 * found (data root, Hugging Face cache, a partial sample, or nowhere), the rows its loader read
 * against the known size, and for a missing split what to download or where to put it. Nothing
 * is downloaded; a split that is present but fails its loader is "invalid" with the loader's error.
 */
import type { SimpleTable } from '../util/table.js';
import { loadStsbSentence1 } from './domain.js';
import { loadFlickr30kCaptions } from './flickr.js';
import { findSplit, howToGet } from './locate.js';
import { loadNliTriplets } from './nli.js';
import { loadGithubIssues, loadMrpc, loadQnli, loadQqp } from './pairs.js';
import { DATASET_IDS, DATASETS, type DatasetId, type TransferTaskName } from './registry.js';
import { loadSickRelatedness, loadStsBenchmark, loadStsYear, type LoadOptions, type StsSplit } from './sts.js';
import { loadTransferTask } from './transfer.js';
import { loadWiki1m, readWiki1mSample, wiki1mSampleFile } from './wiki1m.js';

export type CheckStatus = 'local' | 'cache' | 'sample' | 'missing' | 'invalid';

export interface CheckRow {
  id: DatasetId;
  split: string;
  status: CheckStatus;
  /** Rows the loader read (present splits). */
  rows?: number;
  expected: number;
  unit: string;
  /** The folder the split was read from. */
  location?: string;
  /** Why it is invalid, how to get it, or what the sample is. */
  note?: string;
}

/** Runs the split's loader (with its size check) and returns the rows it read. */
export function loadedRows(id: DatasetId, split: string, opts: LoadOptions): number {
  switch (id) {
    case 'STS12':
    case 'STS13':
    case 'STS14':
    case 'STS15':
    case 'STS16': {
      const sets = loadStsYear(id, opts);
      return sets.reduce((n, s) => n + s.pairs.length, 0);
    }
    case 'STSBenchmark':
      return loadStsBenchmark(split as StsSplit, opts).pairs.length;
    case 'SICKRelatedness':
      return loadSickRelatedness(split as StsSplit, opts).pairs.length;
    case 'STSBSentence1':
      return loadStsbSentence1(opts).texts.length;
    case 'MRPC':
      return loadMrpc(split as 'train', opts).pairs.length;
    case 'QNLI':
      return loadQnli(split as 'dev', opts).pairs.length;
    case 'QQP':
      return loadQqp(split as 'dev', opts).pairs.length;
    case 'GitHubIssues':
      return loadGithubIssues(split as 'test', opts).pairs.length;
    case 'Flickr30k':
      return loadFlickr30kCaptions(split as 'test', opts).images;
    case 'NLI':
      return loadNliTriplets(opts).triplets.length;
    case 'Wiki1M':
      return loadWiki1m(opts).sentences.length;
    default:
      return loadTransferTask(id as TransferTaskName, split, opts).examples.length;
  }
}

/** Checks every split of `ids` (default all data sets). */
export function checkDatasets(opts: LoadOptions & { ids?: readonly DatasetId[] } = {}): CheckRow[] {
  const out: CheckRow[] = [];
  for (const id of opts.ids ?? DATASET_IDS) {
    for (const [split, s] of Object.entries(DATASETS[id].splits)) {
      const base = { id, split, expected: s.rows, unit: s.unit };
      const found = findSplit(id, split, opts);
      if (found) {
        try {
          out.push({ ...base, status: found.where, rows: loadedRows(id, split, opts), location: found.dir });
        } catch (e) {
          out.push({ ...base, status: 'invalid', location: found.dir, note: (e as Error).message });
        }
        continue;
      }
      const sample = id === 'Wiki1M' ? wiki1mSampleFile(opts.dataDir) : undefined;
      if (sample) {
        const { sentences, truncatedTail } = readWiki1mSample(sample);
        out.push({
          ...base,
          status: 'sample',
          rows: sentences.length,
          location: sample,
          note:
            `partial copy, not the corpus: ${sentences.length.toLocaleString('en-US')} complete lines` +
            (truncatedTail !== undefined ? ' (a cut-off last line is dropped)' : '') +
            `; loaded only with allowSample: true. Full corpus: ${howToGet(id, split, opts)}`,
        });
        continue;
      }
      out.push({ ...base, status: 'missing', note: howToGet(id, split, opts) });
    }
  }
  return out;
}

/** The check as a table: one row per split. */
export function checkTable(rows: readonly CheckRow[]): SimpleTable {
  return {
    columns: ['data set', 'split', 'status', 'rows', 'expected', 'unit', 'location'],
    rows: rows.map((r) => [r.id, r.split, r.status, r.rows ?? null, r.expected, r.unit, r.location ?? '']),
  };
}
