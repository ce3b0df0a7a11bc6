/**
 * The shape-only backend's count of host dispatches and device launches (what bench/cuda-launches.ts
 * records per training step for issue 39): a kernel that only shares a buffer (Reshape, Identity)
 * is a dispatch without a launch, a kernel that writes a buffer launches once, the multi-kernel
 * natives (LayerNorm's and fused attention's backward) launch what their .cu functions launch, a
 * whole BERT-base training step adds up per kernel, and the same step replayed as a step graph
 * (lib/train/step-graphs.ts) is one launch and a few uploads — at most a quarter of the launches
 * of the step op by op (issue 39's target), with the kernels it holds counted — also for AnglE
 * training, whose batches and labels change every step (the labels are fed as device inputs).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { CUDA_LAUNCHES, shapeOnlyBackend, withShapeOnlyBackend } from '../lib/backend/shape-only/index.js';
import { fusedAttention } from '../lib/ops/fused-attention.js';
import { fusedLayerNorm } from '../lib/ops/layer-norm.js';
import { countStepLaunches } from '../bench/cuda-launches.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

test('reshape and identity dispatch without launching; matmul, LayerNorm and attention launch what their native functions launch', async () => {
  await withShapeOnlyBackend(() => {
    const b = shapeOnlyBackend('cuda');
    const x = tf.ones([4, 6, 8]);
    b.resetDispatchCounts();
    tf.tidy(() => {
      const r = tf.reshape(x, [24, 8]);
      tf.clone(r);
      tf.matMul(r, tf.ones([8, 3]));
    });
    let c = b.dispatchCounts();
    assert.deepEqual(c.byKernel.Reshape, { dispatches: 1, launches: 0 });
    assert.deepEqual(c.byKernel.Identity, { dispatches: 1, launches: 0 });
    assert.deepEqual(c.byKernel.BatchMatMul, { dispatches: 1, launches: 1 });
    b.resetDispatchCounts();
    tf.tidy(() => {
      const g = tf.ones([8]);
      tf.grads((a: tf.Tensor) => tf.sum(fusedLayerNorm(a, g, g, 1e-5)))([x]);
      const q = tf.ones([2, 4, 5, 8]);
      const kv = tf.ones([2, 2, 5, 8]);
      tf.grads((a: tf.Tensor, k: tf.Tensor, v: tf.Tensor) => tf.sum(fusedAttention(a, k, v)))([q, kv, kv]);
    });
    c = b.dispatchCounts();
    assert.deepEqual(c.byKernel.AngleLayerNormGrad, { dispatches: 1, launches: CUDA_LAUNCHES.AngleLayerNormGrad });
    assert.deepEqual(c.byKernel.AngleAttention, { dispatches: 1, launches: 1 });
    assert.deepEqual(c.byKernel.AngleAttentionGrad, { dispatches: 1, launches: 3 });
    x.dispose();
  });
});

test('a BERT-base training step: dispatches and launches add up per kernel, and shape-only kernels are most of the dispatches', async () => {
  const c = await countStepLaunches({ name: 'bert-base-4x16', arch: 'bert', pairs: 4, tokens: 16 });
  const kernels = Object.values(c.byKernel);
  assert.equal(kernels.reduce((s, k) => s + k.dispatches, 0), c.dispatches);
  assert.equal(kernels.reduce((s, k) => s + k.launches, 0), c.launches);
  assert.ok(c.launches < c.dispatches, `${c.launches} launches, ${c.dispatches} dispatches`);
  // 12 layers: at least the six projections' matmuls forward and two per matmul backward.
  assert.ok(c.byKernel.BatchMatMul.launches >= 12 * 6 * 3, `${c.byKernel.BatchMatMul.launches} matmul launches`);
  // Multi-tensor AdamW: one dispatch and one launch per 64 of BERT-base's 197 trained tensors, none per tensor.
  assert.deepEqual(c.byKernel.AngleAdamWMulti, { dispatches: 1, launches: 4 });
  assert.equal(c.byKernel.AngleAdamW, undefined);
  assert.equal(c.byKernel.Reshape.launches, 0);
  const shapeOnly = c.byKernel.Reshape.dispatches + (c.byKernel.Identity?.dispatches ?? 0);
  assert.ok(shapeOnly > 0.3 * c.dispatches, `Reshape and Identity: ${shapeOnly} of ${c.dispatches} dispatches`);
});

test('a replayed BERT-base step graph: one launch and the feeds\' uploads, at most 1/4 of the eager launches; its graph holds the eager kernels', async () => {
  const config = { name: 'bert-base-4x16', arch: 'bert' as const, pairs: 4, tokens: 16 };
  const eager = await countStepLaunches(config);
  const replay = await countStepLaunches(config, { graphs: true });
  assert.deepEqual(replay.byKernel.GraphLaunch, { dispatches: 1, launches: 1 });
  assert.equal(replay.launches, 1);
  assert.ok(replay.launches <= eager.launches / 4, `${replay.launches} launches replayed vs ${eager.launches} eager`);
  // Feeds: input ids, token types, the attention mask (read twice: model and pooling) and AdamW's hyper-parameters.
  assert.ok(replay.byKernel.GraphUpload.dispatches >= 4 && replay.byKernel.GraphUpload.dispatches <= 8, JSON.stringify(replay.byKernel));
  // The graph runs the eager step's kernels but the loss checks' read-backs (a finiteness sum and
  // the angle objective's zero-row check: 4 kernels), which a capture skips (lib/losses/validate.ts).
  assert.equal(replay.graphKernels, eager.launches - 4, 'the graph runs the kernels the eager step launches, less the checks');
});

test('an AnglE BERT-base step whose batch and labels change every step replays as one launch; with host-built label masks it stays op by op', async () => {
  const config = { name: 'angle-bert-base-4x16', arch: 'bert' as const, pairs: 4, tokens: 16, varyBatches: true };
  const replay = await countStepLaunches(config, { graphs: true });
  assert.equal(replay.mode, 'replayed');
  assert.equal(replay.launches, 1);
  // Feeds: the token arrays and AdamW's hyper-parameters as before, and the objective's label ranks and in-batch target codes.
  assert.equal(replay.byKernel.GraphUpload.dispatches, 8, JSON.stringify(replay.byKernel));
  const hostMasks = await countStepLaunches(config, { graphs: true, labelInputs: false });
  assert.equal(hostMasks.mode, 'eager');
  assert.match(Object.values(hostMasks.graph!.refused)[0], /not a declared feed\) differs between steps/);
  assert.ok(hostMasks.launches > 1000, `${hostMasks.launches} launches op by op`);
});
