/**
 * OPT trained as PromptEOL+CSE trains it (lib/experiments/recipes/prompteol.ts): LoRA over a frozen
 * base kept in NF4 (the shared frozen-base storage of lib/models/adaptable-transformer-model.ts)
 * with activation checkpointing (lib/models/opt/model.ts), and OPT built from its config alone
 * (lib/models/model-from-config.ts KNOWN_CONFIGS) as the rehearsal preset builds it:
 *
 * - checkpointing gives the same gradients as without it, bit for bit, on a LoRA OPT with every
 *   dropout on, pre-LN and post-LN with projections (OPT-350m's layout), and moves the dropout
 *   counter alike;
 * - LoRA steps over an NF4 base of the golden tiny OPT compute exactly what a float32 base holding
 *   the NF4-decoded weights computes; biases stay float32 parameters and the base gets no gradient;
 * - the known configs of facebook/opt-125m … 66b count the parameters an independent sum over
 *   OPT's modules gives, and OPT-13B with LoRA, an NF4 base and checkpointing takes a training step
 *   shape-only (no values), as the rehearsal runs it.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { leanVariableGrads } from '../lib/backend/lean-tape.js';
import { measurePeakBytes } from '../lib/backend/shape-only/index.js';
import { pool } from '../lib/embed/pooling.js';
import { angleTotalLoss } from '../lib/losses/index.js';
import { addLora } from '../lib/models/adapters/lora.js';
import { loadModel } from '../lib/models/auto.js';
import { KNOWN_CONFIGS, modelFromConfig, parameterCountOfConfig } from '../lib/models/model-from-config.js';
import type { OptModel } from '../lib/models/opt/model.js';
import type { ForwardOptions, TokenBatch } from '../lib/models/types.js';
import { dequantizeNf4Host, quantizeNf4 } from '../lib/ops/nf4.js';
import { AdamW } from '../lib/train/adamw.js';
import { bindObjective } from '../lib/train/objective.js';
import { optimizerStep, type StepContext } from '../lib/train/training-step.js';
import { SHARED_DIR } from './helpers/env.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

const TINY = { ...KNOWN_CONFIGS['facebook/opt-125m'], hidden_size: 32, num_attention_heads: 4, ffn_dim: 48, num_hidden_layers: 2, vocab_size: 300, max_position_embeddings: 64, word_embed_proj_dim: 32 };
const TINY_POST_LN = { ...TINY, do_layer_norm_before: false, word_embed_proj_dim: 16 };

function tokenBatch(B: number, T: number, vocab: number): TokenBatch {
  const b: TokenBatch = { inputIds: new Int32Array(B * T).map((_, i) => 3 + ((i * 7919) % (vocab - 3))), tokenTypeIds: new Int32Array(B * T), attentionMask: new Int32Array(B * T).fill(1), batch: B, seqLen: T };
  // Left padding on every third row, as decoder batches are padded.
  for (let r = 0; r < B; r += 3) for (let t = 0; t < 3; t++) b.attentionMask[r * T + t] = 0;
  return b;
}

/** A tiny LoRA OPT with every dropout on and non-zero B (so A gets gradients). */
function loraOpt(config: Record<string, unknown>): OptModel {
  const model = modelFromConfig(config, { init: 'normal', seed: 1, dropoutSeed: 3 }) as OptModel;
  model.setDropout(0.1);
  addLora(model, { r: 4, alpha: 8, dropout: 0.1, targetModules: 'all-linear' }, 2);
  for (const [n, v] of model.params) if (n.endsWith('lora_B.weight')) tf.tidy(() => v.assign(tf.randomNormal(v.shape, 0, 0.1, 'float32', 9)));
  return model;
}

/** The loss and every gradient, read back, by parameter name; and where the dropout counter ended. */
function gradientsOf(model: OptModel, batch: TokenBatch, fwd: ForwardOptions): { grads: Map<string, Float32Array>; counter: number } {
  const vars = [...model.trainableParameters().values()];
  const labels = Array.from({ length: batch.batch / 2 }, (_, i) => i % 2);
  const f = () => {
    const out = model.forward(batch, { training: true, ...fwd });
    const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
    return angleTotalLoss(pool('last', { lastHiddenState: out.lastHiddenState, hiddenStates: out.hiddenStates, attentionMask: mask }), labels);
  };
  const { value, grads } = leanVariableGrads(f, vars);
  const out = new Map<string, Float32Array>([['loss', value.dataSync() as Float32Array]]);
  for (const [name, v] of model.params) if (grads[v.name]) out.set(name, grads[v.name].dataSync() as Float32Array);
  tf.dispose([value, ...Object.values(grads)]);
  return { grads: out, counter: model.dropoutCounter };
}

