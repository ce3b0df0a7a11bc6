/**
 * Training recipes as data: the complete trainer configuration of each row of a paper table, and
 * for every hyperparameter where its value comes from — the paper where it says, the authors' code
 * where the paper is silent, and our own documented choice where both are. A notebook shows the
 * sources beside the values; `npm run train` uses a task's default recipe and lists it in --help.
 *
 * Sources:
 * - AnglE §4.2 (000_c0fdd0968b088fcd.txt): bert-base-uncased; τ = 0.05 for the cosine and
 *   in-batch-negative objectives (a multiplier of 20 in the code) and τ = 1.0 for the angle one.
 * - AnglE Table 4: `cls` pooling is the best of the five strategies.
 * - AnglE's training script of the paper's time, `train_angle.py` at SeanLee97/AnglE@4428ff1
 *   (argparse defaults): w1 = w2 = w3 = 1, lr 1e-5, batch 32, 20 epochs, warmup 100 steps, max
 *   length 512, seed 42, `compute_similar_matrix=1` (identical sentences of a batch are added as
 *   in-batch positives: the paper's ISP detection). AnglE's `fit` trains through HF's Trainer,
 *   whose defaults are weight decay 0 and a linear schedule with warmup from 0.
 * - In-batch negatives on graded labels (STS-B 0..5): the code casts labels to int
 *   (`make_target_matrix`: 'angle-int' in lib/losses/in-batch-negatives.ts).
 */
import type { ObjectiveConfig } from '../train/objective.js';
import type { TrainerConfig } from '../train/trainer.js';
import { UnknownNameError } from '../util/errors.js';
import type { RunScale } from './presets.js';
import { task, type TaskName } from './tasks.js';

/** Where the values of a recipe come from (one line each, shown in notebooks and --help). */
export const SOURCES = {
  paper: 'AnglE §4.2 (000_c0fdd0968b088fcd.txt): bert-base-uncased, τ 0.05 for cosine and ibn (×20 in the code), 1.0 for angle',
  paperPooling: 'AnglE Table 4: cls pooling is the best of five',
  code: 'AnglE train_angle.py defaults at SeanLee97/AnglE@4428ff1 (w 1/1/1, lr 1e-5, batch 32, 20 epochs, warmup 100, max length 512, seed 42, ISP on)',
  hfTrainer: "HF Trainer's defaults, which AnglE's fit uses (weight decay 0, linear schedule, warmup from 0)",
  simcse: "SimCSE's run_sup_example.sh (princeton-nlp/SimCSE): lr 5e-5, batch 512, 3 epochs, max length 32, temperature 0.05, cls pooling",
  sbertSts: "sentence-transformers' training_stsbenchmark.py: CosineSimilarityLoss on score/5, mean pooling, batch 16, 4 epochs, lr 2e-5, warmup 10% of the steps, weight decay 0.01",
  sbertNli: "sentence-transformers' training_nli.py: SoftmaxLoss over (u, v, |u−v|), mean pooling, batch 16, 1 epoch, lr 2e-5, warmup 10%, weight decay 0.01",
  codeIntCast: "AnglE code: in-batch negatives cast graded labels to int (make_target_matrix)",
  ours: 'ours (the papers and the code are silent)',
} as const;

export interface Recipe {
  name: string;
  /** One line: what the recipe trains. */
  title: string;
  task: TaskName;
  config: TrainerConfig;
  /**
   * Train on the positive pairs only (SimCSE on pair data: positives are its (x, x⁺)): pairs with a
   * label at least `threshold`, relabelled 1.
   */
  positivesOnly?: { threshold: number };
  /** Each configuration key (dotted for nested ones, e.g. 'objective.loss.weights') -> where its value comes from. */
  sources: Record<string, string>;
}

