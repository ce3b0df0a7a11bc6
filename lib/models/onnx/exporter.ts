/**
 * What an ONNX exporter of one architecture is (each architecture's row in ../auto.ts names its
 * own, so that table stays the one place that knows the architectures): an exporter turns a loaded TextModel and
 * its current weights into an ONNX graph with the inputs every encoder graph of this project has
 * (`input_ids`, `attention_mask`, `token_type_ids`: int64 [batch, sequence], both dimensions
 * dynamic) and the outputs it names (`last_hidden_state` [batch, sequence, hidden], and with
 * `hiddenStates` HF's hidden_states list and the pooler output where the model has one).
 */
import type { TextModel } from '../types.js';
import type { ModelMessage } from './proto.js';

export interface OnnxExportOptions {
  /** Also output HF's hidden_states (embeddings, then every layer) and the pooler output. */
  hiddenStates: boolean;
  /**
   * ONNX Runtime's fused operators (com.microsoft Attention, SkipLayerNormalization, …) where the
   * exporter has them, instead of standard ONNX operators only (which any ONNX runtime runs).
   */
  fused?: boolean;
  /**
   * int8 dynamic quantisation of the dense layers (weights per output column, symmetric; the
   * activations quantised per batch by ONNX Runtime): faster, less exact; for exploratory runs,
   * never for a number set beside a paper's. Fused graphs only.
   */
  quantize?: 'int8';
}

export interface ExportedOnnxGraph {
  model: ModelMessage;
  /** Output name of the last layer's states. */
  lastHiddenState: string;
  /** Output names of hidden_states[0..numLayers] (the last is lastHiddenState); empty unless asked for. */
  hiddenStates: string[];
  /** Output name of the pooler output, when asked for hidden states and the model has a pooler. */
  poolerOutput?: string;
}

export interface OnnxExporter {
  /** The TextModel architecture (config.json model_type) it exports. */
  readonly architecture: string;
  /**
   * Bumped whenever the graph it writes for the same weights changes: part of the cache key, so a
   * graph written by an older exporter is never reused.
   */
  readonly version: number;
  /** Why this model cannot be exported (e.g. parameters the graph has no place for), or undefined. */
  unsupported(model: TextModel): string | undefined;
  /** Everything besides the weights that decides the graph (the config), as a stable string. */
  signature(model: TextModel): string;
  export(model: TextModel, opts: OnnxExportOptions): ExportedOnnxGraph;
}

/** Graph input names shared by every exported encoder graph. */
export const ONNX_INPUTS = { inputIds: 'input_ids', attentionMask: 'attention_mask', tokenTypeIds: 'token_type_ids' } as const;
