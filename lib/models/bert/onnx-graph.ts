/**
 * BERT as an ONNX graph, computing what ./model.ts computes in inference mode with the model's
 * current weights as initializers, in two variants (OnnxExportOptions.fused):
 *
 * Standard (opset 17, standard operators only, so any ONNX runtime runs it), op for op:
 *
 *   h0 = LayerNorm((word[ids] + position[0..T)) + type[types])
 *   per layer, on h as [B·T, hidden]:
 *     q, k, v = Gemm(h, W, b, transB)            (checkpoint layout [out, in]; MLAS packs it once)
 *     scores  = (q·kᵀ)·(1/√d) + (1 − mask)·(−1e9)   per head, [B, heads, T, T]
 *     ctx     = Softmax(scores)·v
 *     a       = LayerNorm(Gemm(ctx, Wo, bo) + h)
 *     h'      = LayerNorm(Gemm(act(Gemm(a, Wi, bi)), Wout, bout) + a)
 *   pooler = tanh(Gemm(h[:, 0], Wp, bp))
 *
 * with act the config's activation (erf GELU as x·½·(1 + erf(x/√2)), the tanh GELU, or ReLU) and
 * LayerNormalization over the last axis with the config's epsilon. Dense weights stay in PyTorch's
 * [out, in] layout (Gemm's transB), so the initializers are the parameter arrays themselves.
 * ONNX Runtime's runtime optimiser fuses LayerNorm and some matmuls in it, but not attention,
 * skip-LayerNorm or the embeddings (those fusions live in its offline transformer optimiser).
 *
 * Fused (fusedBertGraph below), for ONNX Runtime only (the inference engine's default): the same
 * encoder on packed tokens (no padding rows in any dense layer), with com.microsoft
 * MultiHeadAttention and Gelu, and optionally the last layer for each sequence's first token
 * only ([CLS] pooling). With `quantize: 'int8'` the dense layers become DynamicQuantizeMatMul (int8
 * weights per column). test/onnx-engine.test.ts counts the fused nodes in the graph ONNX Runtime
 * runs; bench/cpu-encode.ts times the variants against each other and against ONNX Runtime on
 * PyTorch's own `torch.onnx` export of the same weights.
 */
import type { TextModel } from '../types.js';
import { OnnxGraphBuilder } from '../onnx/graph-builder.js';
import { PACKED_INPUTS, type ExportedOnnxGraph, type OnnxExporter, type OnnxExportOptions } from '../onnx/exporter.js';
import { ONNX_DTYPE } from '../onnx/proto.js';
import { BertModel } from './model.js';
import { bertParameterShapes } from './weights.js';

/** Bump when the graph below changes: cached graphs of older versions are then rebuilt. */
export const BERT_ONNX_EXPORTER_VERSION = 3;

/** Added to attention scores of padded keys, as in ./model.ts. */
const MASK_NEGATIVE = -1e9;

function asBert(model: TextModel): BertModel {
  if (!(model instanceof BertModel)) throw new Error(`the BERT ONNX exporter got a '${model.architecture}' model`);
  return model;
}

/** The ONNX graph of a BERT encoder with its current weights (`opts.fused`: ONNX Runtime's fused operators). */
export function bertOnnxGraph(model: BertModel, opts: OnnxExportOptions): ExportedOnnxGraph {
  const extra = unknownParameters(model);
  if (extra.length) throw new Error(`the BERT ONNX graph has no place for parameters ${extra.join(', ')}`);
  if (opts.quantize && !opts.fused) throw new Error('int8 quantisation is available for the fused BERT graph only (fused: true)');
  if (opts.rows === 'first' && !opts.fused) throw new Error("rows: 'first' is available for the fused BERT graph only (fused: true)");
  graphLayers(model, opts);
  return opts.fused ? fusedBertGraph(model, opts) : standardBertGraph(model, opts);
}

/**
 * How many layers the graph computes (`opts.layers`, default all): a truncated encoder's graph
 * ends at its layer, so the layers above it cost nothing. The first-token variant needs a layer
 * to restrict, so it cannot come with 0 layers.
 */
