/**
 * Running a recipe the way a notebook needs it: each (recipe, seed) is one run identified by a key
 * — a hash of everything that decides its numbers (task, resolved trainer configuration, seed, the
 * training data's hash, the model's weights hash) — so that re-running a notebook
 *
 * - reuses a finished run: its record in results/<experiment>/ carries the key (`details.runKey`);
 * - resumes an unfinished one from its newest checkpoint in results/<experiment>/runs/<key>/
 *   (killed mid-way, or the kernel restarted); a corrupt checkpoint is reported by path and that
 *   run restarts from scratch, nothing else lost;
 * - trains the rest; `force` retrains even a finished run (a new record beside the old one).
 *
 * A finished run gets its record (with its predictions sidecar) and a run card. The model is loaded
 * fresh for each run, since training changes its weights in place.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { envConfig } from '../config.js';
import type { TaskData } from './tasks.js';
import { loadModel } from '../models/auto.js';
import type { LoadedModel } from '../models/types.js';
import { collectProvenance } from '../report/provenance.js';
import { loadRun, type LoadedRun } from '../report/results-reader.js';
import { writeRunCard } from '../report/run-card.js';
import type { PaperCell } from '../report/run-record.js';
import { portableModelIdentity, writeTrainingRecord } from '../report/training-record.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { EvalLog, StepLog } from '../train/checkpoint.js';
import { latestCheckpoint } from '../train/checkpoint.js';
import type { TrainingExamples } from '../train/examples.js';
import { Trainer, type TrainResult } from '../train/trainer.js';
import { InputError } from '../util/errors.js';
import type { Recipe } from './recipes.js';

export interface RunRecipeOptions {
  recipe: Recipe;
  seed: number;
  /** A Hub id or a model directory. */
  model: string;
  data: TaskData;
  /** Use only the first N training examples (a preset's scale). */
  trainExamples?: number;
  /** results/<experiment>/ holds the records. */
  experiment: string;
  resultsDir?: string;
  /** Retrain even when a finished run with the same key exists. */
  force?: boolean;
  paper?: Record<string, PaperCell>;
  paperNote?: string;
  /** Recorded in the record's details (e.g. the notebook and table row). */
  details?: Record<string, unknown>;
  /**
   * Evaluated beside the dev set at every dev evaluation (lib/train/trainer.ts `probes`), e.g.
   * `{ geometry: alignUniformEvaluator(...) }`; their metrics land in the record's evaluation log.
   * Their names and evaluators join the run's key (a run without them lacks those metrics).
   */
  probes?: Record<string, Evaluator>;
  onStep?: (log: StepLog) => void;
  onEval?: (log: EvalLog) => void;
  /** Progress lines on stderr (default off in notebooks: the live figure shows progress). */
  progress?: boolean;
  /** Messages for the reader (reuse, resume, restart after a corrupt checkpoint). */
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** A change to the loaded model before it trains (LoRA adapters: ./run-lora-recipe.ts). */
  prepareModel?: ModelPreparation;
}

/**
 * What a run does to its freshly loaded model before training, e.g. adding adapters that freeze
 * the base weights. `identity` (JSON) joins the run's key, since it decides the numbers; `apply`
 * runs after the reuse check, and what it returns goes into the record's details, the run card's
 * recipe name and the log line.
 */
export interface ModelPreparation {
  identity: Record<string, unknown>;
  apply(m: LoadedModel): { details: Record<string, unknown>; label: string; note: string };
}

/** The key of a run whose model is prepared: a hash of the plain run's key and the preparation's identity. */
export function preparedRunKey(baseKey: string, identity: Record<string, unknown>): string {
  return createHash('sha256')
    .update(JSON.stringify({ base: baseKey, ...identity }))
    .digest('hex')
    .slice(0, 16);
}

export interface RecipeRun {
  key: string;
  /** What happened: reused a finished run, resumed an unfinished one, or trained from the start. */
  status: 'reused' | 'resumed' | 'trained';
  run: LoadedRun;
  /** The trainer's result when this call trained (absent when reused). */
  result?: TrainResult;
}

/** The examples a run trains on: the recipe's positives (when it asks) among the first `limit`. */
export function trainingData(recipe: Recipe, data: TaskData, limit: number | undefined): TrainingExamples {
  let t = data.train;
  if (limit !== undefined && limit < t.items.length) t = { ...t, name: `${t.name} (first ${limit})`, items: t.items.slice(0, limit) } as TrainingExamples;
  const keep = recipe.positivesOnly;
  if (keep) {
    if (t.kind !== 'pairs') throw new InputError(`recipe ${recipe.name} keeps positive pairs, but ${t.name} holds ${t.kind}`);
    const items = t.items.filter((p) => p.label >= keep.threshold).map((p) => ({ ...p, label: 1 }));
    if (items.length === 0) throw new InputError(`recipe ${recipe.name}: no pair of ${t.name} has a label >= ${keep.threshold}`);
    t = { kind: 'pairs', name: `${t.name}, positives (label >= ${keep.threshold})`, items };
  }
  return t;
}

