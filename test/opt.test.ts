import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { addLora, isLoraParameter, mergeLora, selectLoraModules } from '../lib/models/adapters/lora.js';
import { loadModel, MODEL_TYPES } from '../lib/models/auto.js';
import { disposeKvCache } from '../lib/models/causal-decoder.js';
import { parseOptConfig } from '../lib/models/opt/config.js';
import { loadOptModel } from '../lib/models/opt/load.js';
import { OptModel, optPositionIds } from '../lib/models/opt/model.js';
import { readSafetensors, writeSafetensors } from '../lib/models/safetensors.js';
import { HfTokenizer } from '../lib/models/tokenizers/hf.js';
import type { LoadedModel } from '../lib/models/types.js';
import { maxAbsDiff } from '../lib/parity/check.js';
import { checkOptGolden } from '../lib/parity/opt-decoder.js';
import { goldenSetKind } from '../lib/parity/suites.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';
import { SHARED_DIR } from './helpers/env.js';

/** Post-LN with project_in/out, vocab.json + merges.txt, `decoder.*` weight names (made by its make_fixture.py). */
const FIXTURE = join(import.meta.dirname, 'fixtures', 'opt-post-ln-proj');
/** The shared pre-LN golden set (HF modeling_opt.py transcription): ANGLE_OPT_GOLDEN_DIR, else <shared>/golden/opt-tiny-seed7. */
const SHARED_OPT = process.env.ANGLE_OPT_GOLDEN_DIR ?? (SHARED_DIR ? join(SHARED_DIR, 'golden', 'opt-tiny-seed7') : undefined);

function sharedOrSkip(t: { skip: (msg: string) => void }): string | undefined {
  if (SHARED_OPT && existsSync(join(SHARED_OPT, 'golden.json'))) return SHARED_OPT;
  t.skip('no OPT golden set: set ANGLE_OPT_GOLDEN_DIR or ANGLE_SHARED_DIR (../shared/golden/opt-tiny-seed7)');
  return undefined;
}

const tmp: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'opt-'));
  tmp.push(d);
  return d;
}

