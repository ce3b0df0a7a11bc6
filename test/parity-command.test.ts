/**
 * `npm run parity` must work for any golden set of the documented layout, not only the one in
 * ../shared. This builds a second set with another shape (3 layers, hidden 48, 3 heads, eps
 * 1e-7, 64 positions) and seed, whose reference tensors come from our own forward pass: it
 * checks that nothing in the command is tied to one shape, and that a wrong number fails it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { pool } from '../lib/embed/pooling.js';
import { parseBertConfig } from '../lib/models/bert/config.js';
import { BertModel } from '../lib/models/bert/model.js';
import { bertParameterShapes } from '../lib/models/bert/weights.js';
import { writeSafetensors, type TensorToWrite } from '../lib/models/safetensors.js';
import { HfTokenizer } from '../lib/models/tokenizers/hf.js';
import { GOLDEN_DIR } from './helpers/env.js';

let dir = '';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

function runParity(goldenDir: string): { code: number; out: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/parity.ts', '--golden', goldenDir, '--only', 'forward'], { encoding: 'utf8' });
  return { code: r.status ?? -1, out: r.stdout + r.stderr };
}

before(async () => {
  if (!GOLDEN_DIR) return;
  await initBackend('cpu', { quiet: true });
  dir = mkdtempSync(join(tmpdir(), 'golden-alt-'));
  const set = join(dir, 'bert-alt-seed99');
  mkdirSync(join(set, 'model'), { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'vocab.txt']) copyFileSync(join(GOLDEN_DIR, 'model', f), join(set, 'model', f));
  const rawConfig = {
    model_type: 'bert', vocab_size: 30522, hidden_size: 48, num_hidden_layers: 3, num_attention_heads: 3, intermediate_size: 96,
    max_position_embeddings: 64, type_vocab_size: 2, layer_norm_eps: 1e-7, hidden_act: 'gelu', hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1,
  };
  writeFileSync(join(set, 'model', 'config.json'), JSON.stringify(rawConfig, null, 1));
  const cfg = parseBertConfig(rawConfig);
  const rnd = lcg(99);
  const weights = new Map<string, { shape: number[]; data: Float32Array }>();
  const std: Record<string, TensorToWrite> = {};
  const hubNamed: Record<string, TensorToWrite> = { 'cls.predictions.bias': { shape: [30522], data: new Float32Array(30522) } };
  for (const [name, shape] of bertParameterShapes(cfg)) {
    const data = Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (name.endsWith('LayerNorm.weight') ? 1 + rnd() * 0.2 : rnd() * 0.1));
    weights.set(name, { shape, data });
    std[name] = { shape, data };
    hubNamed['bert.' + name.replace(/LayerNorm\.weight$/, 'LayerNorm.gamma').replace(/LayerNorm\.bias$/, 'LayerNorm.beta')] = { shape, data };
  }
  writeSafetensors(join(set, 'model', 'model.safetensors'), std);
  writeSafetensors(join(set, 'model-hub-naming.safetensors'), hubNamed);

  const sentences = ['a dog runs .', '', 'Ünïcödé and emoji 🙂', 'word '.repeat(40).trim()];
  const forward = { sentences, max_length: 20, pair: { a: 'a dog runs .', b: 'a cat sleeps .', ids: [] as number[], type_ids: [] as number[] } };
  const tok = HfTokenizer.fromDir(join(set, 'model'));
  const p = tok.encode(forward.pair.a, forward.pair.b, 20);
  forward.pair.ids = p.ids;
  forward.pair.type_ids = p.typeIds;
  writeFileSync(join(set, 'forward.json'), JSON.stringify(forward));
  const batch = tok.encodeBatch(sentences, { maxLength: 20 });
  const model = new BertModel(cfg, weights);
  const o = model.forward(batch, { outputHiddenStates: true });
  const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
  const out: Record<string, TensorToWrite> = {
    input_ids: { dtype: 'I32', shape: [batch.batch, batch.seqLen], data: batch.inputIds },
    attention_mask: { dtype: 'I32', shape: [batch.batch, batch.seqLen], data: batch.attentionMask },
    token_type_ids: { dtype: 'I32', shape: [batch.batch, batch.seqLen], data: batch.tokenTypeIds },
    last_hidden_state: { shape: o.lastHiddenState.shape, data: o.lastHiddenState.dataSync() },
    hidden_state_2: { shape: o.hiddenStates[2].shape, data: o.hiddenStates[2].dataSync() },
    pooler_output: { shape: o.poolerOutput!.shape, data: o.poolerOutput!.dataSync() },
  };
  for (const s of ['cls', 'avg', 'max', 'first_last_avg'] as const) {
    const v = pool(s, { lastHiddenState: o.lastHiddenState, hiddenStates: o.hiddenStates, attentionMask: mask });
    out[`pool_${s}`] = { shape: v.shape, data: v.dataSync() };
  }
  writeSafetensors(join(set, 'forward.safetensors'), out);
  model.dispose();
  // A broken copy: one activation off by 1e-3, and a tensor no computation maps to.
  const bad = join(dir, 'broken');
  mkdirSync(bad);
  for (const f of ['forward.json', 'model-hub-naming.safetensors']) copyFileSync(join(set, f), join(bad, f));
  mkdirSync(join(bad, 'model'));
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt']) copyFileSync(join(set, 'model', f), join(bad, 'model', f));
  const shifted = Float32Array.from(out.last_hidden_state.data);
  shifted[5] += 1e-3;
  writeSafetensors(join(bad, 'forward.safetensors'), { ...out, last_hidden_state: { shape: out.last_hidden_state.shape, data: shifted }, pool_weird: out.pool_cls });
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('parity passes on a golden set of another shape and seed', (t) => {
  if (!GOLDEN_DIR) return t.skip('ANGLE_GOLDEN_DIR is not set (its tokenizer files are reused)');
  const r = runParity(join(dir, 'bert-alt-seed99'));
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /PASS bert-alt-seed99 forward\/hidden_state_2/);
  assert.match(r.out, /PASS bert-alt-seed99 forward-hub-naming\/pooler_output/);
  assert.match(r.out, /^parity: 15 passed, 0 failed$/m);
});

test('parity fails, naming the tensor, when a number is off or unknown', (t) => {
  if (!GOLDEN_DIR) return t.skip('ANGLE_GOLDEN_DIR is not set (its tokenizer files are reused)');
  const r = runParity(join(dir, 'broken'));
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /FAIL broken forward\/last_hidden_state: max \|diff\| 1\.00e-3/);
  assert.match(r.out, /FAIL broken forward\/pool_weird: unknown golden tensor 'pool_weird'/);
  assert.match(r.out, /^parity: 13 passed, 3 failed$/m);
});

test('parity refuses a directory without golden sets', () => {
  const empty = mkdtempSync(join(tmpdir(), 'golden-empty-'));
  try {
    const r = runParity(empty);
    assert.equal(r.code, 2, r.out);
    assert.match(r.out, /parity: .*golden-empty-\w+: neither a golden set nor a folder of them/);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
