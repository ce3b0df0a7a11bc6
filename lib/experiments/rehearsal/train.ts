/**
 * Rehearsing one training run of a plan at the paper's real shapes (../plan.ts runs this under the
 * `rehearsal` preset instead of training): the recipe as the paper states it (not shrunk), the
 * model at its real size with random weights (./models.ts), the training data sorted longest first
 * so the rehearsed step is the worst case, and
 *
 * 1. one full optimiser step — every micro-batch of the recipe's accumulation — on the shape-only
 *    backend that mirrors `cuda`: the step's peak device bytes, projected onto the H100
 *    (./projection.ts), in milliseconds whatever the model;
 * 2. where one micro-batch of the same step is cheap enough to compute here for real (about
 *    `realStepSeconds` at this machine's measured training speed), that micro-batch on the
 *    notebook's backend, for its step time and the peak bytes measured here. BERT-base is not:
 *    this 2-core machine trains it at about 1 token/s (bench/results/cpu-bert-base-train-step-*.json:
 *    62 s for a 4 × 32 step on wasm, 134 s on cpu), so one 32-pair STS-B step would take over an
 *    hour; its rows are proven on the shape-only backend, which runs the same model, objective,
 *    trainer and optimiser code at the real shapes and matches the cpu backend's tensor accounting
 *    exactly on the shapes that can be checked (test/shape-only-backend.test.ts);
 * 3. the whole run's hours on one H100 from the tokens it will process (every example, every epoch;
 *    real lengths where the data is here).
 *
 * Data that is not on this machine is synthesised: as many examples as one optimiser step takes,
 * every text at the recipe's max length (the worst case), the set's size from the data registry,
 * marked "synthetic" in the row.
 */
import { trackTensorMemory } from '../../backend/memory-tracking.js';
import { measurePeakBytes, shapeOnlyBackend } from '../../backend/shape-only/index.js';
import { DATASETS, type DatasetId } from '../../data/registry.js';
import { stsEvaluator } from '../../eval/pair-evaluators.js';
import { adaptableBaseOf } from '../../models/adaptable-transformer-model.js';
import type { TextModel, TextTokenizer } from '../../models/types.js';
import type { TrainingExamples } from '../../train/examples.js';
import { Trainer, type TrainerConfig } from '../../train/trainer.js';
import type { Recipe } from '../recipes/recipe.js';
import { prepareRecipeModel, recipeLoadOptions, recipeTaskData, trainingData } from '../run-recipe.js';
import { task, type TaskData } from '../tasks.js';
import { instantiate, type RehearsalModelSpec } from './models.js';
import { FIT_BUDGET_BYTES, projectH100Seconds } from './projection.js';
import type { RehearsalRow } from './summary.js';

/** Texts per example of each kind of training data. */
const TEXTS_PER_EXAMPLE: Record<TrainingExamples['kind'], number> = { pairs: 2, triplets: 3, unsupervised: 2 };

function textsOf(e: TrainingExamples['items'][number]): string[] {
  const x = e as { a?: string; b?: string; anchor?: string; positive?: string; negative?: string; text?: string };
  if (x.text !== undefined) return [x.text, x.text];
  if (x.anchor !== undefined) return [x.anchor, x.positive!, x.negative!];
  return [x.a!, x.b!];
}

/** The size of a task's training split from the data registry (the rehearsal's synthetic data has this many examples). */
function registrySize(taskName: Recipe['task']): number | undefined {
  const t = task(taskName);
  const id = t.datasets[0] as DatasetId;
  const rows = DATASETS[id]?.splits.train?.rows;
  // AnglE's NLI pairs: two per SimCSE triplet (entailment and contradiction).
  return rows === undefined ? undefined : taskName === 'nli-pairs' ? 2 * rows : rows;
}

/** A sentence of `n` one-token words (BERT's WordPiece and GPT-2's BPE both keep "word" whole). */
function sentenceOf(n: number): string {
  return Array.from({ length: n }, () => 'word').join(' ');
}

/** As many synthetic examples as `count`, every text long enough to reach `maxLength` tokens (label 1 where the recipe keeps positives). */
function syntheticExamples(kind: TrainingExamples['kind'], count: number, maxLength: number, labels: 'graded' | 'binary' | 'triplets' | 'none', positives: boolean): TrainingExamples {
  const s = sentenceOf(maxLength);
  const name = `synthetic (${count} examples at max length ${maxLength})`;
  if (kind === 'triplets') return { kind, name, items: Array.from({ length: count }, () => ({ anchor: s, positive: s, negative: s })) };
  if (kind === 'unsupervised') return { kind, name, items: Array.from({ length: count }, () => ({ text: s })) };
  const label = (i: number) => (positives ? 1 : labels === 'graded' ? i % 6 : i % 2);
  return { kind: 'pairs', name, items: Array.from({ length: count }, (_, i) => ({ a: s, b: s, label: label(i) })) };
}

