/**
 * Encoding on ONNX Runtime without a tfjs copy of the weights (lib/embed/engines/onnx-inference-model.ts,
 * onnx-file-engine.ts; issue 29 items 3 and 4):
 * - a sentence-transformers folder with its own `onnx/model.onnx` (test/fixtures/st-onnx-tiny, made
 *   by its make_fixture.py with torch.onnx from the same weights): loaded directly, its last hidden
 *   state equal to PyTorch's, its embeddings (the folder's mean pooling, ours) equal to the tfjs
 *   path's on the folder's safetensors;
 * - its inputs and outputs checked: a graph without attention_mask or without a hidden-state output
 *   is refused, naming the file and what it has;
 * - our exporter's graph of the golden tiny BERT: the first load exports it (building the tfjs
 *   model for that time only), a second load finds it through the cache alias without building
 *   any tfjs tensor; embeddings equal the tfjs encoder's, for every pooling;
 * - such a model has no tfjs forward: forward and the tfjs engine say so.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { chooseInferenceEngine } from '../lib/embed/engines/choose.js';
import { loadOnnxInferenceModel } from '../lib/embed/engines/onnx-inference-model.js';
import { loadOnnxRuntime } from '../lib/embed/engines/onnx-runtime.js';
import { POOLING_STRATEGIES } from '../lib/embed/pooling.js';
import { loadModel } from '../lib/models/auto.js';
import { OnnxGraphBuilder } from '../lib/models/onnx/graph-builder.js';
import { writeOnnxModel } from '../lib/models/onnx/model-file.js';
import { ONNX_DTYPE } from '../lib/models/onnx/proto.js';
import { InputError, UnavailableError } from '../lib/util/errors.js';
import { goldenOrSkip } from './helpers/env.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'st-onnx-tiny');
const tmp = mkdtempSync(join(tmpdir(), 'onnx-inference-'));
let ortError: string | undefined;

before(async () => {
  await initBackend('cpu', { quiet: true });
  const rt = await loadOnnxRuntime();
  if ('error' in rt) ortError = rt.error;
});
after(() => rmSync(tmp, { recursive: true, force: true }));

function needsOrt(t: { skip: (m: string) => void }): boolean {
  if (ortError) t.skip(`onnxruntime-node is unavailable here: ${ortError}`);
  return !ortError;
}

const TEXTS = ['a man is playing a guitar .', 'two dogs run over the snow', '', 'the cat sits on a red car , at night !', 'zebra'];

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

test("a sentence-transformers folder's own onnx/model.onnx: PyTorch's hidden states, the tfjs path's embeddings", async (t) => {
  if (!needsOrt(t)) return;
  const cache = { dir: join(tmp, 'cache-own') };
  const own = await loadOnnxInferenceModel(FIXTURE, { cache });
  const ref = await loadModel(FIXTURE);
  try {
    assert.match(own.model.graphSource, /its own ONNX file onnx\/model\.onnx/);
    assert.ok(own.sentenceEmbedding, "the folder's pipeline comes along");
    assert.deepEqual(own.weightFiles.map((f) => f.slice(FIXTURE.length + 1)), ['onnx/model.onnx']);
    // the file against the PyTorch forward it was exported from (padding and a second segment)
    const x = JSON.parse(readFileSync(join(FIXTURE, 'expected.json'), 'utf8'));
    const rows: number[][] = x.input_ids;
    const batch = { batch: rows.length, seqLen: rows[0].length, inputIds: Int32Array.from(rows.flat()), attentionMask: Int32Array.from(x.attention_mask.flat()), tokenTypeIds: Int32Array.from(x.token_type_ids.flat()) };
    const o = await own.model.inferenceEngine.run(batch as never, { hiddenStates: false });
    const d = maxDiff(o.lastHiddenState.dataSync() as Float32Array, (x.last_hidden_state as number[][][]).flat(2));
    o.lastHiddenState.dispose();
    assert.ok(d <= 1e-5, `last_hidden_state differs from PyTorch's by ${d}`);
    // embeddings through the folder's own pipeline (mean pooling) and through our cls pooling
    for (const pooling of [undefined, 'cls', 'avg', 'max'] as const) {
      const a = await new PooledSentenceEncoder(own, { pooling }).encode(TEXTS);
      const b = await new PooledSentenceEncoder(ref, { pooling, engine: 'tfjs' }).encode(TEXTS);
      const e = maxDiff(a.data, b.data);
      assert.ok(e <= 1e-5, `${pooling ?? 'folder pipeline'}: own ONNX file vs tfjs differ by ${e}`);
    }
    // no per-layer hidden states in a model's own file
    await assert.rejects(new PooledSentenceEncoder(own, { pooling: 'first_last_avg' }).encode(TEXTS), (e: Error) => e instanceof UnavailableError && /has only the last hidden state/.test(e.message));
  } finally {
    own.model.dispose();
    ref.model.dispose();
  }
});

test('the own file is checked: missing inputs or outputs are refused with the file and what it has', async (t) => {
  if (!needsOrt(t)) return;
  const bad = (name: string, build: (g: OnnxGraphBuilder) => void) => {
    const dir = join(tmp, name);
    cpSync(FIXTURE, dir, { recursive: true });
    const g = new OnnxGraphBuilder(name);
    build(g);
    writeOnnxModel(g.model({ opsets: { '': 17 }, producer: 'test', producerVersion: '0' }), join(dir, 'onnx', 'model.onnx'));
    return dir;
  };
  const noMask = bad('no-mask', (g) => {
    const ids = g.input('input_ids', ONNX_DTYPE.int64, ['batch', 'sequence']);
    const emb = g.initializer('emb', new Float32Array(129 * 32), [129, 32]);
    g.output(g.op('Gather', [emb, ids], {}, { output: 'last_hidden_state' }), ONNX_DTYPE.float, ['batch', 'sequence', 32]);
  });
  await assert.rejects(loadOnnxInferenceModel(noMask, { graph: 'own' }), (e: Error) => e instanceof InputError && /no-mask\/onnx\/model\.onnx/.test(e.message) && /it has no input 'attention_mask'/.test(e.message) && /inputs: input_ids int64\[batch, sequence\]/.test(e.message));
  const wrongOutput = bad('wrong-output', (g) => {
    const ids = g.input('input_ids', ONNX_DTYPE.int64, ['batch', 'sequence']);
    g.input('attention_mask', ONNX_DTYPE.int64, ['batch', 'sequence']);
    const emb = g.initializer('emb', new Float32Array(129 * 2), [129, 2]);
    g.output(g.op('Gather', [emb, ids], {}, { output: 'logits' }), ONNX_DTYPE.float, ['batch', 'sequence', 2]);
  });
  await assert.rejects(loadOnnxInferenceModel(wrongOutput, { graph: 'own' }), (e: Error) => e instanceof InputError && /has no output 'last_hidden_state' or 'token_embeddings'/.test(e.message) && /outputs: logits float32/.test(e.message));
  const wrongWidth = bad('wrong-width', (g) => {
    const ids = g.input('input_ids', ONNX_DTYPE.int64, ['batch', 'sequence']);
    g.input('attention_mask', ONNX_DTYPE.int64, ['batch', 'sequence']);
    const emb = g.initializer('emb', new Float32Array(129 * 16), [129, 16]);
    g.output(g.op('Gather', [emb, ids], {}, { output: 'last_hidden_state' }), ONNX_DTYPE.float, ['batch', 'sequence', 16]);
  });
  await assert.rejects(loadOnnxInferenceModel(wrongWidth, { graph: 'own' }), /hidden size 16, the model's config.json says 32/);
  await assert.rejects(loadOnnxInferenceModel(join(tmp, 'no-mask'), { graph: 'own', quantize: 'int8' }), /quantize applies to the graph our exporter writes/);
});

test('our graph of the weights: exported once, then found by the weights’ hash without building tfjs tensors; every pooling as tfjs', async (t) => {
  if (!needsOrt(t)) return;
  const g = goldenOrSkip(t);
  if (!g) return;
  const dir = join(g, 'model');
  const cache = { dir: join(tmp, 'cache-export') };
  const lines: string[] = [];
  const first = await loadOnnxInferenceModel(dir, { cache, log: (l) => lines.push(l) });
  assert.equal(first.model.graphSource, 'our fused graph of the weights');
  assert.ok(lines.some((l) => l.startsWith('onnx: built bert graph')), JSON.stringify(lines));
  first.model.dispose();
  // a second load: no tfjs tensor is ever made (the alias finds the cached graph)
  lines.length = 0;
  const before = tf.memory().numTensors;
  const profile = await tf.profile(async () => {
    const m = await loadOnnxInferenceModel(dir, { cache, log: (l) => lines.push(l) });
    return tf.scalar(m.model.numParameters());
  });
  assert.equal(profile.newTensors, 1, 'only the scalar this test made');
  assert.ok(profile.peakBytes <= 4, `peak tfjs bytes during the load ${profile.peakBytes}`);
  tf.dispose(profile.result as tf.Tensor);
  assert.equal(tf.memory().numTensors, before);
  assert.deepEqual(lines, []);
  const m = await loadOnnxInferenceModel(dir, { cache });
  const ref = await loadModel(dir);
  try {
    assert.ok(m.model.numParameters() > 1e6, 'parameters counted from the safetensors header');
    assert.equal(m.weightsSha256, ref.weightsSha256, 'same identity as loadModel');
    for (const pooling of POOLING_STRATEGIES) {
      const a = await new PooledSentenceEncoder(m, { pooling }).encode(TEXTS);
      const b = await new PooledSentenceEncoder(ref, { pooling, engine: 'tfjs' }).encode(TEXTS);
      assert.ok(maxDiff(a.data, b.data) <= 1e-5, `${pooling}: ${maxDiff(a.data, b.data)}`);
    }
    // no tfjs forward on it
    assert.throws(() => m.model.forward({} as never), (e: Error) => e instanceof UnavailableError && /loaded for ONNX Runtime inference only/.test(e.message));
    await assert.rejects(chooseInferenceEngine(m.model, { engine: 'tfjs' }), /inference engine 'tfjs' is unavailable/);
    assert.equal(await chooseInferenceEngine(m.model, {}), m.model.inferenceEngine);
  } finally {
    m.model.dispose();
    ref.model.dispose();
  }
});

test('int8 (an option, never the default): a different graph, close to the float one', async (t) => {
  if (!needsOrt(t)) return;
  const g = goldenOrSkip(t);
  if (!g) return;
  const dir = join(g, 'model');
  const cache = { dir: join(tmp, 'cache-int8') };
  const f32 = await loadOnnxInferenceModel(dir, { cache });
  const i8 = await loadOnnxInferenceModel(dir, { cache, quantize: 'int8' });
  try {
    assert.equal(i8.model.graphSource, 'our fused int8 graph of the weights');
    const a = await new PooledSentenceEncoder(f32, { pooling: 'avg' }).encode(TEXTS);
    const b = await new PooledSentenceEncoder(i8, { pooling: 'avg' }).encode(TEXTS);
    let worst = 1;
    for (let r = 0; r < a.rows; r++) {
      let dot = 0;
      let na = 0;
      let nb = 0;
      for (let k = 0; k < a.dim; k++) {
        const [x, y] = [a.data[r * a.dim + k], b.data[r * a.dim + k]];
        dot += x * y;
        na += x * x;
        nb += y * y;
      }
      worst = Math.min(worst, dot / Math.sqrt(na * nb));
    }
    assert.ok(maxDiff(a.data, b.data) > 1e-6, 'int8 changed nothing: not quantised?');
    assert.ok(worst > 0.99, `cosine between float and int8 embeddings down to ${worst}`);
  } finally {
    f32.model.dispose();
    i8.model.dispose();
  }
});