/** AnglE-BERT on one task's own training split (AnglE Table 3, non-transfer). */
function angleBert(t: TaskName): Recipe {
  const graded = task(t).labels === 'graded';
  const objective: ObjectiveConfig = {
    name: 'angle',
    loss: {
      preset: 'paper',
      weights: { cosine: 1, ibn: 1, angle: 1 },
      taus: { cosine: 20, ibn: 20, angle: 1 },
      ibnPositives: graded ? 'angle-int' : 'binary',
      duplicates: 'positive',
    },
  };
  return {
    name: `angle-${t}`,
    title: `AnglE-BERT trained on ${task(t).title} train (AnglE Table 3)`,
    task: t,
    config: {
      objective,
      pooling: 'cls',
      maxLength: 512,
      batchSize: 32,
      epochs: 20,
      lr: 1e-5,
      schedule: 'linear',
      warmupSteps: 100,
      warmupStart: 'zero',
      weightDecay: 0,
      seed: 42,
      shuffle: true,
      evalEvery: 'epoch',
      checkpointEvery: 50,
    },
    sources: {
      'objective.loss.weights': SOURCES.code,
      'objective.loss.taus': SOURCES.paper,
      'objective.loss.ibnPositives': graded ? SOURCES.codeIntCast : 'labels are 0/1',
      'objective.loss.duplicates': `${SOURCES.code}; 'positive' adds identical sentences as targets, as compute_similar_matrix did`,
      pooling: SOURCES.paperPooling,
      maxLength: SOURCES.code,
      batchSize: SOURCES.code,
      epochs: SOURCES.code,
      lr: SOURCES.code,
      warmupSteps: SOURCES.code,
      schedule: SOURCES.hfTrainer,
      warmupStart: SOURCES.hfTrainer,
      weightDecay: SOURCES.hfTrainer,
      seed: SOURCES.code,
      evalEvery: `${SOURCES.ours}: dev once per epoch, best dev checkpoint tested`,
      checkpointEvery: `${SOURCES.ours}: resumable every 50 steps`,
    },
  };
}

/**
 * SimCSE-BERT on a task's positive pairs (AnglE Table 3's baseline row; the paper notes pair data
 * gives SimCSE no hard negatives): supervised InfoNCE with in-batch negatives.
 */
function simcseBert(t: TaskName): Recipe {
  const graded = task(t).labels === 'graded';
  const note = `${SOURCES.ours}: evaluated every epoch, best dev checkpoint tested, as the other rows`;
  return {
    name: `simcse-${t}`,
    title: `SimCSE-BERT (supervised InfoNCE) on ${task(t).title} train's positive pairs (AnglE Table 3)`,
    task: t,
    positivesOnly: { threshold: graded ? 4 : 1 },
    config: { objective: { name: 'simcse', temperature: 0.05 }, pooling: 'cls', maxLength: 32, batchSize: 512, epochs: 3, lr: 5e-5, schedule: 'linear', warmupSteps: 0, warmupStart: 'zero', weightDecay: 0, seed: 42, shuffle: true, evalEvery: 'epoch', checkpointEvery: 50 },
    sources: {
      objective: SOURCES.simcse,
      positivesOnly: graded ? `${SOURCES.ours}: STS pairs scored ≥ 4 of 5 are SimCSE's positives` : 'label-1 pairs are the positives',
      pooling: `${SOURCES.simcse} (SimCSE adds an MLP over [CLS] in training; plain cls here)`,
      maxLength: SOURCES.simcse,
      batchSize: SOURCES.simcse,
      epochs: SOURCES.simcse,
      lr: SOURCES.simcse,
      schedule: "SimCSE trains through HF's Trainer: linear decay, no warmup",
      weightDecay: "HF Trainer's default",
      seed: "SimCSE's default seed is 42",
      evalEvery: note,
      checkpointEvery: `${SOURCES.ours}: resumable every 50 steps`,
    },
  };
}

