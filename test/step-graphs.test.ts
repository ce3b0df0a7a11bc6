/**
 * Training steps recorded once and replayed (lib/train/step-graphs.ts, native/src/graph.h), through
 * the cuda backend's TypeScript layer over the emulated addon, which records the kernels of a
 * capture and runs them at each launch, with the allocator's graph pools (a block a replay touches
 * that was handed to anyone else is a use-after-free error there):
 *
 * - a tiny BERT trained with dropout: eager, eager, captured, replayed, replayed gives the losses
 *   and the parameters of five eager steps bit for bit (new batches fed, new dropout masks drawn,
 *   the learning rate schedule followed), and the dropout counter and AdamW's steps advance alike;
 * - a step that reads a value back cannot be captured: it runs eagerly with the same numbers, and
 *   the key says why; host data that is not a feed and changes between steps keeps a shape eager
 *   (the AnglE objective's host-built label masks), while with its labels as device inputs
 *   (ObjectiveBatch.labelInputs) batches with other labels replay with the eager numbers;
 * - another sequence length is another graph; bucketed lengths share one;
 * - multi-tensor AdamW equals one AdamW kernel per parameter bit for bit.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { registerCudaBackendWith } from '../lib/backend/cuda/index.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import type { TextModel } from '../lib/models/types.js';
import { bucketLength, padTokenBatch, StepGraphs } from '../lib/train/step-graphs.js';
import { optimizerStep } from '../lib/train/training-step.js';
import { fusedAdamWMultiUpdate, fusedAdamWUpdate } from '../lib/ops/adamw-step.js';
import { pairBatch, pairStepContext } from '../bench/pair-step.js';
import { createEmulatedAddon, type EmulatedCudaAddon } from './fixtures/cuda/emulated-addon.js';

const TINY_BERT = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: 16, num_attention_heads: 2, intermediate_size: 32, num_hidden_layers: 1, vocab_size: 500 };
const BACKEND = 'cuda-emulated-graphs';
let addon: EmulatedCudaAddon;

before(async () => {
  await initBackend('cpu', { quiet: true });
  addon = createEmulatedAddon({ poison: true });
  registerCudaBackendWith(BACKEND, addon, addon.init(), 'fp32', 0);
  await tf.setBackend(BACKEND);
});

after(async () => {
  await initBackend('cpu', { quiet: true });
});

function freshModel(): TextModel {
  return modelFromConfig(TINY_BERT, { init: 'normal', seed: 1, dropoutSeed: 3 });
}

async function params(model: TextModel): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  for (const [k, v] of model.params) out.set(k, (await v.data()) as Float32Array);
  return out;
}

/** Batches of one shape (even variants: the same labels). */
const batchAt = (i: number, T = 8) => pairBatch(3, T, { vocab: 500, padEvery: 3, variant: 2 * i });
const lrAt = (i: number) => 1e-3 * (1 - i / 10);

test('a replayed step graph gives the eager losses and parameters bit for bit (dropout on, new batches, scheduled lr)', async () => {
  const steps = 5;
  const eagerModel = freshModel();
  const eager = pairStepContext(eagerModel);
  const eagerLosses: number[] = [];
  for (let i = 0; i < steps; i++) eagerLosses.push((await optimizerStep(eager.ctx, [batchAt(i)], lrAt(i))).loss);
  const eagerParams = await params(eagerModel);
  const eagerCounts = eager.ctx.optimizer.stepCounts();

  const model = freshModel();
  const step = pairStepContext(model);
  const graphs = new StepGraphs();
  const launches0 = addon.graphLaunches;
  const modes: string[] = [];
  const losses: number[] = [];
  for (let i = 0; i < steps; i++) {
    const r = await graphs.step(step.ctx, [batchAt(i)], lrAt(i));
    modes.push(r.mode);
    losses.push(r.loss);
  }
  assert.deepEqual(modes, ['eager', 'eager', 'captured', 'replayed', 'replayed'], JSON.stringify(graphs.stats().refused));
  assert.equal(addon.graphLaunches - launches0, 3);
  assert.deepEqual(losses, eagerLosses);
  assert.ok(new Set(losses).size === steps, 'the batches differ, so do the losses');
  const got = await params(model);
  for (const [k, v] of eagerParams) assert.deepEqual(got.get(k), v, `parameter ${k}`);
  assert.equal(model.dropoutCounter, eagerModel.dropoutCounter);
  assert.deepEqual(step.ctx.optimizer.stepCounts(), eagerCounts);
  const kernels = Object.values(graphs.stats().kernels)[0];
  assert.ok(kernels > 50, `${kernels} kernels in the graph`);
  // An eager step after the replays continues where they left off (dropout counter, AdamW steps).
  const next = await optimizerStep(step.ctx, [batchAt(steps)], lrAt(steps));
  const eagerNext = await optimizerStep(eager.ctx, [batchAt(steps)], lrAt(steps));
  assert.equal(next.loss, eagerNext.loss);
  graphs.dispose();
  for (const [s, m] of [[step, model], [eager, eagerModel]] as const) {
    s.dispose();
    m.dispose();
  }
  assert.equal(addon.memoryStats().inUse, 0, 'nothing left on the device once the graphs are destroyed');
});

