/**
 * Sentence encoders over any text model (lib/models/types.ts TextModel): texts -> tokenise ->
 * model -> pooling -> one float32 row per text.
 *
 * Texts are tokenised once, sorted by length and embedded in batches without gradients
 * (./batches.ts), and put back in input order. Several pooling strategies can come out of one
 * forward pass (`MultiPoolingEmbedder`), which is how the evaluation compares `cls` and `avg` at
 * the price of one. A model loaded from a sentence-transformers folder carries its own pipeline
 * (`sentenceEmbedding`: pooling, dense layers, normalisation, max length), which
 * `PooledSentenceEncoder` applies when no pooling is given (./sentence-transformer-encoder.ts).
 *
 * The forward passes run on an inference engine (./engines/): ONNX Runtime on CPU hosts where it
 * is installed and knows the architecture, the model's tfjs forward otherwise; the `engine` option
 * or ANGLE_INFERENCE overrides (`onnx`, `tfjs`). Pooling is the same tfjs code for both.
 */
import { tf } from '../backend/index.js';
import type { LoadedModel } from '../models/types.js';
import { InputError } from '../util/errors.js';
import { embedInBatches } from './batches.js';
import { chooseInferenceEngine, type ChooseEngineOptions, type InferenceEngineChoice } from './engines/choose.js';
import type { InferenceEngine } from './engines/types.js';
import { needsHiddenStates, needsPoolerOutput, parsePooling, pool, readsFirstTokenOnly, readsPaddingPositions, type Pooling } from './pooling.js';
import { poolingModuleOf } from './pooling-module.js';
import { SentenceTransformerEncoder } from './sentence-transformer-encoder.js';
import { checkTruncation, truncateColumns, type EmbeddingTruncation } from './truncation.js';
import type { EncodeOptions, Embeddings, SentenceEncoder } from './types.js';

/** The part of a loaded model an encoder needs (sentenceEmbedding: a sentence-transformers folder's pipeline). */
export type EncoderModel = Pick<LoadedModel, 'model' | 'tokenizer' | 'sentenceEmbedding'>;

export interface EncoderOptions {
  /** Pooling strategy or its paper name (default: the model's pooling module, ./pooling-module.ts). */
  pooling?: Pooling | string;
  /** Truncation length in tokens, special tokens included (default: the model's max positions). */
  maxLength?: number;
  /** Texts per forward pass (default 64). */
  batchSize?: number;
  /** Print progress for lists at least this long (default 2000). */
  progressThreshold?: number;
  /** Inference engine: `auto`, `onnx`, `tfjs` (default ANGLE_INFERENCE, else auto), or an engine object. */
  engine?: InferenceEngineChoice | string | InferenceEngine;
  /** Settings of the engines: ONNX Runtime's graph cache and threads, tfjs's padded-token bound, the notice log. */
  engineOptions?: Omit<ChooseEngineOptions, 'engine'>;
  /** Embeddings of the first `layer` layers and/or the first `dim` components (./truncation.ts; Espresso models). */
  truncate?: EmbeddingTruncation;
}

/** Embeds texts with one or more pooling strategies from a single forward pass per batch. */
export class MultiPoolingEmbedder {
  readonly maxLength: number;
  readonly batchSize: number;
  /** The layer whose states are pooled and the width kept (the whole model and width unless truncated). */
  readonly truncation: Required<EmbeddingTruncation>;
  private engine?: Promise<InferenceEngine>;