before(async () => {
  await initBackend('cpu', { quiet: true });
});
after(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

function failures(checks: Array<{ name: string; ok: boolean; detail: string }>): string[] {
  return checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
}

test('OPT parity, post-LN with project_in/out (committed fixture): ids, every hidden state, logits, embeddings under both paddings, greedy text', async () => {
  assert.equal(goldenSetKind(FIXTURE), 'decoder');
  const checks = await checkOptGolden(FIXTURE);
  assert.deepEqual(failures(checks), []);
  // The suite covers what it says: both paddings, the encoder, greedy alone and batched.
  for (const part of ['opt/batch/left/hidden_states[1] (real tokens)', 'opt/batch/right/sentence_embedding (last real token)', 'opt/batch/prompt-encoder/sentence_embedding', 'opt/greedy1/new_text', 'opt/greedy-batched-left-padded/prompt1/new_ids']) {
    assert.ok(checks.some((c) => c.name === part), part);
  }
});

test('OPT parity with the shared golden set (HF modeling_opt.py transcription, pre-LN): every check passes', async (t) => {
  const dir = sharedOrSkip(t);
  if (!dir) return;
  assert.equal(goldenSetKind(dir), 'decoder');
  const checks = await checkOptGolden(dir);
  assert.ok(checks.length > 100, `${checks.length} checks`);
  assert.deepEqual(failures(checks), []);
});

test('loadModel dispatches model_type opt; the fixture reads vocab.json + merges.txt, BOS </s> first, pad 1 on the left, lm_head copy ignored', async () => {
  assert.ok(MODEL_TYPES.includes('opt'));
  const m = await loadModel(join(FIXTURE, 'model'));
  try {
    assert.ok(m.model instanceof OptModel);
    const model = m.model as OptModel;
    assert.equal(model.architecture, 'opt');
    assert.equal(model.hiddenSize, 16, 'hiddenSize is the output width (word_embed_proj_dim)');
    assert.equal(model.config.hiddenSize, 32);
    assert.ok(!model.params.has('lm_head.weight') && model.params.has('model.decoder.project_in.weight'));
    const enc = m.tokenizer.encode('Hi.');
    assert.equal(enc.ids[0], 2);
    assert.equal(m.tokenizer.padId, 1);
    assert.equal(m.tokenizer.padSide, 'left');
    const batch = m.tokenizer.encodeBatch(['Hi.', 'A short one.']);
    assert.equal(batch.inputIds[0], 1);
    assert.equal(batch.attentionMask[0], 0);
    // Truncation keeps BOS within the budget.
    assert.equal(m.tokenizer.encode('A short one.', null, 3).ids.length, 3);
  } finally {
    m.model.dispose();
  }
});

test('OPT positions: cumsum(mask) · mask − 1 per row, padding −1, cached tokens counted', () => {
  assert.deepEqual([...optPositionIds(Int32Array.from([0, 0, 1, 1, 1, 1, 1, 1]), 2, 4, 4)], [-1, -1, 0, 1, 0, 1, 2, 3]);
  assert.deepEqual([...optPositionIds(Int32Array.from([0, 1, 1, 1]), 1, 4, 1)], [2]);
});

/** Next-token logits of every real position under a KV cache fed one token at a time vs one full pass. */
async function cacheMatchesFullPass(m: LoadedModel<OptModel>, texts: string[]): Promise<number> {
  const batch = m.tokenizer.encodeBatch(texts);
  const { batch: B, seqLen: T } = batch;
  const full = m.model.decode({ inputIds: batch.inputIds, batch: B, seqLen: T, attentionMask: batch.attentionMask }, { logits: 'all' });
  const want = (await full.logits!.data()) as Float32Array;
  tf.dispose([full.logits!, full.lastHiddenState]);
  const V = m.model.vocabSize;
  const pre = 2;
  const take = (arr: Int32Array, from: number, to: number) => {
    const out = new Int32Array(B * (to - from));
    for (let b = 0; b < B; b++) out.set(arr.subarray(b * T + from, b * T + to), b * (to - from));
    return out;
  };
  let out = m.model.decode({ inputIds: take(batch.inputIds, 0, pre), batch: B, seqLen: pre, attentionMask: take(batch.attentionMask, 0, pre) }, { logits: 'all', returnCache: true });
  let worst = 0;
  const compare = async (logits: tf.Tensor, from: number, n: number) => {
    const got = (await logits.data()) as Float32Array;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < n; t++) {
        if (batch.attentionMask[b * T + from + t] === 0) continue;
        const g = got.subarray((b * n + t) * V, (b * n + t + 1) * V);
        const w = want.subarray((b * T + from + t) * V, (b * T + from + t + 1) * V);
        worst = Math.max(worst, maxAbsDiff(g, w));
      }
    }
  };
  await compare(out.logits!, 0, pre);
  for (let s = pre; s < T; s++) {
    const cache = out.cache!;
    tf.dispose([out.logits!, out.lastHiddenState]);
    out = m.model.decode({ inputIds: take(batch.inputIds, s, s + 1), batch: B, seqLen: 1, attentionMask: take(batch.attentionMask, 0, s + 1) }, { cache, logits: 'all', returnCache: true });
    disposeKvCache(cache);
    await compare(out.logits!, s, 1);
  }
  tf.dispose([out.logits!, out.lastHiddenState]);
  disposeKvCache(out.cache);
  return worst;
}

test('KV cache (post-LN fixture): a prefill then one token at a time gives the full pass logits on a left-padded batch', async () => {
  const m = await loadOptModel(join(FIXTURE, 'model'));
  try {
    const worst = await cacheMatchesFullPass(m, ['Mid-length text, with commas.', 'Hi.']);
    assert.ok(worst < 1e-5, `max |diff| ${worst}`);
  } finally {
    m.model.dispose();
  }
});

