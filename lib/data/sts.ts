/**
 * Loaders for the STS evaluation sets, reading exactly what SimCSE's vendored SentEval reads
 * (SentEval/senteval/sts.py):
 *
 * - STS12-16: `STS.input.<subset>.txt` (two tab-separated sentences per line, split with
 *   `str.splitlines()`) and `STS.gs.<subset>.txt` (one score per line); lines whose gold score
 *   is the empty string are dropped. STS13 has no SMT subset.
 * - STS-B: every line of `sts-<split>.csv`, `line.strip().split('\t')`, score = column 4,
 *   sentences = columns 5 and 6 (no header).
 * - SICK-R: first line skipped (header), sentences = columns 1 and 2, score = column 3;
 *   dev = SICK_trial.txt.
 *
 * A sentence is the file's tokens (`s.split()`) joined by single spaces, as SimCSE's batcher
 * builds it. Every pair keeps the file and 1-based line it came from.
 */
import { join } from 'node:path';
import { InputError, UnknownNameError } from '../util/errors.js';
import { locateSplit, type LocateOptions } from './locate.js';
import { STS_SUBSET_PAIRS, STS_SUBSETS, STS_YEARS, type StsTaskName, type StsYear } from './registry.js';
import { checkSize, type SizeOptions } from './sizes.js';
import { parseScore, pyFileLines, pySplitLines, pyStrip, readText, senteval } from './text.js';

export interface SourceLine {
  file: string;
  /** 1-based line number. */
  line: number;
}

/** A sentence pair with a graded (STS) or binary gold score. */
export interface ScoredPair {
  a: string;
  b: string;
  score: number;
  source: SourceLine;
}

/** One evaluation set: an STS12-16 subset, or a split of STS-B / SICK-R. */
export interface StsSet {
  task: StsTaskName;
  /** Subset name (STS12-16) or split name (`train`, `dev`, `test`). */
  name: string;
  pairs: ScoredPair[];
  /** The files the pairs were read from. */
  files: string[];
  /** Where the files were found (data-set loaders only). */
  where?: 'local' | 'cache';
  /** Set when a size mismatch was accepted (allowSizeMismatch). */
  sizeNote?: string;
}

export type StsSplit = 'train' | 'dev' | 'test';

/**
 * Where to read from (data root, else the Hugging Face cache; see lib/data/locate.ts) and how
 * strictly to check the known split sizes.
 */
export interface LoadOptions extends LocateOptions, SizeOptions {}

const STS_RANGE = { min: 0, max: 5, what: 'STS gold score' };
const SICK_RANGE = { min: 1, max: 5, what: 'SICK relatedness score' };

/** Loads one STS12-16 subset from its input and gold files. */
export function loadStsSubsetFiles(task: StsTaskName, name: string, inputFile: string, goldFile: string): StsSet {
  const inputLines = pySplitLines(readText(inputFile, 'lines of two tab-separated sentences'));
  const goldLines = pySplitLines(readText(goldFile, 'one gold score per line (blank = unscored)'));
  if (goldLines.length !== inputLines.length) {
    const line = Math.min(goldLines.length, inputLines.length) + 1;
    throw new InputError(
      `gold file has ${goldLines.length} lines but ${inputFile} has ${inputLines.length}: expected one gold line (possibly blank) per input line`,
      { file: goldFile, line },
    );
  }
  const pairs: ScoredPair[] = [];
  for (let i = 0; i < inputLines.length; i++) {
    const fields = inputLines[i].split('\t');
    if (fields.length !== 2) {
      throw new InputError(
        `expected 2 tab-separated sentences, found ${fields.length} field${fields.length === 1 ? '' : 's'}` +
          (fields.length < 2 ? ' (missing column)' : ''),
        { file: inputFile, line: i + 1 },
      );
    }
    const g = goldLines[i];
    if (g === '') continue; // SentEval: raw_scores != ''
    const score = parseScore(g, { file: goldFile, line: i + 1 }, STS_RANGE);
    pairs.push({ a: senteval(fields[0]), b: senteval(fields[1]), score, source: { file: inputFile, line: i + 1 } });
  }
  if (pairs.length === 0) {
    throw new InputError(`no scored pairs: every gold line is blank`, { file: goldFile, line: 1 });
  }
  return { task, name, pairs, files: [inputFile, goldFile] };
}

