/**
 * The results file of a training run: what the trainer returned (lib/train TrainResult) turned
 * into a run record (./run-record.ts) — configuration, data and model identity, provenance, wall
 * time, metrics as ρ × 100, the paper's cells — plus, when the run was tested, a sidecar
 * `<run-id>.predictions.json` with the test set's per-pair predictions and gold values, which a
 * bootstrap confidence interval or a paired comparison with another run needs.
 *
 * The sidecar is written first and the record last, so a record that exists always has its
 * sidecar; both writes are atomic.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { LoadedModel } from '../models/types.js';
import type { TrainResult } from '../train/trainer.js';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import { packageRoot } from '../util/package-root.js';
import type { Provenance } from './provenance.js';
import { newRunId, runRecordPath, writeRunRecord, type ModelIdentity, type PaperCell, type RunRecord } from './run-record.js';

export interface TrainingRecordOptions {
  experiment: string;
  /** Default: ANGLE_RESULTS_DIR or results/. */
  resultsDir?: string;
  /** Taken when the run started (lib/report collectProvenance): the code the run ran. */
  provenance: Provenance;
  model: ModelIdentity;
  /** The paper's numbers for this run's metrics. */
  paper?: Record<string, PaperCell>;
  /** Why there is no paper cell, when `paper` is absent. */
  paperNote?: string;
  /** Default: a new id from the run's start time. */
  runId?: string;
  /** More to keep in `details` (e.g. the recipe a notebook ran). */
  details?: Record<string, unknown>;
}

/** The sidecar of per-item test predictions beside a run record. */
export interface PredictionsFile {
  runId: string;
  evaluator: string;
  /** Which weights produced them. */
  weights: string;
  predictions: number[];
  gold: number[];
}

export function predictionsPath(experiment: string, runId: string, resultsDir?: string): string {
  return runRecordPath(experiment, runId, resultsDir).replace(/\.json$/, '.predictions.json');
}

/**
 * A model's identity for a results file that goes into git: the Hub id (with its commit) as is; a
 * local directory as its path relative to the shared reference folder (ANGLE_SHARED_DIR) or the
 * project when it lies inside one of them, else only its last two path parts — never a path of
 * the machine that made the run. The weights' sha256 identifies the weights in every case.
 */
export function portableModelIdentity(m: Pick<LoadedModel, 'id' | 'dir' | 'source' | 'commit' | 'weightsSha256'>, env: NodeJS.ProcessEnv = process.env): ModelIdentity {
  if (m.source === 'hub') return { id: m.id, ...(m.commit ? { commit: m.commit } : {}), weightsSha256: m.weightsSha256 };
  return { id: portablePath(m.dir, env), weightsSha256: m.weightsSha256 };
}

/** What a results file may store for a model given as a Hub id or a local directory (before loading it). */
export function portableModelRef(idOrPath: string, env: NodeJS.ProcessEnv = process.env): string {
  return existsSync(idOrPath) ? portablePath(idOrPath, env) : idOrPath;
}

/** A local path as a results file may store it (see portableModelIdentity). */
export function portablePath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  const abs = resolve(path);
  const roots: Array<[string, string]> = [];
  if (env.ANGLE_SHARED_DIR) roots.push(['shared', resolve(env.ANGLE_SHARED_DIR)]);
  roots.push(['shared', resolve(packageRoot(), '..', 'shared')]);
  roots.push(['project', packageRoot()]);
  for (const [name, root] of roots) {
    const r = relative(root, abs);
    if (r !== '' && !r.startsWith('..') && !isAbsolute(r)) return `${name}:${r.split(sep).join('/')}`;
  }
  return `local:${abs.split(sep).filter(Boolean).slice(-2).join('/')}`;
}

/**
 * The config with its objective's teacher (a Hub id or a local folder, lib/losses/teacher-alignment.ts)
 * as a results file may store it: a folder as `shared:…`/`project:…`/`local:…`, never a machine path.
 */
function withPortableTeacher<C extends object>(config: C): C {
  const objective = (config as { objective?: { teacher?: { model?: unknown } } }).objective;
  const model = objective?.teacher?.model;
  if (typeof model !== 'string') return config;
  return { ...config, objective: { ...objective, teacher: { ...objective!.teacher, model: portableModelRef(model) } } };
}

/** The run record of a finished training run (metrics ×100 as the papers print them). */
export function trainingRunRecord(result: TrainResult, o: TrainingRecordOptions): RunRecord {
  if (!result.complete) throw new InputError(`the run stopped at step ${result.steps} of ${result.identity.resolved.totalSteps}: only a complete run gets a results file (resume it first)`);
  const id = result.identity;
  const metrics: Record<string, number> = {};
  if (result.final) for (const [k, v] of Object.entries(result.final)) metrics[`dev_${k}`] = v * 100;
  if (result.best) metrics[`best_dev_${result.best.metric}`] = result.best.value * 100;
  if (result.test) for (const [k, v] of Object.entries(result.test.metrics)) metrics[`test_${k}`] = v * 100;
  metrics.final_loss = result.log[result.log.length - 1]?.loss ?? Number.NaN;
  const runId = o.runId ?? newRunId(new Date(result.startedAt));
  return {
    experiment: o.experiment,
    runId,
    startedAt: result.startedAt,
    finishedAt: new Date().toISOString(),
    wallSeconds: result.wallSeconds,
    seed: id.resolved.seed,
    config: {
      ...withPortableTeacher(id.config),
      resolved: id.resolved,
      resumedFrom: result.resumedFrom ? 'a checkpoint of this run' : null,
      decayedParameters: id.decayedParameters,
      trainableParameters: id.trainableParameters,
      frozenParameters: id.frozenParameters,
    },
    data: [
      { id: id.train.id, split: 'train', rows: id.train.rows, sha256: id.train.sha256 },
      ...(id.dev ? [{ id: id.dev.id, split: 'dev', rows: id.dev.rows }] : []),
      ...(id.test ? [{ id: id.test.id, split: 'test', rows: id.test.rows }] : []),
    ],
    model: o.model,
    provenance: o.provenance,
    metrics,
    ...(o.paper ? { paper: o.paper } : { paperNote: o.paperNote ?? 'no paper cell was given for this run' }),
    details: {
      log: result.log,
      evals: result.evals,
      best: result.best ?? null,
      testWeights: result.test?.weights ?? null,
      tokensSeen: result.tokensSeen,
      ...(result.test?.predictions ? { predictionsFile: `${runId}.predictions.json` } : {}),
      ...o.details,
    },
  };
}

/** Writes the record (and its predictions sidecar) of a finished run; returns the record's path. */
export function writeTrainingRecord(result: TrainResult, o: TrainingRecordOptions): string {
  const record = trainingRunRecord(result, o);
  const t = result.test;
  const path = runRecordPath(record.experiment, record.runId, o.resultsDir);
  if (existsSync(path)) throw new InputError(`a results file for run '${record.runId}' already exists; runs never overwrite each other`, { file: path });
  if (t?.predictions && t.gold) {
    const side: PredictionsFile = { runId: record.runId, evaluator: t.evaluator, weights: t.weights, predictions: [...t.predictions], gold: [...t.gold] };
    writeFileAtomicSync(predictionsPath(record.experiment, record.runId, o.resultsDir), JSON.stringify(side) + '\n');
  }
  return writeRunRecord(record, o.resultsDir);
}