test('OPT with checkpointing: the same gradients as without it, bit for bit (LoRA, dropout; pre-LN and post-LN with projections)', () => {
  for (const [name, config] of [['pre-LN', TINY], ['post-LN, project_in/out', TINY_POST_LN]] as const) {
    const batch = tokenBatch(8, 12, 300);
    const run = (fwd: ForwardOptions) => {
      const model = loraOpt(config);
      try {
        return gradientsOf(model, batch, fwd);
      } finally {
        model.dispose();
      }
    };
    const plain = run({});
    const ckpt = run({ checkpointing: true });
    assert.deepEqual([...ckpt.grads.keys()].sort(), [...plain.grads.keys()].sort(), `${name}: the same parameters get gradients`);
    assert.ok([...plain.grads.keys()].some((k) => k.includes('lora_A')), `${name}: the adapters train`);
    for (const [k, v] of plain.grads) assert.deepEqual(Array.from(ckpt.grads.get(k)!), Array.from(v), `${name}: ${k}`);
    assert.equal(ckpt.counter, plain.counter, `${name}: the dropout counter moves as without checkpointing`);
  }
});

const OPT_DIR = SHARED_DIR ? join(SHARED_DIR, 'golden', 'opt-tiny-seed7', 'model') : undefined;
const TEXTS = ['A man is playing a guitar.', 'A man plays the guitar.', 'A woman slices an onion.', 'Someone is cutting an onion.', 'The cat sat on the mat.', 'The dog barked at the moon.', 'She was very happy.', 'She was very sad.'];

/** Five LoRA steps (r 8, all linear layers) on the golden tiny OPT over a base stored as asked. */
async function loraSteps(base: 'nf4' | 'nf4-decoded-fp32'): Promise<{ losses: number[]; stored: number; biasesTrainable: boolean; baseGrads: number; linearWeightsLeft: number }> {
  const m = await loadModel(OPT_DIR!);
  const model = m.model as OptModel;
  try {
    addLora(model, { r: 8, alpha: 16, dropout: 0, targetModules: 'all-linear' }, 3);
    let stored = 0;
    if (base === 'nf4') stored = model.storeFrozenBase('nf4', { doubleQuant: true }).length;
    else {
      for (const [module] of model.linearModules()) {
        const v = model.params.get(`${module}.weight`)!;
        tf.tidy(() => v.assign(tf.tensor(dequantizeNf4Host(quantizeNf4(v.dataSync(), true)), v.shape)));
      }
    }
    const tokens = m.tokenizer.encodeBatch(TEXTS, { maxLength: 24 });
    const batch = { epoch: 0, index: 0, examples: new Uint32Array(4), tokens, labels: [1, 1, 0, 0], keys: TEXTS, realTokens: tokens.batch * tokens.seqLen };
    const trainable = model.trainableParameters();
    const optimizer = new AdamW(trainable, { weightDecay: 0 });
    const objective = bindObjective({ name: 'angle' }, 'pairs');
    const ctx: StepContext = { model, trainable, pooling: 'last', padSide: m.tokenizer.padSide, objective: objective.loss, optimizer, checkpointing: true };
    const losses: number[] = [];
    for (let s = 0; s < 5; s++) losses.push((await optimizerStep(ctx, [batch], 5e-3)).loss);
    const { value, grads } = leanVariableGrads(() => tf.sum(model.forward(tokens, { training: true }).lastHiddenState) as tf.Scalar, [...model.params.values()]);
    const trainableNames = new Set([...trainable.values()].map((v) => v.name));
    // Gradients of the linear weights (q, k, v, out_proj, fc1, fc2): a stored base has none to take.
    const baseGrads = Object.keys(grads).filter((n) => !trainableNames.has(n) && /(_proj|fc[12])\.weight/.test(n)).length;
    const linearWeightsLeft = [...model.linearModules().keys()].filter((mod) => model.params.has(`${mod}.weight`)).length;
    tf.dispose([value, ...Object.values(grads)]);
    optimizer.dispose();
    objective.dispose();
    const biasesTrainable = [...trainable.keys()].some((n) => n.endsWith('.bias'));
    return { losses, stored, biasesTrainable, baseGrads, linearWeightsLeft };
  } finally {
    model.dispose();
  }
}

