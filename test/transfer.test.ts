/**
 * The pieces of SentEval's transfer-task pipeline (lib/eval/transfer), each against a reference
 * that does not come from our code: the MT19937 value the C++ standard requires, numpy outputs
 * (legacy RandomState permutations and shuffles, np.round, np.mean, recorded from numpy 2.4.6;
 * the legacy generator and these reductions are unchanged since numpy 1.17), scikit-learn's
 * documented StratifiedKFold example, closed forms, finite differences, and a Newton solver
 * written here. The golden parity is test/transfer-golden.test.ts.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  RandomState,
  stratifiedKFold,
  stratifiedTestFolds,
  numpyMean,
  numpyRound2,
  firstArgmax,
  matrix,
  logisticObjective,
  fitLogisticRegression,
  predictLogistic,
  coefficients,
  dataHessian,
  readWordVectors,
  bowEmbed,
  sentevalSortOrder,
  prepareSplit,
  pairFeatures,
  embedTask,
  bowBatcher,
  innerKFold,
  kFold,
  splitValidation,
  f1Binary,
  sklearnRegs,
  evaluateTransferTasks,
  type Matrix,
  type TransferLearner,
  type PreparedTask,
  transferTaskSpec,
} from '../lib/eval/transfer/index.js';
import { InputError } from '../lib/util/errors.js';

describe('RandomState (numpy legacy MT19937)', () => {
  test('MT19937 seeded 5489: first output and the 10000th (the value std::mt19937 must produce)', () => {
    const r = new RandomState(5489);
    assert.equal(r.nextUint32(), 3499211612);
    let v = 0;
    for (let i = 1; i < 10000; i++) v = r.nextUint32();
    assert.equal(v, 4123659995);
  });

  test('permutation and random_sample equal numpy', () => {
    assert.deepEqual(Array.from(new RandomState(0).permutation(10)), [2, 8, 4, 9, 1, 6, 7, 3, 0, 5]);
    assert.deepEqual(Array.from(new RandomState(42).permutation(10)), [8, 1, 5, 0, 7, 2, 9, 4, 3, 6]);
    assert.deepEqual(Array.from(new RandomState(4294967295).permutation(7)), [1, 5, 0, 6, 4, 2, 3]);
    assert.equal(new RandomState(0).randomSample(), 0.5488135039273248);
    const p = new RandomState(1111).permutation(1000);
    assert.deepEqual(Array.from(p.subarray(0, 12)), [293, 123, 939, 38, 831, 650, 916, 2, 239, 859, 177, 716]);
    let s = 0;
    p.forEach((v, i) => (s += i * v));
    assert.equal(s, 249267881); // numpy: (np.arange(1000) * p).sum()
  });

  test('shuffle of fold labels, twice on one generator, equals numpy (what StratifiedKFold does per class)', () => {
    const rs = new RandomState(1111);
    const a = Int32Array.from([5, 5, 5, 4, 4, 4, 4, 4, 4, 4].flatMap((c, f) => Array(c).fill(f)));
    rs.shuffle(a);
    assert.deepEqual(Array.from(a), [8, 7, 0, 4, 8, 9, 5, 0, 3, 1, 9, 9, 0, 0, 1, 3, 5, 5, 2, 0, 6, 6, 6, 2, 4, 1, 7, 8, 3, 7, 9, 1, 1, 2, 2, 4, 4, 5, 7, 2, 3, 8, 6]);
    const b = Int32Array.from(Array.from({ length: 30 }, (_, i) => Math.floor(i / 3)));
    rs.shuffle(b);
    assert.deepEqual(Array.from(b), [9, 1, 8, 6, 1, 3, 1, 5, 8, 2, 6, 2, 5, 9, 3, 4, 0, 9, 3, 2, 8, 5, 0, 0, 6, 7, 4, 4, 7, 7]);
  });

  test('bad seeds are refused', () => {
    assert.throws(() => new RandomState(-1), RangeError);
    assert.throws(() => new RandomState(2 ** 32), RangeError);
    assert.throws(() => new RandomState(1.5), RangeError);
  });
});

describe('StratifiedKFold (scikit-learn 1.2.1)', () => {
  test("sklearn's docstring example (no shuffle): y = [0, 0, 1, 1], 2 splits", () => {
    const folds = stratifiedKFold([0, 0, 1, 1], { nSplits: 2, shuffle: false });
    assert.deepEqual(
      folds.map((f) => [Array.from(f.train), Array.from(f.test)]),
      [
        [
          [1, 3],
          [0, 2],
        ],
        [
          [0, 2],
          [1, 3],
        ],
      ],
    );
  });

  test('shuffled folds: the per-class fold labels are numpy shuffles in first-appearance class order', () => {
    // class 7 appears first, then 3: sklearn numbers them 0, 1 whatever their values
    const y = [7, 3, 7, 7, 3, 3, 7, 3, 7, 7, 3, 7, 3, 3, 7];
    const n7 = y.filter((v) => v === 7).length;
    const n3 = y.length - n7;
    const k = 3;
    // allocation: round robin over sorted(y_enc) = [0]*n7 + [1]*n3
    const alloc = Array.from({ length: k }, () => [0, 0]);
    for (let p = 0; p < y.length; p++) alloc[p % k][p < n7 ? 0 : 1]++;
    const rs = new RandomState(5);
    const l7 = Int32Array.from(alloc.flatMap((a, f) => Array(a[0]).fill(f)));
    const l3 = Int32Array.from(alloc.flatMap((a, f) => Array(a[1]).fill(f)));
    rs.shuffle(l7);
    rs.shuffle(l3);
    let i7 = 0;
    let i3 = 0;
    const want = y.map((v) => (v === 7 ? l7[i7++] : l3[i3++]));
    assert.equal(n7 + n3, y.length);
    assert.deepEqual(Array.from(stratifiedTestFolds(y, { nSplits: k, shuffle: true, randomState: 5 })), want);
  });

  test('folds partition the rows, keep class proportions, and repeat for the same seed', () => {
    const y = Array.from({ length: 103 }, (_, i) => (i * 37) % 5 === 0 ? 2 : i % 3 === 0 ? 1 : 0);
    const folds = stratifiedKFold(y, { nSplits: 10, shuffle: true, randomState: 1111 });
    const seen = new Int32Array(y.length);
    for (const f of folds) {
      for (const i of f.test) seen[i]++;
      assert.equal(f.train.length + f.test.length, y.length);
      for (let i = 1; i < f.test.length; i++) assert.ok(f.test[i] > f.test[i - 1]);
    }
    assert.ok(seen.every((c) => c === 1));
    for (const c of [0, 1, 2]) {
      const total = y.filter((v) => v === c).length;
      for (const f of folds) {
        const inFold = Array.from(f.test).filter((i) => y[i] === c).length;
        assert.ok(Math.abs(inFold - total / 10) < 1 + 1e-9, `class ${c}: ${inFold} of ${total} in a fold`);
      }
    }
    assert.deepEqual(stratifiedKFold(y, { nSplits: 10, shuffle: true, randomState: 1111 }), folds);
    assert.notDeepEqual(stratifiedKFold(y, { nSplits: 10, shuffle: true, randomState: 1112 }), folds);
  });

  test('too many splits is an error', () => {
    assert.throws(() => stratifiedKFold([0, 1, 0], { nSplits: 4, shuffle: false }), InputError);
    assert.throws(() => stratifiedKFold([0, 0, 1, 1, 1], { nSplits: 4, shuffle: false }), /number of members in each class/);
  });
});

describe('numpy reductions', () => {
  test('round(x, 2) as numpy: rint(100 x) / 100, ties to even on the scaled double', () => {
    // numpy 2.4.6 np.round(v, 2); Python's round(2.675, 2) would give 2.67
    const cases: [number, number][] = [
      [2.675, 2.68],
      [0.575, 0.57],
      [0.125, 0.12],
      [0.375, 0.38],
      [8.345, 8.35],
      [1.015, 1.01],
      [63.785, 63.78],
      [70.865, 70.86],
    ];
    for (const [x, want] of cases) assert.equal(numpyRound2(x), want, String(x));
  });

  test('np.mean: pairwise summation (differs from a left-to-right sum in the last bit)', () => {
    const want: Record<number, number> = { 10: 0.5371113340020061, 11: 0.5056077322877724, 20: 0.5320962888665999, 130: 0.5000771545405448, 300: 0.5020060180541625 };
    for (const [n, m] of Object.entries(want)) {
      const a = Array.from({ length: Number(n) }, (_, i) => ((i * 7919) % 1000) / 997);
      assert.equal(numpyMean(a), m, `n=${n}`);
    }
  });

  test('argmax: the first maximum', () => {
    assert.equal(firstArgmax([1, 3, 3, 2]), 1);
    assert.equal(firstArgmax([5]), 0);
  });
});

/** A small problem with correlated features (like averaged word vectors). */
function problem(n: number, d: number, K: number, seed: number): { x: Matrix; y: Int32Array } {
  const rs = new RandomState(seed);
  const u = () => rs.randomSample() * 2 - 1;
  const data = new Float64Array(n * d);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const common = u();
    for (let k = 0; k < d; k++) data[i * d + k] = 0.8 * common + 0.3 * u() + (k === 0 ? 0.5 : 0);
    // class = argmax of K noisy linear scores (binary: the sign of one)
    let best = 0;
    let bestS = -Infinity;
    for (let c = 0; c < Math.max(K, 2) - (K === 2 ? 1 : 0); c++) {
      const s = data[i * d + (c % d)] - data[i * d + ((c + 1) % d)] + 0.7 * u() + 0.1 * c;
      if (s > bestS) [best, bestS] = [c, s];
    }
    y[i] = K === 2 ? (bestS > 0 ? 1 : 0) : best;
  }
  return { x: matrix(data, n, d), y };
}

