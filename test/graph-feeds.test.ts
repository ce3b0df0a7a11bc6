/**
 * Packed inputs of the fused ONNX graph (lib/embed/engines/graph-feeds.ts): packBatch's indices
 * against a hand-made batch (right and left padding), unpackStates back to the padded layout,
 * which graph a batch runs on (graphVariant), and, on the golden tiny BERT through ONNX Runtime, a
 * left-padded batch and the [CLS]-only graph giving the tfjs forward's numbers.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { initBackend, tf } from '../lib/backend/index.js';
import { chooseInferenceEngine } from '../lib/embed/engines/choose.js';
import { graphVariant, packBatch, unpackStates } from '../lib/embed/engines/graph-feeds.js';
import { loadOnnxRuntime } from '../lib/embed/engines/onnx-runtime.js';
import { loadModel } from '../lib/models/auto.js';
import type { TokenBatch } from '../lib/models/types.js';
import { goldenOrSkip } from './helpers/env.js';

const tmp = mkdtempSync(join(tmpdir(), 'graph-feeds-'));
const saved = process.env.ANGLE_ONNX_CACHE;
before(async () => {
  await initBackend('cpu', { quiet: true });
  process.env.ANGLE_ONNX_CACHE = join(tmp, 'cache');
});
after(() => {
  rmSync(tmp, { recursive: true, force: true });
  if (saved === undefined) delete process.env.ANGLE_ONNX_CACHE;
  else process.env.ANGLE_ONNX_CACHE = saved;
});

/** Two rows of four slots: [101, 7, 8, 102] and [101, 9, 102, pad]. */
const RIGHT: TokenBatch = {
  batch: 2,
  seqLen: 4,
  inputIds: Int32Array.of(101, 7, 8, 102, 101, 9, 102, 0),
  attentionMask: Int32Array.of(1, 1, 1, 1, 1, 1, 1, 0),
  tokenTypeIds: Int32Array.of(0, 0, 1, 1, 0, 0, 0, 0),
};

test('packBatch: real tokens row after row, HF position ids, indices between the layouts', () => {
  const p = packBatch(RIGHT);
  assert.equal(p.tokens, 7);
  assert.deepEqual([...p.inputIds], [101, 7, 8, 102, 101, 9, 102]);
  assert.deepEqual([...p.tokenTypeIds], [0, 0, 1, 1, 0, 0, 0]);
  assert.deepEqual([...p.positionIds], [0, 1, 2, 3, 0, 1, 2]);
  assert.deepEqual([...p.unpadIndex], [0, 1, 2, 3, 4, 5, 6]);
  assert.deepEqual([...p.padIndex], [0, 1, 2, 3, 4, 5, 6, 0]);
  assert.deepEqual([...p.firstIndex], [0, 4]);
  assert.equal(p.firstSlotsReal, true);

  // left padding: positions are the padded slots (HF's arange over the sequence), slot 0 is padding
  const left: TokenBatch = { ...RIGHT, inputIds: Int32Array.of(101, 7, 8, 102, 0, 101, 9, 102), attentionMask: Int32Array.of(1, 1, 1, 1, 0, 1, 1, 1), tokenTypeIds: new Int32Array(8) };
  const q = packBatch(left);
  assert.deepEqual([...q.positionIds], [0, 1, 2, 3, 1, 2, 3]);
  assert.deepEqual([...q.unpadIndex], [0, 1, 2, 3, 5, 6, 7]);
  assert.deepEqual([...q.padIndex], [0, 1, 2, 3, 0, 4, 5, 6]);
  assert.equal(q.firstSlotsReal, false);
});

test('unpackStates puts each row at its slot and zeros the padding; a wrong size is refused', () => {
  const p = packBatch(RIGHT);
  const rows = Float32Array.from({ length: 7 * 2 }, (_, i) => i + 1);
  const out = unpackStates(rows, p, 8, 2);
  assert.deepEqual([...out], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0, 0]);
  assert.throws(() => unpackStates(new Float32Array(6), p, 8, 2), /6 values, expected 7 tokens × 2/);
});

test('graphVariant: packed unless padding slots are read or a slot 0 is padding; [CLS]-only where nothing else is read', () => {
  const p = packBatch(RIGHT);
  assert.deepEqual(graphVariant(true, { hiddenStates: false }, p), { inputs: 'packed', hiddenStates: false, rows: 'all' });
  assert.deepEqual(graphVariant(true, { hiddenStates: false, firstTokenOnly: true }, p), { inputs: 'packed', hiddenStates: false, rows: 'first' });
  assert.deepEqual(graphVariant(true, { hiddenStates: true, firstTokenOnly: true }, p), { inputs: 'packed', hiddenStates: true, rows: 'all' });
  assert.deepEqual(graphVariant(true, { hiddenStates: false, padPositions: true, firstTokenOnly: true }, p), { inputs: 'padded', hiddenStates: false, rows: 'all' });
  assert.deepEqual(graphVariant(false, { hiddenStates: false, firstTokenOnly: true }, p), { inputs: 'padded', hiddenStates: false, rows: 'all' });
  assert.deepEqual(graphVariant(true, { hiddenStates: false, firstTokenOnly: true }, { ...p, firstSlotsReal: false }), { inputs: 'padded', hiddenStates: false, rows: 'all' });
});

test('ONNX Runtime: a left-padded batch runs on the padded graph and the [CLS]-only graph gives slot 0, both as the tfjs forward', async (t) => {
  const rt = await loadOnnxRuntime();
  if ('error' in rt) return t.skip(`onnxruntime-node is unavailable here: ${rt.error}`);
  const g = goldenOrSkip(t);
  if (!g) return;
  const m = await loadModel(join(g, 'model'));
  try {
    const engine = await chooseInferenceEngine(m.model, { engine: 'onnx' });
    const texts = ['a man is playing a guitar .', 'short', 'two dogs run across the snow in the morning'];
    const rows = texts.map((s) => m.tokenizer.encode(s, null, 32));
    const diff = (a: tf.Tensor, b: tf.Tensor) => tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]);
    for (const padSide of ['right', 'left'] as const) {
      const batch = m.tokenizer.pad(rows, { padSide });
      const want = m.model.forward(batch);
      const full = await engine.run(batch, { hiddenStates: false, padPositions: true });
      const first = await engine.run(batch, { hiddenStates: false, firstTokenOnly: true });
      try {
        assert.ok(diff(full.lastHiddenState, want.lastHiddenState) <= 1e-5, `${padSide}: padded graph`);
        const slot0 = tf.slice(want.lastHiddenState, [0, 0, 0], [batch.batch, 1, -1]);
        if (padSide === 'right') assert.deepEqual(first.lastHiddenState.shape, [batch.batch, 1, want.lastHiddenState.shape[2]]);
        else assert.deepEqual(first.lastHiddenState.shape, want.lastHiddenState.shape, 'left padding: the padded graph, every slot');
        const got0 = tf.slice(first.lastHiddenState, [0, 0, 0], [batch.batch, 1, -1]);
        assert.ok(diff(got0, slot0) <= 1e-5, `${padSide}: slot 0`);
        tf.dispose([slot0, got0]);
      } finally {
        tf.dispose([want.lastHiddenState, ...(want.poolerOutput ? [want.poolerOutput] : []), full.lastHiddenState, first.lastHiddenState]);
      }
    }
    await engine.dispose();
  } finally {
    m.model.dispose();
  }
});
