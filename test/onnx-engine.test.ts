/**
 * ONNX Runtime as the inference engine (lib/embed/engines, lib/models/onnx, lib/models/bert/onnx-graph.ts),
 * on the golden tiny BERT:
 * - the golden forward (every tensor and pooling, both weight namings) through ONNX Runtime (the
 *   default fused graph) within 1e-5 of PyTorch, and the encoder on it, with the fused and the
 *   standard graph, equal to the tfjs encoder for every pooling;
 * - the fused graph as ONNX Runtime runs it (its optimised model saved with optimizedModelFilePath):
 *   per layer one MultiHeadAttention, one Gelu and four Gemms with their biases on packed tokens,
 *   no Softmax/Erf/Transpose/MatMul left, also in the [CLS]-only variant; the standard graph gets
 *   no fused attention from ONNX Runtime; the golden forward also through the packed and the
 *   [CLS]-only graphs (lib/parity/forward.ts);
 * - the graph file: inline and external-data weights give the same outputs, and protobufjs reads
 *   back what it wrote;
 * - the switch: tfjs when forced off (option or ANGLE_INFERENCE); one notice and tfjs when
 *   onnxruntime-node is missing, the architecture has no exporter or the model has parameters the
 *   graph has no place for; an error when onnx is forced and impossible;
 * - the cache: a corrupt cached graph is rebuilt and named in the log; new weights (an assign)
 *   are exported again before the next batch; `cache: false` (the trainer's) keeps graphs in memory.
 * Graphs are cached in a temporary folder (ANGLE_ONNX_CACHE), never in the user's cache.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { MultiPoolingEmbedder, PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { chooseInferenceEngine, parseEngineChoice } from '../lib/embed/engines/choose.js';
import { zeroPaddingSlots } from '../lib/embed/engines/graph-feeds.js';
import { loadOnnxRuntime, type OrtModule } from '../lib/embed/engines/onnx-runtime.js';
import type { InferenceSession } from 'onnxruntime-node';
import { POOLING_STRATEGIES } from '../lib/embed/pooling.js';
import { loadModel } from '../lib/models/auto.js';
import { bertOnnxGraph } from '../lib/models/bert/onnx-graph.js';
import type { BertModel } from '../lib/models/bert/model.js';
import { readOnnxModel, writeOnnxModel } from '../lib/models/onnx/model-file.js';
import type { TextModel } from '../lib/models/types.js';
import { checkForwardGolden } from '../lib/parity/forward.js';
import { UnavailableError, UnknownNameError } from '../lib/util/errors.js';
import { goldenOrSkip } from './helpers/env.js';

const tmp = mkdtempSync(join(tmpdir(), 'onnx-engine-'));
const savedEnv = { cache: process.env.ANGLE_ONNX_CACHE, inference: process.env.ANGLE_INFERENCE };
let ortError: string | undefined;

before(async () => {
  await initBackend('cpu', { quiet: true });
  process.env.ANGLE_ONNX_CACHE = join(tmp, 'cache');
  delete process.env.ANGLE_INFERENCE;
  const rt = await loadOnnxRuntime();
  if ('error' in rt) ortError = rt.error;
});
after(() => {
  rmSync(tmp, { recursive: true, force: true });
  for (const [k, v] of [['ANGLE_ONNX_CACHE', savedEnv.cache], ['ANGLE_INFERENCE', savedEnv.inference]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** The golden set, or a skip: without it, or without onnxruntime-node, there is nothing to run. */
function needs(t: { skip: (m: string) => void }): string | undefined {
  if (ortError) {
    t.skip(`onnxruntime-node is unavailable here: ${ortError}`);
    return undefined;
  }
  return goldenOrSkip(t);
}

const TEXTS = [
  'a man is playing a guitar .',
  'short',
  '',
  'a much longer sentence with many more words than the others in this list , to pad the batch .',
  'two dogs run across the snow',
  'Ünïcödé text, with punctuation!',
];

function maxDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

test('golden forward through ONNX Runtime within 1e-5: every tensor and pooling, both weight namings', async (t) => {
  const g = needs(t);
  if (!g) return;
  const checks = await checkForwardGolden(g, { engine: 'onnx' });
  for (const c of checks) t.diagnostic(`${c.ok ? 'ok' : 'FAIL'} ${c.name}: ${c.detail}`);
  assert.deepEqual(checks.filter((c) => !c.ok), []);
  const names = checks.map((c) => c.name);
  for (const want of ['forward/last_hidden_state', 'forward/hidden_state_1', 'forward/pooler_output', 'forward-hub-naming/last_hidden_state', 'forward-hub-naming/pooler_output', ...['cls', 'cls_avg', 'avg', 'max', 'first_last_avg'].map((p) => `forward/pool_${p}`)]) {
    assert.ok(names.includes(want), `no check ${want}`);
  }
});

