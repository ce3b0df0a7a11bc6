/**
 * RanNet (lib/models/ran/): its windows, config and tokenizer rules, parity with the golden set
 * (every case, every layer's tensors, through the same suite `npm run parity -- --only ran` runs),
 * parity on a second set of another layout built by the set's own generator where Python and NumPy
 * are here, training (checkpointing gives the same gradients; LoRA on its Dense layers), loading
 * its saved parameters back and loading the released layout (a TensorFlow checkpoint folder).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { addLora, mergeLora } from '../lib/models/adapters/lora.js';
import { loadModel } from '../lib/models/auto.js';
import { parseRanConfig } from '../lib/models/ran/config.js';
import type { RanModel } from '../lib/models/ran/model.js';
import { ranWindows } from '../lib/models/ran/windows.js';
import { openSafetensors, serializeSafetensors } from '../lib/models/safetensors.js';
import { readRanVocab, ranTokenizer } from '../lib/models/tokenizers/ran-wordpiece.js';
import { goldenSuites } from '../lib/parity/suites.js';
import { SHARED_DIR } from './helpers/env.js';
import { bytesOf, DT, writeTfBundle, type BundleTensor } from './helpers/tf-bundle-writer.js';

const RAN_SET = SHARED_DIR ? join(SHARED_DIR, 'golden', 'ran-tiny-seed11') : undefined;
const skip = RAN_SET && existsSync(RAN_SET) ? false : 'needs <shared>/golden/ran-tiny-seed11 (ANGLE_SHARED_DIR)';

test('windows: cut from the padded length, a tail shorter than the minimum merged into the previous window', () => {
  assert.deepEqual(ranWindows(7, 8, 3), [[0, 7]]);
  assert.deepEqual(ranWindows(8, 8, 3), [[0, 8]]);
  assert.deepEqual(ranWindows(10, 8, 3), [[0, 10]]); // tail 2 < 3: one 10-token window
  assert.deepEqual(ranWindows(11, 8, 3), [[0, 8], [8, 11]]); // tail = min: kept
  assert.deepEqual(ranWindows(16, 8, 3), [[0, 8], [8, 16]]);
  assert.deepEqual(ranWindows(17, 8, 3), [[0, 8], [8, 17]]); // merged after a loop step
  assert.deepEqual(ranWindows(44, 8, 3), [[0, 8], [8, 16], [16, 24], [24, 32], [32, 40], [40, 44]]);
  assert.deepEqual(ranWindows(13, 6, 2), [[0, 6], [6, 13]]);
  assert.throws(() => ranWindows(0, 8, 3), /at least one token/);
});

test('config: RanNetParams defaults, vocab_size required, unsupported fields refused by name', () => {
  const c = parseRanConfig({ vocab_size: 100 });
  assert.equal(c.hiddenSize, 512);
  assert.equal(c.windowSize, 256);
  assert.equal(c.minWindowSize, 16);
  assert.equal(c.cellPooling, 'last');
  assert.throws(() => parseRanConfig({ embedding_size: 8 }, 'x/config.json'), /x\/config\.json: 'vocab_size' must be a positive integer \(required/);
  assert.throws(() => parseRanConfig({ vocab_size: 10, apply_lm_mask: true }), /'apply_lm_mask'.*not supported/);
  assert.throws(() => parseRanConfig({ vocab_size: 10, cell_pooling: 'sum' }), /cell_pooling/);
  assert.throws(() => parseRanConfig({ vocab_size: 10, window_size: 4, min_window_size: 4 }), /must exceed/);
  assert.throws(() => parseRanConfig({ vocab_size: 10, model_type: 'bert' }), /model_type/);
});

test('tokenizer: no [CLS]/[SEP] around one text, A [SEP] B [SEP] for a pair, [PAD] = 0, from vocab.txt', { skip }, () => {
  const tok = ranTokenizer(join(RAN_SET!, 'model'));
  const vocab = readRanVocab(join(RAN_SET!, 'model', 'vocab.txt'));
  const one = tok.encode('A man is playing a guitar.');
  assert.deepEqual(one.ids, [1037, 2158, 2003, 2652, 1037, 2858, 1012]);
  const sep = vocab.get('[SEP]')!;
  const pair = tok.encode('a man', 'a dog');
  assert.deepEqual(pair.ids, [vocab.get('a')!, vocab.get('man')!, sep, vocab.get('a')!, vocab.get('dog')!, sep]);
  assert.equal(tok.padId, 0);
  const b = tok.encodeBatch(['a man', 'a']);
  assert.deepEqual([...b.inputIds], [vocab.get('a')!, vocab.get('man')!, vocab.get('a')!, 0]);
  const dir = mkdtempSync(join(tmpdir(), 'ran-vocab-'));
  try {
    writeFileSync(join(dir, 'vocab.txt'), '[UNK]\n[PAD]\n[SEP]\na\n');
    assert.throws(() => readRanVocab(join(dir, 'vocab.txt')), /vocab\.txt:2: \[PAD\] must be id 0/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('parity: every case and layer of the visible golden set (npm run parity -- --only ran)', { skip }, async (t) => {
  await initBackend('cpu', { quiet: true });
  const checks = [];
  for (const s of goldenSuites({ goldenDir: RAN_SET!, only: ['ran'] })) checks.push(...(await s.run()));
  for (const c of checks.filter((x) => !x.ok || /sentence_embedding/.test(x.name))) t.diagnostic(`${c.ok ? 'ok' : 'FAIL'} ${c.name}: ${c.detail}`);
  assert.ok(checks.length >= 250, `only ${checks.length} checks`);
  for (const name of ['ran/batch/layer1.outputs', 'ran/history_second/from_our_history/sentence_embedding', 'ran/long/windows', 'ran/batch/cell_transform.mean_mean']) {
    assert.ok(checks.some((c) => c.name === name), `${name} checked`);
  }
  assert.deepEqual(checks.filter((c) => !c.ok), []);
});

function hasNumpy(): boolean {
  try {
    execFileSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('parity on another layout (D 24, 3 layers, 3 heads x 4, window 6 / min 2, cell_pooling last) built by the set generator', { skip: skip || (hasNumpy() ? false : 'needs python3 with numpy to run make_golden.py') }, async () => {
  await initBackend('cpu', { quiet: true });
  const dir = mkdtempSync(join(tmpdir(), 'ran-golden-'));
  try {
    const spec = {
      name: 'ran-test-seed29',
      seed: 29,
      config: { vocab_size: 30522, embedding_size: 24, ran_layers: 3, head_num: 3, head_size: 4, window_size: 6, min_window_size: 2, cell_pooling: 'last' },
      singles: [
        ['one', 'Hi.'],
        ['six', 'The cat sat on a mat.'],
        ['long', 'A long sentence about many things, written to cross several windows of six tokens each and then some more words.'],
      ],
      history: ['A man is playing a guitar.', 'A woman is slicing an onion in the kitchen before dinner.'],
      batch: ['A long sentence about many things, written to cross several windows of six tokens each.', 'Short one.', '', 'Another sentence here.'],
      batch_short: ['Yes.', 'No way.'],
      causal_case: 'long',
    };
    writeFileSync(join(dir, 'spec.json'), JSON.stringify(spec));
    execFileSync('python3', [join(RAN_SET!, 'make_golden.py'), join(dir, 'spec.json'), join(dir, 'set')], {
      stdio: 'ignore',
      env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1' },
    });
    const checks = [];
    for (const s of goldenSuites({ goldenDir: join(dir, 'set'), only: ['ran'] })) checks.push(...(await s.run()));
    assert.ok(checks.length >= 150, `only ${checks.length} checks`);
    assert.ok(checks.some((c) => c.name === 'ran/long/layer2.cells' && c.ok));
    assert.ok(checks.some((c) => c.name === 'ran/batch/pooled_cell(last)' && c.ok));
    assert.deepEqual(checks.filter((c) => !c.ok), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Gradients of Σ pooled² over every trainable parameter. */
