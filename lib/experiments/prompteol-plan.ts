/**
 * PromptEOL (Jiang et al., "Scaling Sentence Embeddings with Large Language Models",
 * papers/002_684352d32195eadd.txt) as experiments: the prompt, the in-context demonstrations and
 * the contrastive fine-tuning recipe, each with where it comes from — the paper, or the authors'
 * code (kongds/scaling_sentemb at 656ddec: evaluation.py, run_icl.sh, ft_llm.py, train_llm.sh)
 * where the paper is silent — and the rows of its Table 2 that a LoRA run fills.
 *
 * Facts of the reference code the recipe follows:
 * - embeddings: `hidden_states[-1][:, -1, :]` of the filled template, left padding; the sentence
 *   is cleaned first (a final '.', '"' → "'", a final '?' → '.': `prepareText: 'prompteol'`);
 * - fine-tuning (`ft_llm.py`, `train_llm.sh`): NLI triplets (premise, entailment, contradiction),
 *   InfoNCE at τ 0.05 with the hard negatives (their extra logit weight is 0), batch 256 gathered
 *   across GPUs, lr 5e-4, 1 epoch, warmup 100 steps (HF Trainer, linear decay, weight decay 0),
 *   each sentence cut to 32 tokens before it fills the template (cutoff_len), LoRA r 64, α 16,
 *   dropout 0.05 on every linear layer of the 4-bit model except the LM head
 *   (`find_all_linear_names`), a checkpoint every 50 steps, each evaluated on STS-B dev and the
 *   best one tested (`eval_checkpoints.sh`). They trained on 4-bit weights (QLoRA); we use full
 *   precision base weights.
 */
import { PROMPTEOL_TEMPLATE, type Demonstration } from '../embed/prompt-encoder.js';
import { SENTEVAL_STS_COLUMNS } from '../eval/senteval-sts-evaluator.js';
import type { LoraConfig } from '../models/adapters/lora.js';
import { paperCellOf } from './paper-cell.js';
import type { Recipe } from './recipes.js';
import type { SuppliedRow } from './supplied-data-plan.js';

export const PROMPTEOL_PAPER_FILE = '002_684352d32195eadd.txt';
const CODE = 'kongds/scaling_sentemb@656ddec';

/**
 * The in-context demonstration chosen per OPT size on STS-B dev (PromptEOL Table 4; the sentences
 * as run_icl.sh has them — the text file cuts the 30B one and lost the 66B one).
 */
export const PROMPTEOL_ICL_DEMONSTRATIONS: ReadonlyArray<{ size: string; demonstration: Demonstration }> = [
  { size: '125M', demonstration: { text: 'A man is smoking.', word: 'Smoking' } },
  { size: '350M', demonstration: { text: 'A man is playing on a guitar and singing.', word: 'Music' } },
  { size: '1.3B', demonstration: { text: 'relating to switzerland or its people.', word: 'Swiss' } },
  { size: '2.7B', demonstration: { text: 'A jockey riding a horse.', word: 'Equestrian' } },
  { size: '6.7B', demonstration: { text: 'The man is riding a horse.', word: 'Horseback-riding' } },
  { size: '13B', demonstration: { text: 'meat from a deer.', word: 'Venison' } },
  { size: '30B', demonstration: { text: 'The man is riding a motorcycle down the road.', word: 'Motorcycling' } },
  { size: '66B', demonstration: { text: 'of or relating to tutors or tutoring.', word: 'Tutorial' } },
];

/** How PromptEOL embeds a sentence without training (the settings a record keeps). */
export function promptEolEncoderSettings(demonstrations: readonly Demonstration[] = []): { template: string; demonstrations: Demonstration[]; prepareText: 'prompteol'; pooling: 'last token of the prompt'; source: string } {
  return {
    template: PROMPTEOL_TEMPLATE,
    demonstrations: [...demonstrations],
    prepareText: 'prompteol',
    pooling: 'last token of the prompt',
    source: `PromptEOL §3.1 template; ${CODE} evaluation.py (sentence clean-up, hidden_states[-1][:, -1], left padding)${demonstrations.length ? '; demonstration: run_icl.sh / Table 4' : ''}`,
  };
}

/** PromptEOL's LoRA (ft_llm.py / train_llm.sh). */
export const PROMPTEOL_LORA: LoraConfig = { r: 64, alpha: 16, dropout: 0.05, targetModules: 'all-linear' };

/** Each sentence is cut to this many tokens before it fills the template (ft_llm.py cutoff_len). */
export const PROMPTEOL_SENTENCE_TOKENS = 32;

