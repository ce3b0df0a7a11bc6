/**
 * Deep overrides of a recipe: what a notebook's parameter cell (`OVERRIDES = { objective: { loss:
 * { weights: { angle: 2 } } } }`) and `npm run train`'s flags change. An override names exactly
 * the values it changes and nothing else:
 *
 * - plain objects merge key by key, at any depth, so `{ objective: { loss: { weights: { angle: 2 } } } }`
 *   keeps the recipe's cosine and ibn weights, its taus, `ibnPositives` and `duplicates` (restating a
 *   whole loss to change one weight used to reset the rest to the loss's own defaults);
 * - numbers, strings, booleans and arrays replace the recipe's value;
 * - an objective of another `name` replaces the whole objective (the options of one objective mean
 *   nothing to another);
 * - `pooling` is one knob wherever a pooling applies: training and the evaluation of the trained
 *   weights (`evaluation.pooling`, AnglE Table 2's suite), unless the override names
 *   `evaluation.pooling` itself;
 * - `lora` (rows that train adapters) merges like any object.
 *
 * Every value an override sets gets a source under its dotted key (`objective.loss.weights.angle`:
 * "override (parameter cell)"), so recipe tables show what was changed and by whom. A key the
 * recipe cannot have (a typo: `learningRate`) is an error that lists the keys there are, rather
 * than a setting that silently does nothing.
 */
// The value import registers the built-in objectives, whose schemas give the objective's keys.
import '../train/objective.js';
import { isRegisteredLoss, lossOptionKeys, registeredLossNames } from '../losses/registry.js';
import type { TrainerConfig } from '../train/trainer.js';
import { InputError } from '../util/errors.js';
import type { LoraConfig } from '../models/adapters/lora.js';
import type { BaseStorageSpec, Recipe, SuiteEvaluation } from './recipes/recipe.js';

/** A nested partial: every level optional. */
export type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** What an override may change: the trainer configuration, and the recipe's LoRA and evaluation. */
export type RecipeOverrides = DeepPartial<TrainerConfig> & { lora?: Partial<LoraConfig>; baseStorage?: BaseStorageSpec | null; evaluation?: Partial<Pick<SuiteEvaluation, 'pooling' | 'maxLength' | 'sentevalBatchSize'>> };

/** The source recorded for a value a notebook's parameter cell set. */
export const PARAMETER_CELL = 'override (parameter cell)';
/** The source recorded for a value a command-line flag set. */
export const COMMAND_LINE = 'override (command line)';

/** Every key of TrainerConfig (the compiler checks this list against the interface). */
const TRAINER_KEYS = {
  objective: true,
  pooling: true,
  maxLength: true,
  batchSize: true,
  gradAccumulation: true,
  epochs: true,
  maxSteps: true,
  lr: true,
  schedule: true,
  warmupSteps: true,
  warmupFraction: true,
  warmupStart: true,
  weightDecay: true,
  betas: true,
  eps: true,
  maxGradNorm: true,
  shuffle: true,
  seed: true,
  dropLast: true,
  dropout: true,
  evalEvery: true,
  evalAtEnd: true,
  bestMetric: true,
  evalMaxLength: true,
  evalBatchSize: true,
  checkpointEvery: true,
  keepCheckpoints: true,
  checkpointing: true,
  attention: true,
  precision: true,
  stepGraphs: true,
} as const satisfies Record<keyof TrainerConfig, true>;

