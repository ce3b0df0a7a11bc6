/**
 * Sentence embeddings as a sentence-transformers folder computes them: a SentenceEmbeddingSpec
 * (lib/models/sentence-transformers/spec.ts, `LoadedModel.sentenceEmbedding`) applied to the
 * transformer's token states, with sentence-transformers' own semantics (its models/Pooling.py,
 * Dense.py, Normalize.py, WeightedLayerPooling.py, Transformer.tokenize, SentenceTransformer.encode):
 *
 * - text: the default prompt (if any) is put in front, then `str.strip()`, then lower-casing when
 *   do_lower_case; truncated to max_seq_length tokens, special tokens included;
 * - WeightedLayerPooling: token states = Σ_l w_l·hidden_states[layer_start + l] / Σ_l w_l;
 * - Pooling, M the attention mask (with the prompt's tokens zeroed when include_prompt is false),
 *   each enabled mode in this order, concatenated:
 *     cls           h[:, 0]
 *     max           max_t of h, padded positions set to −1e9 first
 *     mean          Σ_t M h / max(Σ_t M, 1e-9)
 *     mean_sqrt_len Σ_t M h / √max(Σ_t M, 1e-9)
 *     weightedmean  Σ_t (t+1) M h / max(Σ_t (t+1) M, 1e-9)   (t counts from 0 over the padded row)
 *     lasttoken     (M h) at the last position whose mask is 1 (position 0 for an all-zero row)
 * - Dense: activation(x Wᵀ + b), activation tanh or identity;
 * - Normalize: x / max(‖x‖₂, 1e-12).
 *
 * Unlike AnglE's `max` (lib/embed/pooling.ts), sentence-transformers' max ignores padding, so every
 * step above is independent of which texts share a batch (for right-padded encoders).
 */
import { tf } from '../backend/index.js';
import { pyStrip } from '../data/text.js';
import type { LoadedModel } from '../models/types.js';
import {
  needsAllHiddenStates,
  sentenceEmbeddingDim,
  type DenseStep,
  type LayerMixStep,
  type PoolingStep,
  type SentenceEmbeddingSpec,
  type SentenceEmbeddingStep,
} from '../models/sentence-transformers/spec.js';
import { InputError } from '../util/errors.js';
import { embedInBatches } from './batches.js';
import { ownInferenceEngine } from './engines/onnx-inference-model.js';
import type { EncodeOptions, Embeddings, SentenceEncoder } from './types.js';

export interface SentenceEmbeddingInput {
  lastHiddenState: tf.Tensor3D;
  /** HF hidden_states [embeddings, layer 1, ..., layer N]; needed by a WeightedLayerPooling step. */
  hiddenStates?: tf.Tensor3D[];
  /** [batch, seq], 1 for real tokens. */
  attentionMask: tf.Tensor2D;
  /** Tokens of the default prompt at the start of every row (left out of Pooling when include_prompt is false). */
  promptLength?: number;
}

function mixLayers(s: LayerMixStep, hs: tf.Tensor3D[] | undefined): tf.Tensor3D {
  if (!hs || hs.length - s.layerStart !== s.weights.length) {
    throw new InputError(
      `WeightedLayerPooling has ${s.weights.length} layer weights from layer ${s.layerStart}, but the model gave ${hs?.length ?? 0} hidden states`,
    );
  }
  let acc = tf.mul(hs[s.layerStart], s.weights[0]) as tf.Tensor3D;
  for (let l = 1; l < s.weights.length; l++) acc = tf.add(acc, tf.mul(hs[s.layerStart + l], s.weights[l])) as tf.Tensor3D;
  const total = s.weights.reduce((a, b) => a + b, 0);
  return tf.div(acc, total) as tf.Tensor3D;
}

