/**
 * BERT and LLaMA (GQA, causal) with `attention: 'fused'` (ForwardOptions; the tfjs engine's `attention` option): on the
 * cuda backend's TypeScript layer over the emulated addon each layer's attention is one
 * AngleAttention kernel forward and one AngleAttentionGrad backward, and the model's outputs, loss
 * and gradients equal plain attention's — with attention dropout on too, since the fused kernel
 * drops the elements the dropout kernel drops under the same seed, and the model draws the seeds in
 * the same order. On cpu 'fused' is plain attention (no kernel), so the numbers are plain's.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { registerCudaBackendWith } from '../lib/backend/cuda/index.js';
import { TfjsEngine } from '../lib/embed/engines/tfjs-engine.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import type { AttentionKind, TextModel } from '../lib/models/types.js';
import { optimizerStep } from '../lib/train/training-step.js';
import { pairBatch, pairStepContext } from '../bench/pair-step.js';
import { createEmulatedAddon } from './fixtures/cuda/emulated-addon.js';

const TINY_LLAMA = { ...KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'], hidden_size: 32, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 48, num_hidden_layers: 2, vocab_size: 300, max_position_embeddings: 64 };
const TINY_BERT = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: 32, num_attention_heads: 4, intermediate_size: 48, num_hidden_layers: 2, vocab_size: 400 };
const BACKEND = 'cuda-emulated-fused-attention';

before(async () => {
  await initBackend('cpu', { quiet: true });
  const addon = createEmulatedAddon();
  registerCudaBackendWith(BACKEND, addon, addon.init(), 'fp32', 0);
});

after(async () => {
  await initBackend('cpu', { quiet: true });
});

function close(a: ArrayLike<number>, b: ArrayLike<number>, what: string, atol = 2e-5, rtol = 1e-4): void {
  assert.equal(a.length, b.length, `${what}: lengths`);
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) <= atol + rtol * Math.abs(b[i]), `${what}[${i}]: ${a[i]} vs ${b[i]}`);
}

/** Counts the kernels the active backend runs while `f` runs. */
function kernelsOf(f: () => void): Map<string, number> {
  const counts = new Map<string, number>();
  const engine = tf.engine() as unknown as { runKernel: (name: string, ...rest: unknown[]) => unknown };
  const original = engine.runKernel;
  engine.runKernel = function (name: string, ...rest: unknown[]) {
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return original.call(this, name, ...rest);
  };
  try {
    f();
  } finally {
    engine.runKernel = original;
  }
  return counts;
}

/** Loss, trained parameters after one step and the inference output, with `attention`. */
async function run(attention: AttentionKind, dropout: number, arch: 'bert' | 'llama' = 'bert'): Promise<{ loss: number; params: Map<string, Float32Array>; hidden: Float32Array; model: TextModel }> {
  const model = modelFromConfig(arch === 'bert' ? TINY_BERT : TINY_LLAMA, { init: 'normal', seed: 5, dropoutSeed: 9 });
  model.setDropout(dropout);
  const step = pairStepContext(model, { attention, pooling: arch === 'bert' ? 'cls' : 'last' });
  const batch = pairBatch(3, 10, { vocab: 300, padEvery: 2 });
  const { loss } = await optimizerStep(step.ctx, [batch], 1e-3);
  const params = new Map<string, Float32Array>();
  for (const [k, v] of model.params) params.set(k, (await v.data()) as Float32Array);
  const out = await new TfjsEngine(model, { attention: attention === 'fused' ? 'fused' : 'plain' }).run(batch.tokens, { hiddenStates: false });
  const hidden = (await out.lastHiddenState.data()) as Float32Array;
  tf.dispose([out.lastHiddenState, ...out.hiddenStates, ...(out.poolerOutput ? [out.poolerOutput] : [])]);
  step.dispose();
  return { loss, params, hidden, model };
}

test("'fused' runs one attention kernel per layer forward and backward on cuda (emulated) and equals plain attention, dropout on", async () => {
  await tf.setBackend(BACKEND);
  try {
    for (const dropout of [0, 0.1]) {
      const plain = await run('plain', dropout);
      const fused = await run('fused', dropout);
      close([fused.loss], [plain.loss], `loss, dropout ${dropout}`);
      // The key bias's exact gradient is 0 (softmax ignores a shift shared by all keys): AdamW turns its
      // rounding noise into ±lr steps whose sign either attention may get, so it is left out.
      for (const [k, v] of plain.params) if (!k.endsWith('attention.self.key.bias')) close(fused.params.get(k)!, v, `${k} after one step, dropout ${dropout}`);
      close(fused.hidden, plain.hidden, `inference output, dropout ${dropout}`);
      const batch = pairBatch(1, 6, { vocab: 400 });
      const counts = kernelsOf(() => {
        const o = fused.model.forward(batch.tokens, { attention: 'fused' });
        tf.dispose([o.lastHiddenState, ...o.hiddenStates, ...(o.poolerOutput ? [o.poolerOutput] : [])]);
      });
      assert.equal(counts.get('AngleAttention'), TINY_BERT.num_hidden_layers);
      assert.equal(counts.get('Softmax'), undefined, 'no softmax outside the kernel');
      plain.model.dispose();
      fused.model.dispose();
    }
  } finally {
    await tf.setBackend('cpu');
  }
});

test("LLaMA (GQA, causal mask) with 'fused' equals plain attention on cuda (emulated), dropout on", async () => {
  await tf.setBackend(BACKEND);
  try {
    const plain = await run('plain', 0.1, 'llama');
    const fused = await run('fused', 0.1, 'llama');
    close([fused.loss], [plain.loss], 'loss');
    for (const [k, v] of plain.params) close(fused.params.get(k)!, v, `${k} after one step`);
    close(fused.hidden, plain.hidden, 'inference output');
    plain.model.dispose();
    fused.model.dispose();
  } finally {
    await tf.setBackend('cpu');
  }
});

test("on cpu 'fused' is plain attention: the same numbers", async () => {
  const plain = await run('plain', 0);
  const fused = await run('fused', 0);
  assert.equal(fused.loss, plain.loss);
  close(fused.hidden, plain.hidden, 'inference output', 0, 0);
  plain.model.dispose();
  fused.model.dispose();
});