/**
 * Padded tokens of one epoch: the examples shuffled (seed 0) into micro-batches of `batch`, each
 * padded to its longest text — what a run processes, and what the H100 speed on record counts.
 */
function paddedTokensPerEpoch(lengths: readonly number[][], batch: number): number {
  const order = lengths.map((_, i) => i);
  let x = 0x9e3779b9;
  for (let i = order.length - 1; i > 0; i--) {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    const j = x % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  let tokens = 0;
  for (let k = 0; k < order.length; k += batch) {
    const group = order.slice(k, k + batch).map((i) => lengths[i]);
    const longest = Math.max(...group.flat());
    tokens += longest * group.reduce((a, g) => a + g.length, 0);
  }
  return tokens;
}

function kindOf(labels: 'graded' | 'binary' | 'triplets' | 'none'): TrainingExamples['kind'] {
  return labels === 'triplets' ? 'triplets' : labels === 'none' ? 'unsupervised' : 'pairs';
}

/** A data set for one step: dev and test are never run by a rehearsal, but the task's shape wants them. */
function stepData(train: TrainingExamples): TaskData {
  const source = { file: 'rehearsal', line: 0 };
  const dummy = stsEvaluator({ name: 'not evaluated (rehearsal)', pairs: [{ a: 'a', b: 'b', score: 0, source }, { a: 'c', b: 'd', score: 1, source }] });
  return { train, dev: dummy, test: dummy };
}

/** The configuration of a rehearsed step: the recipe's, in file order, no evaluation, no checkpoints. */
function stepConfig(recipe: Recipe, accumulation: number): TrainerConfig {
  const { evalEvery: _e, checkpointEvery: _c, ...c } = recipe.config;
  return { ...c, gradAccumulation: accumulation, shuffle: false, evalAtEnd: false };
}

export interface RehearseTrainingOptions {
  notebook: string;
  run: string;
  recipe: Recipe;
  spec: RehearsalModelSpec;
  /** The task's data when it is on this machine (else synthetic). */
  data?: TaskData;
  /** The H100 calibration of the shape-only device bytes (./calibration.ts). */
  calibration: number;
  backend: string;
  /** Run a micro-batch for real when it should take at most this long here (default 60 s; 0: never). */
  realStepSeconds?: number;
  /**
   * Run this many whole optimiser steps (every micro-batch of the accumulation) on the active
   * backend whatever the model's size — on a GPU host (scripts/gpu-check/). Step seconds are their mean.
   */
  realSteps?: number;
}

/**
 * Training FLOP/s this machine reaches through tfjs (BERT-base, 4 × 32, wasm:
 * bench/results/cpu-bert-base-train-step-2026-11-25T20-34-24-422Z.json, 62.3 s per step of 256
 * tokens ≈ 6 · 109.5M · 256 / 62.3 ≈ 2.7 GFLOP/s): what decides whether a real step is affordable.
 */
export const CPU_TRAINING_FLOPS = 2.7e9;

/** Rehearses one training run (see the file comment); a failure becomes a 'failed' row with its reason. */
export async function rehearseTraining(o: RehearseTrainingOptions): Promise<RehearsalRow> {
  const { recipe, spec } = o;
  const c = recipe.config;
  const accumulation = c.gradAccumulation ?? 1;
  const stepExamples = c.batchSize * accumulation;
  const t = task(recipe.task);
  const base: Omit<RehearsalRow, 'stepSeconds' | 'peakBytes' | 'projectedPeakBytesH100' | 'projectedHoursH100' | 'timeBasis' | 'fits80GB' | 'status' | 'why' | 'length' | 'data' | 'backend'> = {
    notebook: o.notebook,
    run: o.run,
    kind: recipe.lora ? 'lora' : 'train',
    model: spec.id,
    instantiated: spec.instantiated,
    batch: c.batchSize,
    accumulation,
  };
  try {
    // The examples: real (prompted, positives kept, sorted longest first), or synthetic at max length.
    const tok = spec.tokenizer;
    const count = (text: string) => tok.encode(text, null, c.maxLength).ids.length;
    let train: TrainingExamples;
    let tokensPerEpoch: number;
    let totalExamples: number;
    let data: string;
    if (o.data) {
      const full = trainingData(recipe, recipeTaskData(recipe, o.data, tok), undefined);
      const lengths = full.items.map((e) => textsOf(e).map(count));
      const longestFirst = full.items.map((e, i) => ({ e, n: Math.max(...lengths[i]) })).sort((a, b) => b.n - a.n);
      train = { ...full, items: longestFirst.slice(0, stepExamples).map((x) => x.e) } as TrainingExamples;
      totalExamples = full.items.length;
      tokensPerEpoch = paddedTokensPerEpoch(lengths, c.batchSize);
      data = `real (${full.name})`;
    } else {
      totalExamples = registrySize(recipe.task) ?? stepExamples;
      // Graded labels where the objective's in-batch negatives want 0/1 (AnglE's default, e.g. LLM-generated pairs as a 0/1 task) are drawn as 0/1.
      const objective = c.objective as { name?: string; loss?: { ibnPositives?: unknown } } | undefined;
      const binaryIbn = objective?.name === 'angle' && (objective.loss?.ibnPositives ?? 'binary') === 'binary';
      const labels = t.labels === 'graded' && binaryIbn ? 'binary' : t.labels;
      const synthetic = syntheticExamples(kindOf(labels), stepExamples, c.maxLength, labels, recipe.positivesOnly !== undefined);
      train = recipeTaskData({ ...recipe, positivesOnly: undefined }, stepData(synthetic), tok).train;
      tokensPerEpoch = totalExamples * TEXTS_PER_EXAMPLE[synthetic.kind] * Math.max(...train.items.slice(0, 1).flatMap((e) => textsOf(e).map(count)));
      data = `synthetic: ${totalExamples.toLocaleString('en-US')} examples (the registry's size), every text at max length ${c.maxLength}`;
    }
    const length = Math.max(...train.items.slice(0, c.batchSize).flatMap((e) => textsOf(e).map(count)));

    const realSeconds = (6 * spec.parameters * c.batchSize * TEXTS_PER_EXAMPLE[train.kind] * length) / CPU_TRAINING_FLOPS;
    // 1. The whole optimiser step, shape-only (mirrors cuda): the device peak while the model is
    //    built and prepared (a LoRA base stored in 16 or 4 bits), then, the peak reset, the step's.
    let loadDeviceBytes = 0;
    const meta = await measurePeakBytes(async () => {
      const model = await instantiate(spec, 0, recipeLoadOptions(recipe).frozenBase);
      try {
        const prepared = prepareStep(model, tok, recipe);
        const backend = shapeOnlyBackend('cuda');
        loadDeviceBytes = backend.memoryCounters().peakDeviceBytes;
        backend.resetPeak();
        await runSteps(prepared, train, accumulation, 1);
      } finally {
        model.dispose();
      }
    });
    const projectedLoad = loadDeviceBytes * o.calibration;
    const projectedStep = meta.peakDeviceBytes * o.calibration;
    const projectedPeak = Math.max(projectedLoad, projectedStep);

    // 2. Optimiser steps for real on the active backend: one micro-batch where the model fits here
    //    and is cheap enough, or `realSteps` full steps whatever the size (a GPU host: gpu-check).
    let stepSeconds: number | null = null;
    let peakBytes = meta.peakBytes;
    let backend = `${meta.backend} (shape-only${spec.shapeOnly ? '' : `; a real step would take ~${Math.round(realSeconds / 60)} min here`})`;
    const forced = o.realSteps !== undefined && o.realSteps > 0;
    if (forced || (!spec.shapeOnly && realSeconds <= (o.realStepSeconds ?? 60))) {
      const steps = forced ? o.realSteps! : 1;
      const model = await instantiate(spec, 0, recipeLoadOptions(recipe).frozenBase);
      try {
        const prepared = prepareStep(model, tok, recipe);
        const items = forced ? train.items : train.items.slice(0, c.batchSize);
        const t0 = performance.now();
        const { memory } = await trackTensorMemory(() => runSteps(prepared, { ...train, items } as TrainingExamples, forced ? accumulation : 1, steps));
        stepSeconds = (performance.now() - t0) / 1000 / steps;
        peakBytes = memory.peakBufferBytes + weightBytes(model);
        backend = forced ? `${o.backend} (${steps} optimiser step(s), ${accumulation} micro-batch(es) each)` : o.backend;
      } finally {
        model.dispose();
      }
    }

    // 3. The whole run's hours on one H100.
    // Every epoch, or the recipe's step cap where it has one.
    const epochTokens = tokensPerEpoch;
    const totalTokens = c.maxSteps !== undefined ? Math.min(epochTokens * (c.epochs ?? 1), (epochTokens / Math.max(1, totalExamples)) * stepExamples * c.maxSteps) : epochTokens * (c.epochs ?? 1);
    const tokensPerMicroBatch = c.batchSize * TEXTS_PER_EXAMPLE[train.kind] * length;
    const time = projectH100Seconds({ tokens: totalTokens, tokensPerMicroBatch, parameters: spec.parameters, kind: recipe.lora ? 'lora' : 'train', recompute: c.checkpointing === true });
    const fits = projectedPeak <= FIT_BUDGET_BYTES;
    return {
      ...base,
      length,
      data,
      stepSeconds,
      backend,
      peakBytes,
      projectedPeakBytesH100: projectedPeak,
      projectedLoadPeakBytesH100: projectedLoad,
      projectedStepPeakBytesH100: projectedStep,
      projectedHoursH100: time.seconds / 3600,
      timeBasis: time.basis,
      fits80GB: fits,
      status: fits ? 'ok' : 'does-not-fit',
      why: fits ? '' : `projected ${(projectedPeak / 1e9).toFixed(0)} GB > ${(FIT_BUDGET_BYTES / 1e9).toFixed(0)} GB: smaller micro-batches with more accumulation (the same effective batch), activation checkpointing, blocked attention${recipe.lora ? ', a 16-bit or NF4 frozen base' : ''}`,
    };
  } catch (e) {
    return { ...base, length: c.maxLength, data: '', stepSeconds: null, backend: o.backend, peakBytes: 0, projectedPeakBytesH100: 0, projectedHoursH100: 0, timeBasis: '', fits80GB: false, status: 'failed', why: (e as Error).message.split('\n')[0] };
  }
}

/** The model prepared as the recipe's run prepares it (LoRA, frozen base storage), with its trainer's inputs. */
/**
 * The bytes the model's weights hold while it trains: float32 parameters at 4 bytes each, a frozen
 * base kept in 16 or 4 bits (a QLoRA run's NF4) at its real storage, as the backends hold it
 * (../../models/adaptable-transformer-model.ts `storedBaseBytes`, what the shape-only backend
 * allocates for it too). Counting every weight at 4 bytes put an NF4 base at 8 times its size.
 */
export function weightBytes(model: TextModel): number {
  const base = adaptableBaseOf(model);
  if (!base) return model.numParameters() * 4;
  let storedWeights = 0;
  for (const w of base.frozenBaseWeights().values()) storedWeights += w.shape[0] * w.shape[1];
  return (model.numParameters() - storedWeights) * 4 + base.storedBaseBytes();
}

function prepareStep(model: TextModel, tokenizer: TextTokenizer, recipe: Recipe): { model: TextModel; tokenizer: TextTokenizer; recipe: Recipe } {
  prepareRecipeModel(recipe, { model, tokenizer, id: recipe.name } as never, 0);
  return { model, tokenizer, recipe };
}

/**
 * `steps` optimiser steps of `accumulation` micro-batches of the first examples, through the
 * trainer (the code path of a real run); the examples repeat when `steps` needs more of them.
 */
async function runSteps(p: ReturnType<typeof prepareStep>, train: TrainingExamples, accumulation: number, steps: number): Promise<void> {
  const items = Array.from({ length: steps }, () => train.items).flat();
  const trainer = new Trainer({ model: { model: p.model, tokenizer: p.tokenizer }, train: { ...train, items } as TrainingExamples, config: stepConfig(p.recipe, accumulation), progress: false });
  await trainer.run({ stopAfterSteps: steps });
}

/** The row of a run that could not be rehearsed at all (its model cannot be had here). */
export function failedRehearsal(notebook: string, run: string, recipe: Recipe, model: string, why: string, backend: string): RehearsalRow {
  const c = recipe.config;
  return {
    notebook, run, kind: recipe.lora ? 'lora' : 'train', model, instantiated: '', batch: c.batchSize, length: c.maxLength, accumulation: c.gradAccumulation ?? 1,
    data: '', stepSeconds: null, backend, peakBytes: 0, projectedPeakBytesH100: 0, projectedHoursH100: 0, timeBasis: '', fits80GB: false, status: 'failed', why,
  };
}
