/**
 * The recipes of AnglE Table 2 (transfer setting: train on NLI, evaluate on the seven STS tasks
 * with SentEval), each value with its source, as the Table 3/4 recipes (./recipes.ts):
 *
 * | recipe             | row                    | trains                                                          | evaluates           |
 * |--------------------|------------------------|-----------------------------------------------------------------|---------------------|
 * | `angle-nli-paper`  | AnglE-BERT             | the paper's setting (A.4): cls, max length 128, batch 50, w 1/1/1 | cls                 |
 * | `angle-nli-later`  | AnglE-BERT (later)     | the authors' later recipe (issue #85): ibn 30, cosine 0, angle 1 (τ 20), 16,384 pairs per step, 10 epochs | cls_avg |
 * | `simcse-nli-sup`   | SimCSE-BERT (sup.)     | SimCSE's run_sup_example.sh: InfoNCE with hard negatives, batch 512 | cls             |
 * | `angle-llama-nli`  | AnglE-LLaMA2-7B        | LoRA on the decoder, AnglE's prompt, last token, ibn 35, lr 2e-4, max length 45 | last token of the prompt |
 *
 * `task` is 'nli' for all of them: the NLI transfer family. Which view they train on (AnglE's
 * labelled pairs, SimCSE's triplets) is `view`, and which copy of the data (the Hub's NLI, or SICK's
 * entailment judgements standing in under smoke) is the caller's (./nli-transfer-data.ts); the run
 * records name it.
 *
 * Sources (all checked in SeanLee97/AnglE's history and the papers' text):
 * - AnglE A.4 (001_06941bfad7bf7482.txt): transfer setting with max length 128, batch sizes 8, 16,
 *   32 and 50 tried, larger is better, 50 the most a 3090 Ti held.
 * - train_angle.py at a02b3b3 (Oct 2023, the AnglE-LLaMA release): argparse defaults lr 1e-5,
 *   warmup 100, w 1/1/1, τ 20/20/1, seed 42, compute_similar_matrix 1; NLI from AllNLI with neutral
 *   skipped; for LLaMA the prompt `Summarize sentence "{text}" in one word:"`, last-token pooling and
 *   LoRA r 32, α 32, dropout 0.1 with target_modules q_proj, v_proj — which the 4-bit path
 *   (`--load_kbit 4`, the README's command) replaces by every linear layer (find_all_linear_names);
 *   the released adapters list all seven projections (SeanLee97/angle-llama-7b-nli-v2
 *   adapter_config.json; its 320 MB are r 32 on all seven in fp32).
 * - README at fcb6223 (Oct 2023): angle-llama-7b-nli-20231027 trained on 4 GPUs with `--w2 35
 *   --learning_rate 2e-4 --maxlen 45 --lora_r 32 --lora_alpha 32 --lora_dropout 0.1 --batch_size
 *   160 --gradient_accumulation_steps 4 --epochs 1 --load_kbit 4 --do_eval 0`, evaluated by eval.py
 *   (SentEval batch 16, PromptEOL's text clean-up, max length 512, fp16 weights).
 * - examples/NLI/README.md at 1c5515b (June 2024, AnglE issue #85): the BERT recipe of angle_emb
 *   0.4.5 — 8 GPUs × batch 128 × accumulation 16, 10 epochs, lr 5e-5, max length 128, warmup 50,
 *   `--ibn_w 30 --cosine_w 0 --angle_w 1 --angle_tau 20`, train cls, evaluate `--pooling_strategy
 *   cls_avg` with eval_nli.py (whose cls_avg in 0.4.5 divided by the batch's token count and ran
 *   SentEval batches of 2 pairs: `cls_avg_batch_tokens` with sentevalBatchSize 2 here; we evaluate
 *   the per-row cls_avg of angle_emb ≥ 0.5.5 and say so).
 * - SimCSE run_sup_example.sh / its paper: batch 512, lr 5e-5, 3 epochs, max length 32,
 *   temperature 0.05, STS-B dev every 125 steps, cls pooling with an MLP in training (saved as BERT's
 *   pooler, hence `cls` = pooler output at evaluation); plain cls here, no MLP.
 */
import { ANGLE_LLAMA_TEMPLATE } from '../embed/prompt-encoder.js';
import type { PromptSpec } from './prompted-task.js';
import type { LoraConfig } from '../models/adapters/lora.js';
import type { Pooling } from '../embed/pooling.js';
import { UnknownNameError } from '../util/errors.js';
import type { NliView } from './nli-transfer-data.js';
import { SOURCES, type Recipe } from './recipes.js';

