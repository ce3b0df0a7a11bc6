/**
 * The trainer's parts against independent references: the RNG's determinism and state round
 * trip, the schedules' values, AdamW against a float64 re-implementation of PyTorch's update,
 * global-norm clipping, and the examples' validation messages.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { AdamW, isNoDecayParameter } from '../lib/train/adamw.js';
import { clipByGlobalNorm } from '../lib/train/clip.js';
import { validateExamples, type TrainingExamples } from '../lib/train/examples.js';
import { SeededRng } from '../lib/train/rng.js';
import { learningRate, scheduleFactor, warmupStepsFromFraction, checkSchedule } from '../lib/train/schedule.js';
import { InputError } from '../lib/util/errors.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

describe('SeededRng', () => {
  test('same seed, same stream; other seed, other stream; state round-trips mid-stream', () => {
    const a = new SeededRng(7);
    const b = new SeededRng(7);
    const c = new SeededRng(8);
    const xa = Array.from({ length: 5 }, () => a.nextUint32());
    assert.deepEqual(xa, Array.from({ length: 5 }, () => b.nextUint32()));
    assert.notDeepEqual(xa, Array.from({ length: 5 }, () => c.nextUint32()));
    const saved = a.state();
    const next = Array.from({ length: 5 }, () => a.nextUint32());
    assert.deepEqual(Array.from({ length: 5 }, () => SeededRng.fromState(saved).nextUint32())[0], next[0]);
    const restored = SeededRng.fromState(saved);
    assert.deepEqual(Array.from({ length: 5 }, () => restored.nextUint32()), next);
  });

  test('permutation holds every index once; nextInt stays in range and covers it', () => {
    const r = new SeededRng(1);
    const p = r.permutation(1000);
    assert.deepEqual([...p].sort((x, y) => x - y), Array.from({ length: 1000 }, (_, i) => i));
    assert.notDeepEqual([...p], Array.from({ length: 1000 }, (_, i) => i));
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = r.nextInt(7);
      assert.ok(v >= 0 && v < 7 && Number.isInteger(v));
      seen.add(v);
    }
    assert.equal(seen.size, 7);
    const u = Array.from({ length: 4000 }, () => r.next());
    const mean = u.reduce((s, x) => s + x, 0) / u.length;
    assert.ok(Math.abs(mean - 0.5) < 0.02, `mean of uniforms ${mean}`);
  });

  test('bad seeds and states are refused', () => {
    assert.throws(() => new SeededRng(-1), RangeError);
    assert.throws(() => new SeededRng(1.5), RangeError);
    assert.throws(() => SeededRng.fromState([0, 0, 0, 0]), RangeError);
    assert.throws(() => SeededRng.fromState([1, 2, 3] as never), RangeError);
  });
});

describe('learning-rate schedules', () => {
  test('linear with one-step warmup reproduces the golden runs (W=1, T=16, lr 5e-4)', () => {
    const c = { name: 'linear' as const, lr: 5e-4, warmupSteps: 1, totalSteps: 16 };
    // Values as the reference logged them (train.json): step 0 and 1 at the full rate, then (T-s)/(T-W).
    assert.equal(learningRate(c, 0), 0.0005);
    assert.equal(learningRate(c, 1), 0.0005);
    assert.equal(learningRate(c, 2), 0.00046666666666666666);
    assert.equal(learningRate(c, 15), 3.3333333333333335e-5);
    assert.equal(learningRate(c, 16), 0);
  });

  test("HF warmup convention starts at 0; constant and cosine shapes", () => {
    const hf = { name: 'linear' as const, lr: 1, warmupSteps: 4, totalSteps: 10, warmupStart: 'zero' as const };
    assert.deepEqual([0, 1, 2, 3, 4].map((s) => scheduleFactor(hf, s)), [0, 0.25, 0.5, 0.75, 1]);
    const one = { ...hf, warmupStart: 'one-step' as const };
    assert.deepEqual([0, 1, 2, 3, 4].map((s) => scheduleFactor(one, s)), [0.25, 0.5, 0.75, 1, 1]);
    const constant = { name: 'constant' as const, lr: 2, warmupSteps: 0, totalSteps: 5 };
    assert.deepEqual([0, 2, 4].map((s) => learningRate(constant, s)), [2, 2, 2]);
    const cos = { name: 'cosine' as const, lr: 1, warmupSteps: 2, totalSteps: 12 };
    assert.equal(scheduleFactor(cos, 2), 1);
    assert.ok(Math.abs(scheduleFactor(cos, 7) - 0.5) < 1e-15);
    assert.ok(Math.abs(scheduleFactor(cos, 12)) < 1e-15);
  });

  test('warmup fraction is floored; bad schedules are refused', () => {
    assert.equal(warmupStepsFromFraction(0.1, 16), 1);
    assert.equal(warmupStepsFromFraction(0.1, 100), 10);
    // A warmup longer than the run is HF's behaviour too: every step is a warmup step (s / W).
    const long = { name: 'linear' as const, lr: 1, warmupSteps: 5, totalSteps: 4, warmupStart: 'zero' as const };
    checkSchedule(long);
    assert.deepEqual([0, 1, 2, 3].map((s) => learningRate(long, s)), [0, 0.2, 0.4, 0.6]);
    assert.throws(() => checkSchedule({ name: 'linear', lr: 1, warmupSteps: -1, totalSteps: 4 }), InputError);
    assert.throws(() => checkSchedule({ name: 'linear', lr: 1, warmupSteps: 1.5, totalSteps: 4 }), InputError);
    assert.throws(() => checkSchedule({ name: 'step' as never, lr: 1, warmupSteps: 0, totalSteps: 4 }), /unknown learning-rate schedule/);
    assert.throws(() => checkSchedule({ name: 'linear', lr: -1, warmupSteps: 0, totalSteps: 4 }), InputError);
  });
});

/** PyTorch's AdamW for one parameter in float64, step by step. */
function adamwReference(p: number[], grads: number[][], lrs: number[], wd: number, b1 = 0.9, b2 = 0.999, eps = 1e-8): number[] {
  let m = p.map(() => 0);
  let v = p.map(() => 0);
  let x = p.slice();
  grads.forEach((g, k) => {
    const t = k + 1;
    const lr = lrs[k];
    x = x.map((xi) => xi * (1 - lr * wd));
    m = m.map((mi, i) => b1 * mi + (1 - b1) * g[i]);
    v = v.map((vi, i) => b2 * vi + (1 - b2) * g[i] * g[i]);
    const stepSize = lr / (1 - b1 ** t);
    const bc2 = Math.sqrt(1 - b2 ** t);
    x = x.map((xi, i) => xi - (stepSize * m[i]) / (Math.sqrt(v[i]) / bc2 + eps));
  });
  return x;
}

