/**
 * Wiki1M, SimCSE's unsupervised corpus: one sentence per line, read as the `datasets` text
 * loader reads it (universal newlines, every line a row, empty lines included).
 *
 * A partial copy (a folder named by the registry's `sampleDir`, e.g. the first 1.28 MB of the
 * file) is never passed off as the corpus: it is loaded only with `allowSample: true`, the
 * result says `sample: true`, and a last line without its line break (cut off mid-sentence) is
 * dropped and returned as `truncatedTail`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';
import { findSplit, howToGet, locateSplit } from './locate.js';
import { optionalDataDir } from './paths.js';
import { DATASETS } from './registry.js';
import { checkSize } from './sizes.js';
import type { LoadOptions } from './sts.js';
import { pyFileLines, readText } from './text.js';

export interface Wiki1mCorpus {
  sentences: string[];
  file: string;
  /** True for a partial copy: never the 1M-sentence corpus the papers train on. */
  sample: boolean;
  /** The corpus size the papers use (for comparing a sample with it). */
  fullSize: number;
  where: 'local' | 'cache';
  /** A sample's last line when the file ends without a line break (dropped from `sentences`). */
  truncatedTail?: string;
  sizeNote?: string;
}

const WHAT = 'one sentence per line';

/** The partial copy under the data root, if there is one. */
export function wiki1mSampleFile(dataDir?: string): string | undefined {
  const root = optionalDataDir(dataDir);
  const e = DATASETS.Wiki1M;
  if (!root || !e.sampleDir) return undefined;
  const f = join(root, e.sampleDir, e.splits.train.local[0]);
  return existsSync(f) ? f : undefined;
}

/** Reads a partial copy: complete lines only; a cut-off last line is returned separately. */
export function readWiki1mSample(file: string): { sentences: string[]; truncatedTail?: string } {
  const text = readText(file, WHAT, 'utf8', { allowCutLastLine: true });
  const sentences = pyFileLines(text);
  const complete = /[\n\r]$/.test(text);
  return complete ? { sentences } : { sentences: sentences.slice(0, -1), truncatedTail: sentences[sentences.length - 1] };
}

/**
 * The full corpus from `<dataDir>/wiki1m/` or the Hub copy (checked against 1,000,000 lines);
 * with `allowSample: true` and no full copy, the partial copy, marked as a sample.
 */
export function loadWiki1m(opts: LoadOptions & { allowSample?: boolean } = {}): Wiki1mCorpus {
  const fullSize = DATASETS.Wiki1M.splits.train.rows;
  const full = findSplit('Wiki1M', 'train', opts);
  if (full) {
    const sentences = pyFileLines(readText(full.files[0], WHAT, 'utf8', { allowCutLastLine: true }));
    const sizeNote = checkSize('Wiki1M', 'train', sentences.length, full.files[0], opts);
    return { sentences, file: full.files[0], sample: false, fullSize, where: full.where, ...(sizeNote ? { sizeNote } : {}) };
  }
  const sample = wiki1mSampleFile(opts.dataDir);
  if (sample && opts.allowSample) {
    return { ...readWiki1mSample(sample), file: sample, sample: true, fullSize, where: 'local' };
  }
  if (sample) {
    throw new InputError(
      `Wiki1M: only a partial sample is available (not the ${fullSize.toLocaleString('en-US')}-sentence corpus); ` +
        `pass allowSample: true to use it as a sample, or get the full corpus: ${howToGet('Wiki1M', 'train', opts)}`,
      { file: sample },
    );
  }
  locateSplit('Wiki1M', 'train', opts); // throws the missing-file error with instructions
  throw new InputError('Wiki1M: not found');
}
