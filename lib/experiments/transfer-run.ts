/**
 * AnglE Table 6's rows (SentEval transfer tasks), run the way a notebook needs it. A row is one way
 * of embedding sentences — SentEval's bow.py over a word-vector file, or a model with a pooling —
 * and each row is evaluated with one or more classifier paths (SentEval's scikit-learn path, its
 * PyTorch path; lib/eval/transfer). Per task, each row's sentences are embedded once and every
 * path classifies the same matrices (a fresh learner per task, as SentEval builds one per task).
 *
 * Each (row, path) is one evaluation record in results/<experiment>/ (lib/report/evaluation-
 * record.ts): metrics `test_<TASK>` = SentEval's test accuracy (%), `test_Avg` when all seven ran;
 * details hold per task SentEval's devacc, ndev/ntest, MRPC's F1, the seconds spent embedding and
 * classifying, and the tasks that could not run with the reason (a missing or malformed task file
 * names the file; bad embeddings name the task, split and row). Records go through the run store
 * (./run-store.ts): running the notebook again reuses a record with the same key (./run-evaluation.ts
 * `evaluationKey`: the embedding's identity, the path, its tasks, SentEval's seed and k) unless it
 * recorded failures (then the row is tried again). A notebook runs them as plan rows
 * (./transfer-rows.ts), whose plan decides the rehearsal (model rows rehearse their encoding there).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolveResultsDir } from '../config.js';
import type { SentenceEncoder } from '../embed/types.js';
import { readWordVectors } from '../eval/transfer/bow.js';
import { batcherFromEncoder, bowBatcher, embedTask, type TaskMatrices, type TransferBatcher } from '../eval/transfer/embed-task.js';
import { classifyTransferTask } from '../eval/transfer/evaluate.js';
import { pytorchLinearLearner, SIMCSE_TEST_CLASSIFIER } from '../eval/transfer/pytorch-path.js';
import { sklearnLogisticLearner } from '../eval/transfer/sklearn-path.js';
import { prepareTransferTask, SENTEVAL_TRANSFER_TASKS, transferTaskSpec, type PreparedTask } from '../eval/transfer/tasks.js';
import type { TransferLearner } from '../eval/transfer/validation.js';
import { writeEvaluationRecord } from '../report/evaluation-record.js';
import { collectProvenance } from '../report/provenance.js';
import type { LoadedRun } from '../report/results-reader.js';
import type { ModelIdentity } from '../report/run-record.js';
import { portableModelIdentity, portablePath } from '../report/training-record.js';
import { InputError } from '../util/errors.js';
import type { OpenedModel } from './evaluation-models.js';
import { evaluationKey } from './run-evaluation.js';
import { recordedRun, reusableRun, type StoreRequest } from './run-store.js';

/** One way of embedding the tasks' sentences (a row of the table). */
export interface TransferRow {
  label: string;
  /** The AnglE Table 6 row it goes beside (none: off the table). */
  paperRow?: string;
  batcher: TransferBatcher;
  /** What decides the embeddings: a hash of the weights or vectors, the settings, the model's identity. */
  identity: { sha256: string; config: Record<string, unknown>; model: ModelIdentity };
}

/** A classifier path: a name for tables, a learner per task, and the tasks it runs (default all asked). */
export interface TransferPath {
  name: string;
  title: string;
  make: () => TransferLearner;
  tasks?: readonly string[];
}

/** SentEval's scikit-learn path (logistic regression, L2, C by SentEval's protocols; solved to the optimum). */
export function sklearnPath(tasks?: readonly string[]): TransferPath {
  return { name: 'sklearn', title: "SentEval's scikit-learn path (LogisticRegression, C by cross-validation)", make: () => sklearnLogisticLearner(), ...(tasks ? { tasks } : {}) };
}

/** SentEval's PyTorch path as SimCSE's evaluation runs it (Adam, batch 64, tenacity 5, epoch size 4). */
export function pytorchPath(tasks?: readonly string[]): TransferPath {
  return {
    name: 'pytorch',
    title: "SentEval's PyTorch path (linear classifier, Adam, batch 64, tenacity 5, epoch size 4; SimCSE's setting)",
    make: () => pytorchLinearLearner(SIMCSE_TEST_CLASSIFIER),
    ...(tasks ? { tasks } : {}),
  };
}