/** SBERT on a task's training split: cosine regression for graded labels, softmax classification for 0/1 (AnglE Table 3). */
function sbertBert(t: TaskName): Recipe {
  const graded = task(t).labels === 'graded';
  const src = graded ? SOURCES.sbertSts : SOURCES.sbertNli;
  return {
    name: `sbert-${t}`,
    title: `SBERT (${graded ? 'cosine-similarity regression' : 'softmax classification over (u, v, |u−v|)'}) on ${task(t).title} train (AnglE Table 3)`,
    task: t,
    config: {
      objective: graded ? { name: 'sbert-cosine', scale: 5 } : { name: 'sbert-softmax', classes: 2 },
      pooling: 'avg',
      maxLength: 128,
      batchSize: 16,
      epochs: graded ? 4 : 1,
      lr: 2e-5,
      schedule: 'linear',
      warmupFraction: 0.1,
      warmupStart: 'zero',
      weightDecay: 0.01,
      seed: 42,
      shuffle: true,
      evalEvery: 'epoch',
      checkpointEvery: 50,
    },
    sources: {
      objective: src,
      pooling: src,
      maxLength: `${SOURCES.ours}: 128 tokens (the sentences of these sets are shorter)`,
      batchSize: src,
      epochs: src,
      lr: src,
      schedule: src,
      warmupFraction: src,
      weightDecay: src,
      seed: `${SOURCES.ours}: as the AnglE runs`,
      evalEvery: `${SOURCES.ours}: dev once per epoch, best dev checkpoint tested`,
      checkpointEvery: `${SOURCES.ours}: resumable every 50 steps`,
    },
  };
}

/** AnglE Table 4 (upper): the objective ablation on STS-B, by weights (cosine, ibn, angle). */
export const TABLE4_OBJECTIVES: ReadonlyArray<{ row: string; weights: { cosine: number; ibn: number; angle: number } }> = [
  { row: 'AnglE-BERT-all', weights: { cosine: 1, ibn: 1, angle: 1 } },
  { row: '- w/o ibn', weights: { cosine: 1, ibn: 0, angle: 1 } },
  { row: '- w/o angle', weights: { cosine: 1, ibn: 1, angle: 0 } },
  { row: 'only cosine', weights: { cosine: 1, ibn: 0, angle: 0 } },
  { row: 'only ibn', weights: { cosine: 0, ibn: 1, angle: 0 } },
  { row: 'only angle', weights: { cosine: 0, ibn: 0, angle: 1 } },
];

/** AnglE Table 4 (lower): the pooling strategies, as the paper names them and as ours. */
export const TABLE4_POOLINGS: ReadonlyArray<{ row: string; pooling: string }> = [
  { row: 'cls', pooling: 'cls' },
  { row: 'cls-last-avg', pooling: 'cls_avg' },
  { row: 'last-avg', pooling: 'avg' },
  { row: 'last-max', pooling: 'max' },
  { row: 'first-last-avg', pooling: 'first_last_avg' },
];

/** The STS-B AnglE recipe with other objective weights (Table 4's ablation rows). */
export function angleStsbWithWeights(row: string, weights: { cosine: number; ibn: number; angle: number }): Recipe {
  const r = angleBert('stsb');
  const loss = r.config.objective.name === 'angle' ? r.config.objective.loss : {};
  return {
    ...r,
    name: `angle-stsb-w${weights.cosine}${weights.ibn}${weights.angle}`,
    title: `AnglE-BERT on STS-B, ${row} (AnglE Table 4)`,
    config: { ...r.config, objective: { name: 'angle', loss: { ...loss, weights } } },
    sources: { ...r.sources, 'objective.loss.weights': `AnglE Table 4 row '${row}': the objectives with weight 0 are dropped` },
  };
}

/** The STS-B AnglE recipe with in-batch ISP detection on ('positive') or off ('ignore'): the text's 0.18 claim. */
export function angleStsbWithIsp(on: boolean): Recipe {
  const r = angleBert('stsb');
  const loss = r.config.objective.name === 'angle' ? r.config.objective.loss : {};
  return {
    ...r,
    name: `angle-stsb-isp-${on ? 'on' : 'off'}`,
    title: `AnglE-BERT on STS-B, in-batch negatives ${on ? 'with' : 'without'} identical-sentence-pair detection`,
    config: { ...r.config, objective: { name: 'angle', loss: { ...loss, duplicates: on ? 'positive' : 'ignore' } } },
    sources: { ...r.sources, 'objective.loss.duplicates': `AnglE §4.4 (000_c0fdd0968b088fcd.txt): ibn without ISP detection drops about 0.18; ${on ? "'positive' (identical sentences are targets)" : "'ignore'"}` },
  };
}

