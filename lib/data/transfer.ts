/**
 * SentEval's transfer tasks (AnglE Table 6), read exactly as SentEval reads them
 * (senteval/binary.py, sst.py, trec.py, mrpc.py), so the sentences embedded are the reference's:
 *
 * - MR, CR, SUBJ, MPQA: Latin-1, `f.read().splitlines()` (so \x85 and \x1c-\x1e also end lines),
 *   every line a sample (empty ones too: CR has 4, MPQA 3), label 1 for the first file
 *   (positive; SUBJ: objective), 0 for the second; one split "all" (SentEval cross-validates).
 * - SST-2: UTF-8, `line.strip().split('\t')`, sentence then 0/1 label; train/dev/test.
 * - TREC: Latin-1 (train_5500.label is ISO-8859-1), `LABEL:fine question...`; the coarse label
 *   (ABBR DESC ENTY HUM LOC NUM = 0..5) and the question without its first token's fine label.
 * - MRPC: UTF-8 with a BOM, header skipped, Quality / #1 String / #2 String (columns 1, 4, 5).
 *
 * A sample's text is its tokens (Python `split()`) joined by single spaces, as SimCSE's batcher
 * builds it. Malformed lines (a missing column, an unknown label) are InputErrors naming the line,
 * where SentEval would stop on an assertion or an IndexError.
 */
import { InputError } from '../util/errors.js';
import { locateSplit } from './locate.js';
import { datasetEntry, type TransferTaskName } from './registry.js';
import { checkSize } from './sizes.js';
import type { LoadOptions, SourceLine } from './sts.js';
import { pyFileLines, pySplitLines, pyStrip, readText, senteval, type TextEncoding } from './text.js';

export interface TransferExample {
  text: string;
  /** The second sentence of a pair task (MRPC). */
  text2?: string;
  label: number;
  source: SourceLine;
}

export interface TransferSet {
  task: TransferTaskName;
  split: string;
  examples: TransferExample[];
  /** labelNames[i] names label i. */
  labelNames: readonly string[];
  files: string[];
  where?: 'local' | 'cache';
  sizeNote?: string;
}

export const TREC_LABELS = ['ABBR', 'DESC', 'ENTY', 'HUM', 'LOC', 'NUM'] as const;

const BINARY_LABELS: Record<'MR' | 'CR' | 'SUBJ' | 'MPQA', readonly string[]> = {
  MR: ['negative', 'positive'],
  CR: ['negative', 'positive'],
  SUBJ: ['subjective', 'objective'],
  MPQA: ['negative', 'positive'],
};

/** One SentEval binary-classification file: every line a sample with the given label. */
export function readSentevalLines(file: string, label: number, encoding: TextEncoding = 'latin1'): TransferExample[] {
  return pySplitLines(readText(file, 'one sentence per line', encoding)).map((l, i) => ({ text: senteval(l), label, source: { file, line: i + 1 } }));
}

/** SST binary: `sentence<TAB>label` per line. */
export function readSstFile(file: string): TransferExample[] {
  return pyFileLines(readText(file, 'lines "sentence<TAB>0|1"')).map((l, i) => {
    const where = { file, line: i + 1 };
    const f = pyStrip(l).split('\t');
    if (f.length < 2) throw new InputError(`expected a sentence and a tab-separated 0/1 label, found ${f.length} field (missing column)`, where);
    if (f[1] !== '0' && f[1] !== '1') throw new InputError(`expected a label 0 or 1 in column 2, found '${f[1]}'`, where);
    return { text: senteval(f[0]), label: Number(f[1]), source: where };
  });
}

/** TREC: `COARSE:fine question tokens` per line (Latin-1). */
export function readTrecFile(file: string): TransferExample[] {
  return pyFileLines(readText(file, 'lines "LABEL:fine question"', 'latin1')).map((l, i) => {
    const where = { file, line: i + 1 };
    const s = pyStrip(l);
    const colon = s.indexOf(':');
    if (colon < 0) throw new InputError(`expected "LABEL:fine question", found no ':'`, where);
    const target = s.slice(0, colon);
    const label = (TREC_LABELS as readonly string[]).indexOf(target);
    if (label < 0) throw new InputError(`unknown TREC label '${target}': expected one of ${TREC_LABELS.join(', ')}`, where);
    const rest = s.slice(colon + 1);
    const space = rest.indexOf(' ');
    if (space < 0) throw new InputError(`expected a fine label and a question after '${target}:', found '${rest}'`, where);
    return { text: senteval(rest.slice(space + 1)), label, source: where };
  });
}

/** SentEval's MRPC file: header skipped, label and the two sentences from columns 1, 4, 5. */
export function readSentevalMrpcFile(file: string): TransferExample[] {
  const lines = pyFileLines(readText(file, 'MSR paraphrase rows: Quality, #1 ID, #2 ID, #1 String, #2 String'));
  return lines.slice(1).map((l, i) => {
    const where = { file, line: i + 2 };
    const f = pyStrip(l).split('\t');
    if (f.length < 5) throw new InputError(`expected 5 tab-separated columns (Quality, #1 ID, #2 ID, #1 String, #2 String), found ${f.length} (missing column)`, where);
    if (f[0] !== '0' && f[0] !== '1') throw new InputError(`expected Quality 0 or 1, found '${f[0]}'`, where);
    return { text: senteval(f[3]), text2: senteval(f[4]), label: Number(f[0]), source: where };
  });
}

/** One transfer task split (MR/CR/SUBJ/MPQA: "all"; SST2: train/dev/test; TREC, SentEvalMRPC: train/test). */
export function loadTransferTask(task: TransferTaskName, split?: string, opts: LoadOptions = {}): TransferSet {
  // MR/CR/SUBJ/MPQA have the one split "all"; the others default to their test split.
  const s = split ?? (datasetEntry(task).splits.all ? 'all' : 'test');
  const loc = locateSplit(task, s, opts);
  let examples: TransferExample[];
  let labelNames: readonly string[];
  switch (task) {
    case 'MR':
    case 'CR':
    case 'SUBJ':
    case 'MPQA':
      examples = [...readSentevalLines(loc.files[0], 1), ...readSentevalLines(loc.files[1], 0)];
      labelNames = BINARY_LABELS[task];
      break;
    case 'SST2':
      examples = readSstFile(loc.files[0]);
      labelNames = ['negative', 'positive'];
      break;
    case 'TREC':
      examples = readTrecFile(loc.files[0]);
      labelNames = TREC_LABELS;
      break;
    case 'SentEvalMRPC':
      examples = readSentevalMrpcFile(loc.files[0]);
      labelNames = ['not paraphrase', 'paraphrase'];
      break;
    default:
      throw new InputError(`unknown transfer task '${String(task)}'`);
  }
  const sizeNote = checkSize(task, s, examples.length, loc.files.join(' + '), opts);
  return { task, split: s, examples, labelNames, files: loc.files, where: loc.where, ...(sizeNote ? { sizeNote } : {}) };
}
