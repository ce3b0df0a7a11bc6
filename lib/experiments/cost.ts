/**
 * What a run will cost, said before it trains: optimiser steps, tokens to process (the training
 * texts tokenised at the recipe's max length, once per epoch, padding excluded), and the time it
 * will take on this backend — from two steps measured on a throwaway copy of the model (the first
 * step warms the backend up; the second is the one timed) plus the dev and test evaluations. The
 * copy is prepared as the run will be (the recipe's LoRA adapters, its prompt), so a LoRA run's
 * steps train and hold optimizer state for the adapters only.
 */
import { loadModel } from '../models/auto.js';
import { Trainer } from '../train/trainer.js';
import type { Recipe } from './recipes/recipe.js';
import { prepareRecipeModel, recipeLoadOptions, recipeTaskData, trainingData } from './run-recipe.js';
import type { TaskData } from './tasks.js';

export interface CostEstimate {
  recipe: string;
  examples: number;
  steps: number;
  /** Non-padding tokens over the whole run. */
  tokens: number;
  /** Seconds of the second measured training step (the first warms up). */
  secondsPerStep: number;
  /** Dev evaluations the recipe runs. */
  evaluations: number;
  /** steps × secondsPerStep, and the evaluations at the measured embedding rate. */
  seconds: number;
}

/** Measures and extrapolates one recipe's cost on `model` (loaded afresh and disposed); see the file comment. */
export async function estimateCost(recipe: Recipe, model: string, data: TaskData, trainExamples?: number): Promise<CostEstimate> {
  const m = await loadModel(model, recipeLoadOptions(recipe));
  try {
    prepareRecipeModel(recipe, m, 0);
    const prompted = recipeTaskData(recipe, data, m.tokenizer);
    const train = trainingData(recipe, prompted, trainExamples);
    const probe = new Trainer({ model: m, train, config: { ...recipe.config, evalEvery: undefined, checkpointEvery: undefined }, progress: false });
    const r = probe.resolved;
    let tokensPerEpoch = 0;
    for (let b = 0; b < probe.plan.batchesPerEpoch; b++) tokensPerEpoch += probe.plan.batch(0, b).realTokens;
    const epochs = r.totalSteps / r.stepsPerEpoch;
    const measured = await probe.run({ stopAfterSteps: Math.min(2, r.totalSteps) });
    const secondsPerStep = measured.log[measured.log.length - 1]?.seconds ?? 0;
    // Embedding costs about a third of a training step per token (forward only); dev + test texts.
    const perToken = measured.log.length > 0 ? secondsPerStep / Math.max(1, measured.log[measured.log.length - 1].tokens) / 3 : 0;
    const every = recipe.config.evalEvery === 'epoch' ? r.stepsPerEpoch : recipe.config.evalEvery;
    const evaluations = every ? Math.floor(r.totalSteps / every) + (r.totalSteps % every === 0 ? 0 : 1) : 1;
    const tokensPerExample = tokensPerEpoch / Math.max(1, train.items.length);
    const evalTokens = (prompted.dev.rows * evaluations + prompted.test.rows) * tokensPerExample;
    return {
      recipe: recipe.name,
      examples: train.items.length,
      steps: r.totalSteps,
      tokens: Math.round(tokensPerEpoch * epochs),
      secondsPerStep,
      evaluations,
      seconds: r.totalSteps * secondsPerStep + evalTokens * perToken,
    };
  } finally {
    m.model.dispose();
  }
}
