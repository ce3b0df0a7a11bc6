/**
 * SentEval's seven transfer tasks as SentEval prepares them (senteval/binary.py, sst.py, trec.py,
 * mrpc.py at facebookresearch/SentEval 5d6dc11): which splits, which validation protocol, how many
 * classes, and the row order of X.
 *
 * | task | splits          | protocol (tools/validation.py)                  | classes |
 * |------|-----------------|-------------------------------------------------|---------|
 * | MR, CR, SUBJ, MPQA | all | InnerKFoldClassifier (outer and inner k-fold) | 2       |
 * | SST2 | train, dev, test | SplitClassifier (C by dev accuracy)            | 2       |
 * | TREC | train, test     | KFoldClassifier (C by k-fold on train)           | 6       |
 * | MRPC | train, test     | KFoldClassifier on pair features                 | 2       |
 *
 * Samples are read by lib/data/transfer.ts (SentEval's file reading and `split()` tokenisation).
 * Before embedding, SentEval sorts every split with Python's stable `sorted` on
 * (len(tokens), label) — MRPC on (len(A), len(B), label) — "to reduce padding"; X, y and every
 * fold index refer to that order, so we keep it: `order[r]` is the loaded index of row r.
 */
import { loadTransferTask, type TransferExample } from '../../data/transfer.js';
import type { LoadOptions, SourceLine } from '../../data/sts.js';
import type { TransferTaskName } from '../../data/registry.js';
import { UnknownNameError } from '../../util/errors.js';
import { tokensOf } from './bow.js';

export const SENTEVAL_TRANSFER_TASKS = ['MR', 'CR', 'SUBJ', 'MPQA', 'SST2', 'TREC', 'MRPC'] as const;
export type SentevalTransferTask = (typeof SENTEVAL_TRANSFER_TASKS)[number];

export type ValidationProtocol = 'inner-kfold' | 'split' | 'kfold';

export interface TransferTaskSpec {
  task: SentevalTransferTask;
  /** The data registry's id of the task's files. */
  datasetId: TransferTaskName;
  /** Split names, in the order SentEval embeds them. */
  splits: readonly string[];
  protocol: ValidationProtocol;
  nClasses: number;
  /** Sentence pairs (MRPC): X is the pair features of the two embeddings. */
  pairs: boolean;
}

const SPECS: Record<SentevalTransferTask, TransferTaskSpec> = {
  MR: { task: 'MR', datasetId: 'MR', splits: ['all'], protocol: 'inner-kfold', nClasses: 2, pairs: false },
  CR: { task: 'CR', datasetId: 'CR', splits: ['all'], protocol: 'inner-kfold', nClasses: 2, pairs: false },
  SUBJ: { task: 'SUBJ', datasetId: 'SUBJ', splits: ['all'], protocol: 'inner-kfold', nClasses: 2, pairs: false },
  MPQA: { task: 'MPQA', datasetId: 'MPQA', splits: ['all'], protocol: 'inner-kfold', nClasses: 2, pairs: false },
  SST2: { task: 'SST2', datasetId: 'SST2', splits: ['train', 'dev', 'test'], protocol: 'split', nClasses: 2, pairs: false },
  TREC: { task: 'TREC', datasetId: 'TREC', splits: ['train', 'test'], protocol: 'kfold', nClasses: 6, pairs: false },
  MRPC: { task: 'MRPC', datasetId: 'SentEvalMRPC', splits: ['train', 'test'], protocol: 'kfold', nClasses: 2, pairs: true },
};

/** The spec of a task by SentEval's name (MRPC, not SentEvalMRPC). */
export function transferTaskSpec(task: string): TransferTaskSpec {
  const spec = (SPECS as Record<string, TransferTaskSpec | undefined>)[task];
  if (!spec) throw new UnknownNameError('SentEval transfer task', task, SENTEVAL_TRANSFER_TASKS);
  return spec;
}

/** One split of a task, rows in SentEval's sorted order. */
export interface PreparedSplit {
  split: string;
  /** Tokens of every row (sentence A for MRPC). */
  tokens: string[][];
  /** Tokens of sentence B (MRPC only). */
  tokensB?: string[][];
  labels: Int32Array;
  /** order[r] = index of row r's sample in the loaded list (file order). */
  order: Int32Array;
  /** File and line of every row. */
  sources: SourceLine[];
}

export interface PreparedTask {
  spec: TransferTaskSpec;
  splits: Record<string, PreparedSplit>;
  labelNames: readonly string[];
  files: string[];
}

/**
 * Python's `sorted(range(n), key=keys)`: ascending lexicographic keys, ties in input order
 * (Array.prototype.sort is stable, and the index breaks ties explicitly as well).
 */
export function sentevalSortOrder(keys: readonly (readonly number[])[]): Int32Array {
  const idx = Array.from(keys.keys());
  idx.sort((a, b) => {
    const ka = keys[a];
    const kb = keys[b];
    for (let k = 0; k < ka.length; k++) if (ka[k] !== kb[k]) return ka[k] - kb[k];
    return a - b;
  });
  return Int32Array.from(idx);
}

/** A split's rows sorted as SentEval sorts them. */
export function prepareSplit(split: string, examples: readonly TransferExample[], pairs: boolean): PreparedSplit {
  const toks = examples.map((e) => tokensOf(e.text));
  const toksB = pairs ? examples.map((e) => tokensOf(e.text2 ?? '')) : undefined;
  const keys = examples.map((e, i) => (toksB ? [toks[i].length, toksB[i].length, e.label] : [toks[i].length, e.label]));
  const order = sentevalSortOrder(keys);
  const rows = Array.from(order);
  return {
    split,
    tokens: rows.map((i) => toks[i]),
    ...(toksB ? { tokensB: rows.map((i) => toksB[i]) } : {}),
    labels: Int32Array.from(rows, (i) => examples[i].label),
    order,
    sources: rows.map((i) => examples[i].source),
  };
}

/** Loads a task's splits (lib/data/transfer.ts) and sorts each as SentEval does. */
export function prepareTransferTask(task: string, opts: LoadOptions = {}): PreparedTask {
  const spec = transferTaskSpec(task);
  const splits: Record<string, PreparedSplit> = {};
  let labelNames: readonly string[] = [];
  const files: string[] = [];
  for (const s of spec.splits) {
    const set = loadTransferTask(spec.datasetId, s, opts);
    splits[s] = prepareSplit(s, set.examples, spec.pairs);
    labelNames = set.labelNames;
    files.push(...set.files);
  }
  return { spec, splits, labelNames, files };
}
