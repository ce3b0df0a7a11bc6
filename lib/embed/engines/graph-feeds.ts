/**
 * Feeds and outputs of encoder graphs in either input layout (lib/models/onnx/exporter.ts), for
 * both ONNX Runtime engines: a padded batch goes into a padded graph as it is; a packed graph gets
 * the batch's real tokens only, with the indices between the two layouts (packBatch), and its
 * [tokens, hidden] states come back padded, zeros at padding slots (engineOutput), so pooling
 * (../pooling.ts) reads the same tensors from either.
 *
 * Which graph a batch runs on (graphVariant): the packed one unless the caller reads the states at
 * padding slots (cls_avg_legacy's mean over the whole padded batch; EngineRunOptions.padPositions)
 * or some sequence's slot 0 is padding (a left-padded batch, whose [CLS] and pooler read that
 * slot): HF computes states for padding slots, a packed graph has none.
 */
import { tf } from '../../backend/index.js';
import { PACKED_INPUTS, type OnnxInputLayout } from '../../models/onnx/exporter.js';
import type { TokenBatch } from '../../models/types.js';
import type { OrtModule } from './onnx-runtime.js';
import type { EngineOutput, EngineRunOptions } from './types.js';

type OrtTensor = InstanceType<OrtModule['Tensor']>;

/** A padded batch's real tokens, row after row, with the indices between the layouts. */
export interface PackedBatch {
  /** Real tokens in the batch. */
  tokens: number;
  inputIds: Int32Array;
  tokenTypeIds: Int32Array;
  /** The slot t of each token in its padded row: HF's position ids (arange over the padded sequence). */
  positionIds: Int32Array;
  /** [batch·sequence]: the packed row of each padded slot, 0 for padding slots. */
  padIndex: Int32Array;
  /** [tokens]: the padded slot b·sequence + t of each packed row. */
  unpadIndex: Int32Array;
  /** [batch]: the packed row of each sequence's slot 0 (meaningful when firstSlotsReal). */
  firstIndex: Int32Array;
  /** Every sequence's slot 0 holds a real token (right padding). */
  firstSlotsReal: boolean;
}

export function packBatch(b: TokenBatch): PackedBatch {
  const slots = b.batch * b.seqLen;
  let tokens = 0;
  for (let k = 0; k < slots; k++) if (b.attentionMask[k]) tokens++;
  const p: PackedBatch = {
    tokens,
    inputIds: new Int32Array(tokens),
    tokenTypeIds: new Int32Array(tokens),
    positionIds: new Int32Array(tokens),
    padIndex: new Int32Array(slots),
    unpadIndex: new Int32Array(tokens),
    firstIndex: new Int32Array(b.batch),
    firstSlotsReal: true,
  };
  let n = 0;
  for (let r = 0; r < b.batch; r++) {
    if (!b.attentionMask[r * b.seqLen]) p.firstSlotsReal = false;
    for (let t = 0; t < b.seqLen; t++) {
      const k = r * b.seqLen + t;
      if (!b.attentionMask[k]) continue;
      if (t === 0) p.firstIndex[r] = n;
      p.padIndex[k] = n;
      p.unpadIndex[n] = k;
      p.inputIds[n] = b.inputIds[k];
      p.tokenTypeIds[n] = b.tokenTypeIds[k];
      p.positionIds[n] = t;
      n++;
    }
  }
  return p;
}

/** [tokens, hidden] rows back in the padded layout, [batch·sequence, hidden], zeros at padding slots. */
export function unpackStates(rows: Float32Array, p: PackedBatch, slots: number, hidden: number): Float32Array {
  if (rows.length !== p.tokens * hidden) throw new Error(`packed states have ${rows.length} values, expected ${p.tokens} tokens × ${hidden}`);
  const out = new Float32Array(slots * hidden);
  for (let n = 0; n < p.tokens; n++) out.set(rows.subarray(n * hidden, (n + 1) * hidden), p.unpadIndex[n] * hidden);
  return out;
}

/** [batch·sequence, hidden] states with the padding slots zeroed: what a packed graph returns for a padded batch's HF states. */
export function zeroPaddingSlots(states: ArrayLike<number>, mask: Int32Array): Float32Array {
  const out = Float32Array.from(states);
  const hidden = out.length / mask.length;
  for (let k = 0; k < mask.length; k++) if (!mask[k]) out.fill(0, k * hidden, (k + 1) * hidden);
  return out;
}

/** Which exported graph a batch runs on. */
export interface GraphVariant {
  inputs: OnnxInputLayout;
  hiddenStates: boolean;
  rows: 'all' | 'first';
  /** The graph ends after this many layers (EngineRunOptions.layers); absent: every layer. */
  layers?: number;
}

/** A stable key of a variant (the engines keep one loaded graph per key). */
export function variantKey(v: GraphVariant): string {
  return `${v.inputs}:${v.hiddenStates ? 'hidden' : 'last'}:${v.rows}${v.layers !== undefined ? `:layers${v.layers}` : ''}`;
}

