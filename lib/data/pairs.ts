/**
 * Binary sentence-pair data sets (label 1 = paraphrase / duplicate / entailment), evaluated as
 * "STS with 0/1 gold" by Spearman between cosine and label, and used as training pairs in the
 * non-transfer setting:
 *
 * - MRPC: GLUE's split of the MSR paraphrase files (see msr-paraphrase.ts); test = the labelled
 *   msr_paraphrase_test.txt (GLUE's test.tsv has no labels).
 * - QNLI: `qnli/{train,dev}.tsv` (label `entailment` -> 1, `not_entailment` -> 0).
 * - QQP: `qqp/{train,dev}.tsv` (`is_duplicate`).
 * - GitHub Issues: `github-issues/<split>.jsonl` with `text1`, `text2`, `label`.
 *
 * From the Hub, every one of them is read from the JSON lines the parquet files were converted to
 * (lib/data/prepare.ts). Columns are found by header name, so a re-ordered export still loads; a
 * missing column, a row with too few fields or a bad label is an InputError naming file and line;
 * each split is checked against its known size.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, UnknownNameError } from '../util/errors.js';
import { locateSplit, type LocatedSplit } from './locate.js';
import { glueMrpcPairs, readMsrParaphrase } from './msr-paraphrase.js';
import { optionalDataDir } from './paths.js';
import { DATASETS, type BinaryTaskName } from './registry.js';
import { checkSize } from './sizes.js';
import type { LoadOptions, ScoredPair } from './sts.js';
import { parseBinaryLabel, pyFileLines, readText } from './text.js';
import { readTsvColumns } from './tsv.js';

export interface BinarySet {
  task: BinaryTaskName;
  split: string;
  /** `score` is the 0/1 label. */
  pairs: ScoredPair[];
  files: string[];
  /** Where the files were found (data-set loaders only). */
  where?: 'local' | 'cache';
  /** Set when a size mismatch was accepted (allowSizeMismatch). */
  sizeNote?: string;
}

interface TsvSpec {
  a: string;
  b: string;
  label: string;
  labelNames?: Record<string, 0 | 1>;
  what: string;
}

/** Reads a tab-separated file with a header line, picking the columns by name. */
export function loadBinaryTsv(file: string, task: BinaryTaskName, split: string, spec: TsvSpec): BinarySet {
  const pairs: ScoredPair[] = readTsvColumns(file, [spec.a, spec.b, spec.label], spec.what).map(({ values: [a, b, label], where }) => ({
    a,
    b,
    score: parseBinaryLabel(label, where, spec.labelNames),
    source: where,
  }));
  return { task, split, pairs, files: [file] };
}

/** Reads JSON lines with `text1`, `text2`, `label` (GitHub Issues export, and every converted Hub parquet split). */
export function loadBinaryJsonl(file: string, task: BinaryTaskName, split: string): BinarySet {
  const lines = pyFileLines(readText(file, 'JSON lines with text1, text2 and a 0/1 label'));
  const pairs: ScoredPair[] = [];
  for (let i = 0; i < lines.length; i++) {
    const where = { file, line: i + 1 };
    if (lines[i].trim() === '') continue;
    let o: unknown;
    try {
      o = JSON.parse(lines[i]);
    } catch (e) {
      throw new InputError(`expected a JSON object per line: ${(e as Error).message}`, where);
    }
    const r = o as Record<string, unknown>;
    for (const k of ['text1', 'text2', 'label']) {
      if (r === null || typeof r !== 'object' || !(k in r)) throw new InputError(`missing field '${k}' (expected text1, text2, label)`, where);
    }
    if (typeof r.text1 !== 'string' || typeof r.text2 !== 'string') throw new InputError(`text1 and text2 must be strings`, where);
    const score = parseBinaryLabel(String(r.label), where);
    pairs.push({ a: r.text1, b: r.text2, score, source: where });
  }
  if (pairs.length === 0) throw new InputError(`no data rows`, { file, line: 1 });
  return { task, split, pairs, files: [file] };
}

function checked(set: BinarySet, loc: LocatedSplit, opts: LoadOptions): BinarySet {
  const sizeNote = checkSize(set.task, set.split, set.pairs.length, loc.files[0], opts);
  return { ...set, files: loc.files, where: loc.where, ...(sizeNote ? { sizeNote } : {}) };
}