/** The GloVe bag-of-words row: SentEval's bow.py over a word-vector file. */
export function bowTransferRow(file: string, opts: { label?: string; paperRow?: string } = {}): TransferRow {
  const wv = readWordVectors(file);
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  return {
    label: opts.label ?? 'GloVe (avg.)',
    ...(opts.paperRow ? { paperRow: opts.paperRow } : {}),
    batcher: bowBatcher(wv),
    identity: { sha256, config: { embedding: "SentEval's bow.py (mean of word vectors)", vectors: portablePath(file), words: wv.vectors.size, dim: wv.dim }, model: { id: portablePath(file), weightsSha256: sha256 } },
  };
}

/** A model row: an opened model entry (./evaluation-models.ts) with an encoder (e.g. one pooling of sharedPoolingEncoders). */
export function modelTransferRow(m: OpenedModel, encoder: SentenceEncoder, opts: { label: string; paperRow?: string; pooling: string }): TransferRow {
  if (!m.loaded) throw new InputError(`${m.entry.label}: the model is not open (${m.unavailable ?? 'unknown reason'})`);
  return {
    label: opts.label,
    ...(opts.paperRow ? { paperRow: opts.paperRow } : {}),
    batcher: batcherFromEncoder(encoder),
    identity: { sha256: m.loaded.weightsSha256, config: { ...m.config, pooling: opts.pooling }, model: portableModelIdentity(m.loaded) },
  };
}

export interface TaskOutcome {
  task: string;
  acc: number;
  devacc: number;
  f1?: number;
  ndev: number;
  ntest: number;
  seconds: { embed: number; classify: number };
}

export interface TransferRowRun {
  row: TransferRow;
  path: TransferPath;
  status: 'reused' | 'evaluated';
  key: string;
  run: LoadedRun;
  tasks: TaskOutcome[];
  /** Tasks that could not run here, with the reason (names the files or the row). */
  failed: { task: string; message: string }[];
}

export interface RunTransferOptions {
  rows: readonly TransferRow[];
  paths: readonly TransferPath[];
  /** Default all seven (SentEval's names: MR, CR, SUBJ, MPQA, SST2, TREC, MRPC). */
  tasks?: readonly string[];
  experiment: string;
  resultsDir?: string;
  dataDir?: string;
  force?: boolean;
  /** SentEval's params.seed (default 1111) and kfold (default 10, the papers'). */
  seed?: number;
  kfold?: number;
  /** Called after each task (e.g. to free an encoder cache). */
  afterTask?: () => void;
  log?: (line: string) => void;
}

const EVALUATOR = 'SentEval transfer tasks';

function transferKey(row: TransferRow, path: TransferPath, tasks: readonly string[], seed: number, kfold: number): string {
  return evaluationKey({ weightsSha256: row.identity.sha256, config: { ...row.identity.config, path: path.name, tasks, seed, kfold }, evaluator: EVALUATOR, rows: 0, seed });
}

/** The outcomes a transfer record keeps (written by runTransferRows). */
export function transferRecordDetails(run: LoadedRun): { tasks: TaskOutcome[]; failed: { task: string; message: string }[] } {
  const d = run.record.details as { tasks?: TaskOutcome[]; failed?: { task: string; message: string }[] } | undefined;
  if (!d || !Array.isArray(d.tasks)) throw new InputError('not a SentEval transfer record: details.tasks is missing', { file: run.file });
  return { tasks: d.tasks, failed: d.failed ?? [] };
}