test('the encoder on ONNX Runtime (fused and standard graph) equals the tfjs encoder for every pooling', async (t) => {
  const g = needs(t);
  if (!g) return;
  const m = await loadModel(join(g, 'model'));
  try {
    for (const graph of ['fused', 'standard'] as const) {
      for (const pooling of POOLING_STRATEGIES) {
        const onnx = new PooledSentenceEncoder(m, { pooling, batchSize: 4, engine: 'onnx', engineOptions: { onnx: { graph } } });
        const tfjs = new PooledSentenceEncoder(m, { pooling, batchSize: 4, engine: 'tfjs' });
        const a = await onnx.encode(TEXTS);
        const b = await tfjs.encode(TEXTS);
        const d = maxDiff(a.data, b.data);
        assert.ok(d <= 1e-5, `${graph} graph, ${pooling}: ONNX Runtime and tfjs differ by ${d}`);
      }
    }
    const engine = await chooseInferenceEngine(m.model, { engine: 'onnx' });
    assert.equal(engine.name, 'onnx');
    assert.match(engine.description, /^ONNX Runtime \d+\.\d+\.\d+ \(onnxruntime-node\), CPU, \d+ threads?, fused graph$/);
    assert.match((await chooseInferenceEngine(m.model, { engine: 'onnx', onnx: { graph: 'standard' } })).description, /, standard graph$/);
  } finally {
    m.model.dispose();
  }
});

test('graph file: inline and external-data weights give identical outputs; protobufjs reads back the graph', async (t) => {
  const g = needs(t);
  if (!g) return;
  const loaded = await loadOnnxRuntime();
  if ('error' in loaded) throw new Error(loaded.error);
  const ort: OrtModule = loaded.ort;
  const m = await loadModel(join(g, 'model'));
  try {
    const exported = bertOnnxGraph(m.model as BertModel, { hiddenStates: true });
    const inline = writeOnnxModel(exported.model, join(tmp, 'inline', 'bert.onnx'));
    const external = writeOnnxModel(exported.model, join(tmp, 'external', 'bert.onnx'), { externalDataAbove: 0 });
    assert.equal(inline.externalData, false);
    assert.deepEqual([external.externalData, external.files.length], [true, 2]);

    const back = readOnnxModel(inline.files[0]);
    assert.equal(back.graph.node.length, exported.model.graph.node.length);
    assert.deepEqual(back.graph.initializer.map((i) => i.name), exported.model.graph.initializer.map((i) => i.name));
    const word = back.graph.initializer.find((i) => i.name === 'embeddings.word_embeddings.weight')!;
    const ours = m.model.params.get('embeddings.word_embeddings.weight')!.dataSync() as Float32Array;
    assert.deepEqual(new Float32Array(new Uint8Array(word.rawData!).buffer), ours);
    assert.deepEqual(back.opsetImport.map((o) => [o.domain ?? '', o.version]), [['', 17]]);

    const batch = m.tokenizer.encodeBatch(TEXTS, { maxLength: 32 });
    const dims = [batch.batch, batch.seqLen];
    const int64 = (a: Int32Array) => new ort.Tensor('int64', BigInt64Array.from(a, (x) => BigInt(x)), dims);
    const feeds = { input_ids: int64(batch.inputIds), attention_mask: int64(batch.attentionMask), token_type_ids: int64(batch.tokenTypeIds) };
    const outs: Array<Record<string, { data: unknown }>> = [];
    for (const file of [inline.files[0], external.files[0]]) {
      const s: InferenceSession = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
      assert.deepEqual(s.inputNames, ['input_ids', 'attention_mask', 'token_type_ids']);
      outs.push(await s.run(feeds));
      await s.release();
    }
    assert.deepEqual(Object.keys(outs[0]).sort(), ['hidden_state_0', 'hidden_state_1', 'last_hidden_state', 'pooler_output']);
    for (const k of Object.keys(outs[0])) assert.deepEqual(outs[1][k].data, outs[0][k].data, `${k}: external data changed the output`);
  } finally {
    m.model.dispose();
  }
});