/**
 * The graph for a batch (see the file comment): packed where the engine has packed graphs and
 * the batch allows it, the first-token variant where the caller reads nothing else.
 */
export function graphVariant(packedAvailable: boolean, opts: EngineRunOptions, packed: PackedBatch | undefined): GraphVariant {
  const usePacked = packedAvailable && !opts.padPositions && packed !== undefined && packed.firstSlotsReal;
  // A graph cut at layer 0 has no layer whose rows the first-token variant could restrict.
  const first = usePacked && opts.firstTokenOnly && !opts.hiddenStates && opts.layers !== 0;
  return { inputs: usePacked ? 'packed' : 'padded', hiddenStates: opts.hiddenStates, rows: first ? 'first' : 'all', ...(opts.layers !== undefined ? { layers: opts.layers } : {}) };
}

/** An input a padded graph takes (own ONNX files may take int32). */
export interface PaddedInput {
  name: string;
  type: 'int64' | 'int32';
}

const PADDED_DATA = (b: TokenBatch): Record<string, Int32Array> => ({ input_ids: b.inputIds, attention_mask: b.attentionMask, token_type_ids: b.tokenTypeIds });

/** Feeds of a padded graph: each input as [batch, sequence] in its integer type. */
export function paddedFeeds(ort: OrtModule, b: TokenBatch, inputs: readonly PaddedInput[]): Record<string, OrtTensor> {
  const dims = [b.batch, b.seqLen];
  const data = PADDED_DATA(b);
  return Object.fromEntries(inputs.map(({ name, type }) => [name, type === 'int64' ? new ort.Tensor('int64', BigInt64Array.from(data[name], (x) => BigInt(x)), dims) : new ort.Tensor('int32', Int32Array.from(data[name]), dims)]));
}

/** Feeds of a packed graph; `first_index` only where the graph takes it (`inputNames`). */
export function packedFeeds(ort: OrtModule, b: TokenBatch, p: PackedBatch, inputNames: readonly string[]): Record<string, OrtTensor> {
  const int64 = (a: Int32Array, dims: number[]) => new ort.Tensor('int64', BigInt64Array.from(a, (x) => BigInt(x)), dims);
  const feeds: Record<string, OrtTensor> = {
    [PACKED_INPUTS.inputIds]: int64(p.inputIds, [p.tokens]),
    [PACKED_INPUTS.tokenTypeIds]: int64(p.tokenTypeIds, [p.tokens]),
    [PACKED_INPUTS.positionIds]: int64(p.positionIds, [p.tokens]),
    [PACKED_INPUTS.padIndex]: int64(p.padIndex, [b.batch, b.seqLen]),
    [PACKED_INPUTS.unpadIndex]: int64(p.unpadIndex, [p.tokens]),
    [PACKED_INPUTS.attentionMask]: new ort.Tensor('int32', Int32Array.from(b.attentionMask), [b.batch, b.seqLen]),
  };
  if (inputNames.includes(PACKED_INPUTS.firstIndex)) feeds[PACKED_INPUTS.firstIndex] = int64(p.firstIndex, [b.batch]);
  return feeds;
}

/** Output names of a graph, as the exporter or checkEncoderGraph gave them. */
export interface GraphOutputs {
  lastHiddenState: string;
  hiddenStates?: readonly string[];
  poolerOutput?: string;
}

/** The names to ask a session for in this variant. */
export function outputNames(outputs: GraphOutputs, hiddenStates: boolean): string[] {
  return hiddenStates ? [...(outputs.hiddenStates ?? []), ...(outputs.poolerOutput ? [outputs.poolerOutput] : [])] : [outputs.lastHiddenState];
}

/**
 * A session's outputs as the engines return them: tfjs tensors in the padded layout
 * ([batch, sequence, hidden]; [batch, 1, hidden] for the first-token variant, whose row is slot 0).
 */
export function engineOutput(out: Record<string, OrtTensor>, outputs: GraphOutputs, v: GraphVariant, b: TokenBatch, p: PackedBatch | undefined): EngineOutput {
  const states = (name: string): tf.Tensor3D => {
    const t = out[name];
    const data = t.data as Float32Array;
    if (v.inputs === 'padded') return tf.tensor(data, t.dims as [number, number, number], 'float32') as tf.Tensor3D;
    const hidden = t.dims[t.dims.length - 1];
    if (v.rows === 'first') return tf.tensor3d(data, [b.batch, 1, hidden]);
    return tf.tensor3d(unpackStates(data, p!, b.batch * b.seqLen, hidden), [b.batch, b.seqLen, hidden]);
  };
  if (!v.hiddenStates) return { lastHiddenState: states(outputs.lastHiddenState), hiddenStates: [] };
  const hiddenStates = (outputs.hiddenStates ?? []).map(states);
  const pooler = outputs.poolerOutput ? out[outputs.poolerOutput] : undefined;
  return {
    lastHiddenState: hiddenStates[hiddenStates.length - 1],
    hiddenStates,
    poolerOutput: pooler ? (tf.tensor(pooler.data as Float32Array, pooler.dims as [number, number], 'float32') as tf.Tensor2D) : undefined,
  };
}