describe('logistic-regression objective (sklearn 1.2.1 lbfgs: summed loss + ‖W‖²/(2C))', () => {
  test('closed forms at θ = 0: n·log 2 (binary), n·log K (multinomial); the penalty is ‖W‖²/(2C), intercepts free', () => {
    const { x, y } = problem(40, 3, 2, 1);
    assert.ok(Math.abs(logisticObjective({ x, y, nClasses: 2, C: 1 }, new Float64Array(4)) - 40 * Math.LN2) < 1e-12);
    const m = problem(30, 3, 4, 2);
    assert.ok(Math.abs(logisticObjective({ ...m, nClasses: 4, C: 1 }, new Float64Array(16)) - 30 * Math.log(4)) < 1e-12);
    // one row x = [2], y = 1, w = 0.5, b = -0.25: z = 0.75, loss = log(1 + e^0.75) − 0.75, penalty 0.25/(2·4)
    const one = { x: matrix(Float64Array.of(2), 1, 1), y: Int32Array.of(1), nClasses: 2, C: 4 };
    assert.ok(Math.abs(logisticObjective(one, Float64Array.of(0.5, -0.25)) - (Math.log(1 + Math.exp(0.75)) - 0.75 + 0.25 / 8)) < 1e-15);
    // a huge intercept changes the loss, never the penalty
    const big = logisticObjective(one, Float64Array.of(0, 1000));
    assert.ok(Math.abs(big - Math.log1p(Math.exp(-1000))) < 1e-12);
  });

  test('gradient equals central finite differences (binary and multinomial)', () => {
    for (const K of [2, 3, 6]) {
      const { x, y } = problem(60, 5, K, 10 + K);
      const B = K === 2 ? 1 : K;
      const rs = new RandomState(K);
      const theta = Float64Array.from({ length: B * 6 }, () => rs.randomSample() - 0.5);
      const pr = { x, y, nClasses: K, C: 0.7 };
      const g = new Float64Array(theta.length);
      logisticObjective(pr, theta, g);
      for (let j = 0; j < theta.length; j++) {
        const h = 1e-6;
        const tp = Float64Array.from(theta);
        const tm = Float64Array.from(theta);
        tp[j] += h;
        tm[j] -= h;
        const fd = (logisticObjective(pr, tp) - logisticObjective(pr, tm)) / (2 * h);
        assert.ok(Math.abs(fd - g[j]) <= 1e-6 * Math.max(1, Math.abs(g[j])), `K=${K} θ[${j}]: ${g[j]} vs ${fd}`);
      }
    }
  });
});