function graphLayers(model: BertModel, opts: OnnxExportOptions): number {
  const n = model.config.numLayers;
  const layers = opts.layers ?? n;
  if (!Number.isInteger(layers) || layers < 0 || layers > n) throw new Error(`layers: expected an integer in 0..${n} (the BERT graph's layers), got ${opts.layers}`);
  if (layers === 0 && opts.rows === 'first') throw new Error("rows: 'first' restricts the last computed layer; a graph of 0 layers has none");
  return layers;
}

/** Reads a parameter's values (the graph's initializers reference them, no copy). */
function parameterOf(model: BertModel, name: string): { data: Float32Array; shape: number[] } {
  const v = model.params.get(name);
  if (!v) throw new Error(`BERT parameter '${name}' is not loaded`);
  return { data: v.dataSync() as Float32Array, shape: v.shape };
}

function standardBertGraph(model: BertModel, opts: OnnxExportOptions): ExportedOnnxGraph {
  const cfg = model.config;
  const H = cfg.hiddenSize;
  const heads = cfg.numHeads;
  const D = H / heads;
  const g = new OnnxGraphBuilder('bert');
  const weight = (name: string): string => {
    const v = parameterOf(model, name);
    return g.initializer(name, v.data, v.shape);
  };

  const ids = g.input('input_ids', ONNX_DTYPE.int64, ['batch', 'sequence']);
  const mask = g.input('attention_mask', ONNX_DTYPE.int64, ['batch', 'sequence']);
  const types = g.input('token_type_ids', ONNX_DTYPE.int64, ['batch', 'sequence']);

  // Shapes known only at run time: [B, T] and T.
  const bt = g.op('Shape', [ids]);
  const seqLen = g.op('Shape', [ids], { start: { i: 1 }, end: { i: 2 } });
  const headsShape = g.op('Concat', [bt, g.int64s('heads_shape', [heads, D])], { axis: { i: 0 } });
  const statesShape = g.op('Concat', [bt, g.int64s('hidden_size', [H])], { axis: { i: 0 } });
  const rows = g.int64s('rows_shape', [-1, H]);

  const linear = (x: string, prefix: string): string => g.op('Gemm', [x, weight(`${prefix}.weight`), weight(`${prefix}.bias`)], { transB: { i: 1 } });
  const layerNorm = (x: string, prefix: string): string =>
    g.op('LayerNormalization', [x, weight(`${prefix}.weight`), weight(`${prefix}.bias`)], { axis: { i: -1 }, epsilon: { f: cfg.layerNormEps } });
  const activation = (x: string): string => {
    switch (cfg.hiddenAct) {
      case 'gelu': {
        // x / √2 (a Div, not a Mul by 1/√2): the subgraph ONNX Runtime's runtime GeluFusion matches
        const erf = g.op('Erf', [g.op('Div', [x, g.scalar('sqrt_two', Math.SQRT2)])]);
        return g.op('Mul', [g.op('Mul', [x, g.scalar('half', 0.5)]), g.op('Add', [erf, g.scalar('one', 1)])]);
      }
      case 'gelu_new':
      case 'gelu_pytorch_tanh': {
        const cube = g.op('Mul', [g.op('Mul', [x, x]), x]);
        const inner = g.op('Mul', [g.scalar('sqrt_2_over_pi', Math.sqrt(2 / Math.PI)), g.op('Add', [x, g.op('Mul', [g.scalar('gelu_coef', 0.044715), cube])])]);
        return g.op('Mul', [g.op('Mul', [x, g.scalar('half', 0.5)]), g.op('Add', [g.scalar('one', 1), g.op('Tanh', [inner])])]);
      }
      case 'relu':
        return g.op('Relu', [x]);
    }
  };
  // [B·T, hidden] <-> [B, T, hidden]
  const toRows = (x: string): string => g.op('Reshape', [x, rows]);
  const toStates = (x: string, output?: string): string => g.op('Reshape', [x, statesShape], {}, { output });

  // Embeddings.
  const words = g.op('Gather', [weight('embeddings.word_embeddings.weight'), ids]);
  const positions = g.op('Slice', [weight('embeddings.position_embeddings.weight'), g.int64s('zero', [0]), seqLen, g.int64s('axis0', [0])]);
  const typeEmb = g.op('Gather', [weight('embeddings.token_type_embeddings.weight'), types]);
  let h = toRows(g.op('Add', [g.op('Add', [words, positions]), typeEmb]));
  h = layerNorm(h, 'embeddings.LayerNorm');

  // [B, 1, 1, T]: 0 for real keys, a large negative for padding.
  const maskF = g.op('Cast', [mask], { to: { i: ONNX_DTYPE.float } });
  const additive = g.op('Mul', [g.op('Sub', [g.scalar('one', 1), maskF]), g.scalar('mask_negative', MASK_NEGATIVE)]);
  const additiveMask = g.op('Unsqueeze', [additive, g.int64s('axes12', [1, 2])]);
  const scale = g.scalar('attention_scale', 1 / Math.sqrt(D));

  const hidden: string[] = [];
  const layers = graphLayers(model, opts);
  const last = layers - 1;
  if (opts.hiddenStates && layers > 0) hidden.push(toStates(h, 'hidden_state_0'));
  for (let l = 0; l < layers; l++) {
    const p = `encoder.layer.${l}.`;
    const split = (x: string, perm: number[]) => g.op('Transpose', [g.op('Reshape', [x, headsShape])], { perm: { ints: perm } });
    const q = split(linear(h, `${p}attention.self.query`), [0, 2, 1, 3]);
    const kT = split(linear(h, `${p}attention.self.key`), [0, 2, 3, 1]);
    const v = split(linear(h, `${p}attention.self.value`), [0, 2, 1, 3]);
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, kT]), scale]), additiveMask]);
    const probs = g.op('Softmax', [scores], { axis: { i: -1 } });
    const ctx = toRows(g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: { ints: [0, 2, 1, 3] } }));
    const a = layerNorm(g.op('Add', [linear(ctx, `${p}attention.output.dense`), h]), `${p}attention.output.LayerNorm`);
    const inter = activation(linear(a, `${p}intermediate.dense`));
    h = layerNorm(g.op('Add', [linear(inter, `${p}output.dense`), a]), `${p}output.LayerNorm`);
    if (opts.hiddenStates && l < last) hidden.push(toStates(h, `hidden_state_${l + 1}`));
  }
  const lastHiddenState = toStates(h, 'last_hidden_state');
  if (opts.hiddenStates) hidden.push(lastHiddenState);

  let poolerOutput: string | undefined;
  if (opts.hiddenStates && model.hasPooler && layers === cfg.numLayers) {
    const first = g.op('Gather', [lastHiddenState, g.constant('first_token', BigInt64Array.of(0n), [])], { axis: { i: 1 } });
    poolerOutput = g.op('Tanh', [linear(first, 'pooler.dense')], {}, { output: 'pooler_output' });
  }

  const states = ['batch', 'sequence', H];
  g.output(lastHiddenState, ONNX_DTYPE.float, states);
  for (const name of hidden.slice(0, -1)) g.output(name, ONNX_DTYPE.float, states);
  if (poolerOutput) g.output(poolerOutput, ONNX_DTYPE.float, ['batch', H]);

  const model_ = g.model({
    opsets: { '': 17 },
    producer: 'angle-notebooks lib/models/bert/onnx-graph.ts',
    producerVersion: String(BERT_ONNX_EXPORTER_VERSION),
    docString: `BERT encoder: ${layers === cfg.numLayers ? cfg.numLayers : `the first ${layers} of ${cfg.numLayers}`} layers, hidden ${H}, ${heads} heads, intermediate ${cfg.intermediateSize}, ${cfg.hiddenAct}`,
  });
  return { model: model_, inputs: 'padded', rows: 'all', lastHiddenState, hiddenStates: hidden, poolerOutput };
}