describe('AdamW', () => {
  test('equals PyTorch AdamW (float64 reference) over 3 steps, decay only outside biases/LayerNorm, untouched without gradient', () => {
    const w0 = [0.5, -1.25, 2, 0.125, -0.75, 3];
    const b0 = [0.1, -0.2];
    const params = new Map<string, tf.Variable>([
      ['encoder.layer.0.output.dense.weight', tf.variable(tf.tensor2d(w0, [3, 2]))],
      ['encoder.layer.0.output.dense.bias', tf.variable(tf.tensor1d(b0))],
      ['pooler.dense.weight', tf.variable(tf.tensor1d([1, 2]))],
    ]);
    const opt = new AdamW(params, { weightDecay: 0.1 });
    const gw = [
      [0.3, -0.1, 0.05, 0.7, -0.2, 0.01],
      [-0.1, 0.2, 0.4, -0.3, 0.0, 0.9],
      [0.05, 0.05, -0.6, 0.2, 0.3, -0.4],
    ];
    const gb = [
      [0.5, -0.5],
      [0.25, 0.1],
      [-0.3, 0.2],
    ];
    const lrs = [1e-2, 5e-3, 2e-3];
    for (let k = 0; k < 3; k++) {
      const grads = new Map<string, tf.Tensor>([
        ['encoder.layer.0.output.dense.weight', tf.tensor2d(gw[k], [3, 2])],
        ['encoder.layer.0.output.dense.bias', tf.tensor1d(gb[k])],
      ]);
      opt.step(grads, lrs[k]);
      tf.dispose([...grads.values()]);
    }
    const w = params.get('encoder.layer.0.output.dense.weight')!.dataSync();
    const b = params.get('encoder.layer.0.output.dense.bias')!.dataSync();
    const wRef = adamwReference(w0, gw, lrs, 0.1);
    const bRef = adamwReference(b0, gb, lrs, 0);
    wRef.forEach((r, i) => assert.ok(Math.abs(w[i] - r) < 1e-6, `weight ${i}: ${w[i]} vs ${r}`));
    bRef.forEach((r, i) => assert.ok(Math.abs(b[i] - r) < 1e-6, `bias ${i}: ${b[i]} vs ${r}`));
    // Weight decay is visible: without it the weights would differ by more than the tolerance.
    const noDecay = adamwReference(w0, gw, lrs, 0);
    assert.ok(noDecay.some((r, i) => Math.abs(w[i] - r) > 1e-4));
    assert.deepEqual([...params.get('pooler.dense.weight')!.dataSync()], [1, 2]);
    opt.dispose();
    tf.dispose([...params.values()]);
  });

  test('state export/import continues identically; a mis-shaped state is refused', async () => {
    const mk = () => new Map<string, tf.Variable>([['a.weight', tf.variable(tf.tensor1d([1, 2, 3]))]]);
    const g = () => new Map<string, tf.Tensor>([['a.weight', tf.tensor1d([0.1, -0.2, 0.3])]]);
    const p1 = mk();
    const o1 = new AdamW(p1);
    for (let i = 0; i < 3; i++) o1.step(g(), 1e-2);
    const p2 = new Map<string, tf.Variable>([['a.weight', tf.variable(tf.tensor1d([...p1.get('a.weight')!.dataSync()]))]]);
    const o2 = new AdamW(p2);
    o2.importState(await o1.exportState());
    o1.step(g(), 1e-2);
    o2.step(g(), 1e-2);
    assert.deepEqual([...p2.get('a.weight')!.dataSync()], [...p1.get('a.weight')!.dataSync()]);
    const bad = await o1.exportState();
    bad.expAvg.set('a.weight', { data: new Float32Array(2), shape: [2] });
    assert.throws(() => o2.importState(bad, 'ckpt/optimizer.safetensors'), /ckpt\/optimizer.safetensors does not fit this model: 'a.weight': exp_avg has shape \[2\]/);
    o1.dispose();
    o2.dispose();
  });

  test('no-decay group: biases and LayerNorm, not weights', () => {
    assert.equal(isNoDecayParameter('encoder.layer.3.attention.output.LayerNorm.weight'), true);
    assert.equal(isNoDecayParameter('embeddings.LayerNorm.bias'), true);
    assert.equal(isNoDecayParameter('encoder.layer.3.intermediate.dense.bias'), true);
    assert.equal(isNoDecayParameter('encoder.layer.3.intermediate.dense.weight'), false);
    assert.equal(isNoDecayParameter('embeddings.word_embeddings.weight'), false);
  });
});

