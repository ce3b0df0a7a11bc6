/**
 * A recipe trained through LoRA adapters (PromptEOL's contrastive fine-tuning: LoRA r 64, α 16,
 * dropout 0.05 on a decoder), run the way ./run-recipe.ts runs a full fine-tuning: identified by a
 * key, reused when finished, resumed when interrupted, its record and run card written at the
 * end. The difference is one step: after the model is loaded, adapters are added
 * (lib/models/adapters/lora.ts `addLora`, which freezes every base weight), so the trainer
 * updates, checkpoints and keeps as its best model the adapter matrices only; the key adds the
 * LoRA configuration and its seed to runRecipe's, and the record's details carry them.
 *
 * That step is runRecipe's `prepareModel` hook; this file supplies the LoRA preparation and the
 * cost estimate.
 */
import type { CostEstimate } from './cost.js';
import type { Recipe } from './recipes.js';
import type { TaskData } from './tasks.js';
import { addLora, type LoraConfig } from '../models/adapters/lora.js';
import type { AdaptableModel } from '../models/adapters/types.js';
import { loadModel } from '../models/auto.js';
import { Trainer } from '../train/trainer.js';
import { InputError } from '../util/errors.js';
import { preparedRunKey, runRecipe, trainingData, type ModelPreparation, type RecipeRun, type RunRecipeOptions } from './run-recipe.js';

export interface RunLoraRecipeOptions extends RunRecipeOptions {
  lora: LoraConfig;
  /** Seed of the adapters' initialisation (default: the run's seed). */
  loraSeed?: number;
}

function isAdaptable(m: object): m is AdaptableModel {
  return typeof (m as Partial<AdaptableModel>).attachAdapter === 'function' && typeof (m as Partial<AdaptableModel>).linearModules === 'function';
}

/** What of the adapters decides a run's numbers. */
function loraIdentity(lora: LoraConfig, loraSeed: number): Record<string, unknown> {
  const targets = lora.targetModules === 'all-linear' ? 'all-linear' : [...(lora.targetModules ?? ['q_proj', 'v_proj'])];
  return { lora: { r: lora.r, alpha: lora.alpha, dropout: lora.dropout, targets, rslora: lora.useRslora ?? false }, loraSeed };
}

/** The key of a LoRA run: runRecipe's key of the same recipe, with the adapters' configuration. */
export function loraRunKey(baseKey: string, lora: LoraConfig, loraSeed: number): string {
  return preparedRunKey(baseKey, loraIdentity(lora, loraSeed));
}

/** What a LoRA run does to its model: adapters added with this configuration and seed (the base frozen). */
export function loraPreparation(model: string, lora: LoraConfig, loraSeed: number): ModelPreparation {
  return {
    identity: loraIdentity(lora, loraSeed),
    apply: (m) => {
      if (!isAdaptable(m.model)) throw new InputError(`LoRA needs a model with adaptable linear layers (a decoder); '${model}' is a ${m.model.architecture} model`);
      const modules = addLora(m.model, lora, loraSeed);
      return {
        details: { lora: { ...lora, targetModules: lora.targetModules ?? ['q_proj', 'v_proj'], seed: loraSeed, modules: modules.length } },
        label: `LoRA r ${lora.r}, α ${lora.alpha}`,
        note: `LoRA on ${modules.length} modules`,
      };
    },
  };
}

/** Trains (or reuses, or resumes) one recipe through LoRA adapters at one seed; see the file comment. */
export async function runLoraRecipe(o: RunLoraRecipeOptions): Promise<RecipeRun> {
  return runRecipe({ ...o, prepareModel: loraPreparation(o.model, o.lora, o.loraSeed ?? o.seed) });
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