/**
 * MRPC: `test` = labelled msr_paraphrase_test.txt (1725 pairs); `dev` = GLUE's dev.tsv (408);
 * `train` = msr_paraphrase_train.txt minus dev_ids.tsv as GLUE builds it (3668), or a GLUE
 * train.tsv when the source files are absent.
 */
export function loadMrpc(split: 'test' | 'dev' | 'train' = 'test', opts: LoadOptions = {}): BinarySet {
  const loc = locateSplit('MRPC', split, opts);
  if (loc.layout === 'prepared') return checked(loadBinaryJsonl(loc.files[0], 'MRPC', split), loc, opts);
  if (split === 'train' && loc.layout === 'local') {
    return checked({ task: 'MRPC', split, pairs: glueMrpcPairs(loc.files[0], loc.files[1], 'train'), files: loc.files }, loc, opts);
  }
  const rows = readMsrParaphrase(loc.files[0]);
  return checked({ task: 'MRPC', split, pairs: rows.map((r) => r.pair), files: loc.files }, loc, opts);
}

/** QNLI train or validation (GLUE dev.tsv); the GLUE test split has no labels. */
export function loadQnli(split: 'dev' | 'train' = 'dev', opts: LoadOptions = {}): BinarySet {
  const loc = locateSplit('QNLI', split, opts);
  if (loc.layout === 'prepared') return checked(loadBinaryJsonl(loc.files[0], 'QNLI', split), loc, opts);
  const set = loadBinaryTsv(loc.files[0], 'QNLI', split, {
    a: 'question',
    b: 'sentence',
    label: 'label',
    labelNames: { entailment: 1, not_entailment: 0 },
    what: 'GLUE QNLI rows: index, question, sentence, label',
  });
  return checked(set, loc, opts);
}

/** QQP train or validation (GLUE dev.tsv). */
export function loadQqp(split: 'dev' | 'train' = 'dev', opts: LoadOptions = {}): BinarySet {
  const loc = locateSplit('QQP', split, opts);
  if (loc.layout === 'prepared') return checked(loadBinaryJsonl(loc.files[0], 'QQP', split), loc, opts);
  const set = loadBinaryTsv(loc.files[0], 'QQP', split, {
    a: 'question1',
    b: 'question2',
    label: 'is_duplicate',
    what: 'GLUE QQP rows: id, qid1, qid2, question1, question2, is_duplicate',
  });
  return checked(set, loc, opts);
}

/** GitHub Issues Similarity, from JSON lines (a local export, or the Hub's parquet converted by ensureDataset). */
export function loadGithubIssues(split: 'test' | 'valid' | 'train' = 'test', opts: LoadOptions = {}): BinarySet {
  const root = optionalDataDir(opts.dataDir);
  const dir = root ? join(root, DATASETS.GitHubIssues.localDir) : undefined;
  const jsonl = dir ? join(dir, `${split}.jsonl`) : undefined;
  if (dir && jsonl && !existsSync(jsonl) && existsSync(dir)) {
    const parquet = readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.parquet'));
    if (parquet.length > 0) {
      throw new InputError(
        `GitHubIssues ${split}: found parquet files (${parquet.join(', ')}) but no ${split}.jsonl; ` +
          'this loader reads JSON lines {"text1","text2","label"}: export the parquet split to that file, ' +
          'or let `npm run data -- download GitHubIssues` fetch and convert the Hub copy into the cache',
        { file: jsonl },
      );
    }
  }
  const loc = locateSplit('GitHubIssues', split, opts);
  return checked(loadBinaryJsonl(loc.files[0], 'GitHubIssues', split), loc, opts);
}

/** The labelled evaluation split each binary task uses (MRPC test, GitHub Issues test, QQP/QNLI validation). */
export function loadBinaryTask(task: BinaryTaskName, opts: LoadOptions = {}): BinarySet {
  switch (task) {
    case 'MRPC':
      return loadMrpc('test', opts);
    case 'QNLI':
      return loadQnli('dev', opts);
    case 'QQP':
      return loadQqp('dev', opts);
    case 'GitHubIssues':
      return loadGithubIssues('test', opts);
    default:
      throw new UnknownNameError('binary task', String(task), ['MRPC', 'QNLI', 'QQP', 'GitHubIssues']);
  }
}