describe('clipByGlobalNorm', () => {
  test('scales every gradient by maxNorm / norm when above, leaves them when below', () => {
    const grads = new Map<string, tf.Tensor>([
      ['a', tf.tensor1d([3, 0])],
      ['b', tf.tensor1d([0, 4])],
    ]);
    const { grads: c, norm } = clipByGlobalNorm(grads, 1);
    assert.ok(Math.abs(norm.dataSync()[0] - 5) < 1e-6);
    assert.ok(Math.abs(c.get('a')!.dataSync()[0] - 0.6) < 1e-6);
    assert.ok(Math.abs(c.get('b')!.dataSync()[1] - 0.8) < 1e-6);
    const { grads: same } = clipByGlobalNorm(grads, 10);
    assert.deepEqual([...same.get('b')!.dataSync()], [0, 4]);
  });
});

describe('training examples', () => {
  test('wrong label types and non-string texts name the file and line', () => {
    const bad: TrainingExamples = {
      kind: 'pairs',
      name: 'sts',
      items: [
        { a: 'x', b: 'y', label: 1 },
        { a: 'x', b: 'y', label: '4.2' as unknown as number, source: { file: 'train.csv', line: 3 } },
      ],
    };
    assert.throws(() => validateExamples(bad), /train\.csv:3: label is string "4\.2", expected a finite number/);
    const nan: TrainingExamples = { kind: 'pairs', name: 'sts', items: [{ a: 'x', b: 'y', label: Number.NaN }] };
    assert.throws(() => validateExamples(nan), /sts \(example 0\): label is NaN/);
    const trip: TrainingExamples = { kind: 'triplets', name: 'nli', items: [{ anchor: 'a', positive: 'b', negative: 3 as unknown as string }] };
    assert.throws(() => validateExamples(trip), /negative is number, expected a string/);
    assert.throws(() => validateExamples({ kind: 'pairs', name: 'e', items: [] }), /training set 'e' is empty/);
  });
});

