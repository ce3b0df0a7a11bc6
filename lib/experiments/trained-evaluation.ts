/**
 * The evaluation a recipe asks for after training (`recipe.evaluation`, AnglE Table 2's rows): the
 * run's selected weights — its best dev checkpoint, or for a LoRA run the base with the best
 * adapter loaded (exported in PEFT's layout beside the run) — embedded with the evaluation's pooling
 * (and prompt, for decoders) and scored on the SentEval STS suite with the MTEB protocol beside it
 * (./sts-suite-run.ts: a record of its own, through the run store, reused on a rerun).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StsTaskName } from '../data/registry.js';
import { PooledSentenceEncoder } from '../embed/encoder.js';
import { ANGLE_LLAMA_TEMPLATE } from '../embed/prompt-encoder.js';
import type { SentenceEncoder } from '../embed/types.js';
import { addLora } from '../models/adapters/lora.js';
import { loadLoraAdapter, saveLoraAdapter } from '../models/adapters/peft.js';
import type { AdaptableModel } from '../models/adapters/types.js';
import { defaultPoolingOf } from '../models/architectures.js';
import { loadModel } from '../models/auto.js';
import type { LoadedModel } from '../models/types.js';
import type { PaperCell } from '../report/run-record.js';
import { bestModelDir, restoreBestWeights } from '../train/best-model.js';
import { InputError, UnavailableError } from '../util/errors.js';
import { promptedEncoder } from './prompted-task.js';
import type { Recipe, SuiteEvaluation } from './recipes/recipe.js';
import type { RecipeRun } from './run-recipe.js';
import { runStsSuite, type SuiteRun, type SuiteSettings } from './sts-suite-run.js';

/** Which part of the suite to run (a smoke run's shortcuts; the records say so). */
export interface SuiteScope {
  /** SentEval tasks (default all seven). */
  tasks?: readonly StsTaskName[];
  /** The first N pairs of every set only. */
  pairsPerSet?: number;
}

export interface TrainedEvaluationOptions {
  recipe: Recipe;
  training: RecipeRun;
  seed: number;
  /** The model the run started from (the decoder of a LoRA run). */
  model: string;
  experiment: string;
  resultsDir: string;
  dataDir?: string;
  scope?: SuiteScope;
  paper?: Record<string, PaperCell>;
  /** What stood in for the data (smoke), recorded. */
  standIn?: string;
  details?: Record<string, unknown>;
  force?: boolean;
  log?: (line: string) => void;
}

/** The suite's record of how an evaluation embeds. */
export function suiteSettings(ev: Pick<SuiteEvaluation, 'pooling' | 'sentevalBatchSize' | 'maxLength'> | { pooling?: string; sentevalBatchSize?: number }, prompt?: { template: string; prepareText?: string }): SuiteSettings {
  return {
    pooling: ev.pooling ?? 'sentence-transformers',
    ...(ev.sentevalBatchSize !== undefined ? { sentevalBatchSize: ev.sentevalBatchSize } : {}),
    ...('maxLength' in ev && ev.maxLength !== undefined ? { maxLength: ev.maxLength } : {}),
    ...(prompt ? { prompt } : {}),
  };
}

/** The decoder encoder of a prompt evaluation: last token of each prompt, left padding. */
export function promptEncoder(m: LoadedModel, ev: { pooling?: string; maxLength?: number; prompt?: SuiteEvaluation['prompt'] }): SentenceEncoder {
  // The decoder's own pooling (its architecture's registry entry: last) where the evaluation names none.
  const inner = new PooledSentenceEncoder(m, { pooling: ev.pooling ?? defaultPoolingOf(m.model.architecture), maxLength: Math.min(ev.maxLength ?? m.model.maxPositions, m.model.maxPositions), batchSize: 16 });
  return ev.prompt ? promptedEncoder(inner, ev.prompt) : inner;
}

/**
 * The PEFT adapter directory (`<runDir>/adapter`) of a LoRA run's tested weights: fresh adapters
 * as the run made them, the best checkpoint's matrices loaded into them, saved in PEFT's layout.
 */