test('host data that changes between steps and is not a feed keeps the shape eager, with the numbers of eager steps', async () => {
  const model = freshModel();
  // Label masks built on the host (no label inputs): labels alternate with the variant, so the uploads change from step to step.
  const step = pairStepContext(model, { labelInputs: false });
  const graphs = new StepGraphs();
  const modes: string[] = [];
  for (let i = 0; i < 4; i++) modes.push((await graphs.step(step.ctx, [pairBatch(3, 8, { vocab: 500, variant: i })], 1e-3)).mode);
  assert.deepEqual(modes, ['eager', 'eager', 'eager', 'eager']);
  assert.match(Object.values(graphs.stats().refused)[0], /host data that is not a feed changes between steps/);
  graphs.dispose();
  step.dispose();
  model.dispose();
});

test('the AnglE objective with its labels as device inputs replays batches whose labels change, with the eager losses and parameters bit for bit', async () => {
  // Labels alternate with the variant; ids and padding change too. The objective's ranks and in-batch target codes are feeds.
  const batch = (i: number) => pairBatch(3, 8, { vocab: 500, padEvery: 2, variant: i });
  const run = async (graphs?: StepGraphs) => {
    const model = freshModel();
    const step = pairStepContext(model);
    const out = [];
    for (let i = 0; i < 5; i++) out.push(graphs ? await graphs.step(step.ctx, [batch(i)], lrAt(i)) : { ...(await optimizerStep(step.ctx, [batch(i)], lrAt(i))), mode: 'eager' });
    const p = await params(model);
    step.dispose();
    model.dispose();
    return { out, p };
  };
  const graphs = new StepGraphs();
  const replayed = await run(graphs);
  const eager = await run();
  assert.deepEqual(replayed.out.map((r) => r.mode), ['eager', 'eager', 'captured', 'replayed', 'replayed'], JSON.stringify(graphs.stats().refused));
  assert.deepEqual(replayed.out.map((r) => r.loss), eager.out.map((r) => r.loss));
  assert.deepEqual(replayed.out.map((r) => r.terms), eager.out.map((r) => r.terms));
  assert.ok(new Set(eager.out.map((r) => r.terms.ibn)).size > 1, 'the ibn term differs from batch to batch');
  for (const [k, v] of eager.p) assert.deepEqual(replayed.p.get(k), v, `parameter ${k}`);
  graphs.dispose();
});

test('a step that reads a value back is not captured: it runs eagerly, and the reason is kept', async () => {
  const model = freshModel();
  const step = pairStepContext(model);
  const objective = step.ctx.objective;
  step.ctx.objective = (emb, input) => {
    emb.dataSync();
    return objective(emb, input);
  };
  const graphs = new StepGraphs();
  const modes: string[] = [];
  for (let i = 0; i < 4; i++) modes.push((await graphs.step(step.ctx, [batchAt(i)], 1e-3)).mode);
  assert.deepEqual(modes, ['eager', 'eager', 'eager', 'eager']);
  assert.match(Object.values(graphs.stats().refused)[0], /could not be captured: .*read back during a graph capture/);
  graphs.dispose();
  step.dispose();
  model.dispose();
});

