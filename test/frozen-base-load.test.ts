/**
 * Frozen bases stored while loading (lib/models/frozen-base.ts; loadModel's `frozenBase`):
 *
 * - on the tiny decoders (LLaMA: llama2.c stories260K; OPT: opt-tiny-seed7, safetensors) loading
 *   into NF4 (with and without double quantisation), fp16 and bf16 stores bit for bit what
 *   `storeFrozenBase` stores after a float32 load, no linear weight ever becomes a float32
 *   variable, and the model computes the same hidden states;
 * - the same from a synthetic LLaMA checkpoint in F16 written as one safetensors file, as
 *   safetensors shards with their index and as a PyTorch zip (an F16 tensor stored as 'fp16' takes
 *   its bits as they are);
 * - host memory while loading a synthetic LLaMA of 30M parameters (60 MB in F16): live
 *   ArrayBuffer bytes, after a full GC at every tensor read, stay under twice the stored model
 *   plus one float32 tensor; a float32 load of the same file does not (so the bound can fail);
 * - on the shape-only backend (the rehearsal's mirror of `cuda`) the load peak of LLaMA-2-13B over
 *   an NF4 base is the stored model, not the float32 one.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test, type TestContext } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { initBackend, tf } from '../lib/backend/index.js';
import { addLora } from '../lib/models/adapters/lora.js';
import type { AdaptableModel } from '../lib/models/adapters/types.js';
import { loadModel } from '../lib/models/auto.js';
import type { AdaptableTransformerModel } from '../lib/models/adaptable-transformer-model.js';
import type { FrozenBaseSpec } from '../lib/models/frozen-base.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import { WeightReader } from '../lib/models/weight-files.js';
import type { FrozenWeight } from '../lib/ops/frozen-linear.js';
import { floatToFp16 } from '../lib/ops/half-float.js';
import { mulberry32 } from '../lib/util/mulberry32.js';
import { writeSafetensorsStreamed, writeShardedSafetensors, writeTorchZip, type TensorSpec } from './helpers/checkpoint-writer.js';
import { SHARED_DIR } from './helpers/env.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

const SPECS: FrozenBaseSpec[] = [{ format: 'nf4' }, { format: 'nf4', doubleQuant: true }, { format: 'fp16' }, { format: 'bf16' }];
const label = (s: FrozenBaseSpec) => `${s.format}${s.doubleQuant ? ' + double quantisation' : ''}`;
type Decoder = AdaptableTransformerModel<{ hiddenSize: number; numLayers: number; maxPositions: number }> & AdaptableModel;

function tensorsOf(w: FrozenWeight): Array<[string, tf.Tensor | undefined]> {
  return [['half', w.half], ['codes', w.nf4?.codes], ['absmax', w.nf4?.absmax], ['dq.codes', w.nf4?.dq?.codes], ['dq.absmax', w.nf4?.dq?.absmax]];
}

/** Every stored weight of `b` equals `a`'s, bit for bit (int32 codes and float32 scales compared as stored). */
function assertSameStoredBase(a: Decoder, b: Decoder, what: string): void {
  const wa = a.frozenBaseWeights();
  const wb = b.frozenBaseWeights();
  assert.deepEqual([...wb.keys()].sort(), [...wa.keys()].sort(), `${what}: the same modules stored`);
  assert.ok(wa.size > 0, `${what}: something is stored`);
  for (const [module, x] of wa) {
    const y = wb.get(module)!;
    assert.equal(y.format, x.format);
    assert.deepEqual(y.shape, x.shape);
    assert.equal(y.nf4?.dq?.offset, x.nf4?.dq?.offset, `${what}: ${module} double-quantisation offset`);
    const tx = tensorsOf(x);
    const ty = tensorsOf(y);
    tx.forEach(([part, t], i) => {
      assert.equal(ty[i][1] === undefined, t === undefined, `${what}: ${module}.${part} present in both or neither`);
      if (!t) return;
      // Compared as int32 bit patterns, so a float32 scale must match bit for bit (NaN included).
      const bits = (u: tf.Tensor) => new Int32Array((u.dataSync() as Float32Array | Int32Array).slice().buffer);
      assert.deepEqual(bits(ty[i][1]!), bits(t), `${what}: ${module}.${part}`);
    });
  }
}

