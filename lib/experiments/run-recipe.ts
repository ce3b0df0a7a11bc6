/**
 * Training a recipe at a seed, through the run store (./run-store.ts): the run is identified by a
 * key — a hash of everything that decides its numbers (task, trainer configuration, seed, the
 * training data's hash, the dev and test sets, the model's weights, probes, and the LoRA adapters
 * when the recipe trains some) — so that running a notebook again
 *
 * - reuses a finished run (its record in results/<experiment>/ carries the key);
 * - resumes an unfinished one from its newest checkpoint in results/<experiment>/runs/<key>/
 *   (killed mid-way, or the kernel restarted); a corrupt checkpoint is reported by path and that
 *   run restarts from scratch, nothing else lost;
 * - trains the rest; `force` retrains even a finished run (a new record beside the old one).
 *
 * The recipe says everything about the run: its LoRA adapters (added to the fresh model, the base
 * frozen: lib/models/adapters), its prompt (every training and evaluation text put into it first,
 * each sentence cut so the template survives: ./prompted-task.ts), the positives it keeps, and the
 * preset's scale has already shrunk it. `npm run train` runs the same function (reuse off, its own
 * run folder and --resume). A finished run gets its record (with its predictions sidecar) and a
 * run card. The model is loaded fresh for each run, since training changes its weights in place.
 */
import { createHash } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Evaluator } from '../eval/evaluator.js';
import { addLora, DEFAULT_LORA_TARGETS, type LoraConfig } from '../models/adapters/lora.js';
import { adaptableBaseOf } from '../models/adaptable-transformer-model.js';
import type { AdaptableModel } from '../models/adapters/types.js';
import { loadModel, type LoadModelOptions } from '../models/auto.js';
import type { LoadedModel, TextTokenizer } from '../models/types.js';
import { collectProvenance } from '../report/provenance.js';
import type { PaperCell } from '../report/run-record.js';
import { portableModelIdentity, writeTrainingRecord } from '../report/training-record.js';
import type { EvalLog, StepLog } from '../train/checkpoint.js';
import { latestCheckpoint } from '../train/checkpoint.js';
import type { TrainingExamples } from '../train/examples.js';
import { Trainer, type TrainResult } from '../train/trainer.js';
import { InputError } from '../util/errors.js';
import { promptedTaskData } from './prompted-task.js';
import type { Recipe } from './recipes/recipe.js';
import { keyOf, storedRun, type StoredRun } from './run-store.js';
import type { TaskData } from './tasks.js';

