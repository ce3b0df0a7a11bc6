/**
 * One evaluation of AnglE Table 2: a model with its pooling (or prompt) through SentEval's STS
 * suite — STS12–16 "all", STS-B test, SICK-R test, their mean — and, beside it, the MTEB protocol
 * on the same model (lib/eval/mteb-sts.ts: SICK-R over all 9,927 pairs; MTEB-format files under
 * results/<experiment>/mteb/). A released checkpoint gets one; a trained run gets one on its
 * selected weights.
 *
 * The result is a run record in results/<experiment>/ with metrics ρ × 100 named after the table's
 * columns — `sts12` … `sts16`, `stsb`, `sickr`, `avg` (SentEval) and `mteb_sts12` … `mteb_sickr`,
 * `mteb_avg` — the paper's cells for those metrics, and a run card. It goes through the run store
 * (./run-store.ts) under a key (the weights' hash, the evaluation settings, the tasks), so a rerun
 * reuses it.
 *
 * Only the test splits are read (STS-B dev selects checkpoints elsewhere). `pairsPerSet` keeps the
 * first N pairs of every set — a smoke run's shortcut for slow encoders, written into the record's
 * config and data ids; no MTEB files are written for such an evaluation.
 *
 * Avg. is the mean of the unrounded task figures; SentEval's printers (SimCSE's and AnglE's
 * evaluation scripts) average the figures rounded to two decimals, which can differ by 0.01.
 */
import { join } from 'node:path';
import { STS_TASKS, type StsTaskName } from '../data/registry.js';
import { loadStsTask } from '../data/sts.js';
import type { EncodeOptions, SentenceEncoder } from '../embed/types.js';
import { MTEB_STS_TASKS, mtebStsPairs, scoreMtebStsPairs, type MtebStsTask, type MtebStsTaskResult } from '../eval/mteb-sts.js';
import { evaluateStsSets, reportedSpearman, type StsTaskResult } from '../eval/senteval-sts.js';
import { cachingEncoder } from '../eval/vectors.js';
import { writeMtebResults, type MtebModelInfo } from '../report/mteb-results.js';
import { collectProvenance } from '../report/provenance.js';
import { newRunId, writeRunRecord, type DataIdentity, type ModelIdentity, type PaperCell, type RunRecord } from '../report/run-record.js';
import { InputError } from '../util/errors.js';
import { keyOf, storedRun, type StoredRun } from './run-store.js';

/** Table 2's columns as metric names, with the SentEval task and the MTEB task of each. */
export const TABLE2_METRICS: ReadonlyArray<{ column: string; metric: string; senteval: StsTaskName; mteb: MtebStsTask['name'] }> = [
  { column: 'STS12', metric: 'sts12', senteval: 'STS12', mteb: 'STS12' },
  { column: 'STS13', metric: 'sts13', senteval: 'STS13', mteb: 'STS13' },
  { column: 'STS14', metric: 'sts14', senteval: 'STS14', mteb: 'STS14' },
  { column: 'STS15', metric: 'sts15', senteval: 'STS15', mteb: 'STS15' },
  { column: 'STS16', metric: 'sts16', senteval: 'STS16', mteb: 'STS16' },
  { column: 'STS-B', metric: 'stsb', senteval: 'STSBenchmark', mteb: 'STSBenchmark' },
  { column: 'SICR-R', metric: 'sickr', senteval: 'SICKRelatedness', mteb: 'SICK-R' },
];
/** The average column (only when all seven tasks ran). */
export const TABLE2_AVERAGE = { column: 'Avg.', metric: 'avg' } as const;

/** How the encoder was built: what the record stores as the evaluation's configuration. */
export interface SuiteSettings {
  /** Our pooling name, or 'sentence-transformers' for a folder's own pipeline. */
  pooling: string;
  /** SentEval batches of this many pairs (batch-dependent poolings). */
  sentevalBatchSize?: number;
  maxLength?: number;
  /** The prompt template and clean-up, for decoders. */
  prompt?: { template?: string; prepareText?: string };
}

