/**
 * Sentence encoders over any text model (lib/models/types.ts TextModel): texts -> tokenise ->
 * model -> pooling -> one float32 row per text.
 *
 * Texts are tokenised once, sorted by length (longest first, so the first batch shows the worst
 * memory case and padding waste is minimal), embedded in batches without gradients, and put back
 * in input order. Several pooling strategies can come out of one forward pass
 * (`MultiPoolingEmbedder`), which is how the evaluation compares `cls` and `avg` at the price of one.
 */
import { tf } from '../backend/index.js';
import type { LoadedModel } from '../models/types.js';
import { Progress } from '../util/progress.js';
import { needsHiddenStates, parsePooling, pool, type Pooling } from './pooling.js';
import type { EncodeOptions, Embeddings, SentenceEncoder } from './types.js';

/** The part of a loaded model an encoder needs. */
export type EncoderModel = Pick<LoadedModel, 'model' | 'tokenizer'>;

export interface EncoderOptions {
  /** Pooling strategy or its paper name (default `cls`). */
  pooling?: Pooling | string;
  /** Truncation length in tokens, special tokens included (default: the model's max positions). */
  maxLength?: number;
  /** Texts per forward pass (default 64). */
  batchSize?: number;
  /** Print progress for lists at least this long (default 2000). */
  progressThreshold?: number;
}

/** Embeds texts with one or more pooling strategies from a single forward pass per batch. */
export class MultiPoolingEmbedder {
  readonly maxLength: number;
  readonly batchSize: number;

  constructor(
    private readonly m: EncoderModel,
    private readonly opts: Omit<EncoderOptions, 'pooling'> = {},
  ) {
    this.maxLength = opts.maxLength ?? m.model.maxPositions;
    this.batchSize = opts.batchSize ?? 64;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${opts.batchSize}`);
  }

  get dim(): number {
    return this.m.model.hiddenSize;
  }

  async embed(texts: string[], poolings: readonly Pooling[], opts: EncodeOptions = {}): Promise<Map<Pooling, Embeddings>> {
    const dim = this.dim;
    const out = new Map<Pooling, Embeddings>(poolings.map((p) => [p, { data: new Float32Array(texts.length * dim), rows: texts.length, dim }]));
    const encoded = texts.map((t, i) => {
      if (typeof t !== 'string') throw new TypeError(`text ${i} is ${typeof t}, expected a string`);
      return this.m.tokenizer.encode(t, null, this.maxLength);
    });
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[b].ids.length - encoded[a].ids.length || a - b);
    const show = opts.progress ?? texts.length >= (this.opts.progressThreshold ?? 2000);
    const progress = new Progress({ label: `embedding (${poolings.join(', ')})`, total: texts.length, unit: 'texts', enabled: show });
    const hidden = poolings.some(needsHiddenStates);
    for (let s = 0; s < order.length; s += this.batchSize) {
      const idx = order.slice(s, s + this.batchSize);
      const batch = this.m.tokenizer.pad(idx.map((i) => encoded[i]));
      const pooled = tf.tidy(() => {
        const o = this.m.model.forward(batch, { training: false, outputHiddenStates: hidden });
        const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
        return poolings.map((p) => pool(p, { lastHiddenState: o.lastHiddenState, hiddenStates: o.hiddenStates, attentionMask: mask, padSide: this.m.tokenizer.padSide }));
      });
      for (let k = 0; k < poolings.length; k++) {
        const values = (await pooled[k].data()) as Float32Array;
        const dest = out.get(poolings[k])!.data;
        idx.forEach((orig, r) => dest.set(values.subarray(r * dim, (r + 1) * dim), orig * dim));
      }
      tf.dispose(pooled);
      progress.tick(idx.length);
      // Let the event loop breathe between batches (progress output, notebook interrupts).
      await new Promise((r) => setImmediate(r));
    }
    return out;
  }
}

/** A SentenceEncoder with one pooling strategy. */
export class PooledSentenceEncoder implements SentenceEncoder {
  readonly pooling: Pooling;
  private readonly embedder: MultiPoolingEmbedder;

  constructor(m: EncoderModel, opts: EncoderOptions = {}) {
    this.pooling = parsePooling(opts.pooling ?? 'cls');
    this.embedder = new MultiPoolingEmbedder(m, opts);
  }

  get maxLength(): number {
    return this.embedder.maxLength;
  }

  get dim(): number {
    return this.embedder.dim;
  }

  async encode(texts: string[], opts: EncodeOptions = {}): Promise<Embeddings> {
    return (await this.embedder.embed(texts, [this.pooling], opts)).get(this.pooling)!;
  }
}

/**
 * SentenceEncoders for several pooling strategies that share forward passes: the first encoder
 * to see a text embeds it with every strategy and remembers all of them, so asking the others for
 * the same text costs nothing. Memory grows with the distinct texts seen; `clear()` frees it.
 */
export function sharedPoolingEncoders(
  m: EncoderModel,
  poolings: ReadonlyArray<Pooling | string>,
  opts: Omit<EncoderOptions, 'pooling'> = {},
): { encoders: Map<Pooling, SentenceEncoder>; clear(): void } {
  const list = [...new Set(poolings.map(parsePooling))];
  const embedder = new MultiPoolingEmbedder(m, opts);
  const cache = new Map<string, Float32Array[]>(); // text -> one row per pooling, in `list` order
  const encoders = new Map<Pooling, SentenceEncoder>();
  list.forEach((p, k) => {
    encoders.set(p, {
      async encode(texts: string[], o: EncodeOptions = {}): Promise<Embeddings> {
        const missing = [...new Set(texts.filter((t) => !cache.has(t)))];
        if (missing.length > 0) {
          const e = await embedder.embed(missing, list, o);
          missing.forEach((t, i) => cache.set(t, list.map((q) => e.get(q)!.data.slice(i * embedder.dim, (i + 1) * embedder.dim))));
        }
        const dim = embedder.dim;
        const data = new Float32Array(texts.length * dim);
        texts.forEach((t, i) => data.set(cache.get(t)![k], i * dim));
        return { data, rows: texts.length, dim };
      },
    });
  });
  return { encoders, clear: () => cache.clear() };
}
