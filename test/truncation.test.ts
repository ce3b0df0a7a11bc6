/**
 * Truncated embeddings (lib/embed/truncation.ts): an encoder's `truncate.layer` pools
 * hidden_states[layer] (checked against the model's own forward pass, masked mean computed here),
 * `truncate.dim` keeps the first components (exactly the untruncated rows' first columns), both on
 * the tfjs engine and on ONNX Runtime where it is installed; bad values are refused by name. An
 * export with `truncate` (first layers, Dense slice) gives the same vectors through our folder
 * pipeline and through transformers.js (its mean pooling, sliced to the width) as the truncated encoder.
 * Query and document prompts (lib/embed/retrieval-prompts.ts) fill their template before encoding.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder, sharedPoolingEncoders } from '../lib/embed/encoder.js';
import { fillPrompt, promptedEncoder, queryDocumentEncoders, retrievalPrompts } from '../lib/embed/retrieval-prompts.js';
import { exportSentenceTransformer } from '../lib/embed/sentence-transformer-export.js';
import { checkTruncation, truncateColumns } from '../lib/embed/truncation.js';
import { loadModel, type LoadedModel } from '../lib/models/auto.js';
import { NO_GOLDEN_MODEL } from './helpers/env.js';
import { maxAbsDiff, SAMPLE_TEXTS, useGoldenModel } from './helpers/golden-model.js';

const noModel = NO_GOLDEN_MODEL;
const TEXTS = SAMPLE_TEXTS;
const maxAbs = maxAbsDiff;
let m: LoadedModel;
useGoldenModel((loaded) => (m = loaded));

test('checkTruncation and truncateColumns', () => {
  assert.deepEqual(checkTruncation(undefined, 12, 768), { layer: 12, dim: 768 });
  assert.deepEqual(checkTruncation({ layer: 0, dim: 1 }, 12, 768), { layer: 0, dim: 1 });
  assert.throws(() => checkTruncation({ layer: 13 }, 12, 768), /truncate layer: expected an integer in 0..12/);
  assert.throws(() => checkTruncation({ dim: 769 }, 12, 768), /truncate dim: expected an integer in 1..768/);
  assert.throws(() => checkTruncation({ dim: 1.5 }, 12, 768), /truncate dim/);
  assert.deepEqual([...truncateColumns(Float32Array.from([1, 2, 3, 4, 5, 6]), 2, 3, 2)], [1, 2, 4, 5]);
});

test('truncate.layer pools hidden_states[layer] as the model computes it; truncate.dim keeps the first columns', { skip: noModel }, async () => {
  const L = m.model.numLayers;
  for (const layer of [0, 1]) {
    const got = await new PooledSentenceEncoder(m, { pooling: 'avg', engine: 'tfjs', truncate: { layer } }).encode(TEXTS);
    assert.equal(got.dim, m.model.hiddenSize);
    // Each text alone through the model's forward pass; the masked mean of its layer, computed here.
    for (const [i, text] of TEXTS.entries()) {
      const batch = m.tokenizer.encodeBatch([text], { maxLength: m.model.maxPositions });
      const out = m.model.forward(batch, { training: false, outputHiddenStates: true });
      const h = out.hiddenStates![layer].dataSync();
      const T = batch.seqLen;
      const D = m.model.hiddenSize;
      const want = new Float32Array(D);
      for (let t = 0; t < T; t++) for (let d = 0; d < D; d++) want[d] += h[t * D + d] / T;
      tf.dispose([out.lastHiddenState, ...(out.hiddenStates ?? []), ...(out.poolerOutput ? [out.poolerOutput] : [])]);
      const d = maxAbs(got.data.subarray(i * D, (i + 1) * D), want);
      assert.ok(d < 1e-5, `layer ${layer}, text ${i}: ${d}`);
    }
  }
  const full = await new PooledSentenceEncoder(m, { pooling: 'cls', engine: 'tfjs' }).encode(TEXTS);
  const same = await new PooledSentenceEncoder(m, { pooling: 'cls', engine: 'tfjs', truncate: { layer: L } }).encode(TEXTS);
  assert.deepEqual(same.data, full.data);
  const narrow = await new PooledSentenceEncoder(m, { pooling: 'cls', engine: 'tfjs', truncate: { dim: 16 } }).encode(TEXTS);
  assert.equal(narrow.dim, 16);
  assert.deepEqual(narrow.data, truncateColumns(full.data, TEXTS.length, full.dim, 16));
  // Shared encoders truncate every pooling the same way.
  const shared = sharedPoolingEncoders(m, ['cls', 'avg'], { engine: 'tfjs', truncate: { layer: 1, dim: 8 } }).encoders;
  const clsShared = await shared.get('cls')!.encode(TEXTS);
  const clsOne = await new PooledSentenceEncoder(m, { pooling: 'cls', engine: 'tfjs', truncate: { layer: 1, dim: 8 } }).encode(TEXTS);
  assert.equal(clsShared.dim, 8);
  assert.ok(maxAbs(clsShared.data, clsOne.data) < 1e-6);
  assert.throws(() => new PooledSentenceEncoder(m, { pooling: 'cls', truncate: { layer: L + 1 } }), /truncate layer: expected an integer in 0..2/);
  await assert.rejects(new PooledSentenceEncoder(m, { pooling: 'first_last_avg', engine: 'tfjs', truncate: { layer: 1 } }).encode(TEXTS), /reads more than one layer/);
});

test('the ONNX Runtime engine gives the truncated vectors the tfjs engine gives', { skip: noModel }, async (t) => {
  let onnx;
  try {
    onnx = await new PooledSentenceEncoder(m, { pooling: 'cls_avg', engine: 'onnx', truncate: { layer: 1, dim: 32 } }).encode(TEXTS);
  } catch (e) {
    return t.skip(`ONNX Runtime is not usable here: ${(e as Error).message}`);
  }
  const tfjs = await new PooledSentenceEncoder(m, { pooling: 'cls_avg', engine: 'tfjs', truncate: { layer: 1, dim: 32 } }).encode(TEXTS);
  assert.equal(onnx.dim, 32);
  const d = maxAbs(onnx.data, tfjs.data);
  t.diagnostic(`onnx vs tfjs, layer 1 width 32: max |Δ| ${d.toExponential(2)}`);
  assert.ok(d < 1e-4, String(d));
});

test('an export with truncate (layer 1, width 16): our folder pipeline and transformers.js give the truncated encoder\'s vectors', { skip: noModel, timeout: 300_000 }, async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'angle-truncated-export-'));
  try {
    const dir = join(work, 'tiny-l1-d16');
    const out = await exportSentenceTransformer(dir, m, { pooling: 'avg', onnx: true, truncate: { layer: 1, dim: 16 } });
    assert.equal(out.embeddingDim, 16);
    assert.equal(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).num_hidden_layers, 1);
    const want = await new PooledSentenceEncoder(m, { pooling: 'avg', engine: 'tfjs', truncate: { layer: 1, dim: 16 } }).encode(TEXTS);
    const folder = await loadModel(dir);
    try {
      assert.equal(folder.model.numLayers, 1);
      const ours = await new PooledSentenceEncoder(folder, { engine: 'tfjs' }).encode(TEXTS);
      assert.equal(ours.dim, 16);
      const d = maxAbs(ours.data, want.data);
      t.diagnostic(`exported folder (our pipeline) vs truncated encoder: max |Δ| ${d.toExponential(2)}`);
      assert.ok(d < 1e-5, String(d));
    } finally {
      folder.model.dispose();
    }
    const { env, pipeline } = await import('@huggingface/transformers');
    env.allowRemoteModels = false;
    env.localModelPath = `${work}/`;
    const extractor = await pipeline('feature-extraction', 'tiny-l1-d16', { local_files_only: true, dtype: 'fp32' });
    try {
      const batch = await extractor(TEXTS, { pooling: 'mean', normalize: false });
      const [rows, width] = batch.dims as number[];
      const sliced = truncateColumns(batch.data as Float32Array, rows, width, 16);
      const d = maxAbs(sliced, want.data);
      t.diagnostic(`transformers.js (mean, first 16 components) vs truncated encoder: max |Δ| ${d.toExponential(2)}`);
      assert.ok(d < 1e-5, String(d));
    } finally {
      await extractor.dispose();
    }
    await assert.rejects(exportSentenceTransformer(join(work, 'bad'), m, { pooling: 'avg', truncate: { dim: 65 } }), /truncate dim: expected an integer in 1..64/);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('query and document prompts: named sets, templates filled literally, encoders that embed the filled texts', async () => {
  assert.equal(fillPrompt('query: {text}', 'cost $& of it'), 'query: cost $& of it');
  assert.throws(() => fillPrompt('no field', 'x'), /needs '\{text\}' exactly once/);
  assert.throws(() => retrievalPrompts('bge'), /prompt set/);
  const seen: string[][] = [];
  const recorder = { encode: async (texts: string[]) => (seen.push(texts), { data: new Float32Array(texts.length), rows: texts.length, dim: 1 }) };
  const { query, document } = queryDocumentEncoders(recorder, 'angle-uae');
  await query.encode(['what is AnglE?']);
  await document.encode(['AnglE optimises angles.']);
  assert.deepEqual(seen, [['Represent this sentence for searching relevant passages: what is AnglE?'], ['AnglE optimises angles.']]);
  assert.equal(promptedEncoder(recorder, '{text}'), recorder);
});
