/**
 * The AnglE paper's recipes (papers 000_/001_/003_: "AnglE-optimized Text Embeddings"), over HF
 * Trainer's defaults (./base.ts), every value with its source:
 *
 * | recipe                  | table  | trains                                                                  |
 * |-------------------------|--------|-------------------------------------------------------------------------|
 * | `angle-<task>`          | 3      | AnglE-BERT on a task's own train split (train_angle.py defaults)         |
 * | `angle-ran-<task>`      | 3      | AnglE-RAN: the same on RAN_base, its mean-of-cells sentence vector       |
 * | `angle-stsb-w…`, `-isp-…`, `-<pooling>` | 4 | the objective ablation, ISP on/off, the poolings, on STS-B  |
 * | `angle-nli-paper`       | 2      | the paper's transfer setting (A.4): cls, max length 128, batch 50        |
 * | `angle-nli-later`       | 2      | the authors' later recipe (issue #85): ibn 30, angle 1 with τ 20         |
 * | `angle-llama-nli`       | 2      | LoRA on LLaMA, AnglE's prompt, last token, ibn 35, lr 2e-4, max length 45 |
 * | `angle-nli-triplets`    | —      | the triplet form of the objective on SimCSE's NLI triplets (`npm run train -- --task nli`) |
 * | `angle-stsb-llm-supervised` | 5  | AnglE-BERT on pairs an LLM generated (the STS-B recipe)                  |
 *
 * Sources:
 * - AnglE §4.2 (000_c0fdd0968b088fcd.txt): bert-base-uncased; τ 0.05 for the cosine and in-batch
 *   objectives (a multiplier of 20 in the code) and τ 1.0 for the angle one. Table 4: cls is the
 *   best of five poolings. A.4 (001_06941bfad7bf7482.txt): transfer setting with max length 128,
 *   batch sizes 8-50 tried, larger is better.
 * - train_angle.py at SeanLee97/AnglE@4428ff1 (argparse defaults): w 1/1/1, lr 1e-5, batch 32, 20
 *   epochs, warmup 100, max length 512, seed 42, `compute_similar_matrix=1` (identical sentences of
 *   a batch are in-batch positives: the paper's ISP detection); at a02b3b3 (the AnglE-LLaMA
 *   release) the same defaults, NLI from AllNLI with neutral skipped, the LLaMA prompt and LoRA.
 * - In-batch negatives on graded labels (STS-B 0..5): the code casts labels to int
 *   (`make_target_matrix`: 'angle-int' in lib/losses/in-batch-negatives.ts).
 * - README at fcb6223 (angle-llama-7b-nli-20231027) and examples/NLI/README.md at 1c5515b (issue
 *   #85): quoted in NLI below.
 */
import { ANGLE_TABLE4_POOLING_ROWS, parsePooling, poolingSlug, type Pooling } from '../../embed/pooling.js';
import { ANGLE_LLAMA_TEMPLATE } from '../../embed/prompt-encoder.js';
import type { ObjectiveConfig } from '../../train/objective.js';
import { task, type TaskName } from '../tasks.js';
import { overHfTrainer, SOURCES } from './base.js';
import type { Recipe } from './recipe.js';

export const ANGLE_SOURCES = {
  paper: 'AnglE §4.2 (000_c0fdd0968b088fcd.txt): bert-base-uncased, τ 0.05 for cosine and ibn (×20 in the code), 1.0 for angle',
  paperPooling: 'AnglE Table 4: cls pooling is the best of five',
  code: 'AnglE train_angle.py defaults at SeanLee97/AnglE@4428ff1 (w 1/1/1, lr 1e-5, batch 32, 20 epochs, warmup 100, max length 512, seed 42, ISP on)',
  codeIntCast: 'AnglE code: in-batch negatives cast graded labels to int (make_target_matrix)',
} as const;

