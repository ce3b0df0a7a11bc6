import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, unlinkSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { parsePooling, pool } from '../lib/embed/pooling.js';
import { loadModel } from '../lib/models/auto.js';
import { checkForwardGolden } from '../lib/parity/forward.js';
import { assertClose, goldenOrSkip, GOLDEN_DIR } from './helpers/env.js';

const MODEL_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt'];
const tmp: string[] = [];

/** A copy of the golden model directory that a test may damage. */
function modelCopy(): string {
  const d = mkdtempSync(join(tmpdir(), 'bert-'));
  tmp.push(d);
  for (const f of MODEL_FILES) copyFileSync(join(GOLDEN_DIR!, 'model', f), join(d, f));
  return d;
}

before(async () => {
  await initBackend('cpu', { quiet: true });
});
after(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

test('forward parity with PyTorch: token ids identical, every tensor within 1e-5', async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const checks = await checkForwardGolden(g);
  for (const c of checks) t.diagnostic(`${c.ok ? 'ok' : 'FAIL'} ${c.name}: ${c.detail}`);
  assert.ok(checks.length >= 12, `expected at least 12 checks, got ${checks.length}`);
  assert.deepEqual(checks.filter((c) => !c.ok), []);
});

test('batched encoding equals one-by-one encoding and keeps input order', async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const m = await loadModel(join(g, 'model'));
  try {
    const texts = ['a man is playing a guitar .', 'short', '', 'a much longer sentence with many more words than the others in this list .', 'short'];
    for (const pooling of ['cls', 'avg', 'max', 'first_last_avg', 'cls_avg', 'last']) {
      const enc = new PooledSentenceEncoder(m, { pooling, batchSize: 2, maxLength: 16 });
      const all = await enc.encode(texts);
      assert.equal(all.rows, texts.length);
      for (let i = 0; i < texts.length; i++) {
        const one = await enc.encode([texts[i]]);
        // max pooling lets padding zeros win (reference behaviour): batched = max(single, 0) or single
        const expected = (v: number, b: number) => (pooling === 'max' && Math.abs(b) === 0 ? Math.max(v, 0) : v);
        const diff = Math.max(...Array.from(one.data, (v, k) => Math.abs(expected(v, all.data[i * all.dim + k]) - all.data[i * all.dim + k])));
        assert.ok(diff < 1e-5, `${pooling} row ${i}: batched vs single differ by ${diff}`);
      }
      // identical texts give identical rows wherever they sit in the sorted order
      assert.deepEqual(all.data.subarray(1 * all.dim, 2 * all.dim), all.data.subarray(4 * all.dim, 5 * all.dim));
    }
  } finally {
    m.model.dispose();
  }
});

test('pooling: hand-computed values and unknown names', () => {
  const h = tf.tensor3d([[[1, 2], [3, 4], [100, -100]], [[5, 6], [-7, 8], [9, -10]]]);
  const mask = tf.tensor2d([[1, 1, 0], [1, 1, 1]], [2, 3], 'int32');
  const run = (p: string, padSide?: 'left' | 'right') => pool(parsePooling(p), { lastHiddenState: h, attentionMask: mask, padSide }).arraySync();
  assert.deepEqual(run('cls'), [[1, 2], [5, 6]]);
  assertClose(run('avg'), [[2, 3], [7 / 3, 4 / 3]]);
  assert.deepEqual(run('last-avg'), run('avg'));
  assertClose(run('cls_avg'), [[1.5, 2.5], [(5 + 7 / 3) / 2, (6 + 4 / 3) / 2]]);
  // padding counts as 0: row 0's max over [1,3,0] and [2,4,0]
  assert.deepEqual(run('max'), [[3, 4], [9, 8]]);
  assert.deepEqual(run('last'), [[3, 4], [9, -10]]);
  assert.deepEqual(run('last', 'left'), [[100, -100], [9, -10]]);
  assert.throws(() => parsePooling('mean-max'), /unknown pooling 'mean-max': expected one of cls, cls_avg, avg, max, first_last_avg, last/);
  assert.throws(() => pool('first_last_avg', { lastHiddenState: h, attentionMask: mask }), /needs the hidden states/);
});

test('dropout only in training mode, reproducible from the seed', async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const a = await loadModel(join(g, 'model'), { dropoutSeed: 7 });
  const b = await loadModel(join(g, 'model'), { dropoutSeed: 7 });
  try {
    const batch = a.tokenizer.encodeBatch(['a girl is styling her hair .', 'hello world'], { maxLength: 16 });
    const evalA = a.model.forward(batch).lastHiddenState.dataSync();
    const evalA2 = a.model.forward(batch).lastHiddenState.dataSync();
    assert.deepEqual(evalA, evalA2);
    const trainA = a.model.forward(batch, { training: true }).lastHiddenState.dataSync();
    const trainB = b.model.forward(batch, { training: true }).lastHiddenState.dataSync();
    assert.deepEqual(trainA, trainB, 'same seed, same masks');
    assert.notDeepEqual(trainA, evalA, 'training mode applies dropout');
  } finally {
    a.model.dispose();
    b.model.dispose();
  }
});

