/**
 * BERT as an ONNX graph (opset 17, standard operators only), computing what ./model.ts computes in
 * inference mode, op for op, with the model's current weights as initializers:
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
 * with act the config's activation (erf GELU as x·½·(1 + erf(x·√½)), the tanh GELU, or ReLU) and
 * LayerNormalization over the last axis with the config's epsilon. Dense weights stay in PyTorch's
 * [out, in] layout (Gemm's transB), so the initializers are the parameter arrays themselves.
 * Standard operators only, so any ONNX runtime can run it. ONNX Runtime's own com.microsoft
 * operators (Attention with one packed QKV projection, SkipLayerNormalization, BiasGelu) were
 * tried on BERT-base during development and were no faster (109.6 against 109.1 sentences/s, best of 6 passes
 * at batch 64 on 2 threads, both within 1e-6 of the golden): the Gemms take 84% of the time
 * (ONNX Runtime's profiler), and ONNX Runtime packs their weights once either way. That comparison is not in bench/results:
 * the graph with them was not kept, so `bench/cpu-encode.ts` measures this graph only.
 */
import type { TextModel } from '../types.js';
import { OnnxGraphBuilder, type InitializerData } from '../onnx/graph-builder.js';
import type { ExportedOnnxGraph, OnnxExporter, OnnxExportOptions } from '../onnx/exporter.js';
import { ONNX_DTYPE } from '../onnx/proto.js';
import { BertModel } from './model.js';
import { bertParameterShapes } from './weights.js';

/** Bump when the graph below changes: cached graphs of older versions are then rebuilt. */
export const BERT_ONNX_EXPORTER_VERSION = 1;

/** Added to attention scores of padded keys, as in ./model.ts. */
const MASK_NEGATIVE = -1e9;

function asBert(model: TextModel): BertModel {
  if (!(model instanceof BertModel)) throw new Error(`the BERT ONNX exporter got a '${model.architecture}' model`);
  return model;
}

/** The ONNX graph of a BERT encoder with its current weights. */
export function bertOnnxGraph(model: BertModel, opts: OnnxExportOptions): ExportedOnnxGraph {
  const extra = unknownParameters(model);
  if (extra.length) throw new Error(`the BERT ONNX graph has no place for parameters ${extra.join(', ')}`);
  const cfg = model.config;
  const H = cfg.hiddenSize;
  const heads = cfg.numHeads;
  const D = H / heads;
  const g = new OnnxGraphBuilder('bert');
  const weight = (name: string): string => {
    const v = model.params.get(name);
    if (!v) throw new Error(`BERT parameter '${name}' is not loaded`);
    return g.initializer(name, v.dataSync() as InitializerData, v.shape);
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
        const erf = g.op('Erf', [g.op('Mul', [x, g.scalar('sqrt_half', Math.SQRT1_2)])]);
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