function gradients(model: RanModel, batch: Parameters<RanModel['forward']>[0], checkpointing: boolean): Map<string, Float32Array> {
  const vars = [...model.trainableParameters().values()];
  const names = [...model.trainableParameters().keys()];
  const { grads, value } = tf.variableGrads(() => {
    const out = model.forward(batch, { training: true, checkpointing });
    return tf.sum(tf.square(out.poolerOutput!)) as tf.Scalar;
  }, vars);
  value.dispose();
  const out = new Map<string, Float32Array>();
  // A variable the loss does not reach (the cell-transform head) has no entry: its gradient is 0.
  for (const [i, v] of vars.entries()) out.set(names[i], grads[v.name] ? (grads[v.name].dataSync() as Float32Array) : new Float32Array(v.size));
  tf.dispose(Object.values(grads));
  return out;
}

test('training: checkpointing gives the same gradients; LoRA on its Dense layers starts as the base and merges back', { skip }, async () => {
  await initBackend('cpu', { quiet: true });
  const m = await loadModel(join(RAN_SET!, 'model'));
  const model = m.model as RanModel;
  try {
    model.setDropout(0);
    const batch = m.tokenizer.encodeBatch(['A child is reading a book in the library while the rain falls outside.', 'Rain.']);
    const plain = gradients(model, batch, false);
    const ckpt = gradients(model, batch, true);
    assert.equal(plain.size, model.params.size);
    let nonzero = 0;
    const unreached: string[] = [];
    for (const [name, g] of plain) {
      const h = ckpt.get(name)!;
      for (let i = 0; i < g.length; i++) assert.ok(Math.abs(g[i] - h[i]) <= 1e-5 * Math.max(1, Math.abs(g[i])), `${name}[${i}]: ${g[i]} vs ${h[i]}`);
      if (g.some((x) => x !== 0)) nonzero++;
      else unreached.push(name);
    }
    // The mean of the top layer's cells does not read: the cell-transform head, the top layer's
    // memory review, the top layer's residual for a third window (two windows here), the
    // initializer of layer 1 (its cell is not zero) and layer 0's initializer kernel and gamma
    // (they act on a zero cell): 8 + 14 + 6 + 3 + 2 = 33 of 89.
    assert.equal(nonzero, plain.size - 33, `unreached: ${unreached.join(', ')}`);
    assert.ok(unreached.every((n) => /output-cell|output-pooling|ran-1\.(output-attn|cell-glu|cell-residual|cell-initializer)|ran-0\.cell-initializer(\.weight|-layernorm\.gamma)/.test(n)), unreached.join(', '));

    const before = tf.tidy(() => model.forward(batch).poolerOutput!.dataSync());
    const modules = addLora(model, { r: 4, alpha: 8, dropout: 0, targetModules: ['dense-q', 'dense-v'] }, 1);
    assert.equal(modules.length, 2 * 2 * model.numLayers, 'dense-q and dense-v of both attentions in every layer');
    assert.ok(modules.includes('rannet.ran-0.encode-attn.dense-q') && modules.includes('rannet.ran-1.output-attn.dense-v'));
    const atInit = tf.tidy(() => model.forward(batch).poolerOutput!.dataSync());
    assert.deepEqual([...atInit], [...before], 'B = 0: the adapted model computes what the base did');
    const lora = gradients(model, batch, true);
    assert.ok([...lora.keys()].every((k) => /lora_[AB]\.weight$/.test(k)), 'only the adapters train');
    assert.ok([...lora.values()].some((g) => g.some((x) => x !== 0)));
    mergeLora(model);
    const merged = tf.tidy(() => model.forward(batch).poolerOutput!.dataSync());
    for (let i = 0; i < before.length; i++) assert.ok(Math.abs(merged[i] - before[i]) < 1e-6);
  } finally {
    m.model.dispose();
  }
});

