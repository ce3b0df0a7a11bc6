/**
 * What an ONNX exporter of one architecture is, and the table of those that exist (the one place
 * that knows which architectures ONNX Runtime can run): an exporter turns a loaded TextModel and
 * its current weights into an ONNX graph with the inputs every encoder graph of this project has
 * (`input_ids`, `attention_mask`, `token_type_ids`: int64 [batch, sequence], both dimensions
 * dynamic) and the outputs it names (`last_hidden_state` [batch, sequence, hidden], and with
 * `hiddenStates` HF's hidden_states list and the pooler output where the model has one).
 */
import type { TextModel } from '../types.js';
import type { ModelMessage } from './proto.js';
import { bertOnnxExporter } from '../bert/onnx-graph.js';

export interface OnnxExportOptions {
  /** Also output HF's hidden_states (embeddings, then every layer) and the pooler output. */
  hiddenStates: boolean;
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

const EXPORTERS: readonly OnnxExporter[] = [bertOnnxExporter];

/** The architectures that have an ONNX exporter. */
export const ONNX_ARCHITECTURES: readonly string[] = EXPORTERS.map((e) => e.architecture);

/** The exporter of `architecture`, or undefined when there is none. */
export function onnxExporterFor(architecture: string): OnnxExporter | undefined {
  return EXPORTERS.find((e) => e.architecture === architecture);
}

/** Graph input names shared by every exported encoder graph. */
export const ONNX_INPUTS = { inputIds: 'input_ids', attentionMask: 'attention_mask', tokenTypeIds: 'token_type_ids' } as const;
