/**
 * SimACE's unsupervised recipes (papers/004_1238e3534f087b8a.txt, "angle-based unsupervised
 * contrastive learning"): BERT-base trained on wiki1m with dropout positives (each sentence
 * encoded twice), one recipe per objective of its Table 1 — SimCSE's InfoNCE over cosine, ArcCon
 * (ArcCSE's additive angular margin), SimACE (angular similarity with a subtractive margin) — and
 * the margin/temperature of its sweeps, over HF Trainer's defaults (./base.ts):
 *
 * - SimACE Table 7 (BERT-base): batch 64, lr 3e-5, max length 32, dev every 125 steps on STS-B,
 *   τ 0.06, margin 10°, [CLS] pooling; §4 "We train our models for 1 epoch".
 * - SimCSE's run_unsup_example.sh (princeton-nlp/SimCSE): batch 64, lr 3e-5, 1 epoch, max length
 *   32, τ 0.05, eval every 125 steps, [CLS] (SimCSE trains an MLP over [CLS] and evaluates without
 *   it; plain [CLS] here, as the SimACE rows).
 * - ArcCon: the paper grid-searched its settings without printing them; ArcCSE's τ 0.05 and margin
 *   10° (lib/losses/arccon.ts defaults), SimACE's batch, lr and length.
 */
import type { ObjectiveConfig } from '../../train/objective.js';
import { overHfTrainer } from './base.js';
import type { Recipe } from './recipe.js';

const SRC = {
  table7: 'SimACE Table 7 (BERT_base): batch 64, lr 3e-5, max length 32, eval every 125 steps on STS-B dev, τ 0.06, margin 10°, cls',
  epoch: 'SimACE §4 training setups: 1 epoch, evaluation every 125 steps on the STS-B development set',
  simcse: "SimCSE's run_unsup_example.sh: batch 64, lr 3e-5, 1 epoch, max length 32, τ 0.05, eval every 125 steps, cls",
  arccon: 'ArcCSE (Zhang et al. 2022) τ 0.05 and margin 10° (lib/losses/arccon.ts defaults); the SimACE paper grid-searched ArcCon without printing its values',
  hf: "HF Trainer's defaults, which SimCSE's and SimACE's code train with (linear decay, no warmup, weight decay 0)",
  seed: 'SimACE Table 1: default seed 42',
} as const;

/** The objectives of SimACE Table 1 (BERT_base rows) that this library trains. */
export type UnsupervisedObjective = 'simcse' | 'arccon' | 'simace';

export interface UnsupervisedRecipeOptions {
  temperature?: number;
  /** Margin in degrees (SimACE, ArcCon). */
  margin?: number;
}

function onWiki1m(objective: ObjectiveConfig, sources: Record<string, string>) {
  return overHfTrainer(
    { objective, pooling: 'cls', maxLength: 32, batchSize: 64, epochs: 1, lr: 3e-5, warmupSteps: 0, seed: 42, evalEvery: 125, checkpointEvery: 125 },
    {
      pooling: SRC.table7,
      maxLength: SRC.table7,
      batchSize: SRC.table7,
      lr: SRC.table7,
      evalEvery: SRC.table7,
      epochs: SRC.epoch,
      schedule: SRC.hf,
      warmupSteps: SRC.hf,
      warmupStart: SRC.hf,
      weightDecay: SRC.hf,
      seed: SRC.seed,
      checkpointEvery: 'ours: resumable at every evaluation',
      ...sources,
    },
  );
}

/** One objective's recipe on wiki1m (see the file comment), with an optional τ / margin for a sweep. */
export function unsupervisedRecipe(objective: UnsupervisedObjective, o: UnsupervisedRecipeOptions = {}): Recipe {
  const sweep = (what: string) => `${what} (a sweep value of this notebook's parameter cell)`;
  switch (objective) {
    case 'simcse': {
      const t = o.temperature ?? 0.05;
      return {
        name: `unsup-simcse-t${t}`,
        title: "Unsupervised SimCSE (InfoNCE over cosine, dropout positives) on wiki1m (SimACE Table 1's SimCSE row)",
        task: 'wiki1m',
        ...onWiki1m({ name: 'simcse', temperature: t }, {
          objective: o.temperature === undefined ? SRC.simcse : sweep('τ'),
          pooling: SRC.simcse,
          maxLength: SRC.simcse,
          batchSize: SRC.simcse,
          lr: SRC.simcse,
          evalEvery: SRC.simcse,
          epochs: SRC.simcse,
        }),
      };
    }
    case 'arccon': {
      const t = o.temperature ?? 0.05;
      const m = o.margin ?? 10;
      return {
        name: `unsup-arccon-t${t}-m${m}`,
        title: 'ArcCon (additive angular margin on the positive) on wiki1m, dropout positives (SimACE Table 1)',
        task: 'wiki1m',
        ...onWiki1m({ name: 'arccon', options: { temperature: t, margin: m, marginUnit: 'degrees' } }, {
          objective: o.temperature === undefined && o.margin === undefined ? SRC.arccon : sweep('τ / margin'),
        }),
      };
    }
    case 'simace': {
      const t = o.temperature ?? 0.06;
      const m = o.margin ?? 10;
      return {
        name: `unsup-simace-t${t}-m${m}`,
        title: 'SimACE (angular similarity, subtractive margin) on wiki1m, dropout positives (SimACE Table 1)',
        task: 'wiki1m',
        ...onWiki1m({ name: 'simace', options: { temperature: t, margin: m, marginUnit: 'degrees' } }, {
          objective: o.temperature === undefined && o.margin === undefined ? SRC.table7 : sweep(o.margin !== undefined ? 'margin' : 'τ'),
        }),
      };
    }
  }
}
