/**
 * Prompt-based sentence embeddings from a decoder LM (PromptEOL, Jiang et al. 2023, "Scaling
 * sentence embeddings with large language models"; AnglE-LLaMA): the text is put into a template
 * that asks for a one-word summary, and the embedding is the last layer's hidden state (after the
 * final norm, HF's hidden_states[-1]) at the template's last token — the state from which the model
 * would write that word.
 *
 *   PromptEOL:   This sentence : "{text}" means in one word:"
 *   AnglE-LLaMA: Summarize sentence "{text}" in one word:"
 *
 * In-context learning (PromptEOL §3.2): demonstrations are the same template filled with an
 * example text and followed by its word and `".`, prepended to the prompt, e.g.
 * `This sentence : "A jockey riding a horse." means in one word:"Equestrian".This sentence : "{text}" means in one word:"`.
 *
 * As in the reference code (kongds/scaling_sentemb evaluation.py): the filled prompt is stripped of
 * surrounding whitespace; with `prepareText: 'prompteol'` each text first gets PromptEOL's
 * clean-up (a final '.' unless it ends in . ? " ', double quotes turned into single quotes, a final
 * '?' into '.'); `maxLength` truncates the tokenised prompt to its first tokens (transformers'
 * truncation, which may cut the template's end, as the reference does); without it a prompt
 * longer than the model's context is an error. Batches are left-padded, and the model numbers
 * positions per row (lib/models/llama/model.ts), so an embedding does not depend on the batch.
 * Texts are sorted by length (longest first) for batching and returned in input order.
 *
 * The templates and their filling live in lib/llm/prompt-template.ts (re-exported here), shared
 * with the client of a serving engine's embeddings endpoint, so both embed the same prompt text.
 */
import { tf } from '../backend/index.js';
import { checkTemplate, PROMPTEOL_TEMPLATE, promptFor, type PromptTemplateOptions } from '../llm/prompt-template.js';
import type { TextModel, TextTokenizer } from '../models/types.js';
import { InputError } from '../util/errors.js';
import { Progress } from '../util/progress.js';
import type { EncodeOptions, Embeddings, SentenceEncoder } from './types.js';

export { ANGLE_LLAMA_TEMPLATE, PROMPTEOL_TEMPLATE, inContextTemplate, prepareTextPromptEol, promptFor, type Demonstration } from '../llm/prompt-template.js';

export interface PromptEncoderOptions extends PromptTemplateOptions {
  /** Truncate each tokenised prompt to this many tokens (the reference's max_length). */
  maxLength?: number;
  /** Prompts per forward pass (default 16). */
  batchSize?: number;
  /** Print progress for lists at least this long (default 2000). */
  progressThreshold?: number;
}

/** Embeds texts as the last-token hidden state of their prompts. */
export class PromptSentenceEncoder implements SentenceEncoder {
  readonly batchSize: number;

  constructor(
    private readonly m: { model: TextModel; tokenizer: TextTokenizer },
    private readonly opts: PromptEncoderOptions = {},
  ) {
    checkTemplate(opts.template ?? PROMPTEOL_TEMPLATE);
    this.batchSize = opts.batchSize ?? 16;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${opts.batchSize}`);
    if (opts.maxLength !== undefined && !(Number.isInteger(opts.maxLength) && opts.maxLength > 0)) throw new RangeError(`maxLength must be a positive integer, got ${opts.maxLength}`);
  }

  get dim(): number {
    return this.m.model.hiddenSize;
  }

  async encode(texts: string[], eo: EncodeOptions = {}): Promise<Embeddings> {
    const { model, tokenizer } = this.m;
    const dim = this.dim;
    const encoded = texts.map((t, i) => {
      if (typeof t !== 'string') throw new TypeError(`text ${i} is ${typeof t}, expected a string`);
      const e = tokenizer.encode(promptFor(t, this.opts), null, this.opts.maxLength);
      if (e.ids.length > model.maxPositions) {
        throw new InputError(`the prompt of text ${i} has ${e.ids.length} tokens, more than the model's context ${model.maxPositions}; pass maxLength to truncate`);
      }
      return e;
    });
    const data = new Float32Array(texts.length * dim);
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[b].ids.length - encoded[a].ids.length || a - b);
    const progress = new Progress({ label: 'prompt embeddings', total: texts.length, unit: 'texts', enabled: eo.progress ?? texts.length >= (this.opts.progressThreshold ?? 2000) });
    for (let s = 0; s < order.length; s += this.batchSize) {
      const idx = order.slice(s, s + this.batchSize);
      const batch = tokenizer.pad(
        idx.map((i) => encoded[i]),
        { padSide: 'left' },
      );
      // The last real token of each row (the last column under left padding; found from the mask
      // so a tokenizer that pads right would be read correctly too).
      const rows = new Int32Array(batch.batch);
      for (let b = 0; b < batch.batch; b++) {
        let last = -1;
        for (let t = 0; t < batch.seqLen; t++) if (batch.attentionMask[b * batch.seqLen + t] !== 0) last = t;
        if (last < 0) throw new InputError(`text ${idx[b]} gave an empty prompt`);
        rows[b] = b * batch.seqLen + last;
      }
      const pooled = tf.tidy(() => {
        const o = model.forward(batch, { training: false });
        return tf.gather(tf.reshape(o.lastHiddenState, [batch.batch * batch.seqLen, dim]), rows);
      });
      const values = (await pooled.data()) as Float32Array;
      pooled.dispose();
      idx.forEach((orig, r) => data.set(values.subarray(r * dim, (r + 1) * dim), orig * dim));
      progress.tick(idx.length);
      await new Promise((r) => setImmediate(r));
    }
    return { data, rows: texts.length, dim };
  }
}