export const NLI_SOURCES = {
  a4: 'AnglE A.4 (001_06941bfad7bf7482.txt): transfer setting, max length 128, batch sizes 8-50 tried, larger is better',
  trainAngle: 'AnglE train_angle.py at a02b3b3 (argparse defaults: lr 1e-5, warmup 100, w 1/1/1, τ 20/20/1, seed 42, ISP on)',
  readme20231027: 'AnglE README at fcb6223, angle-llama-7b-nli-20231027: --w2 35 --learning_rate 2e-4 --maxlen 45 --lora_r 32 --lora_alpha 32 --lora_dropout 0.1 --batch_size 160 (4 GPUs) --gradient_accumulation_steps 4 --epochs 1 --load_kbit 4 --do_eval 0',
  kbit4: "AnglE angle.py at a02b3b3: with --load_kbit 4 the LoRA targets are every linear layer (find_all_linear_names), as the released adapters' adapter_config.json lists",
  evalPy: 'AnglE eval.py at fcb6223: SentEval batch 16, PromptEOL clean-up of each sentence, max length 512',
  issue85: 'AnglE examples/NLI/README.md at 1c5515b (issue #85): 8 GPUs × batch 128 × accumulation 16, 10 epochs, lr 5e-5, max length 128, warmup 50, ibn 30, cosine 0, angle 1 with τ 20, train cls, evaluate cls_avg',
} as const;

const ISP = `${ANGLE_SOURCES.code}; 'positive' adds identical sentences as targets, as compute_similar_matrix did`;

/** AnglE-BERT on one task's own training split (AnglE Table 3, non-transfer). */
export function angleBert(t: TaskName): Recipe {
  const graded = task(t).labels === 'graded';
  const objective: ObjectiveConfig = {
    name: 'angle',
    loss: { preset: 'paper', weights: { cosine: 1, ibn: 1, angle: 1 }, taus: { cosine: 20, ibn: 20, angle: 1 }, ibnPositives: graded ? 'angle-int' : 'binary', duplicates: 'positive' },
  };
  return {
    name: `angle-${t}`,
    title: `AnglE-BERT trained on ${task(t).title} train (AnglE Table 3)`,
    task: t,
    ...overHfTrainer(
      { objective, pooling: 'cls', maxLength: 512, batchSize: 32, epochs: 20, lr: 1e-5, warmupSteps: 100, seed: 42, evalEvery: 'epoch', checkpointEvery: 50 },
      {
        'objective.loss.weights': ANGLE_SOURCES.code,
        'objective.loss.taus': ANGLE_SOURCES.paper,
        'objective.loss.ibnPositives': graded ? ANGLE_SOURCES.codeIntCast : 'labels are 0/1',
        'objective.loss.duplicates': ISP,
        pooling: ANGLE_SOURCES.paperPooling,
        maxLength: ANGLE_SOURCES.code,
        batchSize: ANGLE_SOURCES.code,
        epochs: ANGLE_SOURCES.code,
        lr: ANGLE_SOURCES.code,
        warmupSteps: ANGLE_SOURCES.code,
        seed: ANGLE_SOURCES.code,
        evalEvery: `${SOURCES.ours}: dev once per epoch, best dev checkpoint tested`,
        checkpointEvery: SOURCES.resumable(50),
      },
    ),
  };
}

export const RAN_SOURCES = {
  paper: 'AnglE §4 (000_c0fdd0968b088fcd.txt), Table 3: "RAN_base (86M parameters) (Li et al., 2023) as the backbone"; no other setting of the AnglE-RAN row is stated',
  bertChoice: "ours: the paper gives no AnglE-RAN hyperparameters and the AnglE repository has no RAN code in its history, so the AnglE-BERT row's value (train_angle.py defaults) is kept",
  pooling:
    "RanNet's sentence vector, the mean of the top layer's window cells (the RAN README's \"extract semantic feature\": return_cell, cell_pooling 'mean', apply_cell_transform False), which the model returns as its pooler output; AnglE-RAN's pooling is not recorded anywhere found",
} as const;