test('OPT config bad input: an unsupported activation is named in one line; required sizes, bad flags and architectures too', () => {
  const cfg = JSON.parse(readFileSync(join(FIXTURE, 'model', 'config.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(parseOptConfig(cfg).wordEmbedProjDim, 16);
  assert.throws(
    () => parseOptConfig({ ...cfg, activation_function: 'gelu' }, 'c.json'),
    (e: Error) => e instanceof UnknownNameError && e.message === "c.json: unknown OPT activation_function 'gelu': expected one of relu" && !e.message.includes('\n'),
  );
  assert.throws(() => parseOptConfig({ ...cfg, hidden_size: undefined }, 'c.json'), /c\.json: 'hidden_size' must be a positive integer, found undefined/);
  assert.throws(() => parseOptConfig({ ...cfg, do_layer_norm_before: 'yes' }, 'c.json'), /'do_layer_norm_before' must be true or false/);
  assert.throws(() => parseOptConfig({ ...cfg, architectures: ['OPTForSequenceClassification'] }, 'c.json'), /unknown OPT architecture 'OPTForSequenceClassification'/);
  assert.throws(() => parseOptConfig({ ...cfg, dropout: 1.5 }, 'c.json'), /'dropout' must be a probability in \[0, 1\)/);
  const pre = parseOptConfig({ ...cfg, do_layer_norm_before: true });
  assert.ok(pre.finalLayerNorm);
  assert.ok(!parseOptConfig({ ...cfg, do_layer_norm_before: true, _remove_final_layer_norm: true }).finalLayerNorm);
  assert.ok(!parseOptConfig(cfg).finalLayerNorm, 'post-LN has no decoder final LayerNorm');
});

test('OPT weights bad input: missing, mis-shaped and unexpected tensors are listed together; the model. prefix is optional', async () => {
  const dir = tempDir();
  for (const f of ['config.json', 'vocab.json', 'merges.txt', 'tokenizer_config.json', 'special_tokens_map.json']) copyFileSync(join(FIXTURE, 'model', f), join(dir, f));
  const src = readSafetensors(join(FIXTURE, 'model', 'model.safetensors')).tensors;
  const tensors: Record<string, { dtype: 'F32'; shape: number[]; data: Float32Array }> = {};
  for (const [name, t] of src) {
    if (name === 'decoder.layers.1.fc2.bias') continue;
    const data = t.data as Float32Array;
    const canonical = name === 'lm_head.weight' ? name : `model.${name}`;
    if (name === 'decoder.project_out.weight') tensors[canonical] = { dtype: 'F32', shape: [t.shape[1], t.shape[0]], data };
    else tensors[canonical] = { dtype: 'F32', shape: t.shape, data };
  }
  tensors['model.decoder.extra.weight'] = { dtype: 'F32', shape: [2], data: new Float32Array(2) };
  writeSafetensors(join(dir, 'model.safetensors'), tensors);
  await assert.rejects(
    () => loadModel(dir),
    (e: Error) =>
      e instanceof InputError &&
      /missing 1: model\.decoder\.layers\.1\.fc2\.bias/.test(e.message) &&
      /model\.decoder\.project_out\.weight: checkpoint \[32,16\], config expects \[16,32\]/.test(e.message) &&
      /unexpected 1: model\.decoder\.extra\.weight/.test(e.message),
  );
});

test('byte-level BPE folder bad input: a missing merges.txt and a malformed merge line are named', () => {
  const dir = tempDir();
  copyFileSync(join(FIXTURE, 'model', 'vocab.json'), join(dir, 'vocab.json'));
  assert.throws(() => HfTokenizer.fromByteLevelBpeFiles(dir), (e: Error) => e instanceof InputError && e.message.includes('merges.txt') && /needs vocab\.json and merges\.txt/.test(e.message));
  writeFileSync(join(dir, 'merges.txt'), '#version: 0.2\nĠ t\nbad\n');
  assert.throws(() => HfTokenizer.fromByteLevelBpeFiles(dir), /merges\.txt:3: expected a merge 'left right', found "bad"/);
});

test('LoRA on OPT: target names q_proj, k_proj, v_proj, out_proj, fc1, fc2; a fresh adapter changes nothing; merging equals the adapters', async () => {
  const m = await loadOptModel(join(FIXTURE, 'model'));
  try {
    const model = m.model;
    const all = selectLoraModules(model, 'all-linear');
    assert.equal(all.length, 6 * model.numLayers);
    assert.deepEqual([...new Set(all.map((n) => n.split('.').pop()))], ['q_proj', 'k_proj', 'v_proj', 'out_proj', 'fc1', 'fc2']);
    assert.throws(() => selectLoraModules(model, ['o_proj']), /'o_proj' match no linear layer of this model \(its layers end in q_proj, k_proj, v_proj, out_proj, fc1, fc2\)/);
    const batch = m.tokenizer.encodeBatch(['A short one.', 'Hi.']);
    const before = tf.tidy(() => model.logits(batch).dataSync() as Float32Array);
    const modules = addLora(model, { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'out_proj', 'fc1'] }, 3);
    assert.equal(modules.length, 3 * model.numLayers);
    assert.ok([...model.trainableParameters().keys()].every(isLoraParameter));
    assert.equal(maxAbsDiff(tf.tidy(() => model.logits(batch).dataSync() as Float32Array), before), 0);
    // Training reaches the adapters: with B = 0 only B has a gradient, and it is not zero.
    const trainable = [...model.trainableParameters().entries()];
    const { grads } = tf.variableGrads(() => tf.sum(model.forward(batch, { training: true }).lastHiddenState) as tf.Scalar, trainable.map(([, v]) => v));
    const gradNorm = (suffix: string) => trainable.filter(([n]) => n.endsWith(suffix)).reduce((acc, [, v]) => acc + tf.tidy(() => tf.sum(tf.abs(grads[v.name])).dataSync()[0]), 0);
    assert.ok(gradNorm('lora_B.weight') > 0);
    assert.equal(gradNorm('lora_A.weight'), 0);
    tf.dispose(Object.values(grads));
    // Non-zero B: the adapters now change the output, and merging folds the change into the weights.
    for (const [name, v] of model.params) if (name.endsWith('lora_B.weight')) v.assign(tf.randomNormal(v.shape, 0, 0.5, 'float32', 9));
    const adapted = tf.tidy(() => model.logits(batch).dataSync() as Float32Array);
    assert.ok(maxAbsDiff(adapted, before) > 1e-4);
    mergeLora(model);
    assert.ok(![...model.params.keys()].some(isLoraParameter));
    assert.ok(maxAbsDiff(tf.tidy(() => model.logits(batch).dataSync() as Float32Array), adapted) < 1e-5);
  } finally {
    m.model.dispose();
  }
});

test('OPT dropout in training: active only when training, reproducible from (seed, counter), off at p = 0', async () => {
  const m = await loadOptModel(join(FIXTURE, 'model'), { dropoutSeed: 5 });
  try {
    const model = m.model;
    assert.equal(model.config.dropout, 0.1, 'the config says 0.1');
    const batch = m.tokenizer.encodeBatch(['A short one.', 'Mid-length text, with commas.']);
    const run = (training: boolean) => tf.tidy(() => model.forward(batch, { training }).lastHiddenState.dataSync() as Float32Array);
    const evalOut = run(false);
    assert.equal(model.dropoutCounter, 0);
    const a = run(true);
    const used = model.dropoutCounter;
    assert.ok(used > 0 && maxAbsDiff(a, evalOut) > 1e-3);
    model.dropoutCounter = 0;
    assert.equal(maxAbsDiff(run(true), a), 0, 'same seed and counter, same masks');
    model.setDropout(0);
    assert.equal(maxAbsDiff(run(true), evalOut), 0);
    assert.throws(() => model.setDropout(1), /dropout must be in \[0, 1\)/);
  } finally {
    m.model.dispose();
  }
});

test('the OPT suite fails, naming the tensor, when a golden number is off, and passes unchanged ones', async () => {
  const dir = tempDir();
  copyFileSync(join(FIXTURE, 'golden.safetensors'), join(dir, 'golden.safetensors'));
  const modelDir = join(dir, 'model');
  for (const f of ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt', 'tokenizer_config.json', 'special_tokens_map.json']) {
    if (!existsSync(modelDir)) mkdirSync(modelDir);
    copyFileSync(join(FIXTURE, 'model', f), join(modelDir, f));
  }
  const golden = JSON.parse(readFileSync(join(FIXTURE, 'golden.json'), 'utf8'));
  golden.cases[0].hidden_states[1][2][3] += 1e-3;
  const batch = golden.cases.find((c: { kind: string }) => c.kind === 'batch');
  // A pad position of the right-padded batch: not compared (undefined there), so changing it changes nothing.
  const padAt = batch.right.attention_mask[0].indexOf(0);
  batch.right.hidden_states[2][0][padAt][0] += 5;
  golden.greedy[1].new_ids[4] = (golden.greedy[1].new_ids[4] + 1) % golden.config.vocab_size;
  writeFileSync(join(dir, 'golden.json'), JSON.stringify(golden));
  const failed = (await checkOptGolden(dir)).filter((c) => !c.ok).map((c) => c.name);
  assert.deepEqual(failed.sort(), ['opt/greedy-batched-left-padded/prompt1/new_ids', 'opt/greedy1/new_ids', 'opt/prompteol_0/hidden_states[1]'].sort());
});
