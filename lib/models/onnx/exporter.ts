/**
 * What an ONNX exporter of one architecture is (each architecture's row in ../auto.ts names its
 * own, so that table stays the one place that knows the architectures): an exporter turns a loaded TextModel and
 * its current weights into an ONNX graph with one of two input layouts (ExportedOnnxGraph.inputs):
 *
 * - `padded`, HF's: `input_ids`, `attention_mask`, `token_type_ids` as int64 [batch, sequence],
 *   both dimensions dynamic; states come out as [batch, sequence, hidden]. Any runtime, any client.
 * - `packed` (PACKED_INPUTS), ours for ONNX Runtime: the batch's real tokens only, row after row,
 *   so no dense layer computes padding: `input_ids`, `token_type_ids`, `position_ids` int64
 *   [tokens]; `pad_index` int64 [batch, sequence] (the packed row of each padded slot, 0 for
 *   padding), `unpad_index` int64 [tokens] (the padded slot b·sequence + t of each packed row),
 *   `attention_mask` int32 [batch, sequence], and `first_index` int64 [batch] (the packed row of
 *   each sequence's slot 0) where the graph reads it. States come out as [tokens, hidden], or
 *   [batch, hidden] for `rows: 'first'`. lib/embed/engines/graph-feeds.ts builds these feeds.
 *
 * and the outputs it names (`last_hidden_state`, and with `hiddenStates` HF's hidden_states list
 * and the pooler output where the model has one).
 */
import type { TextModel } from '../types.js';
import type { ModelMessage } from './proto.js';

export interface OnnxExportOptions {
  /** Also output HF's hidden_states (embeddings, then every layer) and the pooler output. */
  hiddenStates: boolean;
  /**
   * The graph for ONNX Runtime: packed inputs and its com.microsoft operators (MultiHeadAttention,
   * Gelu) where the exporter has them, instead of the padded graph of standard ONNX operators only
   * (which any ONNX runtime runs).
   */
  fused?: boolean;
  /**
   * int8 dynamic quantisation of the dense layers (weights per output column, symmetric; the
   * activations quantised per batch by ONNX Runtime): faster, less exact; for exploratory runs,
   * never for a number set beside a paper's. Fused graphs only.
   */
  quantize?: 'int8';
  /**
   * Which rows of the last layer the graph computes: every token's (default), or only each
   * sequence's first token, which is all [CLS] pooling reads (the last layer's query, output
   * projection and feed-forward then run on one row per sequence). Packed graphs without
   * hiddenStates only.
   */
  rows?: 'all' | 'first';
  /**
   * The graph ends after this many transformer layers (0..numLayers; 0 = the embedding output):
   * its last_hidden_state is hidden_states[layers], the layers above are not in the graph (a
   * truncated encoder, lib/embed/truncation.ts, computes nothing it drops); no pooler output
   * below the last layer. Default every layer.
   */
  layers?: number;
}

/** The input layout of an exported graph (see the file comment). */
export type OnnxInputLayout = 'padded' | 'packed';

export interface ExportedOnnxGraph {
  model: ModelMessage;
  /** How the graph takes its inputs (see the file comment); a cached graph of an older exporter has none: `padded`. */
  inputs?: OnnxInputLayout;
  /** `first`: last_hidden_state is [batch, hidden], each sequence's first token only. */
  rows?: 'all' | 'first';
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

/** Input names of padded graphs (HF's). */
export const ONNX_INPUTS = { inputIds: 'input_ids', attentionMask: 'attention_mask', tokenTypeIds: 'token_type_ids' } as const;

/** Input names of packed graphs. */
export const PACKED_INPUTS = {
  inputIds: 'input_ids',
  tokenTypeIds: 'token_type_ids',
  positionIds: 'position_ids',
  padIndex: 'pad_index',
  unpadIndex: 'unpad_index',
  attentionMask: 'attention_mask',
  firstIndex: 'first_index',
} as const;