/** Evaluates (or reuses) every row with every path; see the file comment. */
export async function runTransferRows(o: RunTransferOptions): Promise<TransferRowRun[]> {
  const resultsDir = resolveResultsDir(o.resultsDir);
  const log = o.log ?? (() => {});
  const tasks = [...(o.tasks ?? SENTEVAL_TRANSFER_TASKS)];
  for (const t of tasks) transferTaskSpec(t);
  const seed = o.seed ?? 1111;
  const kfold = o.kfold ?? 10;
  const tasksOf = (p: TransferPath) => tasks.filter((t) => !p.tasks || p.tasks.includes(t));

  interface Pending {
    row: TransferRow;
    path: TransferPath;
    key: string;
    request: StoreRequest;
    tasks: TaskOutcome[];
    failed: { task: string; message: string }[];
    startedAt: string;
    t0: number;
  }
  const out: TransferRowRun[] = [];
  const pending: Pending[] = [];
  for (const row of o.rows) {
    for (const path of o.paths) {
      const key = transferKey(row, path, tasksOf(path), seed, kfold);
      // A record that could not run every task is tried again.
      const request: StoreRequest = { experiment: o.experiment, resultsDir, key, label: `${row.label}, ${path.name} path`, force: o.force, log, accept: (r) => transferRecordDetails(r).failed.length === 0 };
      const done = reusableRun(request);
      if (done) out.push({ row, path, status: 'reused', key, run: done, ...transferRecordDetails(done) });
      else pending.push({ row, path, key, request, tasks: [], failed: [], startedAt: new Date().toISOString(), t0: performance.now() });
    }
  }
  const provenance = pending.length > 0 ? collectProvenance() : undefined;

  for (const task of tasks) {
    const want = pending.filter((p) => tasksOf(p.path).includes(task));
    if (want.length === 0) continue;
    let prepared: PreparedTask;
    try {
      prepared = prepareTransferTask(task, { dataDir: o.dataDir });
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      log(`${task}: ${e.message}`);
      for (const p of want) p.failed.push({ task, message: e.message });
      continue;
    }
    for (const row of o.rows) {
      const mine = want.filter((p) => p.row === row);
      if (mine.length === 0) continue;
      const e0 = performance.now();
      let m: TaskMatrices;
      try {
        m = await embedTask(prepared, row.batcher);
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        log(`${row.label}, ${task}: ${e.message}`);
        for (const p of mine) p.failed.push({ task, message: e.message });
        continue;
      }
      const embedSeconds = (performance.now() - e0) / 1000;
      for (const p of mine) {
        const c0 = performance.now();
        const r = await classifyTransferTask(prepared.spec, m, { learner: p.path.make(), seed, kfold });
        const classify = (performance.now() - c0) / 1000;
        p.tasks.push({ task, acc: r.acc, devacc: r.devacc, ...(r.f1 !== undefined ? { f1: r.f1 } : {}), ndev: r.ndev, ntest: r.ntest, seconds: { embed: embedSeconds, classify } });
        log(`${row.label}, ${p.path.name} path, ${task}: acc ${r.acc.toFixed(2)} (dev ${r.devacc.toFixed(2)}), embedding ${embedSeconds.toFixed(1)} s, classifier ${classify.toFixed(1)} s`);
      }
    }
    o.afterTask?.();
  }

  for (const p of pending) {
    const metrics: Record<string, number> = {};
    // SentEval reports accuracy in %; the record stores fractions × 100 (lib/report/evaluation-record.ts).
    for (const t of p.tasks) metrics[t.task] = t.acc / 100;
    if (SENTEVAL_TRANSFER_TASKS.every((t) => p.tasks.some((x) => x.task === t))) metrics.Avg = p.tasks.reduce((s, t) => s + t.acc, 0) / p.tasks.length / 100;
    const wallSeconds = (performance.now() - p.t0) / 1000;
    const config = { ...p.row.identity.config, path: p.path.name, tasks: tasksOf(p.path), seed, kfold };
    const file = writeEvaluationRecord({
      experiment: o.experiment,
      resultsDir,
      startedAt: p.startedAt,
      wallSeconds,
      seed,
      config,
      model: p.row.identity.model,
      evaluator: { name: `${EVALUATOR} (${tasksOf(p.path).join(', ')}), ${p.path.title}`, rows: p.tasks.reduce((s, t) => s + t.ntest, 0) },
      result: { metrics },
      provenance: provenance!,
      paperNote: p.row.paperRow ? `AnglE Table 6 row '${p.row.paperRow}' (000_c0fdd0968b088fcd.txt)` : 'not a row of AnglE Table 6',
      details: { runKey: p.key, label: p.row.label, path: p.path.name, ...(p.row.paperRow ? { tableRow: p.row.paperRow } : {}), tasks: p.tasks, failed: p.failed },
    });
    const stored = recordedRun(p.request, { file, status: 'evaluated', card: { recipe: config, recipeName: `${p.row.label}, ${p.path.name} path` }, message: `${p.tasks.length} task(s) in ${wallSeconds.toFixed(1)} s${p.failed.length ? `, ${p.failed.length} could not run` : ''}` });
    out.push({ row: p.row, path: p.path, status: 'evaluated', key: p.key, run: stored.run, tasks: p.tasks, failed: p.failed });
  }
  // rows in the order asked for: row-major, then path
  return o.rows.flatMap((row) => o.paths.map((path) => out.find((r) => r.row === row && r.path === path)!));
}
