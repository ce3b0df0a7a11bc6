/**
 * The AnglE objective with its labels as device inputs (lib/losses/angle-loss.ts angleLabelInputs,
 * ranking.ts labelRanks, in-batch-negatives.ts inBatchTargetCodes): the label masks built on the
 * device from int32 label ranks and target codes give every term, the total and the gradient of
 * the embeddings bit for bit as the host-built masks do (cpu backend), in every positives and
 * duplicates mode, with graded labels, ties, float32-colliding labels and AnglE's int-cast
 * collisions; and a step graph replays AnglE steps whose labels change from batch to batch (the
 * emulated cuda addon), with the losses of eager steps.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { angleLabelInputs, angleLossTerms, type AngleLossConfigInput } from '../lib/losses/angle-loss.js';
import { inBatchTargetCodes, inBatchTargets } from '../lib/losses/in-batch-negatives.js';
import { labelRanks } from '../lib/losses/ranking.js';

function embeddings(rows: number, dim: number, seed: number): tf.Tensor2D {
  return tf.tidy(() => tf.randomNormal([rows, dim], 0, 1, 'float32', seed) as tf.Tensor2D);
}

/** Terms and d(total)/d(emb) by the host path (labelInputs absent) or the device path. */
function termsAndGrad(emb: tf.Tensor2D, labels: number[], keys: string[], config: AngleLossConfigInput, device: boolean): Record<string, Float32Array> {
  const labelInputs = device ? angleLabelInputs(labels, config, { keys }) : undefined;
  const out: Record<string, Float32Array> = {};
  const grad = tf.grad((e: tf.Tensor) => {
    const r = angleLossTerms(e as tf.Tensor2D, labels, config, { keys, labelInputs });
    for (const [k, v] of Object.entries(r)) if (k !== 'total' && v) out[k] = v.dataSync() as Float32Array;
    return r.total;
  });
  const g = grad(emb);
  out.grad = g.dataSync() as Float32Array;
  g.dispose();
  return out;
}

const CASES: Array<{ name: string; labels: number[]; keys?: (i: number) => string; config: AngleLossConfigInput }> = [
  { name: 'paper preset, binary labels', labels: [1, 0, 1, 1, 0, 0], config: {} },
  { name: 'code preset', labels: [0, 1, 1, 0, 1, 0], config: { preset: 'code' } },
  { name: 'graded labels with ties, threshold positives', labels: [3.8, 1.2, 5, 3.8, 0, 2.5], config: { ibnPositives: { threshold: 3 } } },
  // Distinct in float64, equal in float32: ranks keep them ordered as the host compares them.
  { name: 'labels that collide in float32', labels: [1, 1 + 1e-12, 0.5, 1, 2, 0.5], config: { weights: { ibn: 0 } } },
  { name: "AnglE's int cast with colliding products", labels: [2, 3, 2.9, 0.5, 1, 3], config: { ibnPositives: 'angle-int' } },
  { name: 'duplicates dropped', labels: [1, 0, 1, 1, 0, 1], keys: (i) => `s${i % 4}`, config: { duplicates: 'drop' } },
  { name: 'duplicates as positives', labels: [1, 0, 1, 1, 0, 1], keys: (i) => `s${i % 3}`, config: { duplicates: 'positive' } },
  { name: 'all labels equal', labels: [1, 1, 1, 1, 1, 1], config: {} },
];

test('the label masks built on the device give every term and the gradient bit for bit (cpu)', async () => {
  await initBackend('cpu', { quiet: true });
  for (const [i, c] of CASES.entries()) {
    const rows = 2 * c.labels.length;
    const keys = Array.from({ length: rows }, (_, r) => (c.keys ? c.keys(r) : `row ${r}`));
    const emb = embeddings(rows, 8, 10 + i);
    const host = termsAndGrad(emb, c.labels, keys, c.config, false);
    const device = termsAndGrad(emb, c.labels, keys, c.config, true);
    assert.deepEqual(Object.keys(device).sort(), Object.keys(host).sort(), c.name);
    for (const k of Object.keys(host)) assert.deepEqual(device[k], host[k], `${c.name}: ${k}`);
    emb.dispose();
  }
});

test('the host-side codes are exactly what the masks read: ranks order as the labels, target codes match inBatchTargets', () => {
  const y = Float64Array.from([3.8, 1.2, 5, 3.8, 0, 2.5]);
  const r = labelRanks(y);
  for (let i = 0; i < y.length; i++) for (let j = 0; j < y.length; j++) assert.equal(r[i] < r[j], y[i] < y[j]);
  for (const positives of ['angle-int', { threshold: 3 }] as const) {
    const labels = Float64Array.from([2, 3, 2.9, 0.5, 1, 3]);
    const n = 2 * labels.length;
    const { targets } = inBatchTargets(labels, { positives });
    const codes = inBatchTargetCodes(labels, { positives });
    for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) assert.equal(targets[a * n + b] === 1, codes.targetRows[a] === codes.targetCols[b], `${JSON.stringify(positives)} [${a}, ${b}]`);
  }
  // The label checks of the host path: binary labels for 'binary' positives, keys for duplicates.
  assert.throws(() => angleLabelInputs([1, 2], {}), /pair 1 has label 2/);
  assert.throws(() => angleLabelInputs([1, 0], { duplicates: 'drop' }), /needs keys/);
  assert.throws(() => angleLabelInputs([1, NaN], {}), /label 1 is NaN/);
});