function dataSha256(t: TrainingExamples): string {
  const h = createHash('sha256');
  for (const e of t.items) h.update(JSON.stringify(e, ['a', 'b', 'label', 'anchor', 'positive', 'negative', 'text'])).update('\n');
  return h.digest('hex');
}

/** The key of a run: a hash of what decides its numbers. */
export function runKey(parts: { recipe: Recipe; seed: number; train: TrainingExamples; weightsSha256: string; dev: string; test: string; probes?: Record<string, string> }): string {
  const identity = {
    task: parts.recipe.task,
    config: { ...parts.recipe.config, seed: parts.seed },
    train: { name: parts.train.name, n: parts.train.items.length, sha256: dataSha256(parts.train) },
    dev: parts.dev,
    test: parts.test,
    weights: parts.weightsSha256,
    // only when given, so the keys of runs without probes stay as they were
    ...(parts.probes && Object.keys(parts.probes).length > 0 ? { probes: parts.probes } : {}),
  };
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
}

/** The finished run with this key in results/<experiment>/, if any (the newest one). */
export function finishedRun(resultsDir: string, experiment: string, key: string): LoadedRun | undefined {
  const dir = join(resultsDir, experiment);
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.endsWith('.predictions.json'))
    .sort()
    .reverse();
  for (const f of files) {
    try {
      const run = loadRun(join(dir, f));
      if ((run.record.details as { runKey?: string } | undefined)?.runKey === key) return run;
    } catch {
      // A foreign or broken file is not this run; the results reader reports such files.
    }
  }
  return undefined;
}

/** Trains (or reuses, or resumes) one recipe at one seed; see the file comment. */
export async function runRecipe(o: RunRecipeOptions): Promise<RecipeRun> {
  const resultsDir = resolve(o.resultsDir ?? envConfig().resultsDir);
  const log = o.log ?? (() => {});
  const m = await loadModel(o.model);
  try {
    const train = trainingData(o.recipe, o.data, o.trainExamples);
    const probes = o.probes ? Object.fromEntries(Object.entries(o.probes).map(([k, e]) => [k, e.name])) : undefined;
    const plain = runKey({ recipe: o.recipe, seed: o.seed, train, weightsSha256: m.weightsSha256, dev: o.data.dev.name, test: o.data.test.name, probes });
    const key = o.prepareModel ? preparedRunKey(plain, o.prepareModel.identity) : plain;
    if (!o.force) {
      const done = finishedRun(resultsDir, o.experiment, key);
      if (done) {
        log(`${o.recipe.name} seed ${o.seed}: reused run ${done.record.runId} (key ${key}; FORCE to retrain)`);
        return { key, status: 'reused', run: done };
      }
    }
    const prepared = o.prepareModel?.apply(m);
    const runDir = join(resultsDir, o.experiment, 'runs', key);
    let resume: boolean | 'if-possible' = o.force ? false : 'if-possible';
    if (o.force && existsSync(runDir)) rmSync(runDir, { recursive: true, force: true });
    const trainer = new Trainer({
      model: m,
      train,
      dev: o.data.dev,
      test: o.data.test,
      runDir,
      config: { ...o.recipe.config, seed: o.seed, checkpointEvery: o.recipe.config.checkpointEvery ?? 50 },
      ...(o.probes ? { probes: o.probes } : {}),
      onStep: o.onStep,
      onEval: o.onEval,
      progress: o.progress ?? false,
    });
    const provenance = collectProvenance();
    let result: TrainResult;
    try {
      result = await trainer.run({ resume, signal: o.signal });
    } catch (e) {
      // A checkpoint that cannot be read: say which, and start this run over (nothing else is touched).
      const ckpt = latestCheckpoint(runDir);
      if (!(e instanceof InputError) || !ckpt || !e.file?.startsWith(runDir)) throw e;
      log(`${o.recipe.name} seed ${o.seed}: the checkpoint ${e.file} is unusable (${e.message}); restarting this run from scratch`);
      rmSync(runDir, { recursive: true, force: true });
      resume = false;
      result = await trainer.run({ resume, signal: o.signal });
    }
    if (!result.complete) throw new InputError(`${o.recipe.name} seed ${o.seed} stopped at step ${result.steps}; run the cell again to resume it`, { file: runDir });
    const file = writeTrainingRecord(result, {
      experiment: o.experiment,
      resultsDir,
      provenance,
      model: portableModelIdentity(m),
      paper: o.paper,
      paperNote: o.paperNote,
      details: { runKey: key, recipe: o.recipe.name, ...prepared?.details, ...o.details },
    });
    writeRunCard(file, { recipe: { ...o.recipe.config }, recipeName: prepared ? `${o.recipe.name} (${prepared.label})` : o.recipe.name });
    const status = result.resumedFrom ? 'resumed' : 'trained';
    log(`${o.recipe.name} seed ${o.seed}: ${status}${result.resumedFrom ? ` from ${result.resumedFrom}` : ''}, ${result.steps} steps in ${result.wallSeconds.toFixed(1)} s${prepared ? ` (${prepared.note})` : ''}`);
    return { key, status, run: loadRun(file), result };
  } finally {
    m.model.dispose();
  }
}