/** How a trained model is evaluated for the table (SentEval suite, ./sts-suite-run.ts). */
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

/** A recipe of AnglE Table 2: a trainer configuration, the data view, and the evaluation. */
export interface TransferRecipe extends Recipe {
  view: NliView;
  evaluation: SuiteEvaluation;
  /** LoRA on a decoder (only the adapter trains), with the training texts in `prompt`. */
  lora?: LoraConfig;
  prompt?: { template: string };
  /** What differs from the authors' run that the recipe cannot express (shown with it). */
  deviations?: string[];
}

export const NLI_SOURCES = {
  a4: 'AnglE A.4 (001_06941bfad7bf7482.txt): transfer setting, max length 128, batch sizes 8-50 tried, larger is better',
  trainAngle: 'AnglE train_angle.py at a02b3b3 (argparse defaults: lr 1e-5, warmup 100, w 1/1/1, τ 20/20/1, seed 42, ISP on)',
  readme20231027: 'AnglE README at fcb6223, angle-llama-7b-nli-20231027: --w2 35 --learning_rate 2e-4 --maxlen 45 --lora_r 32 --lora_alpha 32 --lora_dropout 0.1 --batch_size 160 (4 GPUs) --gradient_accumulation_steps 4 --epochs 1 --load_kbit 4 --do_eval 0',
  kbit4: 'AnglE angle.py at a02b3b3: with --load_kbit 4 the LoRA targets are every linear layer (find_all_linear_names), as the released adapters\' adapter_config.json lists',
  evalPy: 'AnglE eval.py at fcb6223: SentEval batch 16, PromptEOL clean-up of each sentence, max length 512',
  issue85: 'AnglE examples/NLI/README.md at 1c5515b (issue #85): 8 GPUs × batch 128 × accumulation 16, 10 epochs, lr 5e-5, max length 128, warmup 50, ibn 30, cosine 0, angle 1 with τ 20, train cls, evaluate cls_avg',
} as const;

const ISP = `${SOURCES.code}; 'positive' adds identical sentences as targets, as compute_similar_matrix did`;

/** AnglE-BERT in the paper's transfer setting (Table 2's AnglE-BERT row). */
function angleNliPaper(): TransferRecipe {
  return {
    name: 'angle-nli-paper',
    title: 'AnglE-BERT on NLI pairs (entailment 1, contradiction 0), the paper\'s transfer setting (AnglE Table 2)',
    task: 'nli',
    view: 'pairs',
    config: {
      objective: { name: 'angle', loss: { preset: 'paper', weights: { cosine: 1, ibn: 1, angle: 1 }, taus: { cosine: 20, ibn: 20, angle: 1 }, ibnPositives: 'binary', duplicates: 'positive' } },
      pooling: 'cls',
      maxLength: 128,
      batchSize: 50,
      epochs: 1,
      lr: 1e-5,
      schedule: 'linear',
      warmupSteps: 100,
      warmupStart: 'zero',
      weightDecay: 0,
      seed: 42,
      shuffle: true,
      evalEvery: 250,
      checkpointEvery: 250,
    },
    sources: {
      'objective.loss.weights': NLI_SOURCES.trainAngle,
      'objective.loss.taus': SOURCES.paper,
      'objective.loss.ibnPositives': 'labels are 0/1',
      'objective.loss.duplicates': ISP,
      pooling: SOURCES.paperPooling,
      maxLength: NLI_SOURCES.a4,
      batchSize: `${NLI_SOURCES.a4}: the largest the paper ran`,
      epochs: `${SOURCES.ours}: one pass over NLI (the paper is silent; the LLaMA run of the time trained 1 epoch)`,
      lr: NLI_SOURCES.trainAngle,
      warmupSteps: NLI_SOURCES.trainAngle,
      schedule: SOURCES.hfTrainer,
      warmupStart: SOURCES.hfTrainer,
      weightDecay: SOURCES.hfTrainer,
      seed: NLI_SOURCES.trainAngle,
      evalEvery: `${SOURCES.ours}: STS-B dev every 250 steps (SimCSE evaluates every 125 at batch 512), best dev checkpoint tested`,
      checkpointEvery: `${SOURCES.ours}: resumable every 250 steps`,
    },
    evaluation: { pooling: 'cls', source: "the training pooling (Table 4's best); the released checkpoint is scored with cls_avg instead (see the released rows)" },
  };
}