describe('JavaScript kernels for cpu and wasm', () => {
  test('UnsortedSegmentSum (the gradient of gather) scatter-adds rows, drops out-of-range ids', () => {
    const x = tf.tensor2d([1, 2, 3, 4, 5, 6, 7, 8], [4, 2]);
    const ids = tf.tensor1d([2, 0, 2, -1], 'int32');
    assert.deepEqual([...tf.unsortedSegmentSum(x, ids, 3).dataSync()], [3, 4, 0, 0, 6, 8]);
    // d/dW sum(gather(W, idx) * c): row r collects the c-rows of every position that picked r.
    const w = tf.tensor2d([0, 0, 0, 0, 0, 0], [3, 2]);
    const c = tf.tensor2d([1, 10, 2, 20, 3, 30], [3, 2]);
    const g = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(tf.gather(v, tf.tensor1d([1, 1, 2], 'int32')), c)))(w);
    assert.deepEqual([...g.dataSync()], [0, 0, 3, 30, 3, 30]);
  });
});

test('wasm trains too: gather gradient and AngleAdamW equal the cpu results', async () => {
  const run = () => {
    const w = tf.variable(tf.tensor2d([0.5, -1, 2, 0.25, 1.5, -0.75], [3, 2]));
    const c = tf.tensor2d([1, 10, 2, 20, 3, 30], [3, 2]);
    const g = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(tf.gather(v, tf.tensor1d([1, 1, 2], 'int32')), c)))(w);
    const opt = new AdamW(new Map([['emb.weight', w]]));
    opt.step(new Map([['emb.weight', g]]), 0.1);
    const out = { grad: [...g.dataSync()], weight: [...w.dataSync()] };
    opt.dispose();
    tf.dispose([w, c, g]);
    return out;
  };
  const onCpu = run();
  await initBackend('wasm', { quiet: true });
  try {
    const onWasm = run();
    assert.deepEqual(onWasm.grad, onCpu.grad);
    onWasm.weight.forEach((x, i) => assert.ok(Math.abs(x - onCpu.weight[i]) < 1e-6, `weight ${i}: ${x} vs ${onCpu.weight[i]}`));
  } finally {
    await initBackend('cpu', { quiet: true });
  }
});
