/**
 * A recipe trained through LoRA adapters (PromptEOL's contrastive fine-tuning: LoRA r 64, α 16,
 * dropout 0.05 on a decoder), run the way ./run-recipe.ts runs a full fine-tuning: identified by a
 * key, reused when finished, resumed when interrupted, its record and run card written at the
 * end. The difference is one step: after the model is loaded, adapters are added
 * (lib/models/adapters/lora.ts `addLora`, which freezes every base weight), so the trainer
 * updates, checkpoints and keeps as its best model the adapter matrices only; the key adds the
 * LoRA configuration and its seed to runRecipe's, and the record's details carry them.
 *
 * runRecipe has no hook between loading and training; if it gains one (`prepareModel`), this
 * file becomes a call to it.
 */
import { createHash } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { envConfig } from '../config.js';
import type { CostEstimate } from './cost.js';
import type { Recipe } from './recipes.js';
import type { TaskData } from './tasks.js';
import { addLora, type LoraConfig } from '../models/adapters/lora.js';
import type { AdaptableModel } from '../models/adapters/types.js';
import { loadModel } from '../models/auto.js';
import { collectProvenance } from '../report/provenance.js';
import { loadRun } from '../report/results-reader.js';
import { writeRunCard } from '../report/run-card.js';
import { portableModelIdentity, writeTrainingRecord } from '../report/training-record.js';
import { latestCheckpoint } from '../train/checkpoint.js';
import { Trainer, type TrainResult } from '../train/trainer.js';
import { InputError } from '../util/errors.js';
import { finishedRun, runKey, trainingData, type RecipeRun, type RunRecipeOptions } from './run-recipe.js';

export interface RunLoraRecipeOptions extends RunRecipeOptions {
  lora: LoraConfig;
  /** Seed of the adapters' initialisation (default: the run's seed). */
  loraSeed?: number;
}

function isAdaptable(m: object): m is AdaptableModel {
  return typeof (m as Partial<AdaptableModel>).attachAdapter === 'function' && typeof (m as Partial<AdaptableModel>).linearModules === 'function';
}

/** The key of a LoRA run: runRecipe's key of the same recipe, with the adapters' configuration. */
export function loraRunKey(baseKey: string, lora: LoraConfig, loraSeed: number): string {
  const targets = lora.targetModules === 'all-linear' ? 'all-linear' : [...(lora.targetModules ?? ['q_proj', 'v_proj'])];
  const identity = { base: baseKey, lora: { r: lora.r, alpha: lora.alpha, dropout: lora.dropout, targets, rslora: lora.useRslora ?? false }, loraSeed };
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
}