/** The authors' later BERT recipe (AnglE issue #85). */
function angleNliLater(): TransferRecipe {
  return {
    name: 'angle-nli-later',
    title: "AnglE-BERT on NLI pairs, the authors' later recipe (issue #85: ibn 30, angle 1 with τ 20, 16,384 pairs per step)",
    task: 'nli',
    view: 'pairs',
    config: {
      objective: { name: 'angle', loss: { preset: 'paper', weights: { cosine: 0, ibn: 30, angle: 1 }, taus: { cosine: 20, ibn: 20, angle: 20 }, ibnPositives: 'binary', duplicates: 'positive' } },
      pooling: 'cls',
      maxLength: 128,
      batchSize: 128,
      gradAccumulation: 128,
      epochs: 10,
      lr: 5e-5,
      schedule: 'linear',
      warmupSteps: 50,
      warmupStart: 'zero',
      weightDecay: 0,
      seed: 42,
      shuffle: true,
      evalEvery: 'epoch',
      checkpointEvery: 10,
    },
    sources: {
      'objective.loss.weights': NLI_SOURCES.issue85,
      'objective.loss.taus': NLI_SOURCES.issue85,
      'objective.loss.ibnPositives': 'labels are 0/1',
      'objective.loss.duplicates': ISP,
      pooling: NLI_SOURCES.issue85,
      maxLength: NLI_SOURCES.issue85,
      batchSize: `${NLI_SOURCES.issue85}: in-batch negatives per device (128 pairs)`,
      gradAccumulation: `${NLI_SOURCES.issue85}: 8 devices × 16 accumulation = 128 micro-batches, 16,384 pairs per step`,
      epochs: NLI_SOURCES.issue85,
      lr: NLI_SOURCES.issue85,
      warmupSteps: NLI_SOURCES.issue85,
      schedule: SOURCES.hfTrainer,
      warmupStart: SOURCES.hfTrainer,
      weightDecay: SOURCES.hfTrainer,
      seed: NLI_SOURCES.issue85,
      evalEvery: `${SOURCES.ours}: STS-B dev once per epoch (34 steps on NLI), best dev checkpoint tested`,
      checkpointEvery: `${SOURCES.ours}: resumable every 10 steps (each is 16,384 pairs)`,
    },
    evaluation: {
      pooling: 'cls_avg',
      source: `${NLI_SOURCES.issue85}; per-row masked cls_avg (angle_emb ≥ 0.5.5). angle_emb 0.4.5's eval_nli.py computed cls_avg_batch_tokens in SentEval batches of 2 pairs`,
    },
    deviations: ['fp16 mixed precision in the authors\' run; float32 (TF32 matmuls on cuda) here'],
  };
}

/** SimCSE-BERT supervised on NLI triplets (Table 2's SimCSE-BERT supervised row; the baseline). */
function simcseNliSup(): TransferRecipe {
  return {
    name: 'simcse-nli-sup',
    title: 'SimCSE-BERT supervised: InfoNCE with hard negatives on NLI triplets (AnglE Table 2 baseline)',
    task: 'nli',
    view: 'triplets',
    config: { objective: { name: 'simcse', temperature: 0.05 }, pooling: 'cls', maxLength: 32, batchSize: 512, epochs: 3, lr: 5e-5, schedule: 'linear', warmupSteps: 0, warmupStart: 'zero', weightDecay: 0, seed: 42, shuffle: true, evalEvery: 125, checkpointEvery: 125 },
    sources: {
      objective: SOURCES.simcse,
      pooling: `${SOURCES.simcse} (SimCSE trains an MLP over [CLS] and saves it as BERT's pooler; plain cls here)`,
      maxLength: SOURCES.simcse,
      batchSize: SOURCES.simcse,
      epochs: SOURCES.simcse,
      lr: SOURCES.simcse,
      schedule: "SimCSE trains through HF's Trainer: linear decay, no warmup",
      weightDecay: "HF Trainer's default",
      seed: "SimCSE's default seed is 42",
      evalEvery: "SimCSE's run_sup_example.sh: STS-B dev every 125 steps, best checkpoint kept",
      checkpointEvery: `${SOURCES.ours}: resumable every 125 steps`,
    },
    evaluation: { pooling: 'cls', source: "the training pooling: without SimCSE's MLP there is no trained pooler to evaluate through" },
    deviations: ["no MLP over [CLS] in training (SimCSE's --mlp_only_train is off in its supervised script: the MLP becomes the pooler)"],
  };
}

