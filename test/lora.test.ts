import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { addLora, isLoraParameter, loraAdapters, mergeLora, removeLora } from '../lib/models/adapters/lora.js';
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, loadLoraAdapter, saveLoraAdapter } from '../lib/models/adapters/peft.js';
import { readLlama2cCheckpoint } from '../lib/models/llama/llama2c-checkpoint.js';
import { LlamaModel } from '../lib/models/llama/model.js';
import { llamaParameterShapes, type WeightTensor } from '../lib/models/llama/weights.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { Llama2cTokenizer } from '../lib/models/tokenizers/llama2c.js';
import type { TokenBatch } from '../lib/models/types.js';
import { softTargetCrossEntropy } from '../lib/losses/cross-entropy.js';
import { maxAbsDiff } from '../lib/parity/check.js';
import { AdamW, gradientsByParameterName } from '../lib/train/adamw.js';
import { InputError } from '../lib/util/errors.js';
import { decoderGoldenOrSkip } from './helpers/decoder.js';

const tmp: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lora-'));
  tmp.push(d);
  return d;
}

before(async () => {
  await initBackend('cpu', { quiet: true });
});
after(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

const SENTENCES = ['Once upon a time, there was a little girl named Lily.', 'The cat sat on the mat.', 'Tom and Lily went to the park to play.', 'She saw a big red ball.'];

function toy(g: string): { model: LlamaModel; tokenizer: Llama2cTokenizer; weights: Map<string, WeightTensor> } {
  const ckpt = readLlama2cCheckpoint(join(g, 'model', 'stories260K.bin'));
  return { model: new LlamaModel(ckpt.config, ckpt.weights, 7), tokenizer: Llama2cTokenizer.fromFile(join(g, 'model', 'tok512.bin'), ckpt.config.vocabSize), weights: ckpt.weights };
}

function logits(model: LlamaModel, batch: TokenBatch): Float32Array {
  return tf.tidy(() => model.logits(batch).dataSync() as Float32Array);
}

/** Mean next-token cross-entropy over the real tokens of a left-padded batch. */
function nextTokenLoss(model: LlamaModel, batch: TokenBatch, training: boolean): tf.Scalar {
  const { batch: B, seqLen: T } = batch;
  const V = model.vocabSize;
  const targets = new Float32Array(B * (T - 1) * V);
  let count = 0;
  for (let b = 0; b < B; b++) {
    for (let t = 0; t + 1 < T; t++) {
      if (batch.attentionMask[b * T + t] && batch.attentionMask[b * T + t + 1]) {
        targets[(b * (T - 1) + t) * V + batch.inputIds[b * T + t + 1]] = 1;
        count++;
      }
    }
  }
  return tf.tidy(() => {
    const z = tf.slice(model.logits(batch, { training }), [0, 0, 0], [B, T - 1, V]);
    return tf.div(tf.sum(softTargetCrossEntropy(tf.reshape(z, [B * (T - 1), V]) as tf.Tensor2D, targets)), count) as tf.Scalar;
  });
}

test('a fresh LoRA adapter (B = 0) leaves the model exactly as it was; A is kaiming-uniform in ±1/√in, seeded; only adapters train', (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const { model, tokenizer } = toy(g);
  try {
    const batch = tokenizer.encodeBatch(SENTENCES);
    const base = logits(model, batch);
    const modules = addLora(model, { r: 4, alpha: 8, dropout: 0.1 }, 3);
    assert.deepEqual(modules, [0, 1, 2, 3, 4].flatMap((l) => [`model.layers.${l}.self_attn.q_proj`, `model.layers.${l}.self_attn.v_proj`]));
    assert.equal(maxAbsDiff(logits(model, batch), base), 0);
    const trainable = [...model.trainableParameters().keys()];
    assert.equal(trainable.length, 20);
    assert.ok(trainable.every(isLoraParameter));
    assert.ok(model.params.has('model.layers.0.self_attn.q_proj.lora_A.weight'));
    const a = model.params.get('model.layers.0.self_attn.q_proj.lora_A.weight')!;
    assert.deepEqual(a.shape, [4, 64]);
    const av = a.dataSync() as Float32Array;
    const bound = 1 / Math.sqrt(64);
    const maxA = av.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    assert.ok(maxA <= bound && maxA > 0.9 * bound, `max |A| ${maxA}, bound ${bound}`);
    assert.equal(model.params.get('model.layers.0.self_attn.q_proj.lora_B.weight')!.dataSync().every((v) => v === 0), true);
    // Same seed, same A; another seed, another A.
    const again = toy(g);
    addLora(again.model, { r: 4, alpha: 8, dropout: 0.1 }, 3);
    assert.deepEqual(again.model.params.get('model.layers.0.self_attn.q_proj.lora_A.weight')!.dataSync(), av);
    removeLora(again.model);
    addLora(again.model, { r: 4, alpha: 8, dropout: 0.1 }, 4);
    assert.notDeepEqual(again.model.params.get('model.layers.0.self_attn.q_proj.lora_A.weight')!.dataSync(), av);
    again.model.dispose();
    // all-linear: the seven projections of every layer.
    removeLora(model);
    assert.equal(addLora(model, { r: 2, alpha: 2, dropout: 0, targetModules: 'all-linear' }).length, 35);
    removeLora(model);
    assert.equal(model.params.size, llamaParameterShapes(model.config).size);
    assert.throws(() => addLora(model, { r: 2, alpha: 2, dropout: 0, targetModules: ['q_proj', 'query'] }), /LoRA target modules 'query' match no linear layer of this model \(its layers end in q_proj, k_proj/);
    assert.throws(() => addLora(model, { r: 0, alpha: 2, dropout: 0 }), /rank r must be a positive integer, got 0/);
  } finally {
    model.dispose();
  }
});

test('LoRA training on the toy: loss falls, base weights bit-identical, the saved PEFT adapter is small and reloads exactly, merging equals the adapters within 1e-5', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const { model, tokenizer, weights } = toy(g);
  const fresh = toy(g).model;
  try {
    const batch = tokenizer.encodeBatch(SENTENCES);
    addLora(model, { r: 4, alpha: 8, dropout: 0.05 }, 11);
    const baseBefore = new Map([...model.params].filter(([n]) => !isLoraParameter(n)).map(([n, v]) => [n, Buffer.from(v.dataSync().buffer.slice(0))]));
    const params = model.trainableParameters();
    const opt = new AdamW(params, { weightDecay: 0 });
    const losses: number[] = [];
    for (let step = 0; step < 8; step++) {
      const { value, grads } = tf.variableGrads(() => nextTokenLoss(model, batch, true), [...params.values()]);
      losses.push(value.dataSync()[0]);
      opt.step(gradientsByParameterName(params, grads), 1e-2);
      tf.dispose([value, ...Object.values(grads)]);
    }
    const evalLoss = tf.tidy(() => nextTokenLoss(model, batch, false).dataSync()[0]);
    t.diagnostic(`training losses ${losses.map((l) => l.toFixed(4)).join(' ')}; eval loss after ${evalLoss.toFixed(4)}`);
    assert.ok(losses[losses.length - 1] < losses[0] - 0.05, `loss did not fall: ${losses.join(', ')}`);
    opt.dispose();
    // Base weights untouched, bit for bit.
    for (const [n, b] of baseBefore) assert.ok(Buffer.from(model.params.get(n)!.dataSync().buffer).equals(b), `${n} changed`);

    // Saved in PEFT's layout: only the adapter matrices, under PEFT's names.
    const dir = tempDir();
    await saveLoraAdapter(dir, model, { baseModel: 'karpathy/tinyllamas/stories260K' });
    const cfg = JSON.parse(readFileSync(join(dir, ADAPTER_CONFIG_FILE), 'utf8'));
    assert.equal(cfg.peft_type, 'LORA');
    assert.equal(cfg.r, 4);
    assert.equal(cfg.lora_alpha, 8);
    assert.equal(cfg.lora_dropout, 0.05);
    assert.deepEqual(cfg.target_modules, ['q_proj', 'v_proj']);
    assert.equal(cfg.task_type, 'CAUSAL_LM');
    assert.equal(cfg.base_model_name_or_path, 'karpathy/tinyllamas/stories260K');
    const file = readSafetensors(join(dir, ADAPTER_WEIGHTS_FILE)).tensors;
    const names = [...file.keys()].sort();
    assert.equal(names.length, 20);
    assert.equal(names[0], 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    for (const [name, v] of loraAdapters(model).get('model.layers.3.self_attn.v_proj')!.params) {
      assert.deepEqual(file.get(`base_model.model.model.layers.3.self_attn.v_proj.${name}`)!.data, v.dataSync());
    }
    const adapterFloats = names.reduce((s, n) => s + file.get(n)!.data.length, 0);
    const size = statSync(join(dir, ADAPTER_WEIGHTS_FILE)).size;
    const baseBytes = [...weights.values()].reduce((s, w) => s + 4 * w.data.length, 0);
    t.diagnostic(`adapter file ${size} bytes (${adapterFloats} floats) vs base weights ${baseBytes} bytes`);
    assert.ok(size < 4 * adapterFloats + 8192 && size < baseBytes / 20, `adapter file ${size} bytes`);

    // Reloaded onto a fresh base: the same model, bit for bit.
    const trained = logits(model, batch);
    assert.deepEqual(loadLoraAdapter(dir, fresh).length, 10);
    assert.deepEqual([...fresh.trainableParameters().keys()].sort(), [...model.trainableParameters().keys()].sort());
    assert.equal(maxAbsDiff(logits(fresh, batch), trained), 0);

    // Merged into the base weights: the same logits within 1e-5, at the base model's size.
    mergeLora(model);
    const merged = logits(model, batch);
    const diff = maxAbsDiff(merged, trained);
    t.diagnostic(`merged vs unmerged logits: max |diff| ${diff.toExponential(2)}`);
    assert.ok(diff <= 1e-5, String(diff));
    assert.equal(model.adapters().size, 0);
    assert.equal(model.params.size, llamaParameterShapes(model.config).size);
  } finally {
    model.dispose();
    fresh.dispose();
  }
});

test('LoRA dropout: active in training only, masks drawn from the seeded counter', (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const { model, tokenizer } = toy(g);
  try {
    const batch = tokenizer.encodeBatch(SENTENCES.slice(0, 2));
    addLora(model, { r: 4, alpha: 8, dropout: 0.5 }, 1);
    // Give B values so the adapters change the output.
    for (const lora of loraAdapters(model).values()) lora.b.assign(tf.randomNormal(lora.b.shape, 0, 0.05, 'float32', 5));
    const inference = [logits(model, batch), logits(model, batch)];
    assert.equal(maxAbsDiff(inference[0], inference[1]), 0);
    model.dropoutCounter = 0;
    const first = tf.tidy(() => model.logits(batch, { training: true }).dataSync());
    const second = tf.tidy(() => model.logits(batch, { training: true }).dataSync());
    assert.ok(maxAbsDiff(first, second) > 0, 'new masks on the next call');
    assert.ok(maxAbsDiff(first, inference[0]) > 0, 'dropout changes the output');
    model.dropoutCounter = 0;
    assert.equal(maxAbsDiff(tf.tidy(() => model.logits(batch, { training: true }).dataSync()), first), 0, 'same counter, same masks');
  } finally {
    model.dispose();
  }
});

test('PEFT adapters from elsewhere: another base is refused naming tensor and shapes; unsupported options are named', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  const { model } = toy(g);
  const dir = tempDir();
  try {
    addLora(model, { r: 4, alpha: 8, dropout: 0 }, 2);
    await saveLoraAdapter(dir, model);
    // A LLaMA of another width and depth: hidden 32, 2 layers.
    const other = { ...model.config, hiddenSize: 32, intermediateSize: 64, numLayers: 2, headDim: 4 };
    const w = new Map([...llamaParameterShapes(other)].map(([n, s]) => [n, { shape: s, data: new Float32Array(s.reduce((a, b) => a * b, 1)) }]));
    const small = new LlamaModel(other, w);
    try {
      assert.throws(
        () => loadLoraAdapter(dir, small),
        (e: Error) =>
          e instanceof InputError &&
          e.message.includes(ADAPTER_WEIGHTS_FILE) &&
          e.message.includes("'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight' has shape [4,64], the model's model.layers.0.self_attn.q_proj (in 32, out 32) with r 4 needs [4,32]") &&
          e.message.includes("'base_model.model.model.layers.4.self_attn.v_proj.lora_B.weight': the model has no linear module 'model.layers.4.self_attn.v_proj'"),
      );
      assert.equal(small.adapters().size, 0, 'nothing attached after a failed load');
    } finally {
      small.dispose();
    }
    // Adapter already present on the same modules.
    assert.throws(() => loadLoraAdapter(dir, model), /module model\.layers\.0\.self_attn\.q_proj already has an adapter/);
    const cfgPath = join(dir, ADAPTER_CONFIG_FILE);
    const cfg = JSON.parse(readFileSync(cfgPath, 'utf8'));
    writeFileSync(cfgPath, JSON.stringify({ ...cfg, use_dora: true, rank_pattern: { q_proj: 8 } }));
    removeLora(model);
    assert.throws(() => loadLoraAdapter(dir, model), /adapter_config\.json: adapter options not supported: use_dora: true \(DoRA\); rank_pattern: \{"q_proj":8\}/);
    writeFileSync(cfgPath, JSON.stringify({ ...cfg, peft_type: 'IA3' }));
    assert.throws(() => loadLoraAdapter(dir, model), /peft_type "IA3" is not supported \(expected "LORA"\)/);
    writeFileSync(cfgPath, JSON.stringify({ ...cfg, r: 8 }));
    assert.throws(() => loadLoraAdapter(dir, model), /has shape \[4,64\], .* with r 8 needs \[8,64\]/);
  } finally {
    model.dispose();
  }
});