/** Loads `dir` twice — float32 then storeFrozenBase, and stored while loading — and compares them. */
async function compareLoads(dir: string, spec: FrozenBaseSpec, what: string): Promise<void> {
  const a = await loadModel(dir);
  const b = await loadModel(dir, { frozenBase: spec });
  const ma = a.model as unknown as Decoder;
  const mb = b.model as unknown as Decoder;
  try {
    const linear = [...mb.linearModules().keys()].map((m) => `${m}.weight`);
    assert.deepEqual(linear.filter((n) => mb.params.has(n)), [], `${what}: no linear weight loaded as a float32 variable`);
    addLora(ma, { r: 4, alpha: 8, dropout: 0, targetModules: 'all-linear' }, 3);
    addLora(mb, { r: 4, alpha: 8, dropout: 0, targetModules: 'all-linear' }, 3);
    ma.storeFrozenBase(spec.format, { doubleQuant: spec.doubleQuant });
    assert.deepEqual(mb.storeFrozenBase(spec.format, { doubleQuant: spec.doubleQuant }), [], `${what}: nothing left to store after loading`);
    assertSameStoredBase(ma, mb, what);
    assert.deepEqual([...mb.params.keys()].sort(), [...ma.params.keys()].sort(), `${what}: the same float32 parameters`);
    assert.equal(mb.numParameters(), ma.numParameters());
    assert.equal(mb.storedBaseBytes(), ma.storedBaseBytes());
    const tokens = a.tokenizer.encodeBatch(['Lily played with the ball.', 'The cat sat on the mat.'], { maxLength: 12 });
    const ha = tf.tidy(() => a.model.forward(tokens).lastHiddenState.dataSync());
    const hb = tf.tidy(() => b.model.forward(tokens).lastHiddenState.dataSync());
    assert.deepEqual(Array.from(hb), Array.from(ha), `${what}: the same hidden states`);
  } finally {
    a.model.dispose();
    b.model.dispose();
  }
}

const LLAMA = SHARED_DIR ? join(SHARED_DIR, 'golden', 'llama2c-stories260K', 'model') : undefined;
const OPT = SHARED_DIR ? join(SHARED_DIR, 'golden', 'opt-tiny-seed7', 'model') : undefined;

test('tiny LLaMA (llama2.c stories260K): a base stored while loading is bit for bit the one stored after a float32 load', async (t) => {
  if (!LLAMA || !existsSync(LLAMA)) return t.skip('no decoder golden set (../shared/golden/llama2c-stories260K)');
  for (const spec of SPECS) await compareLoads(LLAMA, spec, `LLaMA ${label(spec)}`);
});

test('tiny OPT (opt-tiny-seed7, safetensors): a base stored while loading is bit for bit the one stored after a float32 load', async (t) => {
  if (!OPT || !existsSync(OPT)) return t.skip('no OPT golden set (../shared/golden/opt-tiny-seed7)');
  for (const spec of SPECS) await compareLoads(OPT, spec, `OPT ${label(spec)}`);
});

/** A LLaMA config.json of the given widths (LLaMA-2's layout, untied head). */
function llamaConfig(hidden: number, intermediate: number, layers: number, vocab: number): Record<string, unknown> {
  return {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: hidden, intermediate_size: intermediate, num_hidden_layers: layers,
    num_attention_heads: hidden / 64, num_key_value_heads: hidden / 64, vocab_size: vocab, max_position_embeddings: 256, rms_norm_eps: 1e-5,
    rope_theta: 10000, tie_word_embeddings: false, hidden_act: 'silu', bos_token_id: 1, eos_token_id: 2, torch_dtype: 'float16',
  };
}