/** Newton's method with an explicit Hessian, written here as the reference optimum (binary). */
function newtonBinary(x: Matrix, y: Int32Array, C: number): Float64Array {
  const d = x.cols;
  const p = d + 1;
  let theta = new Float64Array(p);
  for (let it = 0; it < 50; it++) {
    const g = new Float64Array(p);
    const H = new Float64Array(p * p);
    for (let i = 0; i < x.rows; i++) {
      const xi = [...x.data.subarray(i * d, i * d + d), 1];
      const z = xi.reduce((s, v, k) => s + v * theta[k], 0);
      const s = 1 / (1 + Math.exp(-z));
      for (let a = 0; a < p; a++) {
        g[a] += (s - y[i]) * xi[a];
        for (let b = 0; b < p; b++) H[a * p + b] += s * (1 - s) * xi[a] * xi[b];
      }
    }
    for (let a = 0; a < d; a++) {
      g[a] += theta[a] / C;
      H[a * p + a] += 1 / C;
    }
    // solve H Δ = g by Gaussian elimination
    const A = Array.from({ length: p }, (_, r) => [...H.subarray(r * p, r * p + p), g[r]]);
    for (let c = 0; c < p; c++) {
      let piv = c;
      for (let r = c + 1; r < p; r++) if (Math.abs(A[r][c]) > Math.abs(A[piv][c])) piv = r;
      [A[c], A[piv]] = [A[piv], A[c]];
      for (let r = c + 1; r < p; r++) {
        const f = A[r][c] / A[c][c];
        for (let k = c; k <= p; k++) A[r][k] -= f * A[c][k];
      }
    }
    const delta = new Float64Array(p);
    for (let r = p - 1; r >= 0; r--) {
      let s = A[r][p];
      for (let k = r + 1; k < p; k++) s -= A[r][k] * delta[k];
      delta[r] = s / A[r][r];
    }
    theta = theta.map((v, k) => v - delta[k]);
    if (Math.max(...delta.map(Math.abs)) < 1e-13) break;
  }
  return theta;
}