/** Node counts of a model's graph by operator, `domain.op` for contrib domains. */
function opCounts(path: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const n of readOnnxModel(path).graph.node) {
    const k = n.domain ? `${n.domain}.${n.opType}` : n.opType;
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return counts;
}

test('the fused graph as ONNX Runtime optimises it: one fused attention and GELU per layer on packed tokens; no softmax, erf or transposes left', async (t) => {
  const g = needs(t);
  if (!g) return;
  const loaded = await loadOnnxRuntime();
  if ('error' in loaded) throw new Error(loaded.error);
  const m = await loadModel(join(g, 'model'));
  try {
    const layers = (m.model as BertModel).config.numLayers;
    const counts: Record<string, Record<string, number>> = {};
    for (const [name, opts] of [
      ['fused', { hiddenStates: false, fused: true }],
      ['first', { hiddenStates: false, fused: true, rows: 'first' as const }],
      ['standard', { hiddenStates: false, fused: false }],
    ] as const) {
      const file = join(tmp, `optimised-${name}`, 'bert.onnx');
      writeOnnxModel(bertOnnxGraph(m.model as BertModel, opts).model, file);
      const saved = join(tmp, `optimised-${name}`, 'bert.optimised.onnx');
      // what ONNX Runtime runs after its own graph optimisations at load ('all' = what the engine uses)
      const s = await loaded.ort.InferenceSession.create(file, { intraOpNumThreads: 1, graphOptimizationLevel: 'all', optimizedModelFilePath: saved, logSeverityLevel: 3 });
      await s.release();
      counts[name] = opCounts(saved);
      t.diagnostic(`${name} graph, optimised by ONNX Runtime: ${JSON.stringify(counts[name])}`);
    }
    for (const name of ['fused', 'first']) {
      const f = counts[name];
      assert.equal(f['com.microsoft.MultiHeadAttention'], layers, `${name}: one attention kernel per layer`);
      assert.equal(f['com.microsoft.Gelu'], layers, `${name}: one GELU per layer`);
      assert.equal(f.LayerNormalization, 2 * layers + 1, `${name}: two per layer and the embeddings'`);
      // every dense layer one Gemm with its bias: QKV, output, intermediate, output per layer
      // (the first-token graph's last layer: K and V together, Q apart)
      assert.equal(f.Gemm, 4 * layers + (name === 'first' ? 1 : 0), `${name}: Gemm count`);
      for (const op of ['Softmax', 'Erf', 'Transpose', 'MatMul', 'com.microsoft.SkipLayerNormalization', 'com.microsoft.BiasGelu']) assert.equal(f[op], undefined, `${name}: ${op} left in the fused graph`);
    }
    // ONNX Runtime's runtime optimiser alone does not reach these from the standard graph
    const s = counts.standard;
    for (const op of ['Attention', 'MultiHeadAttention', 'SkipLayerNormalization', 'EmbedLayerNormalization']) assert.equal(s[`com.microsoft.${op}`], undefined, `the standard graph got ${op}`);
    assert.equal(s.Softmax, layers);
  } finally {
    m.model.dispose();
  }
});

test('switch: tfjs when forced off by option or ANGLE_INFERENCE; unknown names refused', async (t) => {
  const g = needs(t);
  if (!g) return;
  const m = await loadModel(join(g, 'model'));
  try {
    assert.equal((await chooseInferenceEngine(m.model, { engine: 'tfjs' })).name, 'tfjs');
    assert.equal((await chooseInferenceEngine(m.model, {})).name, 'onnx', 'auto on the cpu backend with onnxruntime-node installed');
    process.env.ANGLE_INFERENCE = 'tfjs';
    try {
      assert.equal((await chooseInferenceEngine(m.model, {})).name, 'tfjs');
      assert.equal((await chooseInferenceEngine(m.model, { engine: 'onnx' })).name, 'onnx', 'the option wins over the variable');
      const enc = new PooledSentenceEncoder(m, { pooling: 'cls' });
      const viaEnv = await enc.encode(TEXTS);
      const viaOption = await new PooledSentenceEncoder(m, { pooling: 'cls', engine: 'tfjs' }).encode(TEXTS);
      assert.deepEqual(viaEnv.data, viaOption.data, 'ANGLE_INFERENCE=tfjs embeds exactly as the tfjs engine');
    } finally {
      delete process.env.ANGLE_INFERENCE;
    }
    assert.throws(() => parseEngineChoice('tensorrt'), (e: Error) => e instanceof UnknownNameError && /unknown inference engine 'tensorrt': expected one of auto, onnx, tfjs/.test(e.message));
    assert.throws(() => parseEngineChoice(undefined, { ANGLE_INFERENCE: 'gpu' }), /ANGLE_INFERENCE.*'gpu'/);
  } finally {
    m.model.dispose();
  }
});