/** The tensors of a LLaMA checkpoint in the order save_pretrained writes them, all F16. */
function llamaTensors(hidden: number, intermediate: number, layers: number, vocab: number): TensorSpec[] {
  const t: TensorSpec[] = [{ name: 'model.embed_tokens.weight', dtype: 'F16', shape: [vocab, hidden] }];
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}.`;
    for (const m of ['q_proj', 'k_proj', 'v_proj', 'o_proj']) t.push({ name: `${p}self_attn.${m}.weight`, dtype: 'F16', shape: [hidden, hidden] });
    t.push({ name: `${p}mlp.gate_proj.weight`, dtype: 'F16', shape: [intermediate, hidden] });
    t.push({ name: `${p}mlp.up_proj.weight`, dtype: 'F16', shape: [intermediate, hidden] });
    t.push({ name: `${p}mlp.down_proj.weight`, dtype: 'F16', shape: [hidden, intermediate] });
    t.push({ name: `${p}input_layernorm.weight`, dtype: 'F16', shape: [hidden] });
    t.push({ name: `${p}post_attention_layernorm.weight`, dtype: 'F16', shape: [hidden] });
  }
  t.push({ name: 'model.norm.weight', dtype: 'F16', shape: [hidden] }, { name: 'lm_head.weight', dtype: 'F16', shape: [vocab, hidden] });
  return t;
}

/** F16 values of a tensor, seeded by its name: norms near 1, the rest uniform in ±0.05 (any spread serves NF4's test). */
function f16Bytes(t: TensorSpec): Uint8Array {
  let seed = 7;
  for (const c of t.name) seed = (seed * 31 + c.charCodeAt(0)) >>> 0;
  const next = mulberry32(seed);
  const n = t.shape.reduce((a, b) => a * b, 1);
  const out = new Uint16Array(n);
  const norm = t.name.endsWith('norm.weight');
  for (let i = 0; i < n; i++) {
    const u = (next() + 0.5) / 4294967296 - 0.5;
    out[i] = floatToFp16(norm ? 1 + 0.2 * u : 0.1 * u);
  }
  return new Uint8Array(out.buffer);
}

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A model directory with config.json and a tokenizer (the loader wants one; these tests do not encode with it). */
function modelDir(root: string, name: string, config: Record<string, unknown>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  copyFileSync(join(import.meta.dirname, 'fixtures', 'torch', 'bert-tiny-sharded', 'tokenizer.json'), join(dir, 'tokenizer.json'));
  return dir;
}

test('a synthetic F16 LLaMA as safetensors, safetensors shards and a PyTorch zip: each loads into the base a float32 load stores', async (t) => {
  const root = tempDir(t, 'frozen-base-formats-');
  const dims = [128, 320, 2, 300] as const;
  const tensors = llamaTensors(...dims);
  const single = modelDir(root, 'single', llamaConfig(...dims));
  writeSafetensorsStreamed(join(single, 'model.safetensors'), tensors, f16Bytes);
  const sharded = modelDir(root, 'sharded', llamaConfig(...dims));
  writeShardedSafetensors(sharded, tensors, f16Bytes, 3);
  const torch = modelDir(root, 'torch', llamaConfig(...dims));
  writeTorchZip(join(torch, 'pytorch_model.bin'), tensors, f16Bytes);
  for (const [name, dir] of [['safetensors', single], ['sharded safetensors', sharded], ['PyTorch zip', torch]] as const) {
    for (const spec of [SPECS[1], SPECS[2], SPECS[3]]) await compareLoads(dir, spec, `${name} ${label(spec)}`);
  }
});

const gc = (() => {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
})();

/** Live ArrayBuffer bytes after a full GC: what the process holds in typed arrays (tfjs cpu tensors included). */
function liveArrayBuffers(): number {
  // Twice: a buffer whose owner dies in the first collection (a weak reference's target) goes in the second.
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}

/**
 * Loads `dir` while sampling live ArrayBuffer bytes (after a full GC) right after every tensor is
 * read — the moment the loader holds the most: what it kept so far plus the tensor just read —
 * and once the model is built. Returns the peak above the start, the model's own bytes then, and
 * the peak RSS seen at those points (reported, not asserted: RSS counts the heap and allocator).
 */
async function measuredLoad(dir: string, frozenBase: FrozenBaseSpec | undefined): Promise<{ peak: number; kept: number; rssPeak: number; storedBase: number; floatBytes: number }> {
  const proto = WeightReader.prototype as unknown as Record<'read' | 'readRaw', (this: WeightReader, name: string) => unknown>;
  const original = { read: proto.read, readRaw: proto.readRaw };
  const start = liveArrayBuffers();
  let peak = 0;
  let rssPeak = 0;
  const sample = () => {
    peak = Math.max(peak, liveArrayBuffers() - start);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  };
  for (const k of ['read', 'readRaw'] as const) {
    proto[k] = function (this: WeightReader, name: string) {
      const out = original[k].call(this, name);
      sample();
      return out;
    };
  }
  try {
    const m = await loadModel(dir, frozenBase ? { frozenBase } : {});
    sample();
    const kept = liveArrayBuffers() - start;
    const model = m.model as unknown as Decoder;
    let floatBytes = 0;
    for (const v of model.params.values()) floatBytes += 4 * v.size;
    const storedBase = model.storedBaseBytes();
    model.dispose();
    return { peak, kept, rssPeak, storedBase, floatBytes };
  } finally {
    proto.read = original.read;
    proto.readRaw = original.readRaw;
  }
}

test('host memory while loading a 30M-parameter F16 LLaMA: under twice the stored model plus one float32 tensor (a float32 load is not)', async (t) => {
  const root = tempDir(t, 'frozen-base-memory-');
  const dims = [768, 2048, 4, 1024] as const;
  const tensors = llamaTensors(...dims);
  const dir = modelDir(root, 'llama', llamaConfig(...dims));
  writeShardedSafetensors(dir, tensors, f16Bytes, 2);
  const params = tensors.reduce((n, x) => n + x.shape.reduce((a, b) => a * b, 1), 0);
  const largestFloat32 = 4 * Math.max(...tensors.map((x) => x.shape.reduce((a, b) => a * b, 1)));
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  let nf4 = { storedBase: 0, floatBytes: 0 };
  for (const spec of [SPECS[1], SPECS[2]]) {
    const r = await measuredLoad(dir, spec);
    if (spec.format === 'nf4') nf4 = r;
    const stored = r.storedBase + r.floatBytes;
    const bound = 2 * stored + largestFloat32;
    t.diagnostic(`${label(spec)} load of ${params.toLocaleString('en-US')} parameters (${mib(2 * params)} F16 file): peak live ${mib(r.peak)}, model kept ${mib(r.kept)} (stored base ${mib(r.storedBase)} + float32 embeddings/norms/head ${mib(r.floatBytes)}), bound 2 × stored + one float32 tensor = ${mib(bound)}; peak RSS ${mib(r.rssPeak)}`);
    assert.ok(r.peak <= bound, `${label(spec)}: peak ${r.peak} bytes exceeds ${bound}`);
    assert.ok(r.kept >= stored && r.kept <= stored * 1.05 + 2 ** 20, `${label(spec)}: ${r.kept} bytes kept for a model of ${stored} (the measure sees the model)`);
  }
  const f32 = await measuredLoad(dir, undefined);
  t.diagnostic(`float32 load of the same file: peak live ${mib(f32.peak)}, model kept ${mib(f32.kept)}; peak RSS ${mib(f32.rssPeak)}`);
  assert.ok(f32.peak >= 4 * params, `a float32 load holds the float32 model (${f32.peak} bytes for ${4 * params})`);
  assert.ok(f32.peak > 2 * (nf4.storedBase + nf4.floatBytes) + largestFloat32, 'the bound separates a float32 load from a stored one');
});

test('shape-only (the rehearsal\'s mirror of cuda): LLaMA-2-13B loaded over an NF4 base peaks at the stored model, not the float32 one', async (t) => {
  const { measurePeakBytes } = await import('../lib/backend/shape-only/index.js');
  const cfg = KNOWN_CONFIGS['NousResearch/Llama-2-13b-hf'];
  const load = (frozenBase?: FrozenBaseSpec) =>
    measurePeakBytes(() => {
      const model = modelFromConfig(cfg, { frozenBase }) as unknown as Decoder;
      const kept = { stored: model.storedBaseBytes(), params: model.numParameters() };
      let floatBytes = 0;
      for (const v of model.params.values()) floatBytes += 4 * v.size;
      model.dispose();
      return { ...kept, floatBytes };
    });
  const f32 = await load();
  const nf4 = await load({ format: 'nf4', doubleQuant: true });
  const fp16 = await load({ format: 'fp16' });
  const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;
  const peaks = (r: typeof f32) => `${gb(r.peakBytes)} in tensors, ${gb(r.peakDeviceBytes)} as the cuda mirror allocates`;
  t.diagnostic(`LLaMA-2-13B load peak on the shape-only backend: float32 ${peaks(f32)}; fp16 base ${peaks(fp16)}; NF4 + double quantisation ${peaks(nf4)} (stored base ${gb(nf4.result.stored)} + float32 embeddings/norms/head ${gb(nf4.result.floatBytes)})`);
  assert.equal(nf4.result.params, f32.result.params, 'the same parameters, stored differently');
  assert.ok(f32.peakDeviceBytes >= 4 * f32.result.params, 'the float32 load holds 4 bytes a parameter');
  for (const r of [nf4, fp16]) {
    const kept = r.result.stored + r.result.floatBytes;
    assert.ok(r.peakBytes >= kept && r.peakBytes <= kept * 1.001, `load peak ${r.peakBytes} is the stored model ${kept}`);
  }
  assert.ok(nf4.peakDeviceBytes < f32.peakDeviceBytes / 5);
});