export async function exportTrainedAdapter(runDir: string, baseModel: string, recipe: Recipe, seed: number): Promise<string> {
  if (!recipe.lora) throw new InputError(`recipe ${recipe.name} trains no adapters`);
  const dir = join(runDir, 'adapter');
  // A finished run's adapter is written once (FORCE removes the run folder, adapter included).
  if (existsSync(join(dir, 'adapter_config.json')) && existsSync(join(dir, 'adapter_model.safetensors'))) return dir;
  const m = await loadModel(baseModel);
  try {
    addLora(m.model as AdaptableModel, recipe.lora, seed);
    restoreBestWeights(bestModelDir(runDir), m.model.params);
    await saveLoraAdapter(dir, m.model as AdaptableModel, m.source === 'hub' ? { baseModel: m.id } : {});
  } finally {
    m.model.dispose();
  }
  return dir;
}

/**
 * Scores a finished training run's selected weights on the STS suite (see the file comment), or
 * says why the suite's data cannot be had here.
 */
export async function evaluateTrainedRun(o: TrainedEvaluationOptions): Promise<SuiteRun | string> {
  const r = o.recipe;
  const ev = r.evaluation;
  if (!ev) throw new InputError(`recipe ${r.name} asks for no evaluation after training`);
  const runDir = join(o.resultsDir, o.experiment, 'runs', o.training.key);
  let model: LoadedModel;
  let encoder: SentenceEncoder;
  let evaluatedWeights: string;
  let adapterDir: string | undefined;
  if (r.lora) {
    adapterDir = await exportTrainedAdapter(runDir, o.model, r, o.seed);
    model = await loadModel(o.model);
    loadLoraAdapter(adapterDir, model.model as AdaptableModel);
    encoder = promptEncoder(model, ev);
    evaluatedWeights = createHash('sha256').update(`${model.weightsSha256}\n`).update(readFileSync(join(adapterDir, 'adapter_model.safetensors'))).digest('hex');
  } else {
    model = await loadModel(bestModelDir(runDir));
    encoder = new PooledSentenceEncoder(model, { pooling: ev.pooling, batchSize: Math.max(64, ev.sentevalBatchSize ?? 0) });
    evaluatedWeights = model.weightsSha256;
  }
  try {
    const record = o.training.run.record;
    return await runStsSuite({
      experiment: o.experiment,
      resultsDir: o.resultsDir,
      dataDir: o.dataDir,
      // The model a trained row started from (as its training record names it), so seeds of one recipe share it.
      model: { ...record.model, weightsSha256: record.model.weightsSha256 ?? '' },
      evaluatedWeightsSha256: evaluatedWeights,
      encoder,
      settings: suiteSettings(ev, ev.prompt ? { template: ev.prompt.template ?? ANGLE_LLAMA_TEMPLATE, prepareText: ev.prompt.prepareText } : undefined),
      tasks: o.scope?.tasks,
      pairsPerSet: o.scope?.pairsPerSet,
      mteb: { name: `${r.name} seed ${o.seed} (trained here${o.standIn ? ', smoke' : ''})`, revision: o.training.key, embedDim: model.model.hiddenSize, maxTokens: model.model.maxPositions },
      seed: o.seed,
      configuration: { recipe: r.name, ...(o.standIn ? { standIn: o.standIn } : {}) },
      trainData: record.data.find((x) => x.split === 'train'),
      paper: o.paper,
      details: { ...o.details, trainingRun: record.runId, trainingKey: o.training.key, ...(adapterDir ? { adapterDir: adapterDir.slice(o.resultsDir.length + 1) } : {}) },
      force: o.force,
      log: o.log,
    });
  } catch (e) {
    if (!(e instanceof InputError) && !(e instanceof UnavailableError)) throw e;
    return `evaluation data not on this machine: ${(e as Error).message.split('\n')[0]}`;
  } finally {
    model.model.dispose();
  }
}
