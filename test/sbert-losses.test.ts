/**
 * The Sentence-BERT objectives against values computed here in plain float64 JavaScript from their
 * definitions (sentence-transformers CosineSimilarityLoss and SoftmaxLoss), their gradients against
 * central differences, bad input, and the classifier trained as part of a run (its parameters are
 * trained and checkpointed with the model's, but are not saved as model weights).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { sbertCosineLoss } from '../lib/losses/sbert-cosine.js';
import { sbertClassifierInit, sbertSoftmaxLoss } from '../lib/losses/sbert-softmax.js';
import { loadModel } from '../lib/models/auto.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { latestCheckpoint } from '../lib/train/checkpoint.js';
import { Trainer } from '../lib/train/trainer.js';
import { InputError } from '../lib/util/errors.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

const X = [
  [0.3, -1.2, 0.5, 0.9],
  [0.1, -0.8, 0.7, 1.1],
  [-0.6, 0.4, 0.2, -0.3],
  [0.9, 0.5, -0.4, 0.2],
  [1.0, 0.0, 0.3, -0.7],
  [0.8, 0.2, 0.1, -0.9],
];

const cos = (a: number[], b: number[]) => {
  const dot = a.reduce((s, x, i) => s + x * b[i], 0);
  return dot / Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));
};

function valueAndGrad(f: (x: tf.Tensor2D) => tf.Scalar, x: number[][]): { value: number; grad: Float32Array } {
  const xt = tf.tensor2d(x);
  const out = tf.valueAndGrad((t: tf.Tensor) => f(t as tf.Tensor2D))(xt);
  const r = { value: out.value.dataSync()[0], grad: out.grad.dataSync() as Float32Array };
  tf.dispose([xt, out.value, out.grad]);
  return r;
}

function fdError(f: (x: tf.Tensor2D) => tf.Scalar, x: number[][], h = 1e-2): number {
  const { grad } = valueAndGrad(f, x);
  let worst = 0;
  let scale = 0;
  for (let r = 0; r < x.length; r++) {
    for (let c = 0; c < x[0].length; c++) {
      const at = (d: number) => {
        const y = x.map((row) => row.slice());
        y[r][c] += d;
        return tf.tidy(() => f(tf.tensor2d(y)).dataSync()[0]);
      };
      const fd = (at(h) - at(-h)) / (2 * h);
      worst = Math.max(worst, Math.abs(fd - grad[r * x[0].length + c]));
      scale = Math.max(scale, Math.abs(grad[r * x[0].length + c]));
    }
  }
  assert.ok(scale > 1e-3, 'the gradient is (nearly) zero: the check would be vacuous');
  return worst / scale;
}

describe('SBERT objectives', () => {
  test('cosine regression: mean of (cos − y/scale)², gradient by central differences', () => {
    const labels = [4.2, 0.5, 3];
    const want = [0, 1, 2].reduce((s, k) => s + (cos(X[2 * k], X[2 * k + 1]) - labels[k] / 5) ** 2, 0) / 3;
    const got = valueAndGrad((x) => sbertCosineLoss(x, labels), X).value;
    assert.ok(Math.abs(got - want) < 1e-6, `${got} vs ${want}`);
    assert.ok(fdError((x) => sbertCosineLoss(x, labels), X) < 2e-2);
    assert.throws(() => sbertCosineLoss(tf.tensor2d(X), [4.2, 5.5, 3]), (e: Error) => e instanceof InputError && /pair 1 has label 5\.5, outside \[0, 5\]/.test(e.message));
  });

  test('softmax classification over (u, v, |u−v|): cross-entropy, gradient by central differences', () => {
    const dim = 4;
    const { weight, bias } = sbertClassifierInit(dim, 2, 7);
    const bound = 1 / Math.sqrt(3 * dim);
    assert.ok([...weight, ...bias].every((w) => Math.abs(w) <= bound), 'nn.Linear bound');
    const labels = [1, 0, 1];
    let want = 0;
    for (let k = 0; k < 3; k++) {
      const u = X[2 * k];
      const v = X[2 * k + 1];
      const f = [...u, ...v, ...u.map((x, i) => Math.abs(x - v[i]))];
      const logits = [0, 1].map((c) => bias[c] + f.reduce((s, x, i) => s + x * weight[c * 3 * dim + i], 0));
      const m = Math.max(...logits);
      const lse = m + Math.log(logits.reduce((s, z) => s + Math.exp(z - m), 0));
      want += lse - logits[labels[k]];
    }
    want /= 3;
    const W = tf.tensor2d(weight, [2, 3 * dim]);
    const b = tf.tensor1d(bias);
    const got = valueAndGrad((x) => sbertSoftmaxLoss(x, labels, W, b), X).value;
    assert.ok(Math.abs(got - want) < 1e-6, `${got} vs ${want}`);
    assert.ok(fdError((x) => sbertSoftmaxLoss(x, labels, W, b), X) < 2e-2);
    assert.throws(() => sbertSoftmaxLoss(tf.tensor2d(X), [1, 2, 0], W, b), (e: Error) => e instanceof InputError && /pair 1 has label 2; expected a class index 0\.\.1/.test(e.message));
    tf.dispose([W, b]);
  });
});

describe('SBERT softmax in a training run', { skip: GOLDEN_DIR ? false : 'no encoder golden set' }, () => {
  test('the classifier trains and is checkpointed with the model, but the best model holds model weights only', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'angle-sbert-'));
    try {
      const m = await loadModel(join(GOLDEN_DIR!, 'model'));
      const binary = smallPairs();
      const train = { ...binary, items: binary.items.map((p) => ({ ...p, label: p.label >= 3 ? 1 : 0 })) };
      const dev = { name: 'small dev', primaryMetric: 'spearman', higherIsBetter: true, rows: 1, evaluate: async () => ({ metrics: { spearman: 0.5 } }) };
      const runDir = join(tmp, 'run');
      const config = { ...SMALL_TRAIN_CONFIG, objective: { name: 'sbert-softmax' as const }, maxSteps: 3, epochs: undefined, warmupSteps: 0, checkpointEvery: 3, evalEvery: 3 };
      const r = await new Trainer({ model: m, train, dev, runDir, progress: false, config }).run();
      assert.equal(r.steps, 3);
      assert.ok(r.log.every((s) => Number.isFinite(s.loss) && s.loss > 0));
      const ckpt = readSafetensors(join(latestCheckpoint(runDir)!, 'model.safetensors')).tensors;
      assert.ok(ckpt.has('objective.classifier.weight') && ckpt.has('objective.classifier.bias'), 'the classifier is in the checkpoint');
      assert.deepEqual(ckpt.get('objective.classifier.weight')!.shape, [2, 3 * m.model.hiddenSize]);
      const best = readSafetensors(join(runDir, 'best', 'model.safetensors')).tensors;
      assert.ok(![...best.keys()].some((k) => k.startsWith('objective.')), 'the best model holds model weights only');
      assert.ok(existsSync(join(runDir, 'best', 'config.json')));
      assert.equal(JSON.parse(readFileSync(join(runDir, 'best', 'best.json'), 'utf8')).trainable, 'all');
      m.model.dispose();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