/** AnglE-LLaMA: LoRA on the decoder with AnglE's prompt (Table 2's AnglE-LLaMA rows). */
function angleLlamaNli(): TransferRecipe {
  return {
    name: 'angle-llama-nli',
    title: "AnglE-LLaMA: LoRA on the decoder, AnglE's prompt and last-token pooling, on NLI pairs (AnglE Table 2)",
    task: 'nli',
    view: 'pairs',
    config: {
      objective: { name: 'angle', loss: { preset: 'paper', weights: { cosine: 1, ibn: 35, angle: 1 }, taus: { cosine: 20, ibn: 20, angle: 1 }, ibnPositives: 'binary', duplicates: 'positive' } },
      pooling: 'last',
      maxLength: 45,
      batchSize: 160,
      gradAccumulation: 16,
      epochs: 1,
      lr: 2e-4,
      schedule: 'linear',
      warmupSteps: 100,
      warmupStart: 'zero',
      weightDecay: 0,
      seed: 42,
      shuffle: true,
      evalAtEnd: true,
      checkpointEvery: 20,
    },
    sources: {
      'objective.loss.weights': `${NLI_SOURCES.readme20231027}: w2 (ibn) 35, w1 and w3 at train_angle.py's default 1`,
      'objective.loss.taus': NLI_SOURCES.trainAngle,
      'objective.loss.ibnPositives': 'labels are 0/1',
      'objective.loss.duplicates': ISP,
      pooling: 'AnglE angle.py at a02b3b3 (is_llm): the last real token of the prompt',
      maxLength: NLI_SOURCES.readme20231027,
      batchSize: `${NLI_SOURCES.readme20231027}: in-batch negatives per device (160 pairs)`,
      gradAccumulation: `${NLI_SOURCES.readme20231027}: 4 devices × 4 accumulation = 16 micro-batches, 2,560 pairs per step`,
      epochs: NLI_SOURCES.readme20231027,
      lr: NLI_SOURCES.readme20231027,
      warmupSteps: NLI_SOURCES.trainAngle,
      schedule: SOURCES.hfTrainer,
      warmupStart: SOURCES.hfTrainer,
      weightDecay: SOURCES.hfTrainer,
      seed: NLI_SOURCES.readme20231027,
      evalAtEnd: `${NLI_SOURCES.readme20231027}: --do_eval 0, the final weights are the model (STS-B dev once at the end, for the record)`,
      checkpointEvery: `${SOURCES.ours}: resumable every 20 steps`,
      lora: `${NLI_SOURCES.readme20231027}; ${NLI_SOURCES.kbit4}`,
      prompt: 'AnglE train_angle.py at a02b3b3: PROMPT for LLaMA models; AngleDataTokenizer cuts the text, never the template',
    },
    lora: { r: 32, alpha: 32, dropout: 0.1, targetModules: 'all-linear' },
    prompt: { template: ANGLE_LLAMA_TEMPLATE },
    evaluation: { pooling: 'last', maxLength: 512, prompt: { template: ANGLE_LLAMA_TEMPLATE, prepareText: 'prompteol' }, source: NLI_SOURCES.evalPy },
    deviations: [
      'the authors trained on a 4-bit (NF4) quantised base with float32 compute (QLoRA, --load_kbit 4); here the base weights are float32 (no quantisation), frozen',
      'the authors evaluated with fp16 base weights (--load_kbit 16); float32 here',
    ],
  };
}

const TRANSFER_RECIPES: Record<string, () => TransferRecipe> = {
  'angle-nli-paper': angleNliPaper,
  'angle-nli-later': angleNliLater,
  'simcse-nli-sup': simcseNliSup,
  'angle-llama-nli': angleLlamaNli,
};

export const TRANSFER_RECIPE_NAMES: readonly string[] = Object.keys(TRANSFER_RECIPES);

/** A Table 2 recipe by name. */
export function transferRecipe(name: string): TransferRecipe {
  const f = TRANSFER_RECIPES[name];
  if (!f) throw new UnknownNameError('transfer recipe', name, TRANSFER_RECIPE_NAMES);
  return f();
}