function poolTokens(s: PoolingStep, h: tf.Tensor3D, mask: tf.Tensor2D): tf.Tensor2D {
  const [B, T, D] = h.shape;
  const m3 = tf.expandDims(mask, 2) as tf.Tensor3D; // [B, T, 1], float
  const masked = tf.mul(h, m3) as tf.Tensor3D;
  const parts: tf.Tensor2D[] = [];
  for (const mode of s.modes) {
    switch (mode) {
      case 'cls':
        parts.push(tf.reshape(tf.slice(h, [0, 0, 0], [B, 1, D]), [B, D]));
        break;
      case 'max':
        // h where M = 1, −1e9 where M = 0 (M·h + (M − 1)·1e9).
        parts.push(tf.max(tf.add(masked, tf.mul(tf.sub(m3, 1), 1e9)), 1) as tf.Tensor2D);
        break;
      case 'mean':
        parts.push(tf.div(tf.sum(masked, 1), tf.maximum(tf.sum(m3, 1), 1e-9)) as tf.Tensor2D);
        break;
      case 'mean_sqrt_len_tokens':
        parts.push(tf.div(tf.sum(masked, 1), tf.sqrt(tf.maximum(tf.sum(m3, 1), 1e-9))) as tf.Tensor2D);
        break;
      case 'weightedmean': {
        const w = tf.mul(m3, tf.reshape(tf.range(1, T + 1, 1, 'float32'), [1, T, 1]));
        parts.push(tf.div(tf.sum(tf.mul(h, w), 1), tf.maximum(tf.sum(w, 1), 1e-9)) as tf.Tensor2D);
        break;
      }
      case 'lasttoken': {
        // The last position whose mask is 1 = max_t t·M_t (0 for an all-zero row, whose M·h is 0 anyway).
        const last = tf.cast(tf.max(tf.mul(mask, tf.reshape(tf.range(0, T, 1, 'float32'), [1, T])), 1), 'int32');
        const flat = tf.add(tf.mul(tf.range(0, B, 1, 'int32'), tf.scalar(T, 'int32')), last);
        parts.push(tf.gather(tf.reshape(masked, [B * T, D]), flat) as tf.Tensor2D);
        break;
      }
    }
  }
  return (parts.length === 1 ? parts[0] : tf.concat(parts, 1)) as tf.Tensor2D;
}

function dense(s: DenseStep, x: tf.Tensor2D): tf.Tensor2D {
  if (x.shape[1] !== s.inFeatures) throw new InputError(`Dense expects ${s.inFeatures} inputs, got embeddings of ${x.shape[1]}`);
  const w = tf.tensor2d(s.weight, [s.outFeatures, s.inFeatures]);
  let y = tf.matMul(x, w, false, true) as tf.Tensor2D;
  if (s.bias) y = tf.add(y, tf.tensor1d(s.bias)) as tf.Tensor2D;
  return s.activation === 'tanh' ? (tf.tanh(y) as tf.Tensor2D) : y;
}

/** Applies the steps to one batch's model output (differentiable; the caller owns the result). */
export function applySentenceEmbeddingSteps(steps: readonly SentenceEmbeddingStep[], input: SentenceEmbeddingInput): tf.Tensor2D {
  return tf.tidy(() => {
    let tokens = input.lastHiddenState;
    let x: tf.Tensor2D | undefined;
    for (const s of steps) {
      switch (s.module) {
        case 'WeightedLayerPooling':
          tokens = mixLayers(s, input.hiddenStates);
          break;
        case 'Pooling': {
          let mask = tf.cast(input.attentionMask, 'float32') as tf.Tensor2D;
          const p = input.promptLength ?? 0;
          if (!s.includePrompt && p > 0) {
            const T = mask.shape[1];
            mask = tf.mul(mask, tf.reshape(tf.cast(tf.greaterEqual(tf.range(0, T, 1, 'int32'), p), 'float32'), [1, T])) as tf.Tensor2D;
          }
          x = poolTokens(s, tokens, mask);
          break;
        }
        case 'Dense':
          x = dense(s, x!);
          break;
        case 'Normalize':
          x = tf.div(x!, tf.maximum(tf.sqrt(tf.sum(tf.square(x!), 1, true)), 1e-12)) as tf.Tensor2D;
          break;
      }
    }
    if (!x) throw new InputError('sentence embedding steps have no Pooling step');
    return x;
  });
}

