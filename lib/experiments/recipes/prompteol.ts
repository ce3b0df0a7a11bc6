/**
 * PromptEOL's contrastive fine-tuning recipe (Jiang et al., "Scaling Sentence Embeddings with Large
 * Language Models", papers/002_684352d32195eadd.txt, Table 2 "PromptEOL+CSE"), from the paper where
 * it says and the authors' code where it is silent (kongds/scaling_sentemb at 656ddec: ft_llm.py,
 * train_llm.sh, eval_checkpoints.sh):
 *
 * - NLI triplets (premise, entailment, contradiction), InfoNCE at τ 0.05 with the hard negatives
 *   (their extra logit weight is 0), batch 256 gathered across GPUs, lr 5e-4, 1 epoch, warmup 100
 *   steps (HF Trainer, linear decay, weight decay 0);
 * - each sentence cut to 32 tokens before it fills the template (cutoff_len); the embedding is the
 *   last token's final hidden state (left padding); evaluation cleans each sentence first
 *   (evaluation.py: a final '.', '"' → "'"), training does not;
 * - LoRA r 64, α 16, dropout 0.05 on every linear layer but the LM head (find_all_linear_names), a
 *   checkpoint every 50 steps, each evaluated on STS-B dev and the best one tested. They trained
 *   on 4-bit weights (QLoRA).
 *
 * The same recipe trains every decoder of Table 2 — OPT 1.3B and 2.7B and LLaMA 7B as
 * `promptEolCse`, OPT 13B and LLaMA 13B as `promptEolCse13b` (train_llm.sh has one setting per size
 * class, whatever the architecture).
 */
import { PROMPTEOL_TEMPLATE } from '../../embed/prompt-encoder.js';
import type { LoraConfig } from '../../models/adapters/lora.js';
import { overHfTrainer } from './base.js';
import type { Recipe } from './recipe.js';

const CODE = 'kongds/scaling_sentemb@656ddec';

/** PromptEOL's LoRA (ft_llm.py / train_llm.sh). */
export const PROMPTEOL_LORA: LoraConfig = { r: 64, alpha: 16, dropout: 0.05, targetModules: 'all-linear' };

/** Each sentence is cut to this many tokens before it fills the template (ft_llm.py cutoff_len). */
export const PROMPTEOL_SENTENCE_TOKENS = 32;

/**
 * PromptEOL+CSE: contrastive fine-tuning of prompt embeddings. `data` 'nli': SimCSE's NLI
 * triplets, the paper's; 'stsb-positives': STS-B train pairs scored ≥ 4 as positives without hard
 * negatives — a stand-in where NLI is not on the machine, never the paper's setting.
 */
