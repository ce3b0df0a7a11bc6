/**
 * Espresso (ESE) and the objectives around it (lib/losses/ese.ts, distillation.ts, masked-lm.ts,
 * pca-compress.ts): the formulas on small hand-computed inputs, the ESE structure (students H[0] ..
 * H[n−2], division 1 + ln(1 + i), width k) with a base objective simple enough to sum by hand, the
 * randomised SVD against the exact one, training through the Trainer, and `npm run parity`'s
 * angle_emb 0.6.1 suite on the shared set (all pass) and on a corrupted copy (fails).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { distillationLoss } from '../lib/losses/distillation.js';
import { eseLoss } from '../lib/losses/ese.js';
import { maskedLmLoss } from '../lib/losses/masked-lm.js';
import { pcaCompress } from '../lib/losses/pca-compress.js';
import { loadModel } from '../lib/models/auto.js';
import { checkAngleEmbLossesGolden } from '../lib/parity/angle-emb-losses.js';
import { goldenSetKind } from '../lib/parity/suites.js';
import { Trainer } from '../lib/train/trainer.js';
import { GOLDEN_DIR, SHARED_DIR } from './helpers/env.js';
import { smallPairs, SMALL_TRAIN_CONFIG } from './helpers/train-fixtures.js';

const ESE_SET = process.env.ANGLE_GOLDEN_ESE_DIR ?? (SHARED_DIR ? join(SHARED_DIR, 'golden', 'angle-emb-0.6-losses') : undefined);
const noSet = ESE_SET && existsSync(join(ESE_SET, 'golden.json')) ? false : 'no angle_emb 0.6 losses set (ANGLE_GOLDEN_ESE_DIR or <shared>/golden/angle-emb-0.6-losses)';
const MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
const noModel = MODEL_DIR && existsSync(MODEL_DIR) ? false : 'no encoder golden set with model/ (ANGLE_GOLDEN_DIR)';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

const close = (a: number, b: number, tol = 1e-5) => assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

test('distillation: w·MSE + T·KL(batchmean), the KL multiplied by T (not T²)', () => {
  const x = [0.2, -0.1, 0.4, 1.0, 0.5, -0.3];
  const t = [0.1, 0.3, -0.2, 0.7, 0.2, 0.1];
  const T = 2;
  let mse = 0;
  for (let i = 0; i < 6; i++) mse += (x[i] - t[i]) ** 2 / 6;
  let kl = 0;
  for (const r of [0, 1]) {
    const lse = (v: number[]) => Math.log(v.reduce((s, a) => s + Math.exp(a / T), 0));
    const xs = x.slice(3 * r, 3 * r + 3);
    const ts = t.slice(3 * r, 3 * r + 3);
    for (let j = 0; j < 3; j++) {
      const logp = ts[j] / T - lse(ts);
      const logq = xs[j] / T - lse(xs);
      kl += Math.exp(logp) * (logp - logq);
    }
  }
  const got = distillationLoss(tf.tensor2d(x, [2, 3]), tf.tensor2d(t, [2, 3]), { mseWeight: 0.5, klTemperature: T }).dataSync()[0];
  close(got, 0.5 * mse + (T * kl) / 2);
  close(distillationLoss(tf.tensor2d(x, [2, 3]), tf.tensor2d(t, [2, 3]), { mseWeight: 1, klTemperature: 0 }).dataSync()[0], mse);
});

test('masked LM: mean cross-entropy over positions whose label is not the pad id', () => {
  const logits = [1, 2, 0, 0.5, -1, 3, 2, 2, 2, 0, 0, 1];
  const labels = [1, 0, 2, 0];
  const ce = (row: number, y: number) => {
    const v = logits.slice(3 * row, 3 * row + 3);
    return Math.log(v.reduce((s, a) => s + Math.exp(a), 0)) - v[y];
  };
  close(maskedLmLoss(tf.tensor3d(logits, [2, 2, 3]), labels, 0).dataSync()[0], (ce(0, 1) + ce(2, 2)) / 2);
  close(maskedLmLoss(tf.tensor3d(logits, [2, 2, 3]), labels, 1).dataSync()[0], (ce(1, 0) + ce(2, 2) + ce(3, 0)) / 3);
  assert.throws(() => maskedLmLoss(tf.tensor3d(logits, [2, 2, 3]), [0, 0, 0, 0], 0), /every label is the pad id/);
});

test('ESE: last layer at full width and at k, students H[0]..H[n−2] at k divided by 1 + ln(1 + i), averaged over n − 1', () => {
  const rnd = (seed: number) => Array.from({ length: 4 * 6 }, (_, i) => Math.sin(seed * 13.1 + i * 0.7));
  const layers = [0, 1, 2, 3, 4].map((s) => tf.tensor2d(rnd(s), [4, 6]));
  const sum = (x: tf.Tensor2D) => tf.sum(x) as tf.Scalar;
  const s = (i: number, k: number) => rnd(i).filter((_, j) => j % 6 < k).reduce((a, b) => a + b, 0);
  const k = 3;
  const got = eseLoss(layers, sum, { compressionSize: k, pca: false });
  // n = 4: students 0, 1, 2 (layer 3 = n − 1 unused), average over n − 1 = 3.
  const students = (s(0, k) / 1 + s(1, k) / (1 + Math.log(2)) + s(2, k) / (1 + Math.log(3))) / 3;
  close(got.total.dataSync()[0], s(4, 6) + s(4, k) + students);
  close(got.terms.students.dataSync()[0], students);
  // Layer n − 1 gets no gradient; the others do.
  const g = tf.grad((stack: tf.Tensor) => eseLoss(tf.unstack(stack) as tf.Tensor2D[], sum, { compressionSize: k, pca: false }).total)(tf.stack(layers));
  const grads = tf.unstack(g);
  assert.equal(tf.sum(tf.abs(grads[3])).dataSync()[0], 0);
  for (const i of [0, 1, 2, 4]) assert.ok(tf.sum(tf.abs(grads[i])).dataSync()[0] > 0, `layer ${i}`);
  assert.throws(() => eseLoss(layers.slice(0, 2), sum, { compressionSize: k }), /at least 2 transformer layers/);
  assert.throws(() => eseLoss(layers, sum, { compressionSize: 7 }), /compressionSize must be an integer in 1..6/);
});

test('pcaCompress: the randomised SVD at k = D is the exact one (P Pᵀ agrees), and k < D gives the [B, k] target', () => {
  const B = 5;
  const D = 8;
  const m = Array.from({ length: B * D }, (_, i) => Math.cos(i * 1.3) * (1 + (i % 3)));
  const full = pcaCompress(m, B, D, D);
  // P = m U S with A = U S Vᵀ and U orthogonal (k = D).
  const A = ((): number[] => {
    const g = new Array(D * D).fill(0);
    for (let b = 0; b < B; b++) for (let i = 0; i < D; i++) for (let j = 0; j < D; j++) g[i * D + j] += (m[b * D + i] * m[b * D + j]) / Math.sqrt(D);
    for (let i = 0; i < D; i++) {
      const row = g.slice(i * D, i * D + D);
      const mx = Math.max(...row);
      const e = row.map((v) => Math.exp(v - mx));
      const z = e.reduce((a, c) => a + c, 0);
      for (let j = 0; j < D; j++) g[i * D + j] = e[j] / z;
    }
    return g;
  })();
  const mA = Array.from({ length: B * D }, (_, idx) => {
    const b = Math.floor(idx / D);
    const j = idx % D;
    let v = 0;
    for (let i = 0; i < D; i++) v += m[b * D + i] * A[i * D + j]; // (m A)[b, j]: P Pᵀ = m U S² Uᵀ mᵀ = (m A)(m A)ᵀ
    return v;
  });
  for (let r = 0; r < B; r++) {
    for (let c = 0; c < B; c++) {
      let want = 0;
      let got = 0;
      for (let j = 0; j < D; j++) {
        want += mA[r * D + j] * mA[c * D + j];
        got += full[r * D + j] * full[c * D + j];
      }
      close(got, want, 1e-9);
    }
  }
  // k < D with another seed: same Gram up to the tail the randomised basis approximates.
  const p3 = pcaCompress(m, B, D, 3, { seed: 5 });
  assert.equal(p3.length, B * 3);
  assert.throws(() => pcaCompress(m, B, D, 9), /k must be an integer in 1..8/);
});

test('the trainer trains ESE (every hidden state pooled, PCA targets, width k) on the tiny BERT', { skip: noModel }, async () => {
  const m = await loadModel(MODEL_DIR!);
  try {
    const logs: Record<string, number>[] = [];
    const trainer = new Trainer({
      model: m,
      train: smallPairs(),
      progress: false,
      config: { ...SMALL_TRAIN_CONFIG, objective: { name: 'ese', compressionSize: 16, loss: { preset: 'code', ibnPositives: 'angle-int' } }, epochs: undefined, maxSteps: 3 },
      onStep: (l) => logs.push({ loss: l.loss, ...l.terms }),
    });
    const r = await trainer.run();
    assert.equal(r.steps, 3);
    for (const l of logs) {
      assert.ok(Number.isFinite(l.loss));
      for (const k of ['last', 'lastHead', 'compression', 'students']) assert.ok(Number.isFinite(l[k]), `${k} in ${JSON.stringify(l)}`);
    }
  } finally {
    m.model.dispose();
  }
});

test('parity: every case of the shared angle_emb 0.6.1 set passes, and a corrupted copy fails', { skip: noSet }, async () => {
  assert.equal(goldenSetKind(ESE_SET!), 'angle-emb-losses');
  const checks = await checkAngleEmbLossesGolden(ESE_SET!);
  const failed = checks.filter((c) => !c.ok);
  assert.deepEqual(failed, []);
  const head = JSON.parse(readFileSync(join(ESE_SET!, 'golden.json'), 'utf8'));
  assert.ok(checks.length >= head.cases.length * 2, `${checks.length} checks for ${head.cases.length} cases`);
  // A copy with one ESE loss off by 1 % and one unknown case kind must fail exactly there.
  const dir = mkdtempSync(join(tmpdir(), 'ese-golden-'));
  try {
    const ese = head.cases.find((c: { name: string }) => c.name.startsWith('ese.'));
    ese.loss.f64 *= 1.01;
    head.cases = [ese, { name: 'made.up', kind: 'unheard_of_loss', inputs: {} }];
    writeFileSync(join(dir, 'golden.json'), JSON.stringify(head));
    symlinkSync(join(ESE_SET!, 'golden.safetensors'), join(dir, 'golden.safetensors'));
    const bad = await checkAngleEmbLossesGolden(dir);
    assert.deepEqual(bad.filter((c) => !c.ok).map((c) => c.name).sort(), [`angle-emb/${ese.name}/value`, 'angle-emb/made.up']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the Espresso recipe trains ESE over AnglE's triplet form with AngleLoss's angle tau 20, each value sourced", async () => {
  const { recipe } = await import('../lib/experiments/recipes/index.js');
  const r = recipe('espresso-nli');
  assert.equal(r.task, 'nli');
  const o = r.config.objective as { name: string; compressionSize: number; klTemperature: number; loss: { taus: { angle: number }; weights: { ibn: number; cosine: number; angle: number } } };
  assert.equal(o.name, 'ese');
  assert.deepEqual([o.compressionSize, o.klTemperature, o.loss.taus.angle, o.loss.weights.ibn, o.loss.weights.cosine, o.loss.weights.angle], [128, 1, 20, 10, 0, 1]);
  assert.match(r.sources['objective.loss.taus'], /--angle_tau 20\.0.*class default \(20\), not the angle_loss function's \(1\.0\)/);
  for (const k of ['lr', 'maxLength', 'batchSize', 'gradAccumulation', 'warmupSteps', 'epochs']) assert.match(r.sources[k], /README_ESE\.md/, k);
});