const LORA_KEYS = { r: true, alpha: true, dropout: true, targetModules: true, useRslora: true } as const satisfies Record<keyof LoraConfig, true>;
const EVALUATION_KEYS = ['pooling', 'maxLength', 'sentevalBatchSize'] as const;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** The keys allowed under `path` in a recipe whose objective is `objective`; undefined: any (a value's own object). */
function allowedKeys(path: string, objective: string): readonly string[] | undefined {
  if (path === '') return [...Object.keys(TRAINER_KEYS), 'lora', 'baseStorage', 'evaluation'];
  // An objective's keys, at any depth, are its registry entry's options schema (lib/losses/registry.ts).
  if (path === 'objective' || path.startsWith('objective.')) return isRegisteredLoss(objective) ? lossOptionKeys(objective, path.slice('objective.'.length)) : ['name'];
  if (path === 'lora') return Object.keys(LORA_KEYS);
  if (path === 'evaluation') return EVALUATION_KEYS;
  return undefined;
}

/**
 * `base` with `patch` merged in (see the file comment); `set` receives the dotted key of every value
 * the patch sets. Throws an InputError naming an unknown key and the keys there are.
 */
function merge(base: unknown, patch: unknown, path: string, objective: string, set: (key: string) => void): unknown {
  if (!isPlainObject(patch) || !isPlainObject(base)) {
    set(path);
    return structuredClone(patch);
  }
  const allowed = allowedKeys(path, objective);
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (allowed && !allowed.includes(k)) {
      throw new InputError(`override: '${path ? `${path}.` : ''}${k}' is not a setting of this recipe; ${path || 'the recipe'} has ${allowed.join(', ')}`);
    }
    const key = path ? `${path}.${k}` : k;
    // An objective of another kind replaces the whole objective.
    if (key === 'objective' && isPlainObject(v) && typeof v.name === 'string' && v.name !== objective) {
      if (!isRegisteredLoss(v.name)) throw new InputError(`override: objective '${v.name}' is not one of ${registeredLossNames().join(', ')}`);
      set(key);
      out[k] = structuredClone(v);
      continue;
    }
    // An object the recipe does not have yet is still checked against its schema (an objective option's nested keys).
    const into = isPlainObject(base[k]) ? base[k] : !(k in base) && isPlainObject(v) && key.startsWith('objective.') && allowedKeys(key, objective) ? {} : undefined;
    out[k] = into !== undefined && isPlainObject(v) ? merge(into, v, key, objective, set) : (set(key), structuredClone(v));
  }
  return out;
}

/**
 * The recipe with `overrides` applied (see the file comment); every value they set is attributed
 * to `source` in the recipe's sources. No overrides: the recipe itself.
 */
export function applyOverrides(recipe: Recipe, overrides: RecipeOverrides | undefined, source: string = PARAMETER_CELL): Recipe {
  if (!overrides || Object.keys(overrides).length === 0) return recipe;
  if (!isPlainObject(overrides)) throw new InputError(`override: expected an object of settings, e.g. { lr: 2e-5 }, got ${JSON.stringify(overrides)}`);
  const { lora, evaluation, baseStorage, ...trainer } = overrides as RecipeOverrides & Record<string, unknown>;
  const sources = { ...recipe.sources };
  const setKeys: string[] = [];
  const set = (key: string) => setKeys.push(key);
  const config = merge(recipe.config, trainer, '', recipe.config.objective.name, set) as TrainerConfig;
  const out: Recipe = { ...recipe, config, baseConfig: recipe.baseConfig ?? recipe.config };
  if (lora !== undefined) {
    if (!recipe.lora) throw new InputError(`override: 'lora' applies to rows that train adapters; ${recipe.name} trains every weight`);
    out.lora = merge(recipe.lora, lora, 'lora', '', set) as LoraConfig;
  }
  if (baseStorage !== undefined) {
    // null: a float32 base; else the format (and double quantisation) given, whole.
    if (!recipe.lora) throw new InputError(`override: 'baseStorage' applies to rows that train adapters over a frozen base; ${recipe.name} trains every weight`);
    if (baseStorage !== null && !['fp16', 'bf16', 'nf4'].includes(baseStorage.format)) throw new InputError(`override: baseStorage.format must be fp16, bf16 or nf4, got ${JSON.stringify(baseStorage.format)}`);
    if (baseStorage === null) delete out.baseStorage;
    else out.baseStorage = { ...baseStorage };
    set('baseStorage');
  }
  if (recipe.evaluation) {
    // One pooling knob: an override of the pooling applies to the evaluation of the trained weights
    // too, unless the override names the evaluation's pooling itself.
    const follow = trainer.pooling !== undefined && evaluation?.pooling === undefined;
    const patch = { ...(follow ? { pooling: trainer.pooling } : {}), ...evaluation };
    if (Object.keys(patch).length > 0) out.evaluation = merge(recipe.evaluation, patch, 'evaluation', '', set) as SuiteEvaluation;
  } else if (evaluation !== undefined) {
    throw new InputError(`override: 'evaluation' applies to rows evaluated on a suite after training; ${recipe.name} has none`);
  }
  for (const key of setKeys) sources[key] = source;
  out.sources = sources;
  return out;
}

/** The source of a dotted key: its own, else its nearest parent's (`objective.loss.weights.angle` → `objective.loss.weights` → …). */
export function sourceOf(sources: Readonly<Record<string, string>>, key: string): string {
  for (let p = key; p; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') if (sources[p] !== undefined) return sources[p];
  return '';
}

/** Every leaf of a recipe's settings as [dotted key, value], in the recipe's order. */
export function flattenSettings(value: Record<string, unknown>, prefix = ''): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(value)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (isPlainObject(v) && Object.keys(v).length > 0) out.push(...flattenSettings(v, key));
    else out.push([key, v]);
  }
  return out;
}