test('fallback: onnxruntime-node missing or an architecture without exporter gives one notice and tfjs; forced onnx is an error', async (t) => {
  const g = needs(t);
  if (!g) return;
  const m = await loadModel(join(g, 'model'));
  try {
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);
    const missing = 'onnxruntime-node-not-installed-here';
    for (let i = 0; i < 2; i++) {
      const e = await chooseInferenceEngine(m.model, { onnxRuntimeModule: missing, log });
      assert.equal(e.name, 'tfjs');
    }
    assert.deepEqual(lines, [`inference: ${missing} is not installed (npm install ${missing}); using tfjs cpu`], 'said once, with the reason');
    await assert.rejects(chooseInferenceEngine(m.model, { engine: 'onnx', onnxRuntimeModule: missing }), (e: Error) => e instanceof UnavailableError && /inference engine 'onnx' is unavailable: .* is not installed/.test(e.message));
    // The encoder falls back the same way and still embeds.
    const enc = new PooledSentenceEncoder(m, { pooling: 'avg', engineOptions: { onnxRuntimeModule: missing, log } });
    const got = await enc.encode(TEXTS);
    const want = await new PooledSentenceEncoder(m, { pooling: 'avg', engine: 'tfjs' }).encode(TEXTS);
    assert.deepEqual(got.data, want.data);

    lines.length = 0;
    const decoder = { architecture: 'gpt-neo', hiddenSize: 8 } as unknown as TextModel;
    for (let i = 0; i < 2; i++) assert.equal((await chooseInferenceEngine(decoder, { log })).name, 'tfjs');
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^inference: ONNX Runtime cannot run architecture 'gpt-neo' \(no ONNX exporter; exporters exist for: bert\); using tfjs cpu$/);
    await assert.rejects(chooseInferenceEngine(decoder, { engine: 'onnx' }), /cannot run architecture 'gpt-neo'/);

    // A BERT with parameters its graph has no place for (an adapter's): one line, tfjs.
    lines.length = 0;
    const adapted = await loadModel(join(g, 'model'));
    try {
      const params = (adapted.model as unknown as { parameters: { add(n: string, v: tf.Variable): void } }).parameters;
      params.add('encoder.layer.0.attention.self.query.lora_A.weight', tf.variable(tf.zeros([2, 64])));
      assert.equal((await chooseInferenceEngine(adapted.model, { log })).name, 'tfjs');
      assert.deepEqual(lines, [`inference: ONNX Runtime cannot run this 'bert' model (parameters the BERT graph has no place for: encoder.layer.0.attention.self.query.lora_A.weight); using tfjs cpu`]);
    } finally {
      adapted.model.dispose();
    }
  } finally {
    m.model.dispose();
  }
});

