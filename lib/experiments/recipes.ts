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
  codeIntCast: "AnglE code: in-batch negatives cast graded labels to int (make_target_matrix)",
  ours: 'ours (the papers and the code are silent)',
} as const;

export interface Recipe {
  name: string;
  /** One line: what the recipe trains. */
  title: string;
  task: TaskName;
  config: TrainerConfig;
  /** Each configuration key (dotted for nested ones, e.g. 'objective.weights') -> where its value comes from. */
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
    },
    sources: {
      'objective.weights': SOURCES.code,
      'objective.taus': SOURCES.paper,
      'objective.ibnPositives': graded ? SOURCES.codeIntCast : 'labels are 0/1',
      'objective.duplicates': `${SOURCES.code}; 'positive' adds identical sentences as targets, as compute_similar_matrix did`,
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
    },
  };
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
    sources: { ...angleBert('stsb').sources, maxLength: 'AnglE A.4 (001_06941bfad7bf7482.txt): max length 128 in the transfer setting', epochs: SOURCES.ours, 'objective.ibnPositives': 'triplets: no labels' },
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
  if (scale.maxSteps === undefined && scale.evalEvery === undefined) return r;
  const config: TrainerConfig = { ...r.config };
  if (scale.maxSteps !== undefined) {
    config.maxSteps = scale.maxSteps;
    if (config.warmupSteps !== undefined) config.warmupSteps = Math.min(config.warmupSteps, Math.floor(scale.maxSteps / 10));
  }
  if (scale.evalEvery !== undefined) config.evalEvery = scale.evalEvery;
  const note = 'preset scale (smoke): a few dozen steps to exercise every path, not to reproduce';
  return { ...r, config, sources: { ...r.sources, maxSteps: note, evalEvery: note, ...(scale.maxSteps !== undefined ? { warmupSteps: `${r.sources.warmupSteps}; capped at a tenth of the run by the preset scale` } : {}) } };
}
