/**
 * What every text model and tokenizer of the library is, whatever its architecture: the interface
 * the encoder, pooling, the trainer and the evaluators depend on. BERT (./bert/) implements it; a
 * decoder (./llama/) implements it too; `loadModel` (./auto.ts) picks the implementation from the
 * checkpoint's `config.json` `model_type`.
 */
import type { tf } from '../backend/index.js';
import type { SentenceEmbeddingSpec } from './sentence-transformers/spec.js';

/** Token ids of one text (or text pair), special tokens included. */
export interface EncodedText {
  ids: number[];
  /** Segment ids (BERT's token type ids); all 0 for models without segments. */
  typeIds: number[];
}

/** A padded batch, row-major [batch, seqLen]. */
export interface TokenBatch {
  inputIds: Int32Array;
  attentionMask: Int32Array;
  tokenTypeIds: Int32Array;
  batch: number;
  seqLen: number;
}

export interface BatchOptions {
  /** Truncate each row to at most this many tokens, special tokens included. */
  maxLength?: number;
  /** `longest` (default): pad to the longest row; `max_length`: pad every row to maxLength. */
  padding?: 'longest' | 'max_length';
  /** Default: the tokenizer's own side (right for encoders, left for decoders). */
  padSide?: 'right' | 'left';
}

/** Turns texts into token ids and batches of them. */
export interface TextTokenizer {
  /** The id padding positions get. */
  readonly padId: number;
  /** Where padding goes unless a call says otherwise: right for encoders, left for decoders. */
  readonly padSide: 'right' | 'left';
  /** Encodes a text or a text pair with special tokens, truncated to maxLength tokens in total. */
  encode(text: string, pair?: string | null, maxLength?: number): EncodedText;
  /** Encodes texts (or [text, pair] tuples) into one padded batch. */
  encodeBatch(inputs: Array<string | [string, string]>, opts?: BatchOptions): TokenBatch;
  /** Pads already-encoded rows into a batch. */
  pad(rows: EncodedText[], opts?: BatchOptions): TokenBatch;
  /** Text of token ids (special tokens dropped), where the tokenizer can decode. */
  decode?(ids: readonly number[]): string;
}

export interface ForwardOptions {
  /** Dropout on (training) or off (inference, the default). */
  training?: boolean;
  /** Also return every layer's output (pooling strategies such as first_last_avg need them). */
  outputHiddenStates?: boolean;
  /**
   * Training memory: recompute each layer in the backward pass instead of keeping its
   * activations (lib/ops/checkpoint.ts). The same gradients; one more forward pass of compute.
   */
  checkpointing?: boolean;
  /**
   * 'blocked': attention over key blocks with an online softmax, recomputed in backward, so no
   * [T, S] scores are kept (lib/ops/blocked-attention.ts); 'fused': one kernel where the backend has
   * it (cuda; lib/ops/fused-attention.ts), plain attention elsewhere; 'plain' (default): scores
   * materialised. Models that do not implement a kind compute plain attention.
   */
  attention?: AttentionKind;
}

/**
 * How attention is computed: 'plain' (default: scores materialised), 'blocked' (lib/ops/blocked-attention.ts)
 * or 'fused' (lib/ops/fused-attention.ts: one kernel forward and one backward on cuda, flash-style,
 * no [T, S] tensor kept; plain attention with the same dropout rule elsewhere).
 */
export const ATTENTION_KINDS = ['plain', 'blocked', 'fused'] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

export interface ModelOutput {
  /** [batch, seq, hidden]: the last layer's output (after the final norm, for decoders). */
  lastHiddenState: tf.Tensor3D;
  /** HF's hidden_states: [embeddings, layer 1, ..., layer N]; empty unless requested. */
  hiddenStates: tf.Tensor3D[];
  /** BERT's pooler output tanh(dense(h[:, 0])), for models that have one. */
  poolerOutput?: tf.Tensor2D;
}

/**
 * A transformer that maps a token batch to hidden states, with its parameters as tfjs variables
 * under their checkpoint (HF) names, so one object serves inference, training and saving.
 */
export interface TextModel {
  /** The `model_type` of config.json this implements, e.g. 'bert' or 'llama'. */
  readonly architecture: string;
  readonly hiddenSize: number;
  readonly numLayers: number;
  /** Longest sequence the model accepts (position embeddings or the context length). */
  readonly maxPositions: number;
  /** Every parameter (adapters included) under its canonical name. */
  readonly params: ReadonlyMap<string, tf.Variable>;
  /** The parameters training updates and checkpoints save: all of them unless some were frozen. */
  trainableParameters(): Map<string, tf.Variable>;
  /** Freezes every parameter for which `select(name)` is false (and unfreezes the others). */
  setTrainable(select: (name: string) => boolean): void;
  /**
   * Dropout masks are a function of (dropoutSeed, dropoutCounter): a training checkpoint saves the
   * counter, so a resumed run draws the same masks as an uninterrupted one.
   */
  dropoutSeed: number;
  dropoutCounter: number;
  /** Overrides the config's dropout probabilities (a training run's setting). */
  setDropout(p: number): void;
  /** Runs the model on a tokenised batch; the returned tensors belong to the caller. */
  forward(batch: TokenBatch, opts?: ForwardOptions): ModelOutput;
  numParameters(): number;
  /** Frees every parameter; the model is unusable afterwards. */
  dispose(): void;
}

/** Where a loaded model came from: what results files record about it. */
export interface ModelSource {
  /** What the caller asked for: a Hub id or a path. */
  id: string;
  /** The local directory the files were read from. */
  dir: string;
  source: 'local' | 'hub';
  /** Hub commit, when loaded from the Hub. */
  commit?: string;
  /** sha256 of the weight files, in order: the weights' identity in results. */
  weightsSha256: string;
  weightFiles: string[];
}

/** A model, its tokenizer and where they came from: what `loadModel` returns. */
export interface LoadedModel<M extends TextModel = TextModel> extends ModelSource {
  model: M;
  tokenizer: TextTokenizer;
  /**
   * For a sentence-transformers folder: what its modules do after the transformer (pooling,
   * dense layers, normalisation, truncation length), which the sentence encoder applies unless
   * told another pooling (lib/embed/sentence-transformer-encoder.ts). `dir` is then the
   * Transformer module's own directory and `weightFiles` ends with the modules' weight files.
   */
  sentenceEmbedding?: SentenceEmbeddingSpec;
}
