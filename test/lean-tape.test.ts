/**
 * The lean gradient tape (lib/backend/lean-tape.ts) and activation checkpointing
 * (lib/ops/checkpoint.ts) change memory, never numbers:
 *
 * - gradients bit for bit equal to tf.variableGrads' on the golden BERT (cpu; several poolings,
 *   dropout on) and on a LoRA decoder, at a lower peak, with tensors saved by shape only dropped;
 * - checkpointing gives the same gradients as without it (BERT with dropout, LoRA LLaMA with
 *   attention and adapter dropout; the lean tape and tfjs's), keeps less, and a trainer switch
 *   turns it on: the same losses step for step;
 * - frozen parameters (a LoRA base) get no gradient buffer: no tensor of a frozen weight's shape
 *   is made after the forward pass;
 * - the errors of tf.variableGrads where nothing connects.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { lastLeanTapeStats, leanVariableGrads } from '../lib/backend/lean-tape.js';
import { trackTensorMemory } from '../lib/backend/memory-tracking.js';
import { withShapeOnlyBackend } from '../lib/backend/shape-only/index.js';
import { pool, type Pooling } from '../lib/embed/pooling.js';
import { angleTotalLoss, cosineLoss } from '../lib/losses/index.js';
import { addLora } from '../lib/models/adapters/lora.js';
import { loadModel } from '../lib/models/auto.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import type { ForwardOptions, TextModel, TokenBatch } from '../lib/models/types.js';
import { pairExamples } from '../lib/train/examples.js';
import { Trainer } from '../lib/train/trainer.js';
import { GOLDEN_DIR } from './helpers/env.js';

const TINY_LLAMA = { ...KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'], hidden_size: 32, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 48, num_hidden_layers: 2, vocab_size: 300, max_position_embeddings: 64 };

before(async () => {
  await initBackend('cpu', { quiet: true });
});

function tokenBatch(B: number, T: number, vocab: number): TokenBatch {
  const b: TokenBatch = { inputIds: new Int32Array(B * T).map((_, i) => 3 + ((i * 7919) % (vocab - 3))), tokenTypeIds: new Int32Array(B * T), attentionMask: new Int32Array(B * T).fill(1), batch: B, seqLen: T };
  for (let r = 0; r < B; r += 3) for (let t = T - 3; t < T; t++) b.attentionMask[r * T + t] = 0;
  return b;
}

/** The loss and every gradient, read back, by parameter name. */
function gradientsOf(model: TextModel, batch: TokenBatch, pooling: Pooling, lean: boolean, fwd: ForwardOptions = {}): Map<string, Float32Array> {
  const vars = [...model.trainableParameters().values()];
  const labels = Array.from({ length: batch.batch / 2 }, (_, i) => i % 2);
  const f = () => {
    const out = model.forward(batch, { training: true, ...fwd });
    const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
    return angleTotalLoss(pool(pooling, { lastHiddenState: out.lastHiddenState, hiddenStates: out.hiddenStates, attentionMask: mask }), labels);
  };
  const { value, grads } = lean ? leanVariableGrads(f, vars) : tf.variableGrads(f, vars);
  const out = new Map<string, Float32Array>([['loss', value.dataSync() as Float32Array]]);
  for (const [name, v] of model.params) if (grads[v.name]) out.set(name, grads[v.name].dataSync() as Float32Array);
  tf.dispose([value, ...Object.values(grads)]);
  return out;
}

function assertSame(a: Map<string, Float32Array>, b: Map<string, Float32Array>, what: string): void {
  assert.deepEqual([...b.keys()].sort(), [...a.keys()].sort(), `${what}: the same parameters get gradients`);
  for (const [k, v] of a) assert.deepEqual(Array.from(b.get(k)!), Array.from(v), `${what}: ${k}`);
}

/** A tiny LoRA decoder with dropout everywhere and non-zero B (so A gets gradients). */
function loraDecoder(): LlamaModel {
  const model = modelFromConfig(TINY_LLAMA, { init: 'normal', seed: 1, dropoutSeed: 3 }) as LlamaModel;
  model.setDropout(0.1);
  addLora(model, { r: 4, alpha: 8, dropout: 0.1, targetModules: 'all-linear' }, 2);
  for (const [n, v] of model.params) if (n.endsWith('lora_B.weight')) tf.tidy(() => v.assign(tf.randomNormal(v.shape, 0, 0.1, 'float32', 9)));
  return model;
}