/** The STS-B AnglE recipe with another pooling (Table 4's pooling rows). */
export function angleStsbWithPooling(row: string, pooling: string): Recipe {
  const r = angleBert('stsb');
  return {
    ...r,
    name: `angle-stsb-${pooling.replace(/_/g, '-')}`,
    title: `AnglE-BERT on STS-B, ${row} pooling (AnglE Table 4)`,
    config: { ...r.config, pooling },
    sources: { ...r.sources, pooling: `AnglE Table 4 row '${row}'` },
  };
}

/** AnglE Table 3's rows that can be trained here, per task: AnglE-BERT, SimCSE-BERT, SBERT. */
export function table3Recipes(t: TaskName): { angle: Recipe; simcse: Recipe; sbert: Recipe } {
  return { angle: angleBert(t), simcse: simcseBert(t), sbert: sbertBert(t) };
}

/** Each task's default recipe (what `npm run train -- --task <t>` runs). */
const DEFAULT_RECIPES: Record<TaskName, () => Recipe> = {
  stsb: () => angleBert('stsb'),
  sick: () => angleBert('sick'),
  mrpc: () => angleBert('mrpc'),
  qnli: () => angleBert('qnli'),
  qqp: () => angleBert('qqp'),
  gis: () => angleBert('gis'),
  nli: () => ({
    ...angleBert('stsb'),
    name: 'angle-nli-triplets',
    title: "AnglE-BERT on SimCSE's NLI triplets (the triplet form of the AnglE objective)",
    task: 'nli',
    config: { ...angleBert('stsb').config, maxLength: 128, epochs: 1, objective: { name: 'angle', loss: { preset: 'paper' } } },
    sources: { ...angleBert('stsb').sources, maxLength: 'AnglE A.4 (001_06941bfad7bf7482.txt): max length 128 in the transfer setting', epochs: SOURCES.ours, 'objective.loss.ibnPositives': 'triplets: no labels' },
  }),
};

export const RECIPE_NAMES: readonly string[] = Object.values(DEFAULT_RECIPES).map((r) => r().name);

/** The default recipe of a task. */
export function defaultRecipe(t: TaskName): Recipe {
  return DEFAULT_RECIPES[task(t).name]();
}

/** A recipe by name (e.g. 'angle-stsb'). */
export function recipe(name: string): Recipe {
  const r = Object.values(DEFAULT_RECIPES).map((f) => f()).find((x) => x.name === name);
  if (!r) throw new UnknownNameError('recipe', name, RECIPE_NAMES);
  return r;
}

/**
 * The recipe shrunk to a preset's run size: at most `maxSteps` steps with dev evaluation every
 * `evalEvery`, and no warmup longer than the run. The training-set limit is applied by the caller
 * (it owns the data). A scale without limits returns the recipe unchanged.
 */
export function scaleRecipe(r: Recipe, scale: RunScale): Recipe {
  if (scale.maxSteps === undefined && scale.evalEvery === undefined && scale.maxBatchSize === undefined) return r;
  const config: TrainerConfig = { ...r.config };
  if (scale.maxBatchSize !== undefined && config.batchSize > scale.maxBatchSize) config.batchSize = scale.maxBatchSize;
  if (scale.maxSteps !== undefined) {
    config.maxSteps = scale.maxSteps;
    if (config.warmupSteps !== undefined) config.warmupSteps = Math.min(config.warmupSteps, Math.floor(scale.maxSteps / 10));
  }
  if (scale.evalEvery !== undefined) config.evalEvery = scale.evalEvery;
  const note = 'preset scale (smoke): a few dozen steps to exercise every path, not to reproduce';
  const sources: Record<string, string> = { ...r.sources, maxSteps: note, evalEvery: note };
  if (scale.maxSteps !== undefined && r.config.warmupSteps !== undefined) sources.warmupSteps = `${r.sources.warmupSteps}; capped at a tenth of the run by the preset scale`;
  if (config.batchSize !== r.config.batchSize) sources.batchSize = `${r.sources.batchSize}; capped at ${config.batchSize} by the preset scale`;
  return { ...r, config, sources };
}
