/**
 * SentEval's PyTorch path (lib/eval/transfer/pytorch-path.ts). No golden exists for it, so it is
 * held to what SentEval's classifier.py and torch document: torch's CPU generator and nn.Linear
 * initialisation (values torch prints after torch.manual_seed(0)), Adam's and RMSprop's first
 * step in closed form, the early-stopping rule (tenacity counted over the whole run, never reset),
 * the epoch accounting with max_epoch, validation_split's dev size, determinism per seed, and
 * agreement with the scikit-learn path on data both should fit alike.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  RandomState,
  TorchCpuUniform,
  initLinear,
  fitSentevalLinear,
  predictLinear,
  pytorchLinearLearner,
  pytorchRegs,
  sklearnLogisticLearner,
  kFold,
  matrix,
  SIMCSE_TEST_CLASSIFIER,
  type SentevalClassifierConfig,
} from '../lib/eval/transfer/index.js';

/** Two Gaussian-ish classes in d dimensions (separation `gap`), float32 like SentEval's tensors. */
function blobs(n: number, d: number, gap: number, seed: number): { x: Float32Array; y: Int32Array } {
  const rs = new RandomState(seed);
  const x = new Float32Array(n * d);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    y[i] = i % 2;
    for (let k = 0; k < d; k++) {
      const noise = rs.randomSample() + rs.randomSample() + rs.randomSample() - 1.5;
      x[i * d + k] = noise + (k < 2 ? (y[i] ? gap : -gap) : 0);
    }
  }
  return { x, y };
}

describe('torch initialisation', () => {
  test('torch.manual_seed(0); torch.rand(3) = [0.4963, 0.7682, 0.0885]', () => {
    const g = new TorchCpuUniform(0);
    const got = [g.uniform(0, 1), g.uniform(0, 1), g.uniform(0, 1)];
    [0.4963, 0.7682, 0.0885].forEach((v, i) => assert.ok(Math.abs(got[i] - v) < 5e-5, `${got[i]} vs ${v}`));
  });

  test('torch.manual_seed(0); nn.Linear(3, 2): the weight and bias torch prints', () => {
    const m = initLinear(3, 2, 0);
    const w = [-0.0043, 0.3097, -0.4752, -0.4249, -0.2224, 0.1548];
    const b = [-0.0114, 0.4578];
    w.forEach((v, i) => assert.ok(Math.abs(m.weight[i] - v) < 5e-5, `weight[${i}] ${m.weight[i]} vs ${v}`));
    b.forEach((v, i) => assert.ok(Math.abs(m.bias[i] - v) < 5e-5, `bias[${i}] ${m.bias[i]} vs ${v}`));
  });
});

/** One optimiser step: batch ≥ n, one pass, max_epoch 0 (the loop runs once). */
function oneStep(optim: 'adam' | 'rmsprop', l2reg: number): { delta: number[]; grad: Float64Array; epochs: number } {
  const { x, y } = blobs(40, 3, 0.5, 7);
  const cfg: SentevalClassifierConfig = { nhid: 0, optim, batchSize: 64, tenacity: 5, epochSize: 1, maxEpoch: 0 };
  const r = fitSentevalLinear({ x, y, rows: 40, dim: 3, nClasses: 2, l2reg, seed: 3, validation: { kind: 'data', x, y }, config: cfg });
  const init = initLinear(3, 2, 3);
  // the full-batch gradient of the mean cross-entropy at init (in double), plus weight decay
  const grad = new Float64Array(8);
  for (let i = 0; i < 40; i++) {
    const z = [0, 1].map((c) => init.bias[c] + [0, 1, 2].reduce((s, k) => s + init.weight[c * 3 + k] * x[i * 3 + k], 0));
    const m = Math.max(...z);
    const e = z.map((v) => Math.exp(v - m));
    const p = e.map((v) => v / (e[0] + e[1]));
    for (let c = 0; c < 2; c++) {
      const r = (p[c] - (y[i] === c ? 1 : 0)) / 40;
      for (let k = 0; k < 3; k++) grad[c * 3 + k] += r * x[i * 3 + k];
      grad[6 + c] += r;
    }
  }
  const before = [...init.weight, ...init.bias];
  grad.forEach((g, j) => (grad[j] = g + l2reg * before[j]));
  const after = [...r.model.weight, ...r.model.bias];
  return { delta: after.map((v, j) => v - before[j]), grad, epochs: r.epochs };
}

describe('optimiser steps (torch.optim defaults)', () => {
  test('Adam: the first step moves every parameter by lr = 1e-3 against its gradient (bias-corrected m/√v = sign g)', () => {
    const { delta, grad, epochs } = oneStep('adam', 1e-2);
    assert.equal(epochs, 1);
    // step 1: m̂ = g, √v̂ = |g|, Δ = −lr · g / (|g| + eps); float32 parameters near 0.5 round to ~3e-8
    delta.forEach((d, j) => assert.ok(Math.abs(d + (1e-3 * grad[j]) / (Math.abs(grad[j]) + 1e-8)) < 1e-7, `Δθ${j} = ${d}, g = ${grad[j]}`));
  });

  test('RMSprop: the first step is lr·g/(√(0.01 g²) + eps) ≈ 0.1 against the gradient', () => {
    const { delta, grad } = oneStep('rmsprop', 1e-3);
    // step 1: v = (1 − 0.99) g², Δ = −lr · g / (√v + eps) with lr = 1e-2
    delta.forEach((d, j) => assert.ok(Math.abs(d + (1e-2 * grad[j]) / (0.1 * Math.abs(grad[j]) + 1e-8)) < 1e-7, `Δθ${j} = ${d}, g = ${grad[j]}`));
  });
});