test('lean gradients equal tf.variableGrads bit for bit on the golden BERT, at a lower peak', async (t) => {
  if (!GOLDEN_DIR) return t.skip('no encoder golden set (ANGLE_GOLDEN_DIR or ../shared/golden)');
  const m = await loadModel(join(GOLDEN_DIR, 'model'));
  try {
    const batch = m.tokenizer.encodeBatch(['A man plays a guitar.', 'Someone plays music.', 'A cat sleeps.', 'Dogs run in the park today', 'It rains.', 'The weather is wet'], { maxLength: 16 });
    for (const pooling of ['cls', 'avg', 'max', 'first_last_avg'] as Pooling[]) {
      m.model.dropoutCounter = 0;
      const ref = await trackTensorMemory(() => gradientsOf(m.model, batch, pooling, false, { outputHiddenStates: pooling === 'first_last_avg' }));
      m.model.dropoutCounter = 0;
      const lean = await trackTensorMemory(() => gradientsOf(m.model, batch, pooling, true, { outputHiddenStates: pooling === 'first_last_avg' }));
      assertSame(ref.result, lean.result, pooling);
      const stats = lastLeanTapeStats()!;
      t.diagnostic(`${pooling}: peak ${ref.memory.peakBufferBytes} -> ${lean.memory.peakBufferBytes} B; saves kept ${stats.savesKept}, dropped ${stats.savesDropped}`);
      assert.ok(stats.savesDropped > 0);
      assert.ok(lean.memory.peakBufferBytes < ref.memory.peakBufferBytes, `${pooling}: lean peak ${lean.memory.peakBufferBytes} not below ${ref.memory.peakBufferBytes}`);
      assert.equal(lean.memory.endBufferBytes, 0, 'nothing left behind');
    }
  } finally {
    m.model.dispose();
  }
});

test('checkpointing gives the same gradients as without it (BERT with dropout; LoRA decoder with dropout; lean and tfjs tapes) and keeps less', async (t) => {
  const bertCfg = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: 32, num_attention_heads: 4, intermediate_size: 64, num_hidden_layers: 3, vocab_size: 500 };
  const makers: Array<[string, () => TextModel, Pooling, number]> = [
    ['bert', () => modelFromConfig(bertCfg, { init: 'normal', seed: 1, dropoutSeed: 3 }), 'avg', 500],
    ['lora llama', loraDecoder, 'last', 300],
  ];
  for (const [name, make, pooling, vocab] of makers) {
    const batch = tokenBatch(8, 12, vocab);
    const run = (lean: boolean, fwd: ForwardOptions) =>
      trackTensorMemory(() => {
        const model = make();
        try {
          const g = gradientsOf(model, batch, pooling, lean, fwd);
          return { g, counter: model.dropoutCounter };
        } finally {
          model.dispose();
        }
      });
    const plain = await run(true, {});
    const ckpt = await run(true, { checkpointing: true });
    const ckptTfjs = await run(false, { checkpointing: true });
    assertSame(plain.result.g, ckpt.result.g, `${name} checkpointed`);
    assertSame(plain.result.g, ckptTfjs.result.g, `${name} checkpointed (tfjs tape)`);
    assert.equal(ckpt.result.counter, plain.result.counter, `${name}: the dropout counter moves as without checkpointing`);
    const blocked = await run(true, { attention: 'blocked' });
    const blockedCkpt = await run(true, { attention: 'blocked', checkpointing: true });
    assertSame(blocked.result.g, blockedCkpt.result.g, `${name} blocked attention, checkpointed`);
    t.diagnostic(`${name}: peak ${plain.memory.peakBufferBytes} B, checkpointed ${ckpt.memory.peakBufferBytes} B`);
  }
  // Memory at a size where activations dominate (shape-only: the same code, no compute).
  const big = { ...bertCfg, hidden_size: 256, intermediate_size: 1024, num_hidden_layers: 6 };
  const peak = (fwd: ForwardOptions) =>
    withShapeOnlyBackend(async () => {
      const model = modelFromConfig(big);
      try {
        return (await trackTensorMemory(() => gradientsOf(model, tokenBatch(64, 128, 500), 'cls', true, fwd))).memory.peakBufferBytes;
      } finally {
        model.dispose();
      }
    });
  const without = await peak({});
  const withCkpt = await peak({ checkpointing: true });
  t.diagnostic(`BERT 6 × 256, 64 × 128: step peak ${without} B, checkpointed ${withCkpt} B`);
  assert.ok(withCkpt < 0.5 * without, `checkpointed peak ${withCkpt} is not under half of ${without}`);
});