test('a trained model saved under its own parameter names loads back and computes the same', { skip }, async () => {
  await initBackend('cpu', { quiet: true });
  const m = await loadModel(join(RAN_SET!, 'model'));
  const dir = mkdtempSync(join(tmpdir(), 'ran-saved-'));
  try {
    const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
    for (const [name, v] of m.model.params) tensors[name] = { shape: v.shape.slice(), data: v.dataSync() as Float32Array };
    mkdirSync(join(dir, 'best'));
    writeFileSync(join(dir, 'best', 'model.safetensors'), serializeSafetensors(tensors));
    for (const f of ['config.json', 'vocab.txt']) copyFileSync(join(RAN_SET!, 'model', f), join(dir, 'best', f));
    const again = await loadModel(join(dir, 'best'));
    try {
      const batch = m.tokenizer.encodeBatch(['The quick brown fox jumps over the lazy dog.']);
      const a = tf.tidy(() => m.model.forward(batch).lastHiddenState.dataSync());
      const b = tf.tidy(() => again.model.forward(batch).lastHiddenState.dataSync());
      assert.deepEqual([...b], [...a]);
      assert.equal(again.model.architecture, 'rannet');
    } finally {
      again.model.dispose();
    }
  } finally {
    m.model.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a released-layout folder (config.json, vocab.txt, model.ckpt.index + 2 data shards) loads through loadModel and computes what the safetensors do', { skip }, async () => {
  await initBackend('cpu', { quiet: true });
  const dir = mkdtempSync(join(tmpdir(), 'ran-ckpt-'));
  const st = await loadModel(join(RAN_SET!, 'model'));
  try {
    const g = openSafetensors(join(RAN_SET!, 'model', 'model.safetensors'));
    let tensors: BundleTensor[];
    try {
      tensors = g.names().map((name) => ({ name, dtype: DT.float, shape: g.readRaw(name).shape, bytes: g.readRaw(name).bytes.slice() }));
    } finally {
      g.close();
    }
    // A training checkpoint's step counter, which the released one may still hold: left unread.
    tensors.push({ name: 'global_step', dtype: DT.int64, shape: [], bytes: bytesOf(BigInt64Array.of(7n)) });
    writeTfBundle(join(dir, 'model.ckpt'), tensors, { numShards: 2 });
    for (const f of ['config.json', 'vocab.txt']) copyFileSync(join(RAN_SET!, 'model', f), join(dir, f));
    const ck = await loadModel(dir);
    try {
      assert.deepEqual(ck.weightFiles.map((f) => f.slice(dir.length + 1)), ['model.ckpt.index', 'model.ckpt.data-00000-of-00002', 'model.ckpt.data-00001-of-00002']);
      const batch = st.tokenizer.encodeBatch(['William Shakespeare wrote many plays and poems that are still read today by many people.', 'Short.']);
      const a = tf.tidy(() => st.model.forward(batch).poolerOutput!.dataSync());
      const b = tf.tidy(() => ck.model.forward(batch).poolerOutput!.dataSync());
      assert.deepEqual([...b], [...a]);
    } finally {
      ck.model.dispose();
    }
    // A shape the config does not expect is one line naming the variable.
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...cfg, head_size: 4 }));
    await assert.rejects(loadModel(dir), /model\.ckpt\.index: checkpoint variable 'rannet\/ran-0\/encode-attn\/dense-[kqv]\/(kernel|bias)' has shape \[(32, )?16\], the config expects \[(32, )?8\]/);
  } finally {
    st.model.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('training with dropout: checkpointing replays the same masks (same gradients), and the masks change the output', { skip }, async () => {
  await initBackend('cpu', { quiet: true });
  const m = await loadModel(join(RAN_SET!, 'model'));
  const model = m.model as RanModel;
  try {
    model.setDropout(0.1);
    const batch = m.tokenizer.encodeBatch(['A child is reading a book in the library while the rain falls outside the window today.', 'Rain.']);
    model.dropoutCounter = 0;
    const plain = gradients(model, batch, false);
    const drawn = model.dropoutCounter;
    model.dropoutCounter = 0;
    const ckpt = gradients(model, batch, true);
    assert.equal(model.dropoutCounter, drawn, 'the checkpointed pass draws as many masks as the plain one');
    // embedding + per layer: initializer, 3 windows x 6 (concat LN, probabilities, output, tokens, cell, and the loop step's residual but for the final step), memory review 2
    assert.ok(drawn > 20, `${drawn} masks`);
    for (const [name, g] of plain) {
      const h = ckpt.get(name)!;
      for (let i = 0; i < g.length; i++) assert.ok(Math.abs(g[i] - h[i]) <= 1e-5 * Math.max(1, Math.abs(g[i])), `${name}[${i}]: ${g[i]} vs ${h[i]}`);
    }
    const inference = tf.tidy(() => model.forward(batch).poolerOutput!.dataSync());
    const training = tf.tidy(() => model.forward(batch, { training: true }).poolerOutput!.dataSync());
    assert.notDeepEqual([...training], [...inference]);
  } finally {
    m.model.dispose();
  }
});