/**
 * AnglE-RAN (AnglE Table 3): AnglE-BERT's recipe on the RAN_base backbone (the row's model,
 * lib/models/ran/ran-base.ts), pooled as RanNet's sentence vector. Every value but the pooling is
 * AnglE-BERT's, max length 512 included (train_angle.py's default; RAN itself has no length limit).
 */
export function angleRan(t: TaskName): Recipe {
  const r = angleBert(t);
  const keep = (why: string) => `${why}; ${RAN_SOURCES.bertChoice}`;
  const sources = Object.fromEntries(Object.entries(r.sources).map(([k, v]) => [k, keep(v)]));
  return {
    ...r,
    name: `angle-ran-${t}`,
    title: `AnglE-RAN (RAN_base) trained on ${task(t).title} train (AnglE Table 3)`,
    config: { ...r.config, pooling: 'cls_pooler' },
    sources: { ...sources, pooling: `${RAN_SOURCES.pooling}. Backbone: ${RAN_SOURCES.paper}` },
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

/** AnglE Table 4 (lower): the pooling strategies, as the paper names them (the pooling alias table's rows) and as ours. */
export const TABLE4_POOLINGS: ReadonlyArray<{ row: string; pooling: Pooling }> = ANGLE_TABLE4_POOLING_ROWS.map((row) => ({ row, pooling: parsePooling(row) }));

function angleLoss(r: Recipe) {
  if (r.config.objective.name !== 'angle') throw new Error(`recipe ${r.name} is expected to train the 'angle' objective`);
  return r.config.objective.loss ?? {};
}

/** The STS-B AnglE recipe with other objective weights (Table 4's ablation rows). */
export function angleStsbWithWeights(row: string, weights: { cosine: number; ibn: number; angle: number }): Recipe {
  const r = angleBert('stsb');
  return {
    ...r,
    name: `angle-stsb-w${weights.cosine}${weights.ibn}${weights.angle}`,
    title: `AnglE-BERT on STS-B, ${row} (AnglE Table 4)`,
    config: { ...r.config, objective: { name: 'angle', loss: { ...angleLoss(r), weights } } },
    sources: { ...r.sources, 'objective.loss.weights': `AnglE Table 4 row '${row}': the objectives with weight 0 are dropped` },
  };
}

/** The STS-B AnglE recipe with in-batch ISP detection on ('positive') or off ('ignore'): the text's 0.18 claim. */
export function angleStsbWithIsp(on: boolean): Recipe {
  const r = angleBert('stsb');
  return {
    ...r,
    name: `angle-stsb-isp-${on ? 'on' : 'off'}`,
    title: `AnglE-BERT on STS-B, in-batch negatives ${on ? 'with' : 'without'} identical-sentence-pair detection`,
    config: { ...r.config, objective: { name: 'angle', loss: { ...angleLoss(r), duplicates: on ? 'positive' : 'ignore' } } },
    sources: { ...r.sources, 'objective.loss.duplicates': `AnglE §4.4 (000_c0fdd0968b088fcd.txt): ibn without ISP detection drops about 0.18; ${on ? "'positive' (identical sentences are targets)" : "'ignore'"}` },
  };
}

/** The STS-B AnglE recipe with another pooling (Table 4's pooling rows). */
export function angleStsbWithPooling(row: string, name: Pooling | string): Recipe {
  const r = angleBert('stsb');
  const pooling = parsePooling(name);
  return {
    ...r,
    name: `angle-stsb-${poolingSlug(pooling)}`,
    title: `AnglE-BERT on STS-B, ${row} pooling (AnglE Table 4)`,
    config: { ...r.config, pooling },
    sources: { ...r.sources, pooling: `AnglE Table 4 row '${row}'` },
  };
}

/** The triplet form of the AnglE objective on SimCSE's NLI triplets (`npm run train -- --task nli`). */
export function angleNliTriplets(): Recipe {
  const r = angleBert('stsb');
  return {
    ...r,
    name: 'angle-nli-triplets',
    title: "AnglE-BERT on SimCSE's NLI triplets (the triplet form of the AnglE objective)",
    task: 'nli',
    config: { ...r.config, maxLength: 128, epochs: 1, objective: { name: 'angle', loss: { preset: 'paper' } } },
    sources: { ...r.sources, maxLength: 'AnglE A.4 (001_06941bfad7bf7482.txt): max length 128 in the transfer setting', epochs: SOURCES.ours, 'objective.loss.ibnPositives': 'triplets: no labels' },
  };
}

/** Where the transfer rows' checkpoints are selected and reported: STS-B dev every N steps, then the SentEval suite. */
const TRANSFER_EVAL = "the training pooling (Table 4's best); the released checkpoint is scored with cls_avg instead (see the released rows)";

/** AnglE-BERT in the paper's transfer setting (Table 2's AnglE-BERT row). */
export function angleNliPaper(): Recipe {
  return {
    name: 'angle-nli-paper',
    title: "AnglE-BERT on NLI pairs (entailment 1, contradiction 0), the paper's transfer setting (AnglE Table 2)",
    task: 'nli-pairs',
    ...overHfTrainer(
      {
        objective: { name: 'angle', loss: { preset: 'paper', weights: { cosine: 1, ibn: 1, angle: 1 }, taus: { cosine: 20, ibn: 20, angle: 1 }, ibnPositives: 'binary', duplicates: 'positive' } },
        pooling: 'cls',
        maxLength: 128,
        batchSize: 50,
        epochs: 1,
        lr: 1e-5,
        warmupSteps: 100,
        seed: 42,
        evalEvery: 250,
        checkpointEvery: 250,
      },
      {
        'objective.loss.weights': NLI_SOURCES.trainAngle,
        'objective.loss.taus': ANGLE_SOURCES.paper,
        'objective.loss.ibnPositives': 'labels are 0/1',
        'objective.loss.duplicates': ISP,
        pooling: ANGLE_SOURCES.paperPooling,
        maxLength: NLI_SOURCES.a4,
        batchSize: `${NLI_SOURCES.a4}: the largest the paper ran`,
        epochs: `${SOURCES.ours}: one pass over NLI (the paper is silent; the LLaMA run of the time trained 1 epoch)`,
        lr: NLI_SOURCES.trainAngle,
        warmupSteps: NLI_SOURCES.trainAngle,
        seed: NLI_SOURCES.trainAngle,
        evalEvery: `${SOURCES.ours}: STS-B dev every 250 steps (SimCSE evaluates every 125 at batch 512), best dev checkpoint tested`,
        checkpointEvery: SOURCES.resumable(250),
      },
    ),
    evaluation: { pooling: 'cls', source: TRANSFER_EVAL },
  };
}

/** The authors' later BERT recipe (AnglE issue #85). */
export function angleNliLater(): Recipe {
  return {
    name: 'angle-nli-later',
    title: "AnglE-BERT on NLI pairs, the authors' later recipe (issue #85: ibn 30, angle 1 with τ 20, 16,384 pairs per step)",
    task: 'nli-pairs',
    ...overHfTrainer(
      {
        objective: { name: 'angle', loss: { preset: 'paper', weights: { cosine: 0, ibn: 30, angle: 1 }, taus: { cosine: 20, ibn: 20, angle: 20 }, ibnPositives: 'binary', duplicates: 'positive' } },
        pooling: 'cls',
        maxLength: 128,
        batchSize: 128,
        gradAccumulation: 128,
        epochs: 10,
        lr: 5e-5,
        warmupSteps: 50,
        seed: 42,
        evalEvery: 'epoch',
        checkpointEvery: 10,
      },
      {
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
        seed: NLI_SOURCES.issue85,
        evalEvery: `${SOURCES.ours}: STS-B dev once per epoch (34 steps on NLI), best dev checkpoint tested`,
        checkpointEvery: `${SOURCES.ours}: resumable every 10 steps (each is 16,384 pairs)`,
      },
    ),
    evaluation: {
      pooling: 'cls_avg',
      source: `${NLI_SOURCES.issue85}; per-row masked cls_avg (angle_emb ≥ 0.5.5). angle_emb 0.4.5's eval_nli.py computed cls_avg_batch_tokens in SentEval batches of 2 pairs`,
    },
    deviations: ["fp16 mixed precision in the authors' run; float32 (TF32 matmuls on cuda) here"],
  };
}

/** AnglE-LLaMA: LoRA on the decoder with AnglE's prompt (Table 2's AnglE-LLaMA rows). */
export function angleLlamaNli(): Recipe {
  return {
    name: 'angle-llama-nli',
    title: "AnglE-LLaMA: LoRA on the decoder, AnglE's prompt and last-token pooling, on NLI pairs (AnglE Table 2)",
    task: 'nli-pairs',
    ...overHfTrainer(
      {
        objective: { name: 'angle', loss: { preset: 'paper', weights: { cosine: 1, ibn: 35, angle: 1 }, taus: { cosine: 20, ibn: 20, angle: 1 }, ibnPositives: 'binary', duplicates: 'positive' } },
        pooling: 'last',
        maxLength: 45,
        batchSize: 160,
        gradAccumulation: 16,
        epochs: 1,
        lr: 2e-4,
        warmupSteps: 100,
        seed: 42,
        evalAtEnd: true,
        checkpointEvery: 20,
        checkpointing: true,
      },
      {
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
        seed: NLI_SOURCES.readme20231027,
        evalAtEnd: `${NLI_SOURCES.readme20231027}: --do_eval 0, the final weights are the model (STS-B dev once at the end, for the record)`,
        checkpointEvery: SOURCES.resumable(20),
        checkpointing: `ours, to fit one 80 GB GPU: ${'docs/decoder-memory.md'} measures this micro-batch (160 pairs × 45 tokens) at 170 GB without it, 22.5 GB over the NF4 base with it (gradients unchanged)`,
        lora: `${NLI_SOURCES.readme20231027}; ${NLI_SOURCES.kbit4}`,
        baseStorage: `${NLI_SOURCES.readme20231027}: --load_kbit 4, bitsandbytes' 4-bit base (QLoRA: NF4, double quantisation)`,
        prompt: 'AnglE train_angle.py at a02b3b3: PROMPT for LLaMA models; AngleDataTokenizer cuts the text, never the template',
      },
    ),
    lora: { r: 32, alpha: 32, dropout: 0.1, targetModules: 'all-linear' },
    baseStorage: { format: 'nf4', doubleQuant: true },
    prompt: { template: ANGLE_LLAMA_TEMPLATE, sentenceMaxTokens: 'fit' },
    evaluation: { pooling: 'last', maxLength: 512, prompt: { template: ANGLE_LLAMA_TEMPLATE, prepareText: 'prompteol' }, source: NLI_SOURCES.evalPy },
    deviations: ['the authors evaluated with fp16 base weights (--load_kbit 16); float32 here'],
  };
}

/** AnglE-BERT on LLM-generated pairs of STS-B train's sentence1 texts (AnglE Table 5): the STS-B recipe, 0/1 labels. */
export function angleLlmSupervised(): Recipe {
  const r = angleBert('stsb');
  return {
    ...r,
    name: 'angle-stsb-llm-supervised',
    title: "AnglE-BERT on LLM-generated pairs of STS-B train's sentence1 texts (AnglE Table 5)",
    config: { ...r.config, objective: { name: 'angle', loss: { ...angleLoss(r), ibnPositives: 'binary' } } },
    sources: {
      ...r.sources,
      'objective.loss.ibnPositives': 'generated pairs are labelled 0/1: in-batch negatives take label-1 pairs as positives',
      'objective.name': `${SOURCES.ours}: the paper does not say how the Table 5 runs were trained; AnglE's STS-B recipe (the authors' train_angle.py defaults)`,
    },
  };
}