export function promptEolCse(data: 'nli' | 'stsb-positives' = 'nli'): Recipe {
  const src = `${CODE} ft_llm.py / train_llm.sh`;
  return {
    name: data === 'nli' ? 'prompteol-cse-nli' : 'prompteol-cse-stsb-positives',
    title:
      data === 'nli'
        ? 'PromptEOL+CSE: LoRA fine-tuning of prompt embeddings, supervised SimCSE on NLI triplets (PromptEOL Table 2)'
        : 'PromptEOL+CSE on a stand-in: STS-B train positives (score ≥ 4) without hard negatives, because NLI is not here',
    task: data === 'nli' ? 'nli' : 'stsb',
    ...(data === 'stsb-positives' ? { positivesOnly: { threshold: 4 } } : {}),
    ...overHfTrainer(
      {
        objective: { name: 'simcse', temperature: 0.05 },
        pooling: 'last',
        // The prompt: up to 32 sentence tokens plus the template's (about 15 with LLaMA's tokenizer).
        maxLength: 64,
        batchSize: 256,
        epochs: 1,
        lr: 5e-4,
        warmupSteps: 100,
        seed: 42,
        evalEvery: 50,
        checkpointEvery: 50,
        checkpointing: true,
      },
      {
        objective: `${src}: InfoNCE, Similarity(temp=0.05), hard negatives with logit weight 0${data === 'nli' ? '' : ' (none in the stand-in data)'}`,
        pooling: `${src}: hidden_states[-1][:, -1, :] of the prompt (left padding)`,
        maxLength: `ours: the prompt's token limit; the sentence itself is cut to ${PROMPTEOL_SENTENCE_TOKENS} tokens first (cutoff_len), so the template's end is never cut`,
        batchSize: `${src}: batch_size 256 (micro-batches gathered across GPUs for the in-batch negatives)`,
        epochs: `PromptEOL §4 and ${src}: 1 epoch`,
        lr: `PromptEOL §4 and ${src}: 5e-4`,
        warmupSteps: `${src}: warmup_steps 100 (HF Trainer)`,
        seed: `${src}: seed 42`,
        evalEvery: `${CODE} eval_checkpoints.sh: every checkpoint (save_steps 50) evaluated on STS-B dev, the best tested`,
        checkpointEvery: `${src}: save_steps 50`,
        lora: `${src}: LoRA r 64, α 16, dropout 0.05 on every linear layer (find_all_linear_names)`,
        baseStorage: `${src}: --use_4bit, the base in 4 bits (QLoRA: NF4, double quantisation)`,
        checkpointing: `ours, to fit one 80 GB GPU: docs/decoder-memory.md measures 256 triplets × 64 tokens over LLaMA-2-7B at 524 GB without it, 62 GB over the NF4 base with it (gradients unchanged)`,
        prompt: `PromptEOL §3.1 template; ${src}: sentences cut to cutoff_len ${PROMPTEOL_SENTENCE_TOKENS} tokens; evaluation.py cleans evaluation sentences`,
        ...(data === 'stsb-positives' ? { positivesOnly: 'stand-in: STS-B pairs scored ≥ 4 of 5 are positives' } : {}),
      },
    ),
    lora: PROMPTEOL_LORA,
    baseStorage: { format: 'nf4', doubleQuant: true },
    prompt: { template: PROMPTEOL_TEMPLATE, sentenceMaxTokens: PROMPTEOL_SENTENCE_TOKENS, evaluate: { template: PROMPTEOL_TEMPLATE, prepareText: 'prompteol' } },
  };
}

/**
 * PromptEOL+CSE for the 13B decoders (OPT-13B, LLaMA-13B): the authors' 13B setting is a batch of
 * 200 triplets, not 256 (PromptEOL §4: "For 13B models, we use 8 GPUs with a batch size of 200";
 * train_llm.sh: opt-13b / llama-13b `--batch_size 200 --micro_batch_size 25` on 8 GPUs, gathered
 * into one batch of in-batch negatives). Ours: two micro-batches of 100 per step, so that it fits
 * one 80 GB GPU (docs/decoder-memory.md measured LLaMA-2-13B at 835 GB as one micro-batch of 256
 * and 52 GB as two of 128, checkpointing and NF4 base; a micro-batch of 100 keeps less) — the
 * authors' 200 triplets per step, but each micro-batch's in-batch negatives are 100 triplets.
 */
export function promptEolCse13b(): Recipe {
  const r = promptEolCse('nli');
  const src = `${CODE} train_llm.sh (opt-13b, llama-13b)`;
  return {
    ...r,
    name: 'prompteol-cse-nli-13b',
    title: 'PromptEOL+CSE on a 13B decoder: 200 triplets per step as two micro-batches of 100 (PromptEOL Table 2)',
    config: { ...r.config, batchSize: 100, gradAccumulation: 2 },
    sources: {
      ...r.sources,
      batchSize: `ours, to fit one 80 GB GPU: half of ${src}'s --batch_size 200 (PromptEOL §4: 13B models with a batch of 200); docs/decoder-memory.md measured two micro-batches of 128 over LLaMA-2-13B at 52 GB`,
      gradAccumulation: `ours: two micro-batches per step keep ${src}'s 200 triplets per step`,
    },
    deviations: ['in-batch negatives per micro-batch: 100 triplets, not 200 (the authors gathered 8 × 25 across 8 GPUs)'],
  };
}
