/**
 * What a recipe is: the complete trainer configuration of one row of a paper table, and for every
 * value where it comes from — the paper where it says, the authors' code where the paper is silent,
 * our own documented choice where both are. Rows that train adapters carry their LoRA, rows whose
 * texts go through a prompt carry it, and rows whose trained weights are scored on a suite after
 * training (AnglE Table 2) carry that evaluation. Recipes are data: ./index.ts names them, the
 * files beside it write them one paper each, ../plan.ts runs them, ../overrides.ts changes them.
 */
import type { Pooling } from '../../embed/pooling.js';
import type { LoraConfig } from '../../models/adapters/lora.js';
import type { TrainerConfig } from '../../train/trainer.js';
import type { PromptSpec } from '../prompted-task.js';
import type { RunScale } from '../presets.js';
import type { TaskName } from '../tasks.js';

/** How trained weights are scored after training on the SentEval STS suite (../sts-suite-run.ts). */
export interface SuiteEvaluation {
  pooling: Pooling;
  /** SentEval batches of this many pairs, for batch-dependent poolings. */
  sentevalBatchSize?: number;
  /** Token limit at evaluation (default: the model's maximum, as SentEval's batchers). */
  maxLength?: number;
  /** Texts go through this prompt first (decoders). */
  prompt?: PromptSpec;
  /** Where these choices come from. */
  source: string;
}

/** A frozen base kept in 16 bits, or NF4 with or without QLoRA's double quantisation. */
export interface BaseStorageSpec {
  format: 'fp16' | 'bf16' | 'nf4';
  doubleQuant?: boolean;
}

/** Training texts put into a prompt before the model sees them (decoders: PromptEOL, AnglE-LLaMA). */
export interface RecipePrompt extends PromptSpec {
  template: string;
  /**
   * Each sentence is cut before it fills the template: to N tokens (PromptEOL's cutoff_len), or to
   * what `maxLength` leaves beside the template ('fit': AnglE's AngleDataTokenizer), so the
   * template's end, where the embedding is read, always survives.
   */
  sentenceMaxTokens: number | 'fit';
  /** How evaluation texts are prompted (default: as in training). */
  evaluate?: PromptSpec;
}

export interface Recipe {
  name: string;
  /** One line: what the recipe trains. */
  title: string;
  /** The registered task (../tasks.ts) whose data it trains on, unless a plan supplies other data. */
  task: TaskName;
  config: TrainerConfig;
  /**
   * Train on the positive pairs only (SimCSE on pair data: positives are its (x, x⁺)): pairs with a
   * label at least `threshold`, relabelled 1.
   */
  positivesOnly?: { threshold: number };
  /** Train adapters over a frozen base (lib/models/adapters) instead of every weight. */
  lora?: LoraConfig;
  /**
   * How the frozen base of a LoRA run is kept: in 16 bits or as NF4 (QLoRA, as the papers' LLaMA
   * runs), decoded per layer on the fly (lib/models/llama/model.ts `storeFrozenBase`); default float32.
   */
  baseStorage?: BaseStorageSpec;
  /** Training texts through a prompt (decoders). */
  prompt?: RecipePrompt;
  /** Score the selected weights on the STS suite after training (AnglE Table 2's rows). */
  evaluation?: SuiteEvaluation;
  /** What differs from the authors' run that the recipe cannot express (shown with it). */
  deviations?: string[];
  /** Each setting (dotted for nested ones, e.g. 'objective.loss.weights') -> where its value comes from. */
  sources: Record<string, string>;
  /** The configuration before overrides were applied (../overrides.ts): run cards show what they changed. */
  baseConfig?: TrainerConfig;
}

/**
 * The recipe shrunk to a preset's run size: at most `maxSteps` steps with dev evaluation every
 * `evalEvery`, no warmup longer than a tenth of the run, at most `maxBatchSize` examples per
 * micro-batch and then one micro-batch per step, checkpoints within the run. The training-set
 * limit is applied where the data is (../run-recipe.ts). A scale without limits returns the recipe.
 */
export function scaleRecipe(r: Recipe, scale: RunScale): Recipe {
  if (scale.maxSteps === undefined && scale.evalEvery === undefined && scale.maxBatchSize === undefined) return r;
  const config: TrainerConfig = { ...r.config };
  const sources: Record<string, string> = { ...r.sources };
  const note = 'preset scale (smoke): a few dozen steps to exercise every path, not to reproduce';
  if (scale.maxBatchSize !== undefined && config.batchSize > scale.maxBatchSize) {
    config.batchSize = scale.maxBatchSize;
    sources.batchSize = `${r.sources.batchSize}; capped at ${config.batchSize} by the preset scale`;
  }
  if (scale.maxBatchSize !== undefined && (config.gradAccumulation ?? 1) > 1) {
    config.gradAccumulation = 1;
    sources.gradAccumulation = `${r.sources.gradAccumulation}; one micro-batch per step at the preset's scale`;
  }
  if (scale.maxSteps !== undefined) {
    config.maxSteps = scale.maxSteps;
    sources.maxSteps = note;
    if (config.warmupSteps !== undefined) {
      config.warmupSteps = Math.min(config.warmupSteps, Math.floor(scale.maxSteps / 10));
      sources.warmupSteps = `${r.sources.warmupSteps}; capped at a tenth of the run by the preset scale`;
    }
    if (config.checkpointEvery !== undefined && config.checkpointEvery > scale.maxSteps) config.checkpointEvery = scale.maxSteps;
  }
  if (scale.evalEvery !== undefined) {
    config.evalEvery = scale.evalEvery;
    sources.evalEvery = note;
  }
  return { ...r, config, sources };
}