test('LoRA over an NF4 base of the golden tiny OPT (checkpointed): what a float32 base holding the NF4-decoded weights computes', async (t) => {
  if (!OPT_DIR || !existsSync(OPT_DIR)) return t.skip('no OPT golden set (../shared/golden/opt-tiny-seed7)');
  const nf4 = await loraSteps('nf4');
  const decoded = await loraSteps('nf4-decoded-fp32');
  t.diagnostic(`losses nf4 ${nf4.losses.map((l) => l.toFixed(4)).join(' ')}`);
  assert.equal(nf4.stored, 2 * 6, 'q, k, v, out_proj, fc1, fc2 of both layers are stored in 4 bits');
  assert.deepEqual(nf4.losses, decoded.losses, 'the 4-bit storage computes what a float32 base holding the decoded weights computes');
  assert.ok(nf4.losses[4] < nf4.losses[0], 'the loss falls');
  assert.equal(nf4.biasesTrainable, false, 'the base biases stay frozen (LoRA trains the adapters only)');
  assert.equal(nf4.linearWeightsLeft, 0, 'no float32 copy of a stored weight is left among the parameters');
  assert.equal(nf4.baseGrads, 0, 'a stored frozen weight gets no gradient');
  assert.equal(decoded.linearWeightsLeft, 12, 'the float32 base keeps its weights');
});

/** OPT's parameters summed module by module from the config's numbers (independent of the weight map). */
function optParameters(c: { vocab_size: number; hidden_size: number; num_hidden_layers: number; ffn_dim: number; max_position_embeddings: number; word_embed_proj_dim: number; do_layer_norm_before: boolean }): number {
  const h = c.hidden_size;
  const e = c.word_embed_proj_dim;
  const layer = 4 * (h * h + h) + (h * c.ffn_dim + c.ffn_dim) + (c.ffn_dim * h + h) + 2 * 2 * h;
  return c.vocab_size * e + (c.max_position_embeddings + 2) * h + (e !== h ? 2 * e * h : 0) + c.num_hidden_layers * layer + (c.do_layer_norm_before ? 2 * h : 0);
}

test('KNOWN_CONFIGS: every facebook/opt size as its config.json says, counted as OPT adds up its modules', () => {
  const sizes = ['125m', '350m', '1.3b', '2.7b', '6.7b', '13b', '30b', '66b'];
  for (const s of sizes) {
    const c = KNOWN_CONFIGS[`facebook/opt-${s}` as keyof typeof KNOWN_CONFIGS] as unknown as Parameters<typeof optParameters>[0];
    assert.equal(parameterCountOfConfig(c as unknown as Record<string, unknown>), optParameters(c), s);
  }
  // The one post-LN size, with projections (facebook/opt-350m config.json).
  const c350 = KNOWN_CONFIGS['facebook/opt-350m'];
  assert.deepEqual([c350.do_layer_norm_before, c350.word_embed_proj_dim, c350.hidden_size], [false, 512, 1024]);
  assert.equal(parameterCountOfConfig(KNOWN_CONFIGS['facebook/opt-125m']), 125_239_296);
});

test('OPT-13B from its config, shape-only: a LoRA step over an NF4 base with checkpointing, as the rehearsal runs it', async () => {
  const r = await measurePeakBytes(() => {
    const model = modelFromConfig(KNOWN_CONFIGS['facebook/opt-13b']) as OptModel;
    try {
      addLora(model, { r: 64, alpha: 16, dropout: 0.05, targetModules: 'all-linear' });
      const stored = model.storeFrozenBase('nf4', { doubleQuant: true }).length;
      const batch = tokenBatch(4, 16, 50272);
      const vars = [...model.trainableParameters().values()];
      const { value, grads } = leanVariableGrads(() => tf.sum(model.forward(batch, { training: true, checkpointing: true }).lastHiddenState) as tf.Scalar, vars);
      const shapes = vars.map((v) => grads[v.name]?.shape.join('x'));
      tf.dispose([value, ...Object.values(grads)]);
      return { stored, hidden: model.hiddenSize, adapters: vars.length, gradients: shapes.filter(Boolean).length, storedBytes: model.storedBaseBytes() };
    } finally {
      model.dispose();
    }
  });
  assert.equal(r.result.stored, 40 * 6);
  assert.equal(r.result.hidden, 5120);
  assert.equal(r.result.gradients, r.result.adapters, 'every adapter matrix gets its gradient');
  // 4 bits a weight and a little for the quantisation constants: far under float32's 4 bytes.
  const linear = 40 * (4 * 5120 * 5120 + 2 * 5120 * 20480);
  assert.ok(r.result.storedBytes < linear * 0.53 && r.result.storedBytes > linear * 0.5, `${r.result.storedBytes} bytes for ${linear} weights`);
});
