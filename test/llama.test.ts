import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { registerCudaBackendWith } from '../lib/backend/cuda/index.js';
import { parseLlamaConfig } from '../lib/models/llama/config.js';
import { generate } from '../lib/models/llama/generate.js';
import { writeLlamaHfDirectory } from '../lib/models/llama/hf-export.js';
import { interleavedToHalfRows, readLlama2cCheckpoint } from '../lib/models/llama/llama2c-checkpoint.js';
import { isLlama2cDir, loadLlamaModel } from '../lib/models/llama/load.js';
import { LlamaModel, positionsFromMask, type KvCache } from '../lib/models/llama/model.js';
import { mapLlamaWeights } from '../lib/models/llama/weights.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { Llama2cTokenizer } from '../lib/models/tokenizers/llama2c.js';
import type { LoadedModel } from '../lib/models/types.js';
import { maxAbsDiff } from '../lib/parity/check.js';
import { checkDecoderGolden } from '../lib/parity/decoder.js';
import { InputError, UnknownNameError } from '../lib/util/errors.js';
import { createEmulatedAddon } from './fixtures/cuda/emulated-addon.js';
import { decoderGoldenOrSkip, readDecoderGolden } from './helpers/decoder.js';

const tmp: string[] = [];
function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tmp.push(d);
  return d;
}

before(async () => {
  await initBackend('cpu', { quiet: true });
});
after(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** Logits [T, V] of one unpadded row. */
function logitsOf(model: LlamaModel, ids: number[]): Float32Array {
  const T = ids.length;
  const out = model.decode({ inputIds: Int32Array.from(ids), batch: 1, seqLen: T, attentionMask: new Int32Array(T).fill(1) }, { logits: 'all' });
  const v = out.logits!.dataSync() as Float32Array;
  tf.dispose([out.logits!, out.lastHiddenState]);
  return v;
}

test('decoder parity with llama2.c run.c: ids identical, logits and hidden states within 1e-4, greedy ids and text identical, batched too', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const checks = await checkDecoderGolden(g);
  for (const c of checks) t.diagnostic(`${c.ok ? 'ok' : 'FAIL'} ${c.name}: ${c.detail}`);
  const n = readDecoderGolden(g).prompts.length;
  assert.equal(checks.length, 1 + 7 * n + 2);
  assert.deepEqual(checks.filter((c) => !c.ok), []);
});