export interface SuiteRunOptions {
  experiment: string;
  resultsDir: string;
  dataDir?: string;
  /** The model as the record names it: a released checkpoint, or the base model a trained run started from. */
  model: ModelIdentity & { weightsSha256: string };
  /** The weights evaluated, when they are not `model`'s (a trained run's selected weights): part of the key, kept in details. */
  evaluatedWeightsSha256?: string;
  encoder: SentenceEncoder;
  settings: SuiteSettings;
  /** SentEval tasks (default the seven of the table). */
  tasks?: readonly StsTaskName[];
  /**
   * Keep only the first N pairs (file order) of every set, SentEval's and MTEB's: a smoke run's
   * shortcut for slow encoders, never the papers' protocol; recorded in the config and details.
   */
  pairsPerSet?: number;
  /** Also run the MTEB protocol and write its files under results/<experiment>/mteb/ (default true). */
  mteb?: false | { name: string; revision?: string; embedDim?: number; maxTokens?: number };
  /** Seed of the training run whose weights these are (0 for released checkpoints). */
  seed?: number;
  /** Configuration shared by every seed of a trained row (e.g. its recipe), stored in the record's config. */
  configuration?: Record<string, unknown>;
  /** The paper's numbers by metric name. */
  paper?: Record<string, PaperCell>;
  paperNote?: string;
  /** Training data (for trained runs), recorded as the record's train split. */
  trainData?: DataIdentity;
  details?: Record<string, unknown>;
  force?: boolean;
  encode?: EncodeOptions;
  log?: (line: string) => void;
}

/** The suite's run; `result` (this call's per-task numbers) only when it evaluated. */
export type SuiteRun = StoredRun<'evaluated', { senteval: Partial<Record<StsTaskName, StsTaskResult>>; mteb?: MtebStsTaskResult[]; mtebDir?: string }>;

/** The key of an evaluation: what decides its numbers. */
export function suiteRunKey(o: Pick<SuiteRunOptions, 'model' | 'evaluatedWeightsSha256' | 'settings' | 'tasks' | 'pairsPerSet' | 'mteb' | 'configuration'>): string {
  const identity = {
    protocol: 'senteval-sts',
    weights: o.evaluatedWeightsSha256 ?? o.model.weightsSha256,
    settings: o.settings,
    configuration: o.configuration ?? null,
    tasks: o.tasks ?? STS_TASKS,
    pairsPerSet: o.pairsPerSet ?? null,
    mteb: o.mteb === false ? false : (o.mteb?.name ?? true),
  };
  return keyOf(identity);
}

