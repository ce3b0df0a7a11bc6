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
import { estimateCost, type CostEstimate } from './cost.js';
import type { Recipe } from './recipes.js';
import type { TaskData } from './tasks.js';
import { addLora, type LoraConfig } from '../models/adapters/lora.js';
import type { AdaptableModel } from '../models/adapters/types.js';
import { InputError } from '../util/errors.js';
import { preparedRunKey, runRecipe, type ModelPreparation, type RecipeRun, type RunRecipeOptions } from './run-recipe.js';

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
 * What a LoRA run will cost (./cost.ts `estimateCost` with the adapters added, at seed 0: the
 * steps measured train and hold optimizer state for the adapters only).
 */
export function estimateLoraCost(recipe: Recipe, model: string, data: TaskData, lora: LoraConfig, trainExamples?: number): Promise<CostEstimate> {
  return estimateCost(recipe, model, data, trainExamples, loraPreparation(model, lora, 0));
}