test('TrainerConfig.checkpointing: the same losses step for step', async () => {
  const pairs: Array<[string, string, number]> = [];
  for (let i = 0; i < 16; i++) pairs.push([`sentence number ${i} about a cat`, `a text ${i} on dogs and cats ${i % 3}`, i % 2]);
  const bertCfg = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: 32, num_attention_heads: 4, intermediate_size: 64, num_hidden_layers: 2, vocab_size: 30522 };
  const losses = async (checkpointing: boolean) => {
    const tokenizerSource = GOLDEN_DIR ? await loadModel(join(GOLDEN_DIR, 'model')) : undefined;
    if (!tokenizerSource) return undefined;
    tokenizerSource.model.dispose();
    const model = modelFromConfig(bertCfg, { init: 'normal', seed: 4, dropoutSeed: 5 });
    const log: number[] = [];
    try {
      const trainer = new Trainer({
        model: { model, tokenizer: tokenizerSource.tokenizer },
        train: pairExamples('toy', pairs.map(([a, b, score]) => ({ a, b, score }))),
        config: { objective: { name: 'angle' }, maxLength: 16, batchSize: 4, maxSteps: 3, lr: 1e-3, checkpointing, dropout: 0.1 },
        progress: false,
        onStep: (l) => log.push(l.loss),
      });
      await trainer.run();
    } finally {
      model.dispose();
    }
    return log;
  };
  const a = await losses(false);
  if (!a) return;
  const b = await losses(true);
  assert.equal(a.length, 3);
  assert.deepEqual(b, a);
});

test('frozen parameters get no gradient buffer: after the forward pass no tensor has a frozen weight matrix’s shape', async () => {
  // Distinct dimensions, so a frozen weight's shape cannot be mistaken for another tensor's.
  const cfg = { ...TINY_LLAMA, hidden_size: 40, intermediate_size: 56, num_attention_heads: 5, num_key_value_heads: 5, vocab_size: 310 };
  const model = modelFromConfig(cfg, { init: 'normal', seed: 1 }) as LlamaModel;
  addLora(model, { r: 4, alpha: 8, dropout: 0, targetModules: 'all-linear' }, 2);
  // The matrices (embedding, base linear weights): a gradient of one would be a buffer of its shape.
  const frozenShapes = new Set([...model.params].filter(([, v]) => !v.trainable && v.rank === 2).map(([, v]) => JSON.stringify(v.shape)));
  const made: string[] = [];
  let backward = false;
  const engine = tf.engine() as unknown as { runKernel: (name: string, inputs: unknown, attrs: unknown) => tf.Tensor | tf.Tensor[] };
  const original = engine.runKernel;
  engine.runKernel = function (name: string, inputs: unknown, attrs: unknown) {
    const out = original.call(this, name, inputs, attrs);
    if (backward) for (const t of Array.isArray(out) ? out : [out]) if (frozenShapes.has(JSON.stringify(t.shape))) made.push(`${name} [${t.shape}]`);
    return out;
  };
  try {
    const batch = tokenBatch(6, 10, 310);
    const vars = [...model.trainableParameters().values()];
    const { value, grads } = leanVariableGrads(() => {
      const out = model.forward(batch, { training: true });
      const mask = tf.tensor2d(batch.attentionMask, [6, 10], 'int32');
      const loss = cosineLoss(pool('avg', { lastHiddenState: out.lastHiddenState, attentionMask: mask }), [1, 0, 1]);
      backward = true;
      return loss;
    }, vars);
    assert.deepEqual(made, []);
    assert.equal(Object.keys(grads).length, vars.length);
    for (const v of model.params.values()) if (!v.trainable) assert.equal(grads[v.name], undefined);
    tf.dispose([value, ...Object.values(grads)]);
  } finally {
    engine.runKernel = original;
    model.dispose();
  }
});

test('lean gradients refuse what tf.variableGrads refuses', () => {
  const v = tf.variable(tf.scalar(2), true, 'lean-tape-test-unconnected');
  try {
    assert.throws(() => leanVariableGrads(() => tf.scalar(3), [v]), /Cannot find a connection/);
    assert.throws(() => leanVariableGrads(() => tf.mul(v, tf.ones([2])) as unknown as tf.Scalar, [v]), /scalar/);
    const { value, grads } = leanVariableGrads(() => tf.mul(v, v) as tf.Scalar, [v]);
    assert.equal(value.dataSync()[0], 4);
    assert.equal(grads[v.name].dataSync()[0], 4);
    tf.dispose([value, grads[v.name]]);
  } finally {
    v.dispose();
  }
});