export interface SentenceTransformerEncoderOptions {
  /** The pipeline; default the model's own `sentenceEmbedding`. */
  spec?: SentenceEmbeddingSpec;
  /** Truncation length in tokens (default the spec's max_seq_length, at most the model's positions). */
  maxLength?: number;
  /** Texts per forward pass (default 64). */
  batchSize?: number;
  /** Print progress for lists at least this long (default 2000). */
  progressThreshold?: number;
}

/** A SentenceEncoder computing what a sentence-transformers folder computes (see the file comment). */
export class SentenceTransformerEncoder implements SentenceEncoder {
  readonly spec: SentenceEmbeddingSpec;
  readonly maxLength: number;
  readonly batchSize: number;
  readonly dim: number;
  /** Tokens the default prompt occupies at the start of a row (sentence-transformers' prompt_length). */
  readonly promptLength: number;

  constructor(
    private readonly m: Pick<LoadedModel, 'model' | 'tokenizer' | 'sentenceEmbedding'>,
    private readonly opts: SentenceTransformerEncoderOptions = {},
  ) {
    const spec = opts.spec ?? m.sentenceEmbedding;
    if (!spec) throw new InputError('the model has no sentence-transformers pipeline (not loaded from a folder with modules.json) and none was given');
    const pooling = spec.steps.find((s): s is PoolingStep => s.module === 'Pooling');
    if (!pooling) throw new InputError('sentence embedding spec has no Pooling step');
    if (pooling.dim !== m.model.hiddenSize) throw new InputError(`the Pooling step expects ${pooling.dim}-wide token states, the model's hidden size is ${m.model.hiddenSize}`);
    this.spec = spec;
    this.maxLength = opts.maxLength ?? Math.min(spec.maxSeqLength, m.model.maxPositions);
    this.batchSize = opts.batchSize ?? 64;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${opts.batchSize}`);
    this.dim = sentenceEmbeddingDim(spec, m.model.hiddenSize);
    this.promptLength = spec.prompt !== undefined ? this.promptTokens(spec.prompt) : 0;
  }

  /** Transformer.tokenize's preprocessing of one input (prompt already in front). */
  private prepare(text: string): string {
    const s = pyStrip(text);
    return this.spec.lowerCase ? s.toLowerCase() : s;
  }

  /**
   * SentenceTransformer._get_prompt_length: the prompt's token count with special tokens, less a
   * trailing special token (BERT's [SEP]); a trailing token is special when an empty text ends with it too.
   */
  private promptTokens(prompt: string): number {
    const ids = this.m.tokenizer.encode(this.prepare(prompt), null, this.maxLength).ids;
    const empty = this.m.tokenizer.encode('', null).ids;
    const trailingSpecial = empty.length > 0 && ids.length > empty.length && ids[ids.length - 1] === empty[empty.length - 1];
    return trailingSpecial ? ids.length - 1 : ids.length;
  }

  async encode(texts: string[], opts: EncodeOptions = {}): Promise<Embeddings> {
    const prompt = this.spec.prompt ?? '';
    const encoded = texts.map((t, i) => {
      if (typeof t !== 'string') throw new TypeError(`text ${i} is ${typeof t}, expected a string`);
      return this.m.tokenizer.encode(this.prepare(prompt + t), null, this.maxLength);
    });
    const [data] = await embedInBatches(
      this.m,
      encoded,
      {
        // a model loaded for ONNX Runtime only brings its engine; others run their tfjs forward
        engine: ownInferenceEngine(this.m.model),
        batchSize: this.batchSize,
        dims: [this.dim],
        hiddenStates: needsAllHiddenStates(this.spec),
        label: 'embedding (sentence-transformers pipeline)',
        progress: opts.progress ?? texts.length >= (this.opts.progressThreshold ?? 2000),
      },
      ({ output, mask }) => [
        applySentenceEmbeddingSteps(this.spec.steps, { lastHiddenState: output.lastHiddenState, hiddenStates: output.hiddenStates, attentionMask: mask, promptLength: this.promptLength }),
      ],
    );
    return { data, rows: texts.length, dim: this.dim };
  }
}