  constructor(
    private readonly m: EncoderModel,
    private readonly opts: Omit<EncoderOptions, 'pooling'> = {},
  ) {
    this.maxLength = opts.maxLength ?? m.model.maxPositions;
    this.batchSize = opts.batchSize ?? 64;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${opts.batchSize}`);
    this.truncation = checkTruncation(opts.truncate, m.model.numLayers, m.model.hiddenSize);
  }

  get dim(): number {
    return this.truncation.dim;
  }

  /** Whether the pooled layer is below the last. */
  private get layerTruncated(): boolean {
    return this.truncation.layer < this.m.model.numLayers;
  }

  /** The engine this embedder runs its forward passes on (chosen on first use). */
  inferenceEngine(): Promise<InferenceEngine> {
    const e = this.opts.engine;
    this.engine ??= typeof e === 'object' ? Promise.resolve(e) : chooseInferenceEngine(this.m.model, { ...this.opts.engineOptions, engine: e });
    return this.engine;
  }

  async embed(texts: string[], poolings: readonly Pooling[], opts: EncodeOptions = {}): Promise<Map<Pooling, Embeddings>> {
    const dim = this.dim;
    const width = this.m.model.hiddenSize;
    const layered = this.layerTruncated;
    if (layered) {
      const bad = poolings.find((p) => needsHiddenStates(p) || needsPoolerOutput(p));
      if (bad) throw new InputError(`pooling '${bad}' reads more than one layer's token states; a truncated layer takes cls, avg, cls_avg, max or last`);
    }
    const encoded = texts.map((t, i) => {
      if (typeof t !== 'string') throw new TypeError(`text ${i} is ${typeof t}, expected a string`);
      return this.m.tokenizer.encode(t, null, this.maxLength);
    });
    const rows = await embedInBatches(
      this.m,
      encoded,
      {
        engine: await this.inferenceEngine(),
        batchSize: this.batchSize,
        dims: poolings.map(() => dim),
        // The engines return the pooler output alongside the hidden states (the ONNX graph has it
        // only in that variant), so `cls_pooler` asks for them too. A truncated layer is a cut:
        // the engine stops there (the ONNX graph ends at that layer) and returns it as the last.
        hiddenStates: poolings.some((p) => needsHiddenStates(p) || needsPoolerOutput(p)),
        ...(layered ? { layers: this.truncation.layer } : {}),
        firstTokenOnly: poolings.every((p) => readsFirstTokenOnly(p, this.m.tokenizer.padSide)),
        padPositions: poolings.some(readsPaddingPositions),
        label: `embedding (${poolings.join(', ')})`,
        progress: opts.progress ?? texts.length >= (this.opts.progressThreshold ?? 2000),
      },
      ({ output, mask }) =>
        poolings.map((p) => {
          const v = pool(p, { lastHiddenState: output.lastHiddenState, hiddenStates: output.hiddenStates, poolerOutput: output.poolerOutput, attentionMask: mask, padSide: this.m.tokenizer.padSide });
          // Width truncation keeps the first `dim` components (angle_emb's outputs[:, :k]).
          return dim === width ? v : tf.tidy(() => tf.slice(v, [0, 0], [v.shape[0], dim]) as tf.Tensor2D);
        }),
    );
    return new Map(poolings.map((p, k) => [p, { data: rows[k], rows: texts.length, dim }]));
  }
}

/**
 * A SentenceEncoder with one pooling strategy. Without a `pooling` option, a model loaded from a
 * sentence-transformers folder is encoded as that folder says (its `sentenceEmbedding`: pooling,
 * dense layers, normalisation, its max length unless `maxLength` is given); any other model with its
 * architecture's default (the model's pooling module, ./pooling-module.ts: BERT cls, decoders last).
 */
export class PooledSentenceEncoder implements SentenceEncoder {
  /** Our pooling strategy, or 'sentence-transformers' when the model folder's own pipeline is used. */
  readonly pooling: Pooling | 'sentence-transformers';
  private readonly embedder?: MultiPoolingEmbedder;
  private readonly folderPipeline?: SentenceTransformerEncoder;

  /** A sentence-transformers folder's pipeline: the width it keeps (its truncate_dim). */
  private readonly folderDim?: number;

  constructor(m: EncoderModel, opts: EncoderOptions = {}) {
    const module = opts.pooling === undefined ? poolingModuleOf(m) : undefined;
    if (module?.applies === 'sentence-transformers') {
      this.pooling = 'sentence-transformers';
      this.folderPipeline = new SentenceTransformerEncoder(m, opts);
      if (opts.truncate?.layer !== undefined && opts.truncate.layer !== m.model.numLayers) {
        throw new InputError("truncate layer: a sentence-transformers folder's pipeline pools the last layer; give a pooling, or export the truncated model (exportSentenceTransformer's truncate.layer)");
      }
      // As sentence-transformers' truncate_dim: the first k components of the pipeline's output.
      this.folderDim = checkTruncation({ dim: opts.truncate?.dim }, m.model.numLayers, this.folderPipeline.dim).dim;
    } else {
      this.pooling = parsePooling(opts.pooling ?? module!.applies);
      this.embedder = new MultiPoolingEmbedder(m, opts);
    }
  }

  get maxLength(): number {
    return this.folderPipeline?.maxLength ?? this.embedder!.maxLength;
  }

  get dim(): number {
    return this.folderDim ?? this.embedder!.dim;
  }

  async encode(texts: string[], opts: EncodeOptions = {}): Promise<Embeddings> {
    if (this.folderPipeline) {
      const e = await this.folderPipeline.encode(texts, opts);
      return { data: truncateColumns(e.data, e.rows, e.dim, this.folderDim!), rows: e.rows, dim: this.folderDim! };
    }
    const p = this.pooling as Pooling;
    return (await this.embedder!.embed(texts, [p], opts)).get(p)!;
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