test('another sequence length is another graph; bucketed lengths share one', async () => {
  assert.equal(bucketLength(9, [16, 32]), 16);
  assert.equal(bucketLength(40, [16, 32]), 40);
  const t = padTokenBatch(pairBatch(1, 3, { vocab: 500 }).tokens, 5, 'right');
  assert.deepEqual(Array.from(t.attentionMask.subarray(0, 5)), [1, 1, 1, 0, 0]);
  assert.deepEqual(Array.from(padTokenBatch(pairBatch(1, 3, { vocab: 500 }).tokens, 5, 'left').inputIds.subarray(0, 2)), [0, 0]);
  const model = freshModel();
  const step = pairStepContext(model);
  const graphs = new StepGraphs({ bucketLengths: [12] });
  const modes: string[] = [];
  for (const T of [6, 8, 10, 12]) modes.push((await graphs.step(step.ctx, [batchAt(T, T)], 1e-3)).mode);
  assert.deepEqual(modes, ['eager', 'eager', 'captured', 'replayed'], JSON.stringify(graphs.stats().refused));
  const plain = new StepGraphs();
  const plainModes: string[] = [];
  for (const T of [6, 8, 6, 8, 6]) plainModes.push((await plain.step(step.ctx, [batchAt(T, T)], 1e-3)).mode);
  assert.deepEqual(plainModes, ['eager', 'eager', 'eager', 'eager', 'captured']);
  graphs.dispose();
  plain.dispose();
  step.dispose();
  model.dispose();
});

test('multi-tensor AdamW equals one AdamW kernel per parameter bit for bit (70 parameters: two launches)', () => {
  const shapes = Array.from({ length: 70 }, (_, i) => (i % 3 === 0 ? [i + 1, 3] : [2 * i + 1]));
  const rand = (shape: number[], seed: number) => tf.randomUniform(shape, -1, 1, 'float32', seed);
  const steps = [3, 1, 7];
  const lr = 2e-3;
  const entries = shapes.map((s, i) => ({ param: tf.variable(rand(s, i)), grad: rand(s, 100 + i), m: tf.variable(tf.mul(rand(s, 200 + i), 0.1)), v: tf.variable(tf.mul(tf.abs(rand(s, 300 + i)), 0.01)) }));
  const single = entries.map((e, i) => fusedAdamWUpdate({ param: e.param, grad: e.grad, m: e.m, v: e.v, lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: i % 2 ? 0.01 : 0, step: steps[i % 3] }));
  const hyper = new Float32Array(entries.flatMap((_, i) => [lr, i % 2 ? 0.01 : 0, 1 - 0.9 ** steps[i % 3], 1 - 0.999 ** steps[i % 3]]));
  fusedAdamWMultiUpdate(entries, hyper, 0.9, 0.999, 1e-8);
  entries.forEach((e, i) => {
    assert.deepEqual(e.param.dataSync(), single[i].param.dataSync(), `param ${i}`);
    assert.deepEqual(e.m.dataSync(), single[i].m.dataSync(), `m ${i}`);
    assert.deepEqual(e.v.dataSync(), single[i].v.dataSync(), `v ${i}`);
  });
  tf.dispose([...entries.flatMap((e) => [e.param, e.grad, e.m, e.v]), ...single.flatMap((o) => [o.param, o.m, o.v])]);
});

test('on a backend that cannot record steps (cpu) every step is optimizerStep', async () => {
  await initBackend('cpu', { quiet: true });
  try {
    const run = async (graphs?: StepGraphs) => {
      const model = freshModel();
      const step = pairStepContext(model);
      const out = [];
      for (let i = 0; i < 3; i++) out.push(graphs ? await graphs.step(step.ctx, [batchAt(i)], 1e-3) : { ...(await optimizerStep(step.ctx, [batchAt(i)], 1e-3)), mode: 'eager' });
      step.dispose();
      model.dispose();
      return out;
    };
    const graphs = new StepGraphs();
    assert.deepEqual(await run(graphs), await run());
    assert.deepEqual(graphs.stats(), { eager: 3, captured: 0, replayed: 0, refused: {}, kernels: {}, unsupported: 'the cpu backend cannot record steps (cuda can)' });
  } finally {
    await tf.setBackend(BACKEND);
  }
});

test('BERT with fused attention and attention dropout replays bit for bit too (the kernel reads its seed from the device)', async () => {
  const run = async (graphs?: StepGraphs) => {
    const model = freshModel();
    const step = pairStepContext(model, { attention: 'fused' });
    const out = [];
    for (let i = 0; i < 4; i++) out.push(graphs ? await graphs.step(step.ctx, [batchAt(i)], lrAt(i)) : { ...(await optimizerStep(step.ctx, [batchAt(i)], lrAt(i))), mode: 'replayed' });
    step.dispose();
    model.dispose();
    return out;
  };
  const graphs = new StepGraphs();
  const replayed = await run(graphs);
  const eager = await run();
  assert.deepEqual(replayed.map((r) => r.mode), ['eager', 'eager', 'captured', 'replayed'], JSON.stringify(graphs.stats().refused));
  assert.deepEqual(replayed.map((r) => r.loss), eager.map((r) => r.loss));
  graphs.dispose();
});
