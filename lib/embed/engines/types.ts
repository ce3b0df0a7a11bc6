/**
 * An inference engine: what maps a token batch to hidden states for the sentence encoders
 * (../encoder.ts), without gradients. Two exist: ONNX Runtime over a graph exported from the
 * model (./onnx-engine.ts, the fast path on CPU hosts) and the model's own tfjs forward
 * (./tfjs-engine.ts, every backend and architecture; the parity reference). ./choose.ts picks one.
 * Another architecture or runtime (a decoder's own graph) adds an implementation of this.
 */
import type { tf } from '../../backend/index.js';
import type { TokenBatch } from '../../models/types.js';

export const INFERENCE_ENGINES = ['onnx', 'tfjs'] as const;
export type InferenceEngineName = (typeof INFERENCE_ENGINES)[number];

export interface EngineRunOptions {
  /** Also return HF's hidden_states (embeddings, then every layer); poolings like first_last_avg need them. */
  hiddenStates: boolean;
  /**
   * The caller reads only slot 0 of lastHiddenState ([CLS] pooling): an engine may compute the last
   * layer for each sequence's first token only and return lastHiddenState as [batch, 1, hidden].
   */
  firstTokenOnly?: boolean;
  /**
   * The caller reads the states at padding slots (cls_avg_legacy averages the whole padded batch,
   * as AnglE's legacy code did): an engine that skips padding must compute them this time.
   */
  padPositions?: boolean;
  /**
   * Stop after this many transformer layers (0 = the embedding output; a truncated encoder,
   * ../truncation.ts): lastHiddenState is then hidden_states[layers] and hiddenStates, when asked
   * for, holds hidden_states[0..layers]; no pooler output. An engine computes no layer above the
   * cut where it can (the ONNX engines export a graph that ends there). Default: every layer.
   */
  layers?: number;
}

/** What an engine returns for a batch: tfjs tensors the caller owns (and disposes). */
export interface EngineOutput {
  /** [batch, seq, hidden]; [batch, 1, hidden] (slot 0) where the caller asked for firstTokenOnly and the engine saved the rest. */
  lastHiddenState: tf.Tensor3D;
  /** [embeddings, layer 1, ..., layer N] (the last is lastHiddenState); empty unless asked for. */
  hiddenStates: tf.Tensor3D[];
  /** BERT's pooler output, where the model has one and the engine computes it with hidden states. */
  poolerOutput?: tf.Tensor2D;
}

/** `opts` without a `layers` that keeps every one of `numLayers` layers (the full graph, not a cut one of the same depth). */
export function cutBelowTop(opts: EngineRunOptions, numLayers: number): EngineRunOptions {
  if (opts.layers === undefined || opts.layers < numLayers) return opts;
  const { layers: _all, ...rest } = opts;
  return rest;
}

export interface InferenceEngine {
  readonly name: InferenceEngineName;
  /** One line saying what computes, e.g. `ONNX Runtime 1.30.0, CPU, 2 threads`. */
  readonly description: string;
  run(batch: TokenBatch, opts: EngineRunOptions): Promise<EngineOutput>;
  /** Frees what the engine holds (never the model's own parameters). */
  dispose(): Promise<void>;
}
