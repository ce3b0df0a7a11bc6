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
 * Fused (fusedBertGraph below): the operators that offline optimiser produces, for ONNX Runtime
 * only (the inference engine's default): one EmbedLayerNormalization, and per layer Attention,
 * SkipLayerNormalization ×2, BiasGelu (FastGelu for the tanh GELU) around three MatMuls. With
 * `quantize: 'int8'` the dense layers become DynamicQuantizeMatMul (int8 weights per column) and
 * attention MultiHeadAttention on the split projection. test/onnx-engine.test.ts counts the fused
 * nodes in the graph ONNX Runtime runs; bench/cpu-encode.ts times the variants against each other
 * and against ONNX Runtime on PyTorch's own `torch.onnx` export of the same weights.
 */
import type { TextModel } from '../types.js';
import { OnnxGraphBuilder } from '../onnx/graph-builder.js';
import type { ExportedOnnxGraph, OnnxExporter, OnnxExportOptions } from '../onnx/exporter.js';
import { ONNX_DTYPE } from '../onnx/proto.js';
import { BertModel } from './model.js';
import { bertParameterShapes } from './weights.js';

/** Bump when the graph below changes: cached graphs of older versions are then rebuilt. */
export const BERT_ONNX_EXPORTER_VERSION = 2;

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
  return opts.fused ? fusedBertGraph(model, opts) : standardBertGraph(model, opts);
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
  const last = cfg.numLayers - 1;
  if (opts.hiddenStates) hidden.push(toStates(h, 'hidden_state_0'));
  for (let l = 0; l < cfg.numLayers; l++) {
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
  if (opts.hiddenStates && model.hasPooler) {
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
    docString: `BERT encoder: ${cfg.numLayers} layers, hidden ${H}, ${heads} heads, intermediate ${cfg.intermediateSize}, ${cfg.hiddenAct}`,
  });
  return { model: model_, lastHiddenState, hiddenStates: hidden, poolerOutput };
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
 * The same encoder with the operators ONNX Runtime's offline transformer optimiser would produce
 * (onnxruntime/python/tools/transformers, "bert" model type), which its CPU provider runs as
 * single kernels: com.microsoft EmbedLayerNormalization (three gathers, the sum and the LayerNorm),
 * Attention (the Q, K and V projections as one [H, 3H] GEMM, scaled scores, the padding mask,
 * softmax and the context per head, without materialising transposed copies), SkipLayerNormalization
 * (bias + residual + LayerNorm in one pass) and BiasGelu / FastGelu (bias + activation in one
 * pass), around plain MatMuls (weights transposed once to [in, out]). Inputs and outputs are the
 * standard graph's. The attention mask goes to Attention as the raw [batch, sequence] 0/1 mask
 * (int32), so any padding side works; a padded key gets ONNX Runtime's mask_filter_value instead of
 * −1e9, which changes nothing once softmax underflows to 0.
 */
function fusedBertGraph(model: BertModel, opts: OnnxExportOptions): ExportedOnnxGraph {
  const cfg = model.config;
  const H = cfg.hiddenSize;
  const I = cfg.intermediateSize;
  const g = new OnnxGraphBuilder('bert');
  const ms = 'com.microsoft';
  const weight = (name: string): string => {
    const v = parameterOf(model, name);
    return g.initializer(name, v.data, v.shape);
  };
  const int8 = opts.quantize === 'int8';
  /**
   * x·Wᵀ for a dense layer (weight transposed once to [in, out]): MatMul, or with int8
   * DynamicQuantizeMatMul (x quantised to uint8 per call by ONNX Runtime, W int8 per column).
   */
  const matmulT = (x: string, name: string, w: Float32Array, out: number, inp: number, bias?: string): string => {
    const wt = transposed(w, out, inp);
    if (!int8) {
      const y = g.op('MatMul', [x, g.initializer(`${name}.weight_t`, wt, [inp, out])]);
      return bias ? g.op('Add', [y, bias]) : y;
    }
    const { q, scale } = quantizeColumns(wt, inp, out);
    return g.op('DynamicQuantizeMatMul', [x, g.initializer(`${name}.weight_int8`, q, [inp, out]), g.initializer(`${name}.weight_scale`, scale, [out]), '', ...(bias ? [bias] : [])], {}, { domain: ms });
  };
  const dense = (x: string, prefix: string, out: number, inp: number): string => matmulT(x, prefix, parameterOf(model, `${prefix}.weight`).data, out, inp);

  const ids = g.input('input_ids', ONNX_DTYPE.int64, ['batch', 'sequence']);
  const mask = g.input('attention_mask', ONNX_DTYPE.int64, ['batch', 'sequence']);
  const types = g.input('token_type_ids', ONNX_DTYPE.int64, ['batch', 'sequence']);
  const int32 = (x: string) => g.op('Cast', [x], { to: { i: ONNX_DTYPE.int32 } });
  const mask32 = int32(mask);

  // (its second output, mask_index, is required by the schema and unused: Attention gets the raw mask)
  let [h] = g.node(
    'EmbedLayerNormalization',
    [int32(ids), int32(types), weight('embeddings.word_embeddings.weight'), weight('embeddings.position_embeddings.weight'), weight('embeddings.token_type_embeddings.weight'), weight('embeddings.LayerNorm.weight'), weight('embeddings.LayerNorm.bias')],
    { epsilon: { f: cfg.layerNormEps } },
    { domain: ms, outputs: 2 },
  );
  const skipLayerNorm = (x: string, skip: string, prefix: string, bias: string, output?: string): string =>
    g.op('SkipLayerNormalization', [x, skip, weight(`${prefix}.LayerNorm.weight`), weight(`${prefix}.LayerNorm.bias`), weight(bias)], { epsilon: { f: cfg.layerNormEps } }, { domain: ms, output });
  const activation = (x: string, bias: string): string => {
    switch (cfg.hiddenAct) {
      case 'gelu':
        return g.op('BiasGelu', [x, bias], {}, { domain: ms });
      case 'gelu_new':
      case 'gelu_pytorch_tanh':
        return g.op('FastGelu', [x, bias], {}, { domain: ms });
      case 'relu':
        return g.op('Relu', [g.op('Add', [x, bias])]);
    }
  };

  const hidden: string[] = [];
  const last = cfg.numLayers - 1;
  const identity = (x: string, output: string) => g.op('Identity', [x], {}, { output });
  if (opts.hiddenStates) hidden.push(identity(h, 'hidden_state_0'));
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `encoder.layer.${l}.`;
    // Q, K, V weights side by side as one [H, 3H] matrix, biases as one [3H] vector
    const qkv = ['query', 'key', 'value'].map((n) => parameterOf(model, `${p}attention.self.${n}.weight`).data);
    const qkvW = new Float32Array(H * 3 * H);
    qkv.forEach((w, j) => {
      for (let o = 0; o < H; o++) for (let i = 0; i < H; i++) qkvW[i * 3 * H + j * H + o] = w[o * H + i];
    });
    const qkvB = new Float32Array(3 * H);
    ['query', 'key', 'value'].forEach((n, j) => qkvB.set(parameterOf(model, `${p}attention.self.${n}.bias`).data, j * H));
    let ctx: string;
    if (!int8) {
      ctx = g.op(
        'Attention',
        [h, g.initializer(`${p}attention.self.qkv.weight`, qkvW, [H, 3 * H]), g.initializer(`${p}attention.self.qkv.bias`, qkvB, [3 * H]), mask32],
        { num_heads: { i: cfg.numHeads } },
        { domain: ms },
      );
    } else {
      // int8: the packed projection as one quantised matmul (bias included), then attention on q, k, v
      const { q, scale } = quantizeColumns(qkvW, H, 3 * H);
      const qkv = g.op('DynamicQuantizeMatMul', [h, g.initializer(`${p}attention.self.qkv.weight_int8`, q, [H, 3 * H]), g.initializer(`${p}attention.self.qkv.weight_scale`, scale, [3 * H]), '', g.initializer(`${p}attention.self.qkv.bias`, qkvB, [3 * H])], {}, { domain: ms });
      const [qh, kh, vh] = g.node('Split', [qkv, g.int64s('qkv_split', [H, H, H])], { axis: { i: 2 } }, { outputs: 3 });
      ctx = g.op('MultiHeadAttention', [qh, kh, vh, '', mask32], { num_heads: { i: cfg.numHeads } }, { domain: ms });
    }
    const a = skipLayerNorm(dense(ctx, `${p}attention.output.dense`, H, H), h, `${p}attention.output`, `${p}attention.output.dense.bias`);
    const inter = activation(dense(a, `${p}intermediate.dense`, I, H), weight(`${p}intermediate.dense.bias`));
    const out = l === last ? 'last_hidden_state' : undefined;
    h = skipLayerNorm(dense(inter, `${p}output.dense`, H, I), a, `${p}output`, `${p}output.dense.bias`, out);
    if (opts.hiddenStates && l < last) hidden.push(identity(h, `hidden_state_${l + 1}`));
  }
  const lastHiddenState = h;
  if (opts.hiddenStates) hidden.push(lastHiddenState);

  let poolerOutput: string | undefined;
  if (opts.hiddenStates && model.hasPooler) {
    const first = g.op('Gather', [lastHiddenState, g.constant('first_token', BigInt64Array.of(0n), [])], { axis: { i: 1 } });
    poolerOutput = g.op('Tanh', [g.op('Gemm', [first, weight('pooler.dense.weight'), weight('pooler.dense.bias')], { transB: { i: 1 } })], {}, { output: 'pooler_output' });
  }
  const states = ['batch', 'sequence', H];
  g.output(lastHiddenState, ONNX_DTYPE.float, states);
  for (const name of hidden.slice(0, -1)) g.output(name, ONNX_DTYPE.float, states);
  if (poolerOutput) g.output(poolerOutput, ONNX_DTYPE.float, ['batch', H]);
  const onnx = g.model({
    opsets: { '': 17, [ms]: 1 },
    producer: 'angle-notebooks lib/models/bert/onnx-graph.ts',
    producerVersion: String(BERT_ONNX_EXPORTER_VERSION),
    docString: `BERT encoder (ONNX Runtime fused operators${int8 ? ', int8 dynamic quantisation' : ''}): ${cfg.numLayers} layers, hidden ${H}, ${cfg.numHeads} heads, intermediate ${I}, ${cfg.hiddenAct}`,
  });
  return { model: onnx, lastHiddenState, hiddenStates: hidden, poolerOutput };
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