test('decoder parity through the cuda backend kernels (emulated addon, no GPU): all checks pass, no device memory left behind', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const addon = createEmulatedAddon();
  // Exact fp32 matmuls, as GPU parity runs use; priority 0: never picked as a default.
  registerCudaBackendWith('cuda', addon, addon.init(), 'fp32', 0);
  await tf.setBackend('cuda');
  try {
    const live = addon.memoryStats().liveBlocks;
    const checks = await checkDecoderGolden(g);
    assert.deepEqual(checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`), []);
    assert.equal(addon.memoryStats().liveBlocks, live);
  } finally {
    await tf.setBackend('cpu');
  }
});

test('interleaved rotary rows become half-rotation rows: row j <- 2j, row D/2 + j <- 2j + 1 within each head', () => {
  // 2 heads of size 4, in = 1: rows are their own indices.
  const w = Float32Array.from([0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(Array.from(interleavedToHalfRows(w, 2, 4, 1)), [0, 2, 1, 3, 4, 6, 5, 7]);
});

test('a left-padded batch computes what each row computes alone; right padding too; positions count real tokens', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  assert.deepEqual(Array.from(positionsFromMask(Int32Array.from([0, 0, 1, 1, 1, 1, 1, 1]), 2, 4, 4)), [1, 1, 0, 1, 0, 1, 2, 3]);
  assert.deepEqual(Array.from(positionsFromMask(Int32Array.from([0, 1, 1, 1]), 1, 4, 1)), [2]);
  const m = await loadLlamaModel(join(g, 'model'));
  try {
    const prompts = readDecoderGolden(g).prompts;
    const V = m.model.vocabSize;
    for (const side of ['left', 'right'] as const) {
      const batch = m.tokenizer.pad(prompts.map((p) => ({ ids: p.ids, typeIds: p.ids.map(() => 0) })), { padSide: side });
      const logits = m.model.logits(batch);
      const all = logits.dataSync();
      logits.dispose();
      let vsGolden = 0;
      let vsAlone = 0;
      prompts.forEach((p, b) => {
        const T = p.ids.length;
        const start = side === 'left' ? batch.seqLen - T : 0;
        const rowLogits = all.subarray((b * batch.seqLen + start) * V, (b * batch.seqLen + start + T) * V);
        vsGolden = Math.max(vsGolden, maxAbsDiff(rowLogits, p.logits.flat()));
        vsAlone = Math.max(vsAlone, maxAbsDiff(rowLogits, logitsOf(m.model, p.ids)));
      });
      t.diagnostic(`${side} padding: max |diff| vs golden ${vsGolden.toExponential(2)}, vs the row alone ${vsAlone.toExponential(2)}`);
      assert.ok(vsGolden <= 1e-4, `${side}: ${vsGolden}`);
      assert.ok(vsAlone <= 1e-5, `${side}: ${vsAlone}`);
    }
  } finally {
    m.model.dispose();
  }
});

test('KV cache: a prefill then one token at a time gives the full forward pass logits; the input cache is left intact', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const m = await loadLlamaModel(join(g, 'model'));
  try {
    const ids = readDecoderGolden(g).prompts[3].ids;
    const V = m.model.vocabSize;
    const full = logitsOf(m.model, ids);
    const k = 7;
    let out = m.model.decode({ inputIds: Int32Array.from(ids.slice(0, k)), batch: 1, seqLen: k, attentionMask: new Int32Array(k).fill(1) }, { returnCache: true, logits: 'all' });
    let worst = maxAbsDiff(out.logits!.dataSync(), full.subarray(0, k * V));
    let cache: KvCache = out.cache!;
    tf.dispose([out.logits!, out.lastHiddenState]);
    for (let s = k; s < ids.length; s++) {
      const before = cache.keys[0].dataSync().slice();
      out = m.model.decode({ inputIds: Int32Array.of(ids[s]), batch: 1, seqLen: 1, attentionMask: new Int32Array(s + 1).fill(1) }, { cache, returnCache: true, logits: 'last' });
      assert.deepEqual(cache.keys[0].dataSync(), before);
      assert.equal(out.cache!.length, s + 1);
      worst = Math.max(worst, maxAbsDiff(out.logits!.dataSync(), full.subarray(s * V, (s + 1) * V)));
      tf.dispose([...cache.keys, ...cache.values, out.logits!, out.lastHiddenState]);
      cache = out.cache!;
    }
    tf.dispose([...cache.keys, ...cache.values]);
    t.diagnostic(`cached vs full: max |diff| ${worst.toExponential(2)}`);
    assert.ok(worst <= 1e-5, String(worst));
  } finally {
    m.model.dispose();
  }
});

// --- HF layout ------------------------------------------------------------------------------

function f32ToF16Bits(v: number): number {
  const x = new Uint32Array(Float32Array.of(v).buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    const m = mant | 0x800000;
    const shift = 14 - exp;
    let h = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && h & 1)) h++;
    return sign | h;
  }
  let h = sign | (exp << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  return h;
}

function f16BitsToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  return e === 0 ? s * m * 2 ** -24 : s * (1 + m / 1024) * 2 ** (e - 15);
}

function f32ToBf16Bits(v: number): number {
  const x = new Uint32Array(Float32Array.of(v).buffer)[0];
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

function bf16BitsToF32(b: number): number {
  return new Float32Array(Uint32Array.of(b << 16).buffer)[0];
}

/** Rewrites every safetensors file of `dir` in F16 or BF16 (an encoder independent of the reader under test); returns the rounded values. */
function halveShards(dir: string, dtype: 'F16' | 'BF16'): Map<string, Float32Array> {
  const encode = dtype === 'F16' ? f32ToF16Bits : f32ToBf16Bits;
  const decode = dtype === 'F16' ? f16BitsToF32 : bf16BitsToF32;
  const rounded = new Map<string, Float32Array>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.safetensors'))) {
    const tensors = [...readSafetensors(join(dir, f)).tensors.values()];
    const header: Record<string, unknown> = {};
    const blobs: Uint16Array[] = [];
    let offset = 0;
    for (const t of tensors) {
      const bits = Uint16Array.from(t.data, (v) => encode(v));
      rounded.set(t.name, Float32Array.from(bits, (b) => decode(b)));
      header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bits.byteLength] };
      offset += bits.byteLength;
      blobs.push(bits);
    }
    const json = Buffer.from(JSON.stringify(header));
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(json.byteLength));
    writeFileSync(join(dir, f), Buffer.concat([len, json, ...blobs.map((b) => Buffer.from(b.buffer))]));
  }
  return rounded;
}

async function writeToyAsHf(g: string, maxShardBytes: number): Promise<string> {
  const ckpt = readLlama2cCheckpoint(join(g, 'model', 'stories260K.bin'));
  const tok = Llama2cTokenizer.fromFile(join(g, 'model', 'tok512.bin'), ckpt.config.vocabSize);
  const dir = tempDir('llama-hf-');
  writeLlamaHfDirectory(dir, { config: ckpt.config, weights: ckpt.weights, tokenizerJson: tok.toHfTokenizerJson(), tokenizerConfig: { padding_side: 'left' }, maxShardBytes });
  return dir;
}

test('HF layout round trip: the toy written as sharded safetensors (F32, F16, BF16) loads back to the same weights and logits within the dtype', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const golden = readDecoderGolden(g).prompts;
  const ref = await loadLlamaModel(join(g, 'model'));
  const loaded: LoadedModel<LlamaModel>[] = [];
  try {
    const ids = golden[2].ids;
    const refLogits = logitsOf(ref.model, ids);
    for (const dtype of ['F32', 'F16', 'BF16'] as const) {
      const dir = await writeToyAsHf(g, 300_000);
      const shards = readdirSync(dir).filter((f) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(f));
      assert.ok(shards.length >= 3, `expected shards, got ${readdirSync(dir).join(', ')}`);
      const rounded = dtype === 'F32' ? undefined : halveShards(dir, dtype);
      const m = await loadLlamaModel(dir);
      loaded.push(m);
      assert.equal(m.weightFiles.length, shards.length);
      for (const p of golden) assert.deepEqual(m.tokenizer.encode(p.text).ids, p.ids);
      // Every parameter is exactly what was stored.
      for (const [name, v] of m.model.params) {
        const want = rounded ? rounded.get(name)! : ref.model.params.get(name)!.dataSync();
        assert.equal(maxAbsDiff(v.dataSync(), want), 0, `${dtype} ${name}`);
      }
      const diff = maxAbsDiff(logitsOf(m.model, ids), refLogits);
      const scale = refLogits.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
      t.diagnostic(`${dtype}: logits max |diff| vs the fp32 llama2.c model ${diff.toExponential(2)} (${(diff / scale).toExponential(2)} of max |logit| ${scale.toFixed(1)})`);
      // F32 stores the same numbers: the same logits bit for bit. Half precision rounds each weight
      // by up to 2^-11 (F16) or 2^-8 (BF16) relative; allow 4 such units of the logits' scale.
      const tol = { F32: 0, F16: 4 * 2 ** -11, BF16: 4 * 2 ** -8 }[dtype] * scale;
      assert.ok(diff <= tol, `${dtype}: ${diff} > ${tol}`);
    }
  } finally {
    ref.model.dispose();
    for (const m of loaded) m.model.dispose();
  }
});

test('HF layout bad input: a shard missing from the index is named; an unknown architecture names itself and the implemented ones; shape mismatches are listed together', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const dir = await writeToyAsHf(g, 300_000);
  assert.equal(isLlama2cDir(dir), false);
  assert.equal(isLlama2cDir(join(g, 'model')), true);
  const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
  const shard = Object.values(index.weight_map as Record<string, string>)[0];
  const broken = tempDir('llama-hf-broken-');
  for (const f of readdirSync(dir)) copyFileSync(join(dir, f), join(broken, f));
  unlinkSync(join(broken, shard));
  await assert.rejects(loadLlamaModel(broken), (e: Error) => e instanceof InputError && e.message.includes(shard) && /missing/.test(e.message));

  const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  writeFileSync(join(broken, 'config.json'), JSON.stringify({ ...cfg, model_type: 'gpt_neox' }));
  await assert.rejects(loadLlamaModel(broken), (e: Error) => e instanceof UnknownNameError && /config\.json: unknown decoder model_type 'gpt_neox': expected one of llama/.test(e.message));
  assert.throws(() => parseLlamaConfig({ ...cfg, architectures: ['LlamaForSequenceClassification'] }), /unknown LLaMA architecture 'LlamaForSequenceClassification': expected one of LlamaForCausalLM, LlamaModel/);
  assert.throws(() => parseLlamaConfig({ ...cfg, rope_scaling: { rope_type: 'yarn', factor: 4 } }), /unknown rope_scaling type 'yarn': expected one of default, linear/);
  assert.throws(() => parseLlamaConfig({ ...cfg, hidden_size: undefined }), /'hidden_size' must be a positive integer, found undefined/);
  assert.throws(() => parseLlamaConfig({ ...cfg, num_key_value_heads: 3 }), /num_attention_heads 8 is not a multiple of num_key_value_heads 3/);
  const parsed = parseLlamaConfig(cfg);
  assert.equal(parsed.numKvHeads, 4);
  assert.equal(parsed.ropeTheta, 10000);
  assert.equal(parsed.rmsNormEps, 1e-5);
  assert.equal(parsed.tieWordEmbeddings, true);

  // Weights for another shape: every problem in one message.
  const ckpt = readLlama2cCheckpoint(join(g, 'model', 'stories260K.bin'));
  const weights = new Map(ckpt.weights);
  weights.delete('model.norm.weight');
  weights.set('model.layers.0.self_attn.k_proj.weight', { shape: [64, 64], data: new Float32Array(64 * 64) });
  weights.set('model.layers.0.mlp.extra.weight', { shape: [1], data: new Float32Array(1) });
  assert.throws(
    () => mapLlamaWeights(ckpt.config, weights, 'x.safetensors'),
    (e: Error) =>
      /x\.safetensors: checkpoint does not fit the LLaMA config/.test(e.message) &&
      e.message.includes('missing 1: model.norm.weight') &&
      e.message.includes('model.layers.0.self_attn.k_proj.weight: checkpoint [64,64], config expects [32,64]') &&
      e.message.includes('unexpected 1: model.layers.0.mlp.extra.weight'),
  );
  // A stored lm_head of a tied config is ignored (as transformers ties it); LlamaModel naming is accepted.
  const bare = new Map([...ckpt.weights].map(([k, v]) => [k.replace(/^model\./, ''), v]));
  bare.set('lm_head.weight', ckpt.weights.get('model.embed_tokens.weight')!);
  assert.equal(mapLlamaWeights(ckpt.config, bare, 'bare').size, ckpt.weights.size);
});

test('llama2.c checkpoint bad input: truncated file, versioned export', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const d = tempDir('llama2c-bad-');
  const bytes = readFileSync(join(g, 'model', 'stories260K.bin'));
  writeFileSync(join(d, 'cut.bin'), bytes.subarray(0, bytes.byteLength - 4));
  assert.throws(() => readLlama2cCheckpoint(join(d, 'cut.bin')), /cut\.bin: llama2\.c checkpoint size 1056536 bytes does not match its header .* 1056540 bytes/);
  const v1 = Buffer.alloc(256);
  v1.writeUInt32LE(0x616b3432, 0);
  v1.writeInt32LE(1, 4);
  writeFileSync(join(d, 'v1.bin'), v1);
  assert.throws(() => readLlama2cCheckpoint(join(d, 'v1.bin')), /versioned llama2\.c export \(magic "ak42", version 1\).*--version 0/);
  await assert.rejects(loadLlamaModel(d), /neither a Hugging Face model directory .* nor a llama2\.c folder/);
});

test('a prompt longer than the context: an error, or its last tokens when truncation is asked', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  // The toy with a 32-token context, so the test stays small.
  const ckpt = readLlama2cCheckpoint(join(g, 'model', 'stories260K.bin'));
  const ctx = 32;
  const m = { model: new LlamaModel({ ...ckpt.config, maxPositions: ctx }, ckpt.weights), tokenizer: Llama2cTokenizer.fromFile(join(g, 'model', 'tok512.bin'), ckpt.config.vocabSize) };
  try {
    const long = [1, ...new Array(ctx + 10).fill(410)];
    assert.throws(
      () => m.model.decode({ inputIds: Int32Array.from(long), batch: 1, seqLen: long.length, attentionMask: new Int32Array(long.length).fill(1) }),
      new RegExp(`sequence of ${ctx + 11} tokens \\(0 cached \\+ ${ctx + 11} new\\) exceeds the context length ${ctx}`),
    );
    await assert.rejects(generate(m, [long], { maxNewTokens: 2 }), new RegExp(`prompt 0 has ${ctx + 11} tokens, more than the context length ${ctx}`));
    const [r] = await generate(m, [long], { maxNewTokens: 2, truncatePrompt: true, eosTokenIds: [] });
    assert.equal(r.promptIds.length, ctx - 2);
    assert.deepEqual(r.promptIds, [1, ...long.slice(long.length - (ctx - 3))], 'BOS and the last tokens kept');
    assert.equal(r.ids.length, 2);
    // A prompt that fits but leaves less room than maxNewTokens: generation ends at the context.
    const [c] = await generate(m, [long.slice(0, ctx - 3)], { maxNewTokens: 10, eosTokenIds: [] });
    assert.equal(c.finishReason, 'context');
    assert.equal(c.ids.length, 4);
  } finally {
    m.model.dispose();
  }
});