/** The subsets of one STS year, in SentEval's order, each checked against its known number of scored pairs. */
export function loadStsYear(year: StsYear, opts: LoadOptions = {}): StsSet[] {
  if (!STS_YEARS.includes(year)) throw new UnknownNameError('STS year', year, STS_YEARS);
  const loc = locateSplit(year, 'test', opts);
  return STS_SUBSETS[year].map((s) => {
    const input = join(loc.dir, `STS.input.${s}.txt`);
    const set = loadStsSubsetFiles(year, s, input, join(loc.dir, `STS.gs.${s}.txt`));
    const expected = STS_SUBSET_PAIRS[year][s];
    let sizeNote: string | undefined;
    if (set.pairs.length !== expected) {
      const msg = `${year} ${s}: read ${set.pairs.length} scored pairs but expected ${expected} (SentEval's files)`;
      if (!opts.allowSizeMismatch) throw new InputError(`${msg}; pass allowSizeMismatch: true to use it anyway`, { file: input });
      sizeNote = `${msg}; accepted (allowSizeMismatch)`;
    }
    return { ...set, where: loc.where, ...(sizeNote ? { sizeNote } : {}) };
  });
}

/** Reads a SentEval-style STS Benchmark csv (no header; score column 4, sentences 5 and 6). */
export function loadStsBenchmarkFile(file: string, split: string): StsSet {
  const lines = pyFileLines(readText(file, 'tab-separated STS-B rows (genre, file, year, id, score, sentence1, sentence2)'));
  const pairs: ScoredPair[] = [];
  for (let i = 0; i < lines.length; i++) {
    const where = { file, line: i + 1 };
    const f = pyStrip(lines[i]).split('\t');
    if (f.length < 7) {
      throw new InputError(
        `expected at least 7 tab-separated columns (score in column 5, sentences in 6 and 7), found ${f.length} (missing column)`,
        where,
      );
    }
    const score = parseScore(f[4], where, STS_RANGE);
    pairs.push({ a: senteval(f[5]), b: senteval(f[6]), score, source: where });
  }
  return { task: 'STSBenchmark', name: split, pairs, files: [file] };
}

/** Reads a SICK file (header line skipped; sentences in columns 2 and 3, relatedness in 4). */
export function loadSickFile(file: string, split: string): StsSet {
  const lines = pyFileLines(readText(file, 'a header line, then tab-separated SICK rows (pair_ID, sentence_A, sentence_B, relatedness_score, ...)'));
  const pairs: ScoredPair[] = [];
  for (let i = 1; i < lines.length; i++) {
    const where = { file, line: i + 1 };
    const f = pyStrip(lines[i]).split('\t');
    if (f.length < 4) {
      throw new InputError(
        `expected at least 4 tab-separated columns (pair_ID, sentence_A, sentence_B, relatedness_score), found ${f.length} (missing column)`,
        where,
      );
    }
    const score = parseScore(f[3], where, SICK_RANGE);
    pairs.push({ a: senteval(f[1]), b: senteval(f[2]), score, source: where });
  }
  if (pairs.length === 0) throw new InputError(`no data rows after the header line`, { file, line: 2 });
  return { task: 'SICKRelatedness', name: split, pairs, files: [file] };
}

/** STS Benchmark train/dev/test from `<dataDir>/stsb/` or the Hub copy, checked against 5749 / 1500 / 1379. */
export function loadStsBenchmark(split: StsSplit, opts: LoadOptions = {}): StsSet {
  const loc = locateSplit('STSBenchmark', split, opts);
  const set = loadStsBenchmarkFile(loc.files[0], split);
  const sizeNote = checkSize('STSBenchmark', split, set.pairs.length, loc.files[0], opts);
  return { ...set, where: loc.where, ...(sizeNote ? { sizeNote } : {}) };
}

/** SICK relatedness train/dev(trial)/test from `<dataDir>/sick/` or the Hub copy, checked against 4500 / 500 / 4927. */
export function loadSickRelatedness(split: StsSplit, opts: LoadOptions = {}): StsSet {
  const loc = locateSplit('SICKRelatedness', split, opts);
  const set = loadSickFile(loc.files[0], split);
  const sizeNote = checkSize('SICKRelatedness', split, set.pairs.length, loc.files[0], opts);
  return { ...set, where: loc.where, ...(sizeNote ? { sizeNote } : {}) };
}

/**
 * The evaluation sets of one task: the subsets of STS12-16, or the requested splits of STS-B /
 * SICK-R (default dev and test).
 */
export function loadStsTask(task: StsTaskName, opts: LoadOptions & { splits?: readonly StsSplit[] } = {}): StsSet[] {
  if (task === 'STSBenchmark') return (opts.splits ?? ['dev', 'test']).map((s) => loadStsBenchmark(s, opts));
  if (task === 'SICKRelatedness') return (opts.splits ?? ['dev', 'test']).map((s) => loadSickRelatedness(s, opts));
  return loadStsYear(task, opts);
}