/**
 * Symmetric int8 quantisation per column of an [inp, out] matrix: scale_j = max_i |W_ij| / 127
 * (1 for an all-zero column), q_ij = round(W_ij / scale_j). What DynamicQuantizeMatMul takes as B
 * and b_scale (zero point 0).
 */
function quantizeColumns(w: Float32Array, inp: number, out: number): { q: Int8Array; scale: Float32Array } {
  const scale = new Float32Array(out);
  for (let i = 0; i < inp; i++) for (let j = 0; j < out; j++) scale[j] = Math.max(scale[j], Math.abs(w[i * out + j]));
  for (let j = 0; j < out; j++) scale[j] = scale[j] > 0 ? scale[j] / 127 : 1;
  const q = new Int8Array(w.length);
  for (let i = 0; i < inp; i++) for (let j = 0; j < out; j++) q[i * out + j] = Math.max(-127, Math.min(127, Math.round(w[i * out + j] / scale[j])));
  return { q, scale };
}

/** [rows, cols] row-major → its transpose [cols, rows] (PyTorch's [out, in] → MatMul's [in, out]). */
function transposed(a: Float32Array, rows: number, cols: number): Float32Array {
  const t = new Float32Array(a.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = a[r * cols + c];
  return t;
}

/**
 * The same encoder for ONNX Runtime, on packed tokens (OnnxExportOptions docs the inputs): every
 * dense layer runs on the batch's real tokens only, [tokens, hidden], as one Gemm with its bias
 * (weights transposed once to [in, out]); only attention sees the padded [batch, sequence] layout,
 * through a Gather before it and one after. Per layer: the Q, K and V projections as one [H, 3H]
 * Gemm, com.microsoft MultiHeadAttention (scaled scores, the key padding mask, softmax and the
 * context per head in one kernel, no transposed copies), Add + LayerNormalization for both
 * residuals and com.microsoft Gelu (the erf GELU; FastGelu for the tanh one) after the
 * intermediate Gemm. With `rows: 'first'` the last layer computes K and V for every token but
 * the query, output projection and feed-forward for each sequence's first token only: what [CLS]
 * pooling reads, 6–7% of BERT-base's multiply-adds saved at STS lengths.
 *
 * Why these operators and not those of ONNX Runtime's offline transformer optimiser
 * (SkipLayerNormalization, BiasGelu, EmbedLayerNormalization, Attention on the padded input):
 * measured with ONNX Runtime 1.30's profiler on the 2-core development machine, its CPU
 * SkipLayerNormalization took 5.2% of the kernel time of our earlier graph built from them, where
 * Add + LayerNormalization take 2.5% of this one (bench/cpu-encode.ts --profile), and everything but
 * the GEMMs is under a tenth of the time in every graph, so the gains left are GEMM rows not
 * computed: padding (about 5% of the rows of length-sorted batches) and the last layer's. With
 * `quantize: 'int8'` the Gemms become DynamicQuantizeMatMul (int8 weights per column).
 */
function fusedBertGraph(model: BertModel, opts: OnnxExportOptions): ExportedOnnxGraph {
  const cfg = model.config;
  const H = cfg.hiddenSize;
  const I = cfg.intermediateSize;
  const rows = opts.rows ?? 'all';
  if (rows === 'first' && opts.hiddenStates) throw new Error("rows: 'first' leaves the last layer's other rows out; it cannot come with hiddenStates");
  const g = new OnnxGraphBuilder('bert');
  const ms = 'com.microsoft';
  const weight = (name: string): string => {
    const v = parameterOf(model, name);
    return g.initializer(name, v.data, v.shape);
  };
  const int8 = opts.quantize === 'int8';
  /** x·W + b for a dense layer whose [in, out] weight is `w`: Gemm, or with int8 DynamicQuantizeMatMul. */
  const gemm = (x: string, name: string, w: Float32Array, b: Float32Array, inp: number, out: number): string => {
    if (!int8) return g.op('Gemm', [x, g.initializer(`${name}.weight_t`, w, [inp, out]), g.initializer(`${name}.bias`, b, [out])]);
    const { q, scale } = quantizeColumns(w, inp, out);
    return g.op('DynamicQuantizeMatMul', [x, g.initializer(`${name}.weight_int8`, q, [inp, out]), g.initializer(`${name}.weight_scale`, scale, [out]), '', g.initializer(`${name}.bias`, b, [out])], {}, { domain: ms });
  };
  const dense = (x: string, prefix: string, inp: number, out: number): string =>
    gemm(x, prefix, transposed(parameterOf(model, `${prefix}.weight`).data, out, inp), parameterOf(model, `${prefix}.bias`).data, inp, out);
  const layerNorm = (x: string, prefix: string): string =>
    g.op('LayerNormalization', [x, weight(`${prefix}.weight`), weight(`${prefix}.bias`)], { axis: { i: -1 }, epsilon: { f: cfg.layerNormEps } });
  const activation = (x: string): string => {
    switch (cfg.hiddenAct) {
      case 'gelu':
        return g.op('Gelu', [x], {}, { domain: ms });
      case 'gelu_new':
      case 'gelu_pytorch_tanh':
        return g.op('FastGelu', [x], {}, { domain: ms });
      case 'relu':
        return g.op('Relu', [x]);
    }
  };

  const ids = g.input(PACKED_INPUTS.inputIds, ONNX_DTYPE.int64, ['tokens']);
  const types = g.input(PACKED_INPUTS.tokenTypeIds, ONNX_DTYPE.int64, ['tokens']);
  const positions = g.input(PACKED_INPUTS.positionIds, ONNX_DTYPE.int64, ['tokens']);
  const padIndex = g.input(PACKED_INPUTS.padIndex, ONNX_DTYPE.int64, ['batch', 'sequence']);
  const unpadIndex = g.input(PACKED_INPUTS.unpadIndex, ONNX_DTYPE.int64, ['tokens']);
  const mask = g.input(PACKED_INPUTS.attentionMask, ONNX_DTYPE.int32, ['batch', 'sequence']);
  const layers = graphLayers(model, opts);
  const withPooler = opts.hiddenStates && model.hasPooler && layers === cfg.numLayers;
  const firstIndex = rows === 'first' || withPooler ? g.input(PACKED_INPUTS.firstIndex, ONNX_DTYPE.int64, ['batch']) : undefined;

  const sum = g.op('Add', [
    g.op('Add', [g.op('Gather', [weight('embeddings.word_embeddings.weight'), ids]), g.op('Gather', [weight('embeddings.position_embeddings.weight'), positions])]),
    g.op('Gather', [weight('embeddings.token_type_embeddings.weight'), types]),
  ]);
  let h = layerNorm(sum, 'embeddings.LayerNorm');
  // packed [tokens, width] -> padded [batch, sequence, width] (padding slots copy token 0; the mask hides them), and back
  const padded = (x: string): string => g.op('Gather', [x, padIndex]);
  const packedRows = g.int64s('packed_rows', [-1, H]);
  const packed = (x: string): string => g.op('Gather', [g.op('Reshape', [x, packedRows]), unpadIndex]);
  const attention = (q: string, k: string, v: string): string => g.op('MultiHeadAttention', [q, k, v, '', mask], { num_heads: { i: cfg.numHeads } }, { domain: ms });

  const hidden: string[] = [];
  const last = layers - 1;
  const identity = (x: string, output: string) => g.op('Identity', [x], {}, { output });
  if (opts.hiddenStates && layers > 0) hidden.push(identity(h, 'hidden_state_0'));
  for (let l = 0; l < layers; l++) {
    const p = `encoder.layer.${l}.`;
    // Q, K, V weights side by side as one [H, 3H] matrix, biases as one [3H] vector
    const qkvW = new Float32Array(H * 3 * H);
    const qkvB = new Float32Array(3 * H);
    ['query', 'key', 'value'].forEach((n, j) => {
      const w = parameterOf(model, `${p}attention.self.${n}.weight`).data;
      for (let o = 0; o < H; o++) for (let i = 0; i < H; i++) qkvW[i * 3 * H + j * H + o] = w[o * H + i];
      qkvB.set(parameterOf(model, `${p}attention.self.${n}.bias`).data, j * H);
    });
    let ctx: string;
    let residual = h;
    if (l === last && rows === 'first') {
      // keys and values of every token, the query of each sequence's first token only
      const kvW = new Float32Array(H * 2 * H);
      const qW = new Float32Array(H * H);
      for (let i = 0; i < H; i++) {
        qW.set(qkvW.subarray(i * 3 * H, i * 3 * H + H), i * H);
        kvW.set(qkvW.subarray(i * 3 * H + H, (i + 1) * 3 * H), i * 2 * H);
      }
      const [k, v] = g.node('Split', [padded(gemm(h, `${p}attention.self.kv`, kvW, qkvB.slice(H), H, 2 * H)), g.int64s('kv_split', [H, H])], { axis: { i: 2 } }, { outputs: 2 });
      residual = g.op('Gather', [h, firstIndex!]);
      const q = g.op('Unsqueeze', [gemm(residual, `${p}attention.self.q`, qW, qkvB.slice(0, H), H, H), g.int64s('axis1', [1])]);
      ctx = g.op('Reshape', [attention(q, k, v), packedRows]);
    } else {
      const [q, k, v] = g.node('Split', [padded(gemm(h, `${p}attention.self.qkv`, qkvW, qkvB, H, 3 * H)), g.int64s('qkv_split', [H, H, H])], { axis: { i: 2 } }, { outputs: 3 });
      ctx = packed(attention(q, k, v));
    }
    const a = layerNorm(g.op('Add', [dense(ctx, `${p}attention.output.dense`, H, H), residual]), `${p}attention.output.LayerNorm`);
    const inter = activation(dense(a, `${p}intermediate.dense`, H, I));
    h = layerNorm(g.op('Add', [dense(inter, `${p}output.dense`, I, H), a]), `${p}output.LayerNorm`);
    if (opts.hiddenStates && l < last) hidden.push(identity(h, `hidden_state_${l + 1}`));
  }
  const lastHiddenState = identity(h, 'last_hidden_state');
  if (opts.hiddenStates) hidden.push(lastHiddenState);

  let poolerOutput: string | undefined;
  if (withPooler) {
    const first = g.op('Gather', [h, firstIndex!]);
    poolerOutput = g.op('Tanh', [g.op('Gemm', [first, weight('pooler.dense.weight'), weight('pooler.dense.bias')], { transB: { i: 1 } })], {}, { output: 'pooler_output' });
  }
  const states = [rows === 'first' ? 'batch' : 'tokens', H];
  g.output(lastHiddenState, ONNX_DTYPE.float, states);
  for (const name of hidden.slice(0, -1)) g.output(name, ONNX_DTYPE.float, states);
  if (poolerOutput) g.output(poolerOutput, ONNX_DTYPE.float, ['batch', H]);
  const onnx = g.model({
    opsets: { '': 17, [ms]: 1 },
    producer: 'angle-notebooks lib/models/bert/onnx-graph.ts',
    producerVersion: String(BERT_ONNX_EXPORTER_VERSION),
    docString: `BERT encoder on packed tokens (ONNX Runtime operators${int8 ? ', int8 dynamic quantisation' : ''}${rows === 'first' ? ", last layer for each sequence's first token" : ''}): ${layers === cfg.numLayers ? cfg.numLayers : `the first ${layers} of ${cfg.numLayers}`} layers, hidden ${H}, ${cfg.numHeads} heads, intermediate ${I}, ${cfg.hiddenAct}`,
  });
  return { model: onnx, inputs: 'packed', rows, lastHiddenState, hiddenStates: hidden, poolerOutput };
}

/** Parameters of `model` that the graph has no place for (adapters and the like), if any. */
function unknownParameters(model: BertModel): string[] {
  const known = bertParameterShapes(model.config, model.hasPooler);
  return [...model.params.keys()].filter((n) => !known.has(n));
}

export const bertOnnxExporter: OnnxExporter = {
  architecture: 'bert',
  version: BERT_ONNX_EXPORTER_VERSION,
  unsupported: (model) => {
    if (!(model instanceof BertModel)) return `not a BertModel (${model.architecture})`;
    const extra = unknownParameters(model);
    return extra.length ? `parameters the BERT graph has no place for: ${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ', …' : ''}` : undefined;
  },
  signature: (model) => {
    const bert = asBert(model);
    // Dropout does not exist in the inference graph: a training run's setting must not force a rebuild.
    const { hiddenDropout: _h, attentionDropout: _a, ...graphConfig } = bert.config;
    return JSON.stringify({ ...graphConfig, hasPooler: bert.hasPooler });
  },
  export: (model, opts) => bertOnnxGraph(asBert(model), opts),
};