/** Trains (or reuses, or resumes) one recipe through LoRA adapters at one seed; see the file comment. */
export async function runLoraRecipe(o: RunLoraRecipeOptions): Promise<RecipeRun> {
  const resultsDir = resolve(o.resultsDir ?? envConfig().resultsDir);
  const log = o.log ?? (() => {});
  const loraSeed = o.loraSeed ?? o.seed;
  const m = await loadModel(o.model);
  try {
    if (!isAdaptable(m.model)) throw new InputError(`LoRA needs a model with adaptable linear layers (a decoder); '${o.model}' is a ${m.model.architecture} model`);
    const train = trainingData(o.recipe, o.data, o.trainExamples);
    const base = runKey({ recipe: o.recipe, seed: o.seed, train, weightsSha256: m.weightsSha256, dev: o.data.dev.name, test: o.data.test.name });
    const key = loraRunKey(base, o.lora, loraSeed);
    if (!o.force) {
      const done = finishedRun(resultsDir, o.experiment, key);
      if (done) {
        log(`${o.recipe.name} seed ${o.seed}: reused run ${done.record.runId} (key ${key}; FORCE to retrain)`);
        return { key, status: 'reused', run: done };
      }
    }
    const modules = addLora(m.model, o.lora, loraSeed);
    const runDir = join(resultsDir, o.experiment, 'runs', key);
    if (o.force && existsSync(runDir)) rmSync(runDir, { recursive: true, force: true });
    const trainer = new Trainer({
      model: m,
      train,
      dev: o.data.dev,
      test: o.data.test,
      runDir,
      config: { ...o.recipe.config, seed: o.seed, checkpointEvery: o.recipe.config.checkpointEvery ?? 50 },
      onStep: o.onStep,
      onEval: o.onEval,
      progress: o.progress ?? false,
    });
    const provenance = collectProvenance();
    let result: TrainResult;
    try {
      result = await trainer.run({ resume: o.force ? false : 'if-possible', signal: o.signal });
    } catch (e) {
      const ckpt = latestCheckpoint(runDir);
      if (!(e instanceof InputError) || !ckpt || !e.file?.startsWith(runDir)) throw e;
      log(`${o.recipe.name} seed ${o.seed}: the checkpoint ${e.file} is unusable (${e.message}); restarting this run from scratch`);
      rmSync(runDir, { recursive: true, force: true });
      result = await trainer.run({ resume: false, signal: o.signal });
    }
    if (!result.complete) throw new InputError(`${o.recipe.name} seed ${o.seed} stopped at step ${result.steps}; run the cell again to resume it`, { file: runDir });
    const lora = { ...o.lora, targetModules: o.lora.targetModules ?? ['q_proj', 'v_proj'], seed: loraSeed, modules: modules.length };
    const file = writeTrainingRecord(result, {
      experiment: o.experiment,
      resultsDir,
      provenance,
      model: portableModelIdentity(m),
      paper: o.paper,
      paperNote: o.paperNote,
      details: { runKey: key, recipe: o.recipe.name, lora, ...o.details },
    });
    writeRunCard(file, { recipe: { ...o.recipe.config }, recipeName: `${o.recipe.name} (LoRA r ${o.lora.r}, α ${o.lora.alpha})` });
    const status = result.resumedFrom ? 'resumed' : 'trained';
    log(`${o.recipe.name} seed ${o.seed}: ${status}${result.resumedFrom ? ` from ${result.resumedFrom}` : ''}, ${result.steps} steps in ${result.wallSeconds.toFixed(1)} s (LoRA on ${modules.length} modules)`);
    return { key, status, run: loadRun(file), result };
  } finally {
    m.model.dispose();
  }
}

/**
 * What a LoRA run will cost (as ./cost.ts `estimateCost` for a full fine-tuning, which would train
 * and hold optimizer state for every weight): steps, tokens, and two steps measured on a throwaway
 * copy of the model with the adapters added (the first warms up; the second is timed).
 */
export async function estimateLoraCost(recipe: Recipe, model: string, data: TaskData, lora: LoraConfig, trainExamples?: number): Promise<CostEstimate> {
  const m = await loadModel(model);
  try {
    if (!isAdaptable(m.model)) throw new InputError(`LoRA needs a model with adaptable linear layers (a decoder); '${model}' is a ${m.model.architecture} model`);
    addLora(m.model, lora, 0);
    const train = trainingData(recipe, data, trainExamples);
    const probe = new Trainer({ model: m, train, config: { ...recipe.config, evalEvery: undefined, checkpointEvery: undefined }, progress: false });
    const r = probe.resolved;
    let tokensPerEpoch = 0;
    for (let b = 0; b < probe.plan.batchesPerEpoch; b++) tokensPerEpoch += probe.plan.batch(0, b).realTokens;
    const measured = await probe.run({ stopAfterSteps: Math.min(2, r.totalSteps) });
    const last = measured.log[measured.log.length - 1];
    const secondsPerStep = last?.seconds ?? 0;
    const every = recipe.config.evalEvery === 'epoch' ? r.stepsPerEpoch : recipe.config.evalEvery;
    const evaluations = every ? Math.ceil(r.totalSteps / every) : 1;
    // Embedding costs about a third of a training step per token (forward only): dev and test texts.
    const perToken = last ? secondsPerStep / Math.max(1, last.tokens) / 3 : 0;
    const evalTokens = (data.dev.rows * evaluations + data.test.rows) * (tokensPerEpoch / Math.max(1, train.items.length));
    return {
      recipe: recipe.name,
      examples: train.items.length,
      steps: r.totalSteps,
      tokens: Math.round((tokensPerEpoch * r.totalSteps) / r.stepsPerEpoch),
      secondsPerStep,
      evaluations,
      seconds: r.totalSteps * secondsPerStep + evalTokens * perToken,
    };
  } finally {
    m.model.dispose();
  }
}
