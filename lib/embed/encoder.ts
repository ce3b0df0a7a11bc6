/**
 * The sentence encoder: texts -> tokenise -> BERT -> pooling -> one float32 row per text.
 *
 * Texts are tokenised once, sorted by length (longest first, so the first batch shows the worst
 * memory case and padding waste is minimal), embedded in batches without gradients, and put back
 * in input order. Results equal embedding each text alone: padding is masked everywhere.
 */
import { tf } from '../backend/index.js';
import type { BertModel } from '../models/bert.js';
import type { HfTokenizer } from '../models/tokenizer.js';
import { Progress } from '../util/progress.js';
import { needsHiddenStates, parsePooling, type Pooling } from './pooling.js';
import { pool } from './pooling.js';
import type { EncodeOptions, Embeddings, SentenceEncoder } from './types.js';

export interface BertEncoderOptions {
  /** Pooling strategy or its paper name (default `cls`). */
  pooling?: Pooling | string;
  /** Truncation length in tokens, special tokens included (default: the model's max positions). */
  maxLength?: number;
  /** Texts per forward pass (default 64). */
  batchSize?: number;
  /** Print progress for lists at least this long (default 2000). */
  progressThreshold?: number;
}

export interface ModelAndTokenizer {
  model: BertModel;
  tokenizer: HfTokenizer;
}

export class BertSentenceEncoder implements SentenceEncoder {
  readonly pooling: Pooling;
  readonly maxLength: number;
  readonly batchSize: number;

  constructor(
    private readonly m: ModelAndTokenizer,
    private readonly opts: BertEncoderOptions = {},
  ) {
    this.pooling = parsePooling(opts.pooling ?? 'cls');
    this.maxLength = opts.maxLength ?? m.model.config.maxPositions;
    this.batchSize = opts.batchSize ?? 64;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${opts.batchSize}`);
  }

  get dim(): number {
    return this.m.model.config.hiddenSize;
  }

  async encode(texts: string[], opts: EncodeOptions = {}): Promise<Embeddings> {
    const dim = this.dim;
    const out = new Float32Array(texts.length * dim);
    const encoded = texts.map((t, i) => {
      if (typeof t !== 'string') throw new TypeError(`text ${i} is ${typeof t}, expected a string`);
      return this.m.tokenizer.encode(t, null, this.maxLength);
    });
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[b].ids.length - encoded[a].ids.length || a - b);
    const show = opts.progress ?? texts.length >= (this.opts.progressThreshold ?? 2000);
    const progress = new Progress({ label: `embedding (${this.pooling})`, total: texts.length, unit: 'texts', enabled: show });
    const hidden = needsHiddenStates(this.pooling);
    for (let s = 0; s < order.length; s += this.batchSize) {
      const idx = order.slice(s, s + this.batchSize);
      const batch = this.m.tokenizer.pad(idx.map((i) => encoded[i]));
      const pooled = tf.tidy(() => {
        const o = this.m.model.forward(batch, { training: false, outputHiddenStates: hidden });
        const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
        return pool(this.pooling, { lastHiddenState: o.lastHiddenState, hiddenStates: o.hiddenStates, attentionMask: mask });
      });
      const values = (await pooled.data()) as Float32Array;
      pooled.dispose();
      idx.forEach((orig, r) => out.set(values.subarray(r * dim, (r + 1) * dim), orig * dim));
      progress.tick(idx.length);
      // Let the event loop breathe between batches (progress output, notebook interrupts).
      await new Promise((r) => setImmediate(r));
    }
    return { data: out, rows: texts.length, dim };
  }
}