/** Evaluates (or reuses) one model on the STS suite and writes its record; see the file comment. */
export async function runStsSuite(o: SuiteRunOptions): Promise<SuiteRun> {
  const tasks = o.tasks ?? STS_TASKS;
  const key = suiteRunKey(o);
  return storedRun({ experiment: o.experiment, resultsDir: o.resultsDir, key, label: `${o.model.id} (${o.settings.pooling})`, force: o.force, log: o.log }, async (resultsDir) => {
    const startedAt = new Date();
    const t0 = performance.now();
    const provenance = collectProvenance();
    const cap = o.pairsPerSet;
    if (cap !== undefined && !(Number.isInteger(cap) && cap >= 2)) throw new InputError(`pairsPerSet must be an integer >= 2 (Spearman needs two pairs), got ${cap}`);
    const capped = <T>(pairs: T[]): T[] => (cap === undefined ? pairs : pairs.slice(0, cap));
    // Each distinct sentence once across SentEval and MTEB, unless the pooling depends on the batch.
    const encoder = o.settings.sentevalBatchSize === undefined ? cachingEncoder(o.encoder) : o.encoder;
    const encode = { progress: false, ...o.encode };
    const senteval: Partial<Record<StsTaskName, StsTaskResult>> = {};
    const metrics: Record<string, number> = {};
    for (const m of TABLE2_METRICS.filter((x) => tasks.includes(x.senteval))) {
      const sets = loadStsTask(m.senteval, { dataDir: o.dataDir, splits: ['test'] }).map((s) => ({ ...s, pairs: capped(s.pairs) }));
      const { encodeSeconds: _, ...r } = await evaluateStsSets(encoder, m.senteval, sets, encode, o.settings.sentevalBatchSize);
      senteval[m.senteval] = r;
      metrics[m.metric] = reportedSpearman(r)! * 100;
    }
    if (tasks.length === STS_TASKS.length) metrics[TABLE2_AVERAGE.metric] = TABLE2_METRICS.reduce((a, m) => a + metrics[m.metric], 0) / TABLE2_METRICS.length;
    let mteb: MtebStsTaskResult[] | undefined;
    let mtebDir: string | undefined;
    if (o.mteb !== false) {
      mteb = [];
      for (const m of TABLE2_METRICS.filter((x) => tasks.includes(x.senteval))) {
        const t1 = performance.now();
        const { task, pairs, textSource } = mtebStsPairs(m.mteb, { dataDir: o.dataDir });
        const used = capped(pairs);
        const scores = await scoreMtebStsPairs(encoder, used, encode);
        mteb.push({ task, scores, pairs: used.length, textSource: cap === undefined ? textSource : `${textSource}; smoke: first ${cap} pairs`, seconds: (performance.now() - t1) / 1000 });
        metrics[`mteb_${m.metric}`] = scores.cosine_spearman * 100;
      }
      if (mteb.length === MTEB_STS_TASKS.length) metrics.mteb_avg = mteb.reduce((a, r) => a + r.scores.cosine_spearman * 100, 0) / mteb.length;
      // A capped evaluation is not MTEB's protocol: no MTEB files for it.
      if (cap === undefined) {
        const info: MtebModelInfo = o.mteb ?? { name: o.model.id, revision: o.model.commit };
        mtebDir = writeMtebResults(join(resultsDir, o.experiment, 'mteb'), info, mteb);
      }
    }
    if (Object.keys(metrics).length === 0) throw new InputError(`the evaluation of ${o.model.id} produced no metric`);
    const data: DataIdentity[] = [
      ...(o.trainData ? [o.trainData] : []),
      ...tasks.map((t) => ({ id: cap === undefined ? t : `${t} (first ${cap} pairs of each set)`, split: 'test', rows: senteval[t]!.sets.reduce((a, s) => a + s.n, 0) })),
    ];
    const record: RunRecord = {
      experiment: o.experiment,
      runId: newRunId(startedAt),
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      wallSeconds: (performance.now() - t0) / 1000,
      seed: o.seed ?? 0,
      config: { protocol: 'SentEval STS (all / test), MTEB STS beside it', ...o.settings, tasks: [...tasks], ...(cap !== undefined ? { pairsPerSet: cap } : {}), ...(o.configuration ?? {}), seed: o.seed ?? 0 },
      data,
      model: o.model,
      provenance,
      metrics,
      ...(o.paper ? { paper: o.paper } : { paperNote: o.paperNote ?? 'no paper cell for this evaluation' }),
      details: {
        runKey: key,
        ...(o.evaluatedWeightsSha256 ? { evaluatedWeightsSha256: o.evaluatedWeightsSha256 } : {}),
        senteval: Object.fromEntries(Object.entries(senteval).map(([t, r]) => [t, { all: r!.all.spearman, mean: r!.mean.spearman, wmean: r!.wmean.spearman, sets: r!.sets.map((s) => ({ name: s.name, n: s.n, spearman: s.spearman })) }])),
        ...(mteb ? { mteb: mteb.map((r) => ({ task: r.task.name, pairs: r.pairs, textSource: r.textSource, scores: r.scores })), mtebDir: mtebDir ? mtebDir.slice(resultsDir.length + 1) : null } : {}),
        ...o.details,
      },
    };
    const file = writeRunRecord(record, resultsDir);
    return {
      file,
      status: 'evaluated',
      message: `evaluated in ${record.wallSeconds.toFixed(1)} s${metrics.avg !== undefined ? `, SentEval Avg. ${metrics.avg.toFixed(2)}` : ''}`,
      result: { senteval, ...(mteb ? { mteb } : {}), ...(mtebDir ? { mtebDir } : {}) },
    };
  });
}
