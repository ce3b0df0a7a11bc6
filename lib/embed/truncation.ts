/**
 * Truncated embeddings: a sentence vector from the first `layer` transformer layers and/or its first
 * `dim` components, as angle_emb 0.6.1 serves Espresso models (`AnglE.truncate_layer(layer_index)`
 * keeps the backbone's first layer_index layers; `encode(..., embedding_size=k)` keeps
 * `outputs[:, :k]`) and as sentence-transformers' `truncate_dim` does (the first k components,
 * after the model's modules, Normalize included, and not normalised again).
 *
 * `layer` counts layers: 0 is the embedding output, `numLayers` the full model (hidden_states[layer]
 * in HF's numbering). The pooling reads that layer's token states exactly as it reads the last one.
 */
import { InputError } from '../util/errors.js';

export interface EmbeddingTruncation {
  /** Use hidden_states[layer] (0 = the embedding output, numLayers = the whole model); default the whole model. */
  layer?: number;
  /** Keep the first `dim` components of each sentence vector; default all. */
  dim?: number;
}

/** Checks a truncation against a model of `numLayers` layers whose vectors have `width` components. */
export function checkTruncation(t: EmbeddingTruncation | undefined, numLayers: number, width: number): Required<EmbeddingTruncation> {
  const layer = t?.layer ?? numLayers;
  const dim = t?.dim ?? width;
  if (!Number.isInteger(layer) || layer < 0 || layer > numLayers) throw new InputError(`truncate layer: expected an integer in 0..${numLayers} (0 = the embedding output, ${numLayers} = every layer), got ${t?.layer}`);
  if (!Number.isInteger(dim) || dim < 1 || dim > width) throw new InputError(`truncate dim: expected an integer in 1..${width} (the embedding size), got ${t?.dim}`);
  return { layer, dim };
}

/** The first `dim` columns of a row-major [rows, width] matrix (the matrix itself when dim = width). */
export function truncateColumns(data: Float32Array, rows: number, width: number, dim: number): Float32Array {
  if (dim === width) return data;
  const out = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) out.set(data.subarray(r * width, r * width + dim), r * dim);
  return out;
}