export interface RunRecipeOptions {
  /** The recipe as it will run (scaled to the preset, overrides applied: ./plan.ts does both). */
  recipe: Recipe;
  seed: number;
  /** A Hub id or a model directory. */
  model: string;
  /** The task's data, not yet prompted (the recipe's prompt is applied here). */
  data: TaskData;
  /** Use only the first N training examples (a preset's scale, `--limit`). */
  trainExamples?: number;
  /** results/<experiment>/ holds the records. */
  experiment: string;
  resultsDir?: string;
  /** Retrain even when a finished run with the same key exists. */
  force?: boolean;
  /** Whether a finished run with the same key stands for this one (default true; `npm run train` always trains). */
  reuse?: boolean;
  /** The run folder (checkpoints, best model); default <results>/<experiment>/runs/<key>. */
  runDir?: string;
  /** Continue from the run folder's newest checkpoint: default 'if-possible'; true requires one. */
  resume?: boolean | 'if-possible';
  paper?: Record<string, PaperCell>;
  paperNote?: string;
  /** Recorded in the record's details (e.g. the notebook and table row). */
  details?: Record<string, unknown>;
  /**
   * Evaluated beside the dev set at every dev evaluation (lib/train/trainer.ts `probes`), e.g.
   * `{ geometry: alignUniformEvaluator(...) }`; their metrics land in the record's evaluation log.
   * Their names join the run's key (a run without them lacks those metrics).
   */
  probes?: Record<string, Evaluator>;
  onStep?: (log: StepLog) => void;
  onEval?: (log: EvalLog) => void;
  /** Progress lines on stderr (default off in notebooks: the live figure shows progress). */
  progress?: boolean;
  /** Messages for the reader (reuse, resume, restart after a corrupt checkpoint). */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

export type RecipeRun = StoredRun<'resumed' | 'trained', TrainResult>;

/** A run that stopped before its last step (Ctrl-C, a notebook interrupt): its checkpoint is in `runDir`. */
export class RunInterrupted extends Error {
  constructor(
    readonly recipe: string,
    readonly steps: number,
    readonly totalSteps: number,
    readonly runDir: string,
  ) {
    super(`${recipe} stopped at step ${steps} of ${totalSteps}; run it again to resume from the checkpoint in ${runDir}`);
    this.name = 'RunInterrupted';
  }
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

/** Tokens the template takes with an empty text slot. */
function templateTokens(tokenizer: TextTokenizer, template: string): number {
  return tokenizer.encode(template.replace('{text}', '')).ids.length;
}

/** The task data as the recipe trains on it: prompted when the recipe has a prompt (see the file comment). */
export function recipeTaskData(recipe: Recipe, data: TaskData, tokenizer: TextTokenizer): TaskData {
  const p = recipe.prompt;
  if (!p) return data;
  let sentenceMaxTokens: number;
  if (p.sentenceMaxTokens === 'fit') {
    // AnglE's AngleDataTokenizer: the text gets what max length leaves beside the template.
    const t = templateTokens(tokenizer, p.template);
    sentenceMaxTokens = recipe.config.maxLength - t;
    if (sentenceMaxTokens < 1) throw new InputError(`recipe ${recipe.name}: the prompt takes ${t} tokens, max length ${recipe.config.maxLength} leaves no room for a text`);
  } else sentenceMaxTokens = p.sentenceMaxTokens;
  const { evaluate, sentenceMaxTokens: _, ...train } = p;
  return promptedTaskData(data, { train, evaluate: evaluate ?? recipe.evaluation?.prompt ?? train, sentenceMaxTokens, tokenizer });
}

function dataSha256(t: TrainingExamples): string {
  const h = createHash('sha256');
  for (const e of t.items) h.update(JSON.stringify(e, ['a', 'b', 'label', 'anchor', 'positive', 'negative', 'text'])).update('\n');
  return h.digest('hex');
}

/** What of a recipe's adapters decides a run's numbers. */
function loraIdentity(lora: LoraConfig, loraSeed: number): Record<string, unknown> {
  const targets = lora.targetModules === 'all-linear' ? 'all-linear' : [...(lora.targetModules ?? DEFAULT_LORA_TARGETS)];
  return { lora: { r: lora.r, alpha: lora.alpha, dropout: lora.dropout, targets, rslora: lora.useRslora ?? false }, loraSeed };
}

/** The key of a run: a hash of what decides its numbers (with the adapters' configuration for LoRA runs). */
export function runKey(parts: { recipe: Recipe; seed: number; train: TrainingExamples; weightsSha256: string; dev: string; test: string; probes?: Record<string, string> }): string {
  const plain = keyOf({
    task: parts.recipe.task,
    config: { ...parts.recipe.config, seed: parts.seed },
    train: { name: parts.train.name, n: parts.train.items.length, sha256: dataSha256(parts.train) },
    dev: parts.dev,
    test: parts.test,
    weights: parts.weightsSha256,
    // only when given, so the keys of runs without probes stay as they were
    ...(parts.probes && Object.keys(parts.probes).length > 0 ? { probes: parts.probes } : {}),
  });
  if (!parts.recipe.lora) return plain;
  // The base storage joins the key only when set, so the keys of float32-base runs stay as they were.
  return keyOf({ base: plain, ...loraIdentity(parts.recipe.lora, parts.seed), ...(parts.recipe.baseStorage ? { baseStorage: parts.recipe.baseStorage } : {}) });
}

function isAdaptable(m: object): m is AdaptableModel {
  return typeof (m as Partial<AdaptableModel>).attachAdapter === 'function' && typeof (m as Partial<AdaptableModel>).linearModules === 'function';
}

/**
 * How a recipe's model is loaded: a LoRA run's 16-bit or NF4 frozen base is stored while the
 * checkpoint is read (lib/models/frozen-base.ts), so the float32 model never exists on the host
 * or the device; prepareRecipeModel then finds it stored. The same numbers as storing it after a
 * float32 load (test/frozen-base-load.test.ts).
 */
export function recipeLoadOptions(recipe: Recipe): LoadModelOptions {
  return recipe.lora && recipe.baseStorage ? { frozenBase: recipe.baseStorage } : {};
}

/**
 * Adds the recipe's LoRA adapters to a freshly loaded model (the base frozen), seeded by the run's
 * seed; returns what the record keeps of them, or undefined for a recipe without adapters.
 */
export function prepareRecipeModel(recipe: Recipe, m: LoadedModel, seed: number): { details: Record<string, unknown>; label: string; note: string } | undefined {
  const lora = recipe.lora;
  if (!lora) {
    if (recipe.baseStorage) throw new InputError(`recipe ${recipe.name}: a base storage (${recipe.baseStorage.format}) applies to the frozen base of a LoRA run; this recipe trains every weight`);
    return undefined;
  }
  if (!isAdaptable(m.model)) throw new InputError(`LoRA needs a model with adaptable linear layers (a decoder); '${m.id}' is a ${m.model.architecture} model`);
  const modules = addLora(m.model, lora, seed);
  const storage = recipe.baseStorage;
  if (storage) {
    const adaptable = adaptableBaseOf(m.model);
    if (!adaptable) throw new InputError(`recipe ${recipe.name}: a ${storage.format} frozen base needs a model whose linear layers can store one (lib/models/adaptable-transformer-model.ts); '${m.id}' is a ${m.model.architecture} model`);
    adaptable.storeFrozenBase(storage.format, { doubleQuant: storage.doubleQuant });
  }
  const base = storage ? `, ${storage.format}${storage.doubleQuant ? ' (double quantisation)' : ''} base` : '';
  return {
    details: { lora: { ...lora, targetModules: lora.targetModules ?? DEFAULT_LORA_TARGETS, seed, modules: modules.length }, ...(storage ? { baseStorage: storage } : {}) },
    label: `LoRA r ${lora.r}, α ${lora.alpha}${base}`,
    note: `LoRA on ${modules.length} modules${base}`,
  };
}

/** Trains (or reuses, or resumes) one recipe at one seed; see the file comment. */
export async function runRecipe(o: RunRecipeOptions): Promise<RecipeRun> {
  const m = await loadModel(o.model, recipeLoadOptions(o.recipe));
  try {
    const data = recipeTaskData(o.recipe, o.data, m.tokenizer);
    const train = trainingData(o.recipe, data, o.trainExamples);
    const probes = o.probes ? Object.fromEntries(Object.entries(o.probes).map(([k, e]) => [k, e.name])) : undefined;
    const key = runKey({ recipe: o.recipe, seed: o.seed, train, weightsSha256: m.weightsSha256, dev: data.dev.name, test: data.test.name, probes });
    const label = `${o.recipe.name} seed ${o.seed}`;
    return await storedRun({ experiment: o.experiment, resultsDir: o.resultsDir, key, label, force: o.force || o.reuse === false, log: o.log }, async (resultsDir) => {
      const prepared = prepareRecipeModel(o.recipe, m, o.seed);
      const runDir = o.runDir ?? join(resultsDir, o.experiment, 'runs', key);
      let resume: boolean | 'if-possible' = o.resume ?? (o.force ? false : 'if-possible');
      if (o.force && o.runDir === undefined && existsSync(runDir)) rmSync(runDir, { recursive: true, force: true });
      const trainer = new Trainer({
        model: m,
        train,
        dev: data.dev,
        test: data.test,
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
        if (!(e instanceof InputError) || !ckpt || !e.file?.startsWith(runDir) || resume === true) throw e;
        o.log?.(`${label}: the checkpoint ${e.file} is unusable (${e.message}); restarting this run from scratch`);
        rmSync(runDir, { recursive: true, force: true });
        resume = false;
        result = await trainer.run({ resume, signal: o.signal });
      }
      if (!result.complete) throw new RunInterrupted(o.recipe.name, result.steps, trainer.resolved.totalSteps, runDir);
      const file = writeTrainingRecord(result, {
        experiment: o.experiment,
        resultsDir,
        provenance,
        model: portableModelIdentity(m),
        paper: o.paper,
        paperNote: o.paperNote,
        details: { runKey: key, recipe: o.recipe.name, ...prepared?.details, ...o.details },
      });
      const status = result.resumedFrom ? 'resumed' : 'trained';
      return {
        file,
        status,
        // The card lists what differs from the recipe: the overrides, when there were some.
        card: { recipe: { ...(o.recipe.baseConfig ?? o.recipe.config) }, recipeName: prepared ? `${o.recipe.name} (${prepared.label})` : o.recipe.name },
        message: `${status}${result.resumedFrom ? ` from ${result.resumedFrom}` : ''}, ${result.steps} steps in ${result.wallSeconds.toFixed(1)} s${prepared ? ` (${prepared.note})` : ''}`,
        result,
      };
    });
  } finally {
    m.model.dispose();
  }
}