describe('logistic-regression solver (preconditioned L-BFGS to the optimum)', () => {
  test('binary: equals an explicit Newton solve, from zero and from a warm start, with either preconditioner', () => {
    const { x, y } = problem(300, 6, 2, 21);
    for (const C of [0.25, 8]) {
      const ref = newtonBinary(x, y, C);
      const cold = fitLogisticRegression(x, y, C);
      assert.ok(cold.solver.converged, JSON.stringify(cold.solver));
      const far = Float64Array.from(ref, (v) => v + 1);
      const warm = fitLogisticRegression(x, y, C, { warmStart: far, curvature: dataHessian(x, 2, ref) });
      for (const m of [cold, warm]) {
        const scale = Math.max(...ref.map(Math.abs));
        const diff = Math.max(...m.theta.map((v, k) => Math.abs(v - ref[k])));
        assert.ok(diff < 1e-5 * scale, `C=${C}: max |θ − θ_newton| ${diff} (scale ${scale})`);
        // the stopping rule's promise: f − f* ≤ ~1e-11 · f
        const pr = { x, y, nClasses: 2, C };
        const [f, fStar] = [logisticObjective(pr, m.theta), logisticObjective(pr, ref)];
        assert.ok(f - fStar <= 1e-11 * fStar, `f − f* = ${f - fStar} (f* = ${fStar})`);
      }
    }
  });

  test('multinomial: stationary point, intercepts sum to zero, labels mapped through sorted classes', () => {
    const { x, y } = problem(400, 5, 4, 33);
    const labels = Int32Array.from(y, (c) => [10, 20, 30, 40][c]);
    // at a tight tolerance the gradient vanishes; the default tolerance is within 1e-11 of that objective
    const m = fitLogisticRegression(x, labels, 2, { tol: 1e-16 });
    assert.ok(m.solver.converged);
    assert.deepEqual(Array.from(m.classes), [10, 20, 30, 40]);
    const g = new Float64Array(m.theta.length);
    logisticObjective({ x, y, nClasses: 4, C: 2 }, m.theta, g);
    assert.ok(Math.max(...g.map(Math.abs)) < 1e-5, `gradient ${Math.max(...g.map(Math.abs))}`);
    const loose = fitLogisticRegression(x, labels, 2);
    assert.ok(loose.objective - m.objective < 1e-11 * m.objective, `${loose.objective} vs ${m.objective}`);
    const { intercept } = coefficients(m);
    assert.ok(Math.abs(intercept.reduce((s, v) => s + v, 0)) < 1e-9, `intercepts ${intercept}`);
    const pred = predictLogistic(m, x);
    const acc = pred.filter((v, i) => v === labels[i]).length / labels.length;
    assert.ok(acc > 0.5, `training accuracy ${acc}`);
    // a preconditioner from the Hessian at the optimum reaches the same point
    const again = fitLogisticRegression(x, labels, 2, { curvature: dataHessian(x, 4, m.theta) });
    const diff = Math.max(...again.theta.map((v, k) => Math.abs(v - m.theta[k])));
    assert.ok(diff < 1e-5, `max |θ − θ'| ${diff}`);
  });

  test('one class only is an error naming it', () => {
    const { x } = problem(10, 2, 2, 1);
    assert.throws(() => fitLogisticRegression(x, new Int32Array(10).fill(1), 1), /at least 2 classes/);
  });
});