/**
 * PromptEOL+CSE: contrastive fine-tuning of prompt embeddings. `data` 'nli': SimCSE's NLI
 * triplets, the paper's; 'stsb-positives': STS-B train pairs scored ≥ 4 as positives without hard
 * negatives — a stand-in where NLI is not on the machine, never the paper's setting.
 */
export function promptEolCseRecipe(data: 'nli' | 'stsb-positives'): Recipe {
  const src = `${CODE} ft_llm.py / train_llm.sh`;
  return {
    name: data === 'nli' ? 'prompteol-cse-nli' : 'prompteol-cse-stsb-positives',
    title:
      data === 'nli'
        ? 'PromptEOL+CSE: LoRA fine-tuning of prompt embeddings, supervised SimCSE on NLI triplets (PromptEOL Table 2)'
        : 'PromptEOL+CSE on a stand-in: STS-B train positives (score ≥ 4) without hard negatives, because NLI is not here',
    task: data === 'nli' ? 'nli' : 'stsb',
    ...(data === 'stsb-positives' ? { positivesOnly: { threshold: 4 } } : {}),
    config: {
      objective: { name: 'simcse', temperature: 0.05 },
      pooling: 'last',
      // The prompt: up to 32 sentence tokens plus the template's (about 15 with LLaMA's tokenizer).
      maxLength: 64,
      batchSize: 256,
      epochs: 1,
      lr: 5e-4,
      schedule: 'linear',
      warmupSteps: 100,
      warmupStart: 'zero',
      weightDecay: 0,
      seed: 42,
      shuffle: true,
      evalEvery: 50,
      checkpointEvery: 50,
    },
    sources: {
      objective: `${src}: InfoNCE, Similarity(temp=0.05), hard negatives with logit weight 0${data === 'nli' ? '' : ' (none in the stand-in data)'}`,
      pooling: `${src}: hidden_states[-1][:, -1, :] of the prompt (left padding)`,
      maxLength: `ours: the prompt's token limit; the sentence itself is cut to ${PROMPTEOL_SENTENCE_TOKENS} tokens first (cutoff_len), so the template's end is never cut`,
      batchSize: `${src}: batch_size 256 (micro-batches gathered across GPUs for the in-batch negatives)`,
      epochs: `PromptEOL §4 and ${src}: 1 epoch`,
      lr: `PromptEOL §4 and ${src}: 5e-4`,
      warmupSteps: `${src}: warmup_steps 100 (HF Trainer)`,
      schedule: "HF Trainer's default (linear decay)",
      warmupStart: "HF Trainer's default",
      weightDecay: "HF Trainer's default (0)",
      seed: `${src}: seed 42`,
      evalEvery: `${CODE} eval_checkpoints.sh: every checkpoint (save_steps 50) evaluated on STS-B dev, the best tested`,
      checkpointEvery: `${src}: save_steps 50`,
      positivesOnly: 'stand-in: STS-B pairs scored ≥ 4 of 5 are positives',
    },
  };
}

/** The PromptEOL Table 2 row a LoRA run of a LLaMA 7B model fills, and the rows this library cannot run here, marked. */
export function prompteolTable2Rows(opts: { data: string; lora?: LoraConfig; recipe: Recipe }): SuppliedRow[] {
  const cells = (row: string) =>
    SENTEVAL_STS_COLUMNS.map(({ column, metric }) => ({ column, metric: `test_${metric}`, paper: paperCellOf({ paper: 'prompteol', table: 2, row, column, file: PROMPTEOL_PAPER_FILE }) }));
  // OPT (learned positions, ReLU feed-forward, LayerNorm with biases) is not implemented in this library.
  const needsOpt = 'needs OPT';
  const rows: SuppliedRow[] = ['PromptEOL+CSE OPT 1.3B', 'PromptEOL+CSE OPT 2.7B', 'PromptEOL+CSE OPT 13B'].map((row) => ({ row, table: 'Table 2', cells: cells(row), unavailable: needsOpt }));
  rows.push({ row: 'PromptEOL+CSE LLaMA 7B', table: 'Table 2', cells: cells('PromptEOL+CSE LLaMA 7B'), recipe: opts.recipe, data: opts.data, lora: opts.lora ?? PROMPTEOL_LORA });
  rows.push({ row: 'PromptEOL+CSE LLaMA 13B', table: 'Table 2', cells: cells('PromptEOL+CSE LLaMA 13B'), unavailable: 'needs a 13B decoder (LLM_MODEL)' });
  return rows;
}
