/**
 * A task whose every text goes into a prompt template before the model sees it, so that the
 * trainer (lib/train), which batches raw texts, trains a decoder on prompt-based sentence
 * embeddings (PromptEOL's contrastive fine-tuning, AnglE-LLaMA): the training texts and the
 * dev/test evaluators' texts are mapped through `promptFor` (lib/embed/prompt-encoder.ts), and
 * the run pools the `last` token. Batches are padded on the tokenizer's side (decoders: left), and
 * `last` pooling reads the last real token on either side, so a prompted batch embeds each text as
 * `PromptSentenceEncoder` does (test/prompted-task.test.ts checks that).
 *
 * The reference's training (kongds/scaling_sentemb ft_llm.py `generate_sentemb_prompt`) first
 * cuts each sentence to `cutoff_len` (32) tokens — tokenised without special tokens, decoded back
 * to text — and then fills the template, so the template's end (where the embedding is read)
 * always survives; `sentenceMaxTokens` does the same here (decoder tokenizers put their special
 * tokens, BOS, in front: what `encode('')` gives is taken as that prefix).
 */
import { promptFor, type PromptEncoderOptions } from '../embed/prompt-encoder.js';
import type { EncodeOptions, SentenceEncoder } from '../embed/types.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { TextTokenizer } from '../models/types.js';
import type { TrainingExamples } from '../train/examples.js';
import { InputError } from '../util/errors.js';
import type { TaskData } from './tasks.js';

/** How texts become prompts (a subset of the prompt encoder's options). */
export type PromptSpec = Pick<PromptEncoderOptions, 'template' | 'demonstrations' | 'demonstrationEnd' | 'prepareText'>;

export interface PromptedTrainingOptions {
  /** Cut each training sentence to this many tokens before it fills the template (the reference's cutoff_len 32). */
  sentenceMaxTokens?: number;
  /** The tokenizer that counts them (required with sentenceMaxTokens). */
  tokenizer?: TextTokenizer;
}

/** A sentence cut to its first `max` tokens (special tokens not counted), as text; unchanged when shorter. */
export function truncateSentence(text: string, tokenizer: TextTokenizer, max: number): string {
  if (!Number.isInteger(max) || max < 1) throw new InputError(`sentenceMaxTokens must be a positive integer, got ${max}`);
  if (!tokenizer.decode) throw new InputError('this tokenizer cannot decode token ids, so sentences cannot be cut to a token count');
  const prefix = tokenizer.encode('').ids.length;
  const ids = tokenizer.encode(text).ids.slice(prefix);
  return ids.length <= max ? text : tokenizer.decode(ids.slice(0, max));
}

function describe(p: PromptSpec): string {
  const demos = p.demonstrations?.length ?? 0;
  return `prompted ${JSON.stringify(p.template ?? 'PromptEOL')}${demos ? ` with ${demos} demonstration(s)` : ''}`;
}

/** Every text of a training set put into the prompt (and first cut to `sentenceMaxTokens` tokens, if asked). */
export function promptedExamples(t: TrainingExamples, p: PromptSpec, o: PromptedTrainingOptions = {}): TrainingExamples {
  if (o.sentenceMaxTokens !== undefined && !o.tokenizer) throw new InputError('sentenceMaxTokens needs the tokenizer that counts the tokens');
  const cache = new Map<string, string>();
  const f = (s: string): string => {
    let v = cache.get(s);
    if (v === undefined) {
      v = promptFor(o.sentenceMaxTokens !== undefined ? truncateSentence(s, o.tokenizer!, o.sentenceMaxTokens) : s, p);
      cache.set(s, v);
    }
    return v;
  };
  const name = `${t.name}, ${describe(p)}${o.sentenceMaxTokens !== undefined ? `, sentences cut to ${o.sentenceMaxTokens} tokens` : ''}`;
  switch (t.kind) {
    case 'pairs':
      return { kind: 'pairs', name, items: t.items.map((x) => ({ ...x, a: f(x.a), b: f(x.b) })) };
    case 'triplets':
      return { kind: 'triplets', name, items: t.items.map((x) => ({ ...x, anchor: f(x.anchor), positive: f(x.positive), negative: f(x.negative) })) };
    case 'unsupervised':
      return { kind: 'unsupervised', name, items: t.items.map((x) => ({ ...x, text: f(x.text) })) };
  }
}

/** An encoder that embeds each text's prompt with `inner` (a `last`-pooling encoder of the decoder). */
export function promptedEncoder(inner: SentenceEncoder, p: PromptSpec): SentenceEncoder {
  return { encode: (texts: string[], eo?: EncodeOptions) => inner.encode(texts.map((x) => promptFor(x, p)), eo) };
}

/** The evaluator with each text put into the prompt before the encoder sees it. */
export function promptedEvaluator(e: Evaluator, p: PromptSpec): Evaluator {
  return {
    name: `${e.name}, ${describe(p)}`,
    primaryMetric: e.primaryMetric,
    higherIsBetter: e.higherIsBetter,
    rows: e.rows,
    evaluate: (encoder) => e.evaluate(promptedEncoder(encoder, p)),
  };
}

/**
 * A task's training data and evaluators, prompted (see the file comment). Training and evaluation
 * may prompt differently: PromptEOL's evaluation cleans each sentence first (`prepareText:
 * 'prompteol'`, evaluation.py), its training does not (ft_llm.py).
 */
export function promptedTaskData(d: TaskData, p: { train: PromptSpec; evaluate?: PromptSpec } & PromptedTrainingOptions): TaskData {
  const e = p.evaluate ?? p.train;
  return { train: promptedExamples(d.train, p.train, p), dev: promptedEvaluator(d.dev, e), test: promptedEvaluator(d.test, e) };
}