describe("SentEval's fit loop", () => {
  test('early stopping: stops at the (tenacity+1)-th evaluation without improvement over the whole run, and keeps the best model', () => {
    // a noisy task: dev accuracy goes up and down, so improvements come after non-improvements
    const { x, y } = blobs(400, 4, 0.15, 11);
    const dev = blobs(60, 4, 0.15, 12);
    let exercisedNoReset = false;
    for (const tenacity of [2, 5]) {
      const r = fitSentevalLinear({ x, y, rows: 400, dim: 4, nClasses: 2, l2reg: 1e-4, seed: 1111, validation: { kind: 'data', ...dev }, config: { ...SIMCSE_TEST_CLASSIFIER, tenacity } });
      assert.equal(r.epochs, 4 * r.devHistory.length);
      let best = -1;
      let misses = 0;
      let consecutive = 0;
      r.devHistory.forEach((acc, i) => {
        if (acc > best) {
          best = acc;
          consecutive = 0;
        } else {
          misses++;
          consecutive++;
          // SentEval: `if early_stop_count >= tenacity: stop` before counting this miss
          if (i < r.devHistory.length - 1) assert.ok(misses <= tenacity, `still training after ${misses} misses`);
        }
      });
      assert.ok(r.stoppedEarly);
      assert.equal(misses, tenacity + 1);
      // stopped with fewer consecutive misses than that: an improvement did not reset the count
      if (consecutive < misses) exercisedNoReset = true;
      assert.equal(r.bestAccuracy, Math.max(...r.devHistory));
      const pred = predictLinear(r.model, dev.x, dev.y.length);
      assert.equal(pred.filter((v, i) => v === dev.y[i]).length / dev.y.length, r.bestAccuracy);
    }
    assert.ok(exercisedNoReset, 'no run had an improvement after a miss: the never-reset counter was not exercised');
  });

  test('max_epoch: the loop runs while nepoch ≤ max_epoch (epochs 0, 4, 8 → 12 epochs for max_epoch 8)', () => {
    const { x, y } = blobs(100, 3, 1, 5);
    const r = fitSentevalLinear({ x, y, rows: 100, dim: 3, nClasses: 2, l2reg: 1e-5, seed: 1, validation: { kind: 'data', x, y }, config: { ...SIMCSE_TEST_CLASSIFIER, tenacity: 1000, maxEpoch: 8 } });
    assert.equal(r.epochs, 12);
    assert.equal(r.devHistory.length, 3);
    assert.equal(r.stoppedEarly, false);
  });

  test('validation_split 0.05: the dev set is int(0.05·n) rows; same seed → same model, another seed → another', () => {
    const { x, y } = blobs(300, 3, 0.6, 9);
    const fit = (seed: number) => fitSentevalLinear({ x, y, rows: 300, dim: 3, nClasses: 2, l2reg: 1e-4, seed, validation: { kind: 'split', fraction: 0.05 }, config: SIMCSE_TEST_CLASSIFIER });
    const a = fit(1111);
    assert.ok(Number.isInteger(Math.round(a.bestAccuracy * 15 * 1e9) / 1e9), `accuracy ${a.bestAccuracy} is not k/15`);
    assert.deepEqual(fit(1111).model, a.model);
    assert.notDeepEqual(fit(1112).model.weight, a.model.weight);
  });

  test('only nhid = 0 (logistic regression) is implemented', () => {
    const { x, y } = blobs(10, 2, 1, 1);
    assert.throws(() => fitSentevalLinear({ x, y, rows: 10, dim: 2, nClasses: 2, l2reg: 0, seed: 1, validation: { kind: 'data', x, y }, config: { ...SIMCSE_TEST_CLASSIFIER, nhid: 50 } }), /nhid=50/);
  });
});

describe('PyTorch path vs scikit-learn path', () => {
  test('SentEval k-fold protocol on well-scaled data: both land within 2 points; the l2reg grid is 1e-5 … 1e-2', async () => {
    assert.deepEqual(pytorchRegs(), [1e-5, 1e-4, 1e-3, 1e-2]);
    const tr = blobs(600, 5, 0.4, 21);
    const te = blobs(300, 5, 0.4, 22);
    const train = { x: matrix(Float64Array.from(tr.x), 600, 5), y: tr.y };
    const test = { x: matrix(Float64Array.from(te.x), 300, 5), y: te.y };
    const o = { k: 5, seed: 1111, nClasses: 2 };
    const pt = await kFold(train, test, pytorchLinearLearner(), o);
    const sk = await kFold(train, test, sklearnLogisticLearner(), o);
    assert.deepEqual(pt.regs, [1e-5, 1e-4, 1e-3, 1e-2]);
    assert.ok(Math.abs(pt.acc - sk.acc) <= 2, `pytorch ${pt.acc} vs sklearn ${sk.acc}`);
    assert.ok(sk.acc > 70, `sklearn accuracy ${sk.acc}`);
  });
});
