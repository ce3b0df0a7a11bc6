/**
 * One SentEval transfer task end to end, as `se.eval(task)` returns it: load and sort the samples
 * (tasks.ts), embed them through a batcher (embed-task.ts), run the task's validation protocol
 * with a learner (validation.ts; default the scikit-learn path) and report SentEval's numbers:
 * `devacc`, `acc`, `ndev`, `ntest`, and for MRPC `f1` = round(100 · F1 of class 1, 2) with
 * sklearn 1.2's formula 2·P·R / (P + R) (0 when undefined).
 *
 * `ndev`/`ntest` are SentEval's: n and n for the cross-validated tasks, len(dev) and len(test)
 * for SST2, len(train) and len(test) for TREC and MRPC.
 */
import type { LoadOptions } from '../../data/sts.js';
import { InputError } from '../../util/errors.js';
import { embedTask, type EmbedTaskOptions, type TaskMatrices, type TransferBatcher } from './embed-task.js';
import { numpyRound2 } from './numpy-reductions.js';
import { sklearnLogisticLearner } from './sklearn-path.js';
import type { Fold } from './stratified-kfold.js';
import { prepareTransferTask, transferTaskSpec, type TransferTaskSpec } from './tasks.js';
import { innerKFold, kFold, splitValidation, type InnerKFoldResult, type KFoldResult, type SplitResult, type TransferLearner } from './validation.js';

export interface TransferTaskResult {
  task: string;
  devacc: number;
  acc: number;
  /** MRPC only. */
  f1?: number;
  ndev: number;
  ntest: number;
  detail: InnerKFoldResult | KFoldResult | SplitResult;
  /** Wall seconds: loading and embedding, and the classifier protocol. */
  seconds: { embed: number; classify: number };
}

export interface ClassifyOptions {
  learner?: TransferLearner;
  /** SentEval params.seed: KFoldClassifier's folds and the classifiers' seed (default 1111). */
  seed?: number;
  /** SentEval params.kfold (default 10, the papers' setting; SentEval's own default is 5). */
  kfold?: number;
  /** Use these folds instead of computing them (parity against recorded folds). */
  folds?: { outer: Fold[]; inner: Fold[][] } | Fold[];
  log?: (line: string) => void;
}

export interface TransferEvalOptions extends ClassifyOptions, LoadOptions, Pick<EmbedTaskOptions, 'batchSize'> {}

/** F1 of the positive class 1, as sklearn 1.2.1's f1_score (precision·recall formula). */
export function f1Binary(yTrue: Int32Array, yPred: Int32Array): number {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (let i = 0; i < yTrue.length; i++) {
    if (yPred[i] === 1 && yTrue[i] === 1) tp++;
    else if (yPred[i] === 1) fp++;
    else if (yTrue[i] === 1) fn++;
  }
  const precision = tp + fp > 0 ? tp / (tp + fp) : 0;
  const recall = tp + fn > 0 ? tp / (tp + fn) : 0;
  const denom = precision + recall;
  return denom === 0 ? 0 : (2 * precision * recall) / denom;
}

function need(m: TaskMatrices, split: string, task: string) {
  const s = m.splits[split];
  if (!s) throw new InputError(`${task}: no '${split}' split among the embedded splits (${Object.keys(m.splits).join(', ')})`);
  return s;
}

/** The classifier protocol of a task on already embedded splits (rows in SentEval's order). */
export async function classifyTransferTask(spec: TransferTaskSpec, m: TaskMatrices, o: ClassifyOptions = {}): Promise<Omit<TransferTaskResult, 'seconds'>> {
  const learner = o.learner ?? sklearnLogisticLearner();
  const base = { k: o.kfold ?? 10, seed: o.seed ?? 1111, nClasses: spec.nClasses, log: o.log };
  const task = spec.task;
  switch (spec.protocol) {
    case 'inner-kfold': {
      const all = need(m, 'all', task);
      const folds = o.folds && !Array.isArray(o.folds) ? o.folds : undefined;
      const r = await innerKFold(all.x, all.y, learner, { ...base, folds });
      return { task, devacc: r.devacc, acc: r.acc, ndev: all.y.length, ntest: all.y.length, detail: r };
    }
    case 'split': {
      const [train, dev, test] = ['train', 'dev', 'test'].map((s) => need(m, s, task));
      const r = await splitValidation(train, dev, test, learner, base);
      return { task, devacc: r.devacc, acc: r.acc, ndev: dev.y.length, ntest: test.y.length, detail: r };
    }
    case 'kfold': {
      const [train, test] = ['train', 'test'].map((s) => need(m, s, task));
      const folds = Array.isArray(o.folds) ? o.folds : undefined;
      const r = await kFold(train, test, learner, { ...base, folds });
      const f1 = spec.pairs ? numpyRound2(100 * f1Binary(test.y, r.testPred)) : undefined;
      return { task, devacc: r.devacc, acc: r.acc, ...(f1 !== undefined ? { f1 } : {}), ndev: train.y.length, ntest: test.y.length, detail: r };
    }
  }
}

/** `se.eval(task)` with the given batcher (e.g. bowBatcher(readWordVectors(file)) or batcherFromEncoder(encoder)). */
export async function evaluateTransferTask(task: string, batcher: TransferBatcher, o: TransferEvalOptions = {}): Promise<TransferTaskResult> {
  const spec = transferTaskSpec(task);
  const t0 = performance.now();
  const prepared = prepareTransferTask(task, o);
  const m = await embedTask(prepared, batcher, { batchSize: o.batchSize, log: o.log });
  const t1 = performance.now();
  o.log?.(`${task}: ${o.learner?.name ?? 'sklearn-LogReg'}, ${spec.protocol}`);
  const r = await classifyTransferTask(spec, m, o);
  const t2 = performance.now();
  return { ...r, seconds: { embed: (t1 - t0) / 1000, classify: (t2 - t1) / 1000 } };
}

export interface TransferSuiteResult {
  results: TransferTaskResult[];
  /** Tasks that could not run, with the error that names the file or row (missing data, bad embeddings). */
  failed: { task: string; message: string }[];
}

/**
 * Several tasks in a row (SentEval's `se.eval([...])`): a task whose files are missing or whose
 * embeddings are bad is recorded with its error (which names the files or the row) and the rest
 * still run.
 */
export async function evaluateTransferTasks(tasks: readonly string[], batcher: TransferBatcher, o: TransferEvalOptions = {}): Promise<TransferSuiteResult> {
  const out: TransferSuiteResult = { results: [], failed: [] };
  for (const task of tasks) {
    try {
      // a fresh learner per task unless one is given (its warm-start memory is per task)
      out.results.push(await evaluateTransferTask(task, batcher, o));
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      o.log?.(`${task}: ${e.message}`);
      out.failed.push({ task, message: e.message });
    }
  }
  return out;
}
