/**
 * SimCSE's recipes (Gao et al., "SimCSE"; princeton-nlp/SimCSE's run_sup_example.sh and
 * run_unsup_example.sh), as the AnglE and SimACE tables use them as baselines, over HF Trainer's
 * defaults (./base.ts):
 *
 * | recipe            | where                     | trains                                                        |
 * |-------------------|---------------------------|---------------------------------------------------------------|
 * | `simcse-<task>`   | AnglE Table 3             | supervised InfoNCE on a task's positive pairs (no hard negatives in pair data) |
 * | `simcse-nli-sup`  | AnglE Table 2             | supervised InfoNCE with hard negatives on SimCSE's NLI triplets, batch 512 |
 * | `unsup-simcse-t…` | SimACE Table 1            | unsupervised InfoNCE, dropout positives, on wiki1m (./simace.ts builds it) |
 *
 * SimCSE trains an MLP over [CLS] (saved as BERT's pooler in the supervised setting); plain cls
 * here, said in each recipe's sources and deviations.
 */
import { task, type TaskName } from '../tasks.js';
import { overHfTrainer, SOURCES } from './base.js';
import type { Recipe } from './recipe.js';

export const SIMCSE_SOURCES = {
  sup: "SimCSE's run_sup_example.sh (princeton-nlp/SimCSE): lr 5e-5, batch 512, 3 epochs, max length 32, temperature 0.05, cls pooling",
  seed: "SimCSE's default seed is 42",
  schedule: "SimCSE trains through HF's Trainer: linear decay, no warmup",
} as const;

/** Where the supervised recipes' run settings come from: SimCSE's supervised script, its schedule and seed. */
const SUPERVISED_RUN_SOURCES = {
  maxLength: SIMCSE_SOURCES.sup,
  batchSize: SIMCSE_SOURCES.sup,
  epochs: SIMCSE_SOURCES.sup,
  lr: SIMCSE_SOURCES.sup,
  schedule: SIMCSE_SOURCES.schedule,
  warmupSteps: SIMCSE_SOURCES.schedule,
  seed: SIMCSE_SOURCES.seed,
} as const;

/**
 * SimCSE-BERT on a task's positive pairs (AnglE Table 3's baseline row; the paper notes pair data
 * gives SimCSE no hard negatives): supervised InfoNCE with in-batch negatives.
 */
export function simcseBert(t: TaskName): Recipe {
  const graded = task(t).labels === 'graded';
  return {
    name: `simcse-${t}`,
    title: `SimCSE-BERT (supervised InfoNCE) on ${task(t).title} train's positive pairs (AnglE Table 3)`,
    task: t,
    positivesOnly: { threshold: graded ? 4 : 1 },
    ...overHfTrainer(
      { objective: { name: 'simcse', temperature: 0.05 }, pooling: 'cls', maxLength: 32, batchSize: 512, epochs: 3, lr: 5e-5, warmupSteps: 0, seed: 42, evalEvery: 'epoch', checkpointEvery: 50 },
      {
        objective: SIMCSE_SOURCES.sup,
        positivesOnly: graded ? `${SOURCES.ours}: STS pairs scored ≥ 4 of 5 are SimCSE's positives` : 'label-1 pairs are the positives',
        pooling: `${SIMCSE_SOURCES.sup} (SimCSE adds an MLP over [CLS] in training; plain cls here)`,
        ...SUPERVISED_RUN_SOURCES,
        evalEvery: `${SOURCES.ours}: evaluated every epoch, best dev checkpoint tested, as the other rows`,
        checkpointEvery: SOURCES.resumable(50),
      },
    ),
  };
}

/** SimCSE-BERT supervised on NLI triplets (AnglE Table 2's SimCSE-BERT supervised row; the baseline). */
export function simcseNliSup(): Recipe {
  return {
    name: 'simcse-nli-sup',
    title: 'SimCSE-BERT supervised: InfoNCE with hard negatives on NLI triplets (AnglE Table 2 baseline)',
    task: 'nli',
    ...overHfTrainer(
      { objective: { name: 'simcse', temperature: 0.05 }, pooling: 'cls', maxLength: 32, batchSize: 512, epochs: 3, lr: 5e-5, warmupSteps: 0, seed: 42, evalEvery: 125, checkpointEvery: 125 },
      {
        objective: SIMCSE_SOURCES.sup,
        pooling: `${SIMCSE_SOURCES.sup} (SimCSE trains an MLP over [CLS] and saves it as BERT's pooler; plain cls here)`,
        ...SUPERVISED_RUN_SOURCES,
        evalEvery: "SimCSE's run_sup_example.sh: STS-B dev every 125 steps, best checkpoint kept",
        checkpointEvery: SOURCES.resumable(125),
      },
    ),
    evaluation: { pooling: 'cls', source: "the training pooling: without SimCSE's MLP there is no trained pooler to evaluate through" },
    deviations: ["no MLP over [CLS] in training (SimCSE's --mlp_only_train is off in its supervised script: the MLP becomes the pooler)"],
  };
}