test('a corrupt cached graph is rebuilt and named in the log (damaged weights; a graph ONNX Runtime refuses)', async (t) => {
  const g = needs(t);
  if (!g) return;
  const dir = join(tmp, 'corrupt-cache');
  const run = async (lines: string[]) => {
    const m = await loadModel(join(g, 'model'));
    try {
      const engine = await chooseInferenceEngine(m.model, { engine: 'onnx', onnx: { cache: { dir } }, log: (l) => lines.push(l) });
      const batch = m.tokenizer.encodeBatch(TEXTS, { maxLength: 32 });
      const o = await engine.run(batch, { hiddenStates: false });
      const want = m.model.forward(batch);
      // the default graph takes packed tokens: its padding slots are zeros, so compare real tokens
      const d = maxDiff(o.lastHiddenState.dataSync() as Float32Array, zeroPaddingSlots(want.lastHiddenState.dataSync() as Float32Array, batch.attentionMask));
      tf.dispose([o.lastHiddenState, want.lastHiddenState, ...(want.poolerOutput ? [want.poolerOutput] : [])]);
      await engine.dispose();
      return d;
    } finally {
      m.model.dispose();
    }
  };
  const first: string[] = [];
  assert.ok((await run(first)) <= 1e-5);
  const built = first.find((l) => l.startsWith('onnx: built bert graph'));
  assert.ok(built, `no build line in ${JSON.stringify(first)}`);
  const entry = /: (\S+)$/.exec(built)![1];

  // Damaged weights: the data file no longer matches its manifest.
  const data = join(entry, 'model.onnx.data');
  const bytes = readFileSync(data);
  bytes[bytes.length >> 1] ^= 0xff;
  writeFileSync(data, bytes);
  const second: string[] = [];
  assert.ok((await run(second)) <= 1e-5, 'the rebuilt graph computes the model');
  assert.ok(second.some((l) => l === `onnx: cached graph ${entry} is corrupt (model.onnx.data does not match its sha256); rebuilding it`), JSON.stringify(second));
  assert.ok(second.some((l) => l.startsWith('onnx: built bert graph')));

  // A graph file that matches its manifest but is not a model: ONNX Runtime refuses it.
  const garbage = Buffer.from('this is not a protobuf ModelProto');
  writeFileSync(join(entry, 'model.onnx'), garbage);
  const manifestPath = join(entry, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { files: Array<{ name: string; bytes: number; sha256: string }> };
  const { createHash } = await import('node:crypto');
  manifest.files = manifest.files.map((f) => (f.name === 'model.onnx' ? { ...f, bytes: garbage.length, sha256: createHash('sha256').update(garbage).digest('hex') } : f));
  writeFileSync(manifestPath, JSON.stringify(manifest));
  const third: string[] = [];
  assert.ok((await run(third)) <= 1e-5);
  assert.ok(third.some((l) => l.startsWith(`onnx: cached graph ${entry} could not be loaded (`) && l.endsWith('); rebuilding it')), JSON.stringify(third));

  // Intact now: found, not built, and a reuse says nothing.
  const before = statSync(join(entry, 'manifest.json')).mtimeMs;
  await new Promise((r) => setTimeout(r, 20));
  const fourth: string[] = [];
  assert.ok((await run(fourth)) <= 1e-5);
  assert.deepEqual(fourth.filter((l) => l.startsWith('onnx:')), []);
  assert.ok(statSync(join(entry, 'manifest.json')).mtimeMs > before, 'the reused graph was not marked as recently used');
});

test('new weights (an assign, as training does) are exported again before the next batch', async (t) => {
  const g = needs(t);
  if (!g) return;
  const m = await loadModel(join(g, 'model'));
  try {
    const onnx = new PooledSentenceEncoder(m, { pooling: 'avg', engine: 'onnx' });
    const before = await onnx.encode(TEXTS);
    const w = m.model.params.get('encoder.layer.0.output.dense.weight')!;
    tf.tidy(() => w.assign(tf.mul(w, 3)));
    const after = await onnx.encode(TEXTS);
    const want = await new PooledSentenceEncoder(m, { pooling: 'avg', engine: 'tfjs' }).encode(TEXTS);
    assert.ok(maxDiff(after.data, want.data) <= 1e-5, 'ONNX Runtime follows the assigned weights');
    assert.ok(maxDiff(after.data, before.data) > 1e-3, 'the assign changed the embeddings');
  } finally {
    m.model.dispose();
  }
});

test("cache: false (the trainer's dev evaluations) exports to memory: same embeddings, follows new weights, writes nothing to the cache", async (t) => {
  const g = needs(t);
  if (!g) return;
  const m = await loadModel(join(g, 'model'));
  const cacheDir = join(tmp, 'memory-only-cache');
  process.env.ANGLE_ONNX_CACHE = cacheDir;
  try {
    const memory = new MultiPoolingEmbedder(m, { engine: 'onnx', engineOptions: { onnx: { cache: false } } });
    const embed = async () => (await memory.embed(TEXTS, ['cls'])).get('cls')!.data;
    const tfjs = async () => (await new PooledSentenceEncoder(m, { pooling: 'cls', engine: 'tfjs' }).encode(TEXTS)).data;
    assert.equal((await memory.inferenceEngine()).name, 'onnx');
    assert.ok(maxDiff(await embed(), await tfjs()) <= 1e-5);
    const w = m.model.params.get('encoder.layer.1.attention.self.query.weight')!;
    tf.tidy(() => w.assign(tf.mul(w, -2)));
    assert.ok(maxDiff(await embed(), await tfjs()) <= 1e-5, 'follows the assigned weights');
    assert.equal(existsSync(cacheDir), false, 'the memory-only engine wrote to the graph cache');
  } finally {
    process.env.ANGLE_ONNX_CACHE = join(tmp, 'cache');
    m.model.dispose();
  }
});