describe("bow.py's bag of word vectors", () => {
  const dir = mkdtempSync(join(tmpdir(), 'angle-bow-'));
  const file = join(dir, 'vec.txt');
  writeFileSync(file, '3 2\nthe 0.1 0.2\ncat -1e-1 3\n. 0.5 0.5\ncat 1 1');
  const wv = readWordVectors(file);

  test('the header line is a word (bow.py skips nothing); the last duplicate wins; exact mean; empty → "."; unknown → 0', () => {
    assert.equal(wv.dim, 2);
    assert.deepEqual(Array.from(wv.vectors.get('3')!), [2]);
    assert.deepEqual(Array.from(wv.vectors.get('cat')!), [1, 1]);
    const x = bowEmbed(wv, [['the', 'cat', 'dog', 'the'], [], ['Dog'], ['cat']]);
    assert.deepEqual(Array.from(x.subarray(0, 2)), [(0.1 + 1 + 0.1) / 3, (0.2 + 1 + 0.2) / 3]);
    assert.deepEqual(Array.from(x.subarray(2, 4)), [0.5, 0.5]);
    assert.deepEqual(Array.from(x.subarray(4, 6)), [0, 0]);
    assert.deepEqual(Array.from(x.subarray(6, 8)), [1, 1]);
  });

  test('a token whose vector is the header line is an error (SentEval would fail in np.mean)', () => {
    assert.throws(() => bowEmbed(wv, [['the', '3']]), (e: Error) => e instanceof InputError && /header/.test(e.message) && /line 1/.test(e.message));
  });

  test('a malformed vector line names the file and line', () => {
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, 'the 0.1 0.2\ncat 0.3 x\n');
    assert.throws(() => readWordVectors(bad), (e: Error) => e instanceof InputError && e.message.includes(`${bad}:2`));
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("SentEval's sample order and pair features", () => {
  test('sorted by (length, label), ties in load order (Python sorted is stable)', () => {
    assert.deepEqual(Array.from(sentevalSortOrder([[2, 1], [1, 1], [2, 0], [1, 1], [0, 1]])), [4, 1, 3, 2, 0]);
    const ex = [
      { text: 'a b', text2: 'c', label: 1, source: { file: 'f', line: 1 } },
      { text: 'a b', text2: 'c', label: 0, source: { file: 'f', line: 2 } },
      { text: 'a', text2: 'c d e', label: 1, source: { file: 'f', line: 3 } },
      { text: 'a b', text2: '', label: 1, source: { file: 'f', line: 4 } },
    ];
    const s = prepareSplit('train', ex, true);
    assert.deepEqual(Array.from(s.order), [2, 3, 1, 0]); // (1,3,1) (2,0,1) (2,1,0) (2,1,1)
    assert.deepEqual(s.tokensB![1], []);
    assert.deepEqual(Array.from(s.labels), [1, 1, 0, 1]);
  });

  test('MRPC features: [|A − B|, A ⊙ B]', () => {
    const f = pairFeatures(matrix(Float64Array.of(1, -2, 0.5, 3), 2, 2), matrix(Float64Array.of(4, -1, 0.5, -3), 2, 2));
    assert.deepEqual(Array.from(f.data), [3, 1, 4, 2, 0, 6, 0.25, -9]);
    assert.equal(f.cols, 4);
  });

  test('bad embeddings are errors naming the task, split, row and source line', async () => {
    const ex = [0, 1, 2].map((i) => ({ text: `w${i}`, label: i % 2, source: { file: 'mr.txt', line: i + 1 } }));
    const task: PreparedTask = { spec: transferTaskSpec('MR'), splits: { all: prepareSplit('all', ex, false) }, labelNames: [], files: [] };
    await assert.rejects(
      embedTask(task, (b) => ({ data: Float64Array.from(b.flatMap((t) => (t[0] === 'w1' ? [NaN, 1] : [0, 1]))), rows: b.length, dim: 2 })),
      // sorted by (length, label): w0 (0), w2 (0), w1 (1): w1 is row 2
      (e: Error) => e instanceof InputError && /MR all row 2 \(mr\.txt:2\)/.test(e.message) && /NaN/.test(e.message),
    );
    let call = 0;
    await assert.rejects(
      embedTask(task, (b) => ({ data: new Float64Array(b.length * (++call === 1 ? 2 : 3)), rows: b.length, dim: call === 1 ? 2 : 3 }), { batchSize: 2 }),
      /MR all row 2 \(mr\.txt:2\): embedding dimension 3, but earlier rows had 2/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'angle-bow-'));
    writeFileSync(join(dir, 'v.txt'), 'w0 1 2\nw1 3 4\n');
    const m = await embedTask(task, bowBatcher(readWordVectors(join(dir, 'v.txt'))));
    assert.deepEqual(Array.from(m.splits.all.x.data), [1, 2, 0, 0, 3, 4]);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('several tasks', () => {
  test('a task whose files are missing is reported with the files it needs; the others still run', async () => {
    const root = mkdtempSync(join(tmpdir(), 'angle-transfer-data-'));
    try {
      const cr = join(root, 'senteval-transfer', 'CR');
      mkdirSync(cr, { recursive: true });
      const words = ['good', 'great', 'fine', 'bad', 'poor', 'awful', 'the', 'phone'];
      const line = (i: number, pos: boolean) => `the phone ${words[(i % 3) + (pos ? 0 : 3)]}`;
      writeFileSync(join(cr, 'custrev.pos'), Array.from({ length: 40 }, (_, i) => line(i, true)).join('\n') + '\n');
      writeFileSync(join(cr, 'custrev.neg'), Array.from({ length: 40 }, (_, i) => line(i, false)).join('\n') + '\n');
      const vec = join(root, 'vec.txt');
      writeFileSync(vec, words.map((w, i) => `${w} ${(i < 3 ? 1 : i < 6 ? -1 : 0) + 0.1 * i} ${0.05 * i}`).join('\n'));
      const r = await evaluateTransferTasks(['MR', 'CR'], bowBatcher(readWordVectors(vec)), { dataDir: root, useCache: false, allowSizeMismatch: true });
      assert.equal(r.failed.length, 1);
      assert.equal(r.failed[0].task, 'MR');
      assert.match(r.failed[0].message, /rt-polarity\.pos/);
      assert.equal(r.results.length, 1);
      assert.equal(r.results[0].task, 'CR');
      assert.equal(r.results[0].ntest, 80);
      assert.ok(r.results[0].acc > 90, `CR accuracy ${r.results[0].acc}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** A learner whose accuracy is scripted by reg: predicts the true label on the first `good(reg, n)` rows. */
function scriptedLearner(good: (reg: number, nTrain: number) => number, regs: number[]): TransferLearner & { calls: { n: number; regs: number[]; validation: string }[] } {
  const calls: { n: number; regs: number[]; validation: string }[] = [];
  return {
    name: 'scripted',
    calls,
    regs: () => regs,
    async fitPath(train, rs, validation) {
      calls.push({ n: train.x.rows, regs: [...rs], validation: validation.kind });
      return rs.map((reg) => ({
        reg,
        // the test rows carry their label in column 0; predict it right on a fraction of them
        predict: (x: Matrix) => Int32Array.from({ length: x.rows }, (_, i) => (i < good(reg, train.x.rows) * x.rows ? x.data[i * x.cols] : 1 - x.data[i * x.cols])),
      }));
    },
  };
}

describe("SentEval's validation protocols", () => {
  const n = 60;
  const y = Int32Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0));
  const x = matrix(Float64Array.from(y), n, 1); // column 0 = the label, read by the scripted learner

  test('inner k-fold: first maximum of the rounded inner means, refit on outer-train, rounded means of the folds', async () => {
    // reg 2 and reg 3 tie at 0.5 accuracy: the first (2) must win
    const learner = scriptedLearner((reg) => (reg === 1 ? 0.25 : 0.5), [1, 2, 3]);
    const r = await innerKFold(x, y, learner, { k: 3, seed: 1, nClasses: 2 });
    assert.equal(r.folds.length, 3);
    for (const f of r.folds) {
      assert.equal(f.chosenReg, 2);
      assert.equal(f.devacc, f.regScores[1]);
      assert.ok(f.regScores[1] === f.regScores[2]);
    }
    // 3 outer × 3 inner paths + 3 refits; refits get validation_split, inner fits the held-out fold
    assert.equal(learner.calls.length, 12);
    assert.deepEqual(learner.calls.filter((c) => c.validation === 'split').map((c) => c.regs), [[2], [2], [2]]);
    assert.equal(learner.calls.filter((c) => c.validation === 'split')[0].n, 40);
    assert.equal(r.acc, numpyRound2(numpyMean(r.folds.map((f) => f.testAcc))));
  });

  test('k-fold and split: chosen C, devacc = the maximum rounded score, test accuracy and predictions', async () => {
    const learner = scriptedLearner((reg) => (reg >= 4 ? 0.75 : 0.5), [0.5, 1, 2, 4, 8]);
    const test = { x: matrix(Float64Array.from([1, 0, 1, 0]), 4, 1), y: Int32Array.from([1, 0, 1, 0]) };
    const r = await kFold({ x, y }, test, learner, { k: 5, seed: 1111, nClasses: 2 });
    assert.equal(r.chosenReg, 4);
    assert.equal(r.devacc, Math.max(...r.regScores));
    assert.equal(r.acc, 75);
    assert.deepEqual(Array.from(r.testPred), [1, 0, 1, 1]);
    const s = await splitValidation({ x, y }, test, test, learner, { seed: 1, nClasses: 2 });
    assert.deepEqual(s.devScores, [50, 50, 50, 75, 75]);
    assert.equal(s.chosenReg, 4);
    assert.equal(s.acc, 75);
  });

  test("SentEval's C grids and MRPC's F1", () => {
    assert.deepEqual(sklearnRegs('inner-kfold'), [0.25, 0.5, 1, 2, 4, 8]);
    assert.deepEqual(sklearnRegs('split'), [0.25, 0.5, 1, 2, 4, 8]);
    assert.deepEqual(sklearnRegs('kfold'), [0.5, 1, 2, 4, 8, 16, 32]);
    // tp 3, fp 1, fn 2: P = 3/4, R = 3/5, F1 = 2PR/(P+R) = 2/3
    assert.ok(Math.abs(f1Binary(Int32Array.from([1, 1, 1, 1, 1, 0, 0]), Int32Array.from([1, 1, 1, 0, 0, 1, 0])) - 2 / 3) < 1e-15);
    assert.equal(f1Binary(Int32Array.from([0, 0]), Int32Array.from([0, 0])), 0);
  });
});