test('a loaded model holds one tensor per parameter, and dispose() frees every one', async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const before = tf.memory().numTensors;
  const m = await loadModel(join(g, 'model'));
  assert.equal(tf.memory().numTensors - before, m.model.params.size, 'tensors held by a loaded model');
  m.model.dispose();
  assert.equal(tf.memory().numTensors, before, 'tensors left after dispose()');
});

test('bad model directories fail with the file and the problem', async (t) => {
  if (!goldenOrSkip(t)) return;
  await assert.rejects(loadModel('/nonexistent/dir/for/sure'), /'\/nonexistent\/dir\/for\/sure' is neither an existing directory nor a Hugging Face Hub id/);

  let d = modelCopy();
  unlinkSync(join(d, 'config.json'));
  await assert.rejects(loadModel(d), new RegExp(`${d}: model directory has no config.json`));

  d = modelCopy();
  writeFileSync(join(d, 'config.json'), '{"hidden_size": 64,');
  await assert.rejects(loadModel(d), new RegExp(`${d}/config.json: model config is not readable JSON`));

  d = modelCopy();
  const cfg = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8'));
  delete cfg.hidden_size;
  writeFileSync(join(d, 'config.json'), JSON.stringify(cfg));
  await assert.rejects(loadModel(d), /config\.json: 'hidden_size' must be a positive integer, found undefined/);

  d = modelCopy();
  writeFileSync(join(d, 'config.json'), JSON.stringify({ ...cfg, hidden_size: 64, num_hidden_layers: 3 }));
  await assert.rejects(loadModel(d), /checkpoint does not fit the BERT config \(3 layers, hidden 64\): missing 16: encoder\.layer\.2\.attention\.self\.query\.weight/);

  d = modelCopy();
  writeFileSync(join(d, 'config.json'), JSON.stringify({ ...cfg, hidden_size: 64, intermediate_size: 128 }));
  await assert.rejects(loadModel(d), /shape mismatch 6: encoder\.layer\.0\.intermediate\.dense\.weight: checkpoint \[256,64\], config expects \[128,64\]/);

  d = modelCopy();
  unlinkSync(join(d, 'tokenizer.json'));
  await assert.rejects(loadModel(d), new RegExp(`${d}: model directory has no tokenizer.json`));

  d = modelCopy();
  truncateSync(join(d, 'model.safetensors'), statSync(join(d, 'model.safetensors')).size - 100);
  await assert.rejects(loadModel(d), /model\.safetensors: truncated safetensors: tensor '.*' ends at byte/);

  d = modelCopy();
  unlinkSync(join(d, 'model.safetensors'));
  writeFileSync(join(d, 'pytorch_model.bin'), 'x');
  // pytorch_model.bin is read now (lib/models/torch-checkpoint); one that is not a checkpoint says so.
  await assert.rejects(loadModel(d), /pytorch_model\.bin: not a PyTorch checkpoint: expected a zip archive \(torch\.save since 1\.6\) or a pickle/);
});

test('shared-pooling encoders: same rows as single encoders, one forward pass per text', async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const { sharedPoolingEncoders } = await import('../lib/embed/encoder.js');
  const m = await loadModel(join(g, 'model'));
  try {
    const texts = ['a man is playing a guitar .', 'a woman slices an onion .', 'a man is playing a guitar .', ''];
    let forwards = 0;
    const original = m.model.forward.bind(m.model);
    m.model.forward = (b, o) => {
      forwards++;
      return original(b, o);
    };
    const { encoders } = sharedPoolingEncoders(m, ['cls', 'last-avg', 'first_last_avg'], { maxLength: 32 });
    const cls = await encoders.get('cls')!.encode(texts);
    const calls = forwards;
    const avg = await encoders.get('avg')!.encode(texts);
    const fla = await encoders.get('first_last_avg')!.encode(texts.slice(1));
    assert.equal(forwards, calls, 'avg and first_last_avg come from the cached forward pass');
    for (const [pooling, got] of [['cls', cls], ['avg', avg]] as const) {
      const want = await new PooledSentenceEncoder(m, { pooling, maxLength: 32 }).encode(texts);
      // a [CLS] encoder alone may run ONNX Runtime's [CLS]-only graph, whose last layer multiplies
      // other matrix shapes: equal to float rounding, not bit for bit
      assert.deepEqual({ rows: got.rows, dim: got.dim }, { rows: want.rows, dim: want.dim }, pooling);
      let d = 0;
      for (let i = 0; i < want.data.length; i++) d = Math.max(d, Math.abs(got.data[i] - want.data[i]));
      assert.ok(d <= 1e-6, `${pooling}: shared and single encoders differ by ${d}`);
    }
    assert.deepEqual(fla, await new PooledSentenceEncoder(m, { pooling: 'first_last_avg', maxLength: 32 }).encode(texts.slice(1)));
  } finally {
    m.model.dispose();
  }
});
