import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { checkLossesGolden } from '../lib/parity/losses.js';
import {
  ANGLE_CODE_CONFIG,
  angleLoss,
  angleLossTerms,
  angleTotalLoss,
  angleTripletLossTerms,
  arcconLoss,
  contrastiveWithNegativeLoss,
  cosineLoss,
  filterDuplicateExamples,
  inBatchNegativesLoss,
  inBatchTargets,
  infoNceLoss,
  interleavePairs,
  interleaveTriplets,
  simaceLoss,
  simcsePairLoss,
  simcseSupervisedLoss,
  simcseUnsupervisedLoss,
  splitPairs,
  splitTriplets,
  tripletContrastiveLoss,
  tripletRows,
  zigzagPairs,
} from '../lib/losses/index.js';
import { InputError } from '../lib/util/errors.js';
import { goldenOrSkip } from './helpers/env.js';
import { mulberry32Uniform } from '../lib/util/mulberry32.js';

const tmp: string[] = [];
before(async () => {
  await initBackend('cpu', { quiet: true });
});
after(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------- helpers

/** Deterministic N(0, sd²) matrix (mulberry32 + Box-Muller). */
function randn(rows: number, cols: number, seed: number, sd = 1): number[][] {
  const u = mulberry32Uniform(seed);
  return Array.from({ length: rows }, () =>
    Array.from({ length: cols }, () => sd * Math.sqrt(-2 * Math.log(u() + 1e-12)) * Math.cos(2 * Math.PI * u())),
  );
}

function t2(rows: number[][]): tf.Tensor2D {
  return tf.tensor2d(rows);
}

/** Value of a loss as a JS number, disposing everything. */
function value(fn: () => tf.Scalar): number {
  const s = fn();
  const v = s.dataSync()[0];
  s.dispose();
  return v;
}

/** Loss value and gradient w.r.t. `x` as JS arrays. */
function valueAndGrad(f: (x: tf.Tensor2D) => tf.Scalar, x: number[][]): { value: number; grad: Float32Array } {
  const xt = t2(x);
  const out = tf.valueAndGrad((t: tf.Tensor) => f(t as tf.Tensor2D))(xt);
  const r = { value: out.value.dataSync()[0], grad: out.grad.dataSync() as Float32Array };
  tf.dispose([xt, out.value, out.grad]);
  return r;
}

/** max |autodiff − central difference| / max |autodiff| over every coordinate of x. */
function finiteDifferenceError(f: (x: tf.Tensor2D) => tf.Scalar, x: number[][], h: number): number {
  const { grad } = valueAndGrad(f, x);
  let maxDiff = 0;
  let scale = 0;
  const dim = x[0].length;
  for (let r = 0; r < x.length; r++) {
    for (let c = 0; c < dim; c++) {
      const plus = x.map((row) => row.slice());
      const minus = x.map((row) => row.slice());
      plus[r][c] += h;
      minus[r][c] -= h;
      const fp = value(() => tf.tidy(() => f(t2(plus))));
      const fm = value(() => tf.tidy(() => f(t2(minus))));
      const fd = (fp - fm) / (2 * h);
      const ad = grad[r * dim + c];
      assert.ok(Number.isFinite(ad), `non-finite gradient at [${r}, ${c}]`);
      maxDiff = Math.max(maxDiff, Math.abs(fd - ad));
      scale = Math.max(scale, Math.abs(ad));
    }
  }
  assert.ok(scale > 1e-3, 'gradient is (nearly) zero: the check would be vacuous');
  return maxDiff / scale;
}

function throwsInput(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof InputError && pattern.test((e as Error).message));
}

const lse = (v: number[]) => {
  const m = Math.max(...v);
  return m + Math.log(v.reduce((s, x) => s + Math.exp(x - m), 0));
};
const close = (a: number, b: number, tol: number, what = '') =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what} ${a} vs ${b} (tol ${tol})`);

// ---------------------------------------------------------------- golden parity

describe('golden parity with AnglE v0.6.1 loss.py', () => {
  test('every case of losses.json: loss and gradient within 1e-4 relative (float32 vs float64)', async (t) => {
    const g = goldenOrSkip(t);
    if (!g) {
      console.log('# losses golden parity skipped: ANGLE_GOLDEN_DIR is not set');
      return;
    }
    const file = JSON.parse(readFileSync(join(g, 'losses.json'), 'utf8')) as { cases: { name: string }[] };
    const checks = await checkLossesGolden(g);
    for (const c of checks) t.diagnostic(`${c.ok ? 'ok' : 'FAIL'} ${c.name}: ${c.detail}`);
    // two checks (value, grad) per case: nothing skipped
    assert.equal(checks.length, 2 * file.cases.length);
    for (const c of file.cases) {
      assert.ok(checks.some((k) => k.name === `loss/${c.name}/value`), `no value check for ${c.name}`);
      assert.ok(checks.some((k) => k.name === `loss/${c.name}/grad`), `no grad check for ${c.name}`);
    }
    assert.deepEqual(checks.filter((c) => !c.ok), []);
  });

  test('the golden triplet case is loss.py contrastive_with_negative_loss, not the halved AngleLoss form', async (t) => {
    const g = goldenOrSkip(t);
    if (!g) return;
    const file = JSON.parse(readFileSync(join(g, 'losses.json'), 'utf8')) as {
      triplets: number[][];
      cases: { name: string; loss: number }[];
    };
    const ref = file.cases.find((c) => c.name.startsWith('contrastive_with_negative_tau20'));
    if (!ref) return t.skip('this golden set has no contrastive_with_negative_tau20 case');
    const half = value(() => tf.tidy(() => tripletContrastiveLoss(t2(file.triplets), { tau: 20 })));
    assert.ok(Math.abs(half - ref.loss) / ref.loss > 1e-2, 'the halved form unexpectedly matches the golden value');
  });

  // A synthetic golden directory (values from this implementation) exercises the checker itself.
  function syntheticGolden(extraCases: object[] = [], mutate?: (c: { name: string; loss: number; grad: number[][] }) => void) {
    const y = randn(8, 6, 7);
    const triplets = randn(6, 6, 8);
    const binary = [1, 0, 1, 1];
    const sts = [4.5, 0.5, 3, 3];
    const mk = (name: string, f: (x: tf.Tensor2D) => tf.Scalar, input: number[][]) => {
      const { value: v, grad } = valueAndGrad(f, input);
      const cols = input[0].length;
      const c = { name, loss: v, grad: input.map((_, r) => Array.from(grad.slice(r * cols, (r + 1) * cols))) };
      mutate?.(c);
      return c;
    };
    const cases = [
      mk('cosine_tau20_sts', (x) => cosineLoss(x, sts, { tau: 20 }), y),
      mk('angle_mean_tau5_binary', (x) => angleLoss(x, binary, { tau: 5, pooling: 'mean' }), y),
      mk('ibn_tau20_sts', (x) => inBatchNegativesLoss(x, sts, { tau: 20, positives: 'angle-int' }), y),
      mk(
        'contrastive_with_negative_tau10',
        (x) => {
          const { query, positive, negative } = splitTriplets(x);
          return contrastiveWithNegativeLoss(query, positive, negative, { tau: 10 });
        },
        triplets,
      ),
      ...extraCases,
    ];
    const dir = mkdtempSync(join(tmpdir(), 'losses-golden-'));
    tmp.push(dir);
    writeFileSync(
      join(dir, 'losses.json'),
      JSON.stringify({ y_pred: y, binary_pair_labels: binary, sts_pair_labels: sts, triplets, cases }),
    );
    return dir;
  }

  test('checker: parses case names generically (other taus, mean pooling, sts ibn) and passes them', async () => {
    const checks = await checkLossesGolden(syntheticGolden());
    assert.equal(checks.length, 8);
    assert.deepEqual(checks.filter((c) => !c.ok), []);
  });

  test('checker: an unknown case name is a failed check, not skipped', async () => {
    const dir = syntheticGolden([{ name: 'mystery_tau20_binary', loss: 1, grad: [[0]] }]);
    const checks = await checkLossesGolden(dir);
    const bad = checks.filter((c) => !c.ok);
    assert.equal(bad.length, 1);
    assert.equal(bad[0].name, 'loss/mystery_tau20_binary');
    assert.match(bad[0].detail, /unknown golden loss case/);
  });

  test('checker: a wrong loss or gradient fails; an empty case list fails; a missing file throws', async () => {
    const off = await checkLossesGolden(
      syntheticGolden([], (c) => {
        if (c.name === 'cosine_tau20_sts') c.loss *= 1 + 1e-3;
        if (c.name === 'contrastive_with_negative_tau10') c.grad[2][3] += 1e-2;
      }),
    );
    assert.deepEqual(
      off.filter((c) => !c.ok).map((c) => c.name).sort(),
      ['loss/contrastive_with_negative_tau10/grad', 'loss/cosine_tau20_sts/value'],
    );
    const empty = mkdtempSync(join(tmpdir(), 'losses-empty-'));
    tmp.push(empty);
    writeFileSync(join(empty, 'losses.json'), JSON.stringify({ y_pred: [[1, 2]], cases: [] }));
    const e = await checkLossesGolden(empty);
    assert.equal(e.length, 1);
    assert.equal(e[0].ok, false);
    await assert.rejects(checkLossesGolden(join(empty, 'nope')), /losses\.json/);
  });
});

// ---------------------------------------------------------------- batch layouts

describe('batch layouts', () => {
  test('zigzag and triplet builders and tensor split/interleave round-trip', () => {
    const z = zigzagPairs([
      { first: 'a0', second: 'b0', label: 1 },
      { first: 'a1', second: 'b1', label: 0 },
    ]);
    assert.deepEqual(z.rows, ['a0', 'b0', 'a1', 'b1']);
    assert.deepEqual(z.labels, [1, 0]);
    assert.deepEqual(tripletRows([{ query: 'q', positive: 'p', negative: 'n' }]), ['q', 'p', 'n']);
    const x = randn(6, 4, 1);
    tf.tidy(() => {
      const { first, second } = splitPairs(t2(x));
      assert.deepEqual(first.arraySync(), tf.tensor2d([x[0], x[2], x[4]]).arraySync());
      assert.deepEqual(second.arraySync(), tf.tensor2d([x[1], x[3], x[5]]).arraySync());
      assert.deepEqual(interleavePairs(first, second).arraySync(), t2(x).arraySync());
      const tr = splitTriplets(t2(x));
      assert.deepEqual(tr.negative.arraySync(), tf.tensor2d([x[2], x[5]]).arraySync());
      assert.deepEqual(interleaveTriplets(tr.query, tr.positive, tr.negative).arraySync(), t2(x).arraySync());
    });
  });

  test('odd row counts and wrong label counts are errors', () => {
    const x = t2(randn(5, 4, 2));
    throwsInput(() => splitPairs(x), /even/);
    throwsInput(() => cosineLoss(x, [1, 0]), /cosine.*even/);
    throwsInput(() => tripletContrastiveLoss(t2(randn(4, 4, 2))), /multiple of 3/);
    const y = t2(randn(6, 4, 3));
    for (const [name, f] of [
      ['cosine', () => cosineLoss(y, [1, 0])],
      ['angle', () => angleLoss(y, [1, 0, 1, 1])],
      ['ibn', () => inBatchNegativesLoss(y, [1])],
      ['AnglE loss', () => angleTotalLoss(y, [1, 0])],
    ] as const) {
      throwsInput(f, new RegExp(`labels for 3 pairs`));
      void name;
    }
    throwsInput(() => cosineLoss(y, [1, NaN, 0]), /label 1 is NaN/);
    tf.dispose([x, y]);
  });

  test("filterDuplicateExamples reproduces AnglE's collator (incl. keys recorded before the duplicate)", () => {
    const pairs = [
      ['a', 'b'],
      ['c', 'a'], // 'a' seen -> dropped, but 'c' was recorded first
      ['c', 'd'], // 'c' recorded by the dropped pair -> dropped
      ['e', 'f'],
    ];
    const r = filterDuplicateExamples(pairs, (p) => p);
    assert.deepEqual(r.dropped, [1, 2]);
    assert.deepEqual(r.kept, [
      ['a', 'b'],
      ['e', 'f'],
    ]);
    throwsInput(() => filterDuplicateExamples([['x', 'x']], (p) => p), /every example/);
  });
});

// ---------------------------------------------------------------- AnglE objectives

describe('AnglE objectives: hand-computed cases and edge cases', () => {
  // pair 0: (1,0)·(0,1) cos 0; pair 1: (1,0)·(1,1) cos 1/√2
  const twoPairs = [
    [1, 0],
    [0, 1],
    [1, 0],
    [1, 1],
  ];

  test('CoSENT: log(1 + Σ_{y_i<y_j} exp(tau (s_i − s_j))) by hand', () => {
    const c = Math.SQRT1_2;
    // labels [1, 0]: pair 1 (score c) should be below pair 0 (score 0) -> log(1 + exp(c − 0))
    close(value(() => cosineLoss(t2(twoPairs), [1, 0], { tau: 1 })), Math.log1p(Math.exp(c)), 1e-6);
    close(value(() => cosineLoss(t2(twoPairs), [1, 0], { tau: 20 })), Math.log1p(Math.exp(20 * c)), 1e-6);
    close(value(() => cosineLoss(t2(twoPairs), [0, 1], { tau: 20 })), Math.log1p(Math.exp(-20 * c)), 1e-5);
  });

  test('angle: complex quotient score by hand, sum and mean pooling', () => {
    // pair 0: u = 1 + 0i, w = 0 + 1i -> u/w = -i, normalised |Σre + Σim| = 1
    // pair 1: u = 1 + 1i, w = 1 + 0i -> (1 + i)/√2 -> 2/√2 = √2
    const x = [
      [1, 0],
      [0, 1],
      [1, 1],
      [1, 0],
    ];
    close(value(() => angleLoss(t2(x), [1, 0], { tau: 1 })), Math.log1p(Math.exp(Math.SQRT2 - 1)), 1e-6);
    close(value(() => angleLoss(t2(x), [1, 0], { tau: 1, pooling: 'mean' })), Math.log1p(Math.exp((Math.SQRT2 - 1) / 2)), 1e-6);
    close(value(() => angleLoss(t2(x), [0, 1], { tau: 20 })), Math.log1p(Math.exp(20 * (1 - Math.SQRT2))), 1e-6);
    throwsInput(() => angleLoss(t2(x), [0, 1], { pooling: 'max' as 'sum' }), /unknown angle pooling 'max': expected one of sum, mean/);
  });

  test('angle: odd embedding dimension and zero rows are errors', () => {
    throwsInput(() => angleLoss(t2(randn(4, 5, 3)), [1, 0]), /dimension 5 is odd/);
    const z = randn(4, 4, 3);
    z[3] = [0, 0, 0, 0];
    throwsInput(() => angleLoss(t2(z), [1, 0]), /row 3 is all zeros/);
  });

  test('NaN or Inf in the embeddings is an error naming the objective', () => {
    const x = randn(6, 4, 4);
    x[3][2] = NaN;
    const y = randn(6, 4, 4);
    y[4][1] = Infinity;
    const cases: [string, (e: tf.Tensor2D) => unknown][] = [
      ['cosine \\(CoSENT\\)', (e) => cosineLoss(e, [1, 0, 1])],
      ['angle', (e) => angleLoss(e, [1, 0, 1])],
      ['in-batch negatives \\(ibn\\)', (e) => inBatchNegativesLoss(e, [1, 0, 1])],
      ['AnglE loss', (e) => angleTotalLoss(e, [1, 0, 1])],
      ['contrastive with negative', (e) => tripletContrastiveLoss(e)],
      ['SimCSE', (e) => simcseSupervisedLoss(e)],
      ['SimACE', (e) => simaceLoss(e)],
      ['ArcCon', (e) => arcconLoss(e)],
    ];
    for (const [name, f] of cases) {
      throwsInput(() => f(t2(x)), new RegExp(`^${name}: embeddings row 3, column 2 is NaN`));
      throwsInput(() => f(t2(y)), new RegExp(`^${name}: embeddings row 4, column 1 is Infinity`));
    }
  });

  test('all labels equal: CoSENT and angle are log(1 + 0) = 0 with a zero gradient; ibn with all-0 labels is 0', () => {
    const x = randn(8, 6, 5);
    for (const f of [(e: tf.Tensor2D) => cosineLoss(e, [3, 3, 3, 3]), (e: tf.Tensor2D) => angleLoss(e, [1, 1, 1, 1], { tau: 20 })]) {
      const r = valueAndGrad(f, x);
      assert.equal(r.value, 0);
      assert.ok(r.grad.every((g) => g === 0));
    }
    assert.equal(value(() => inBatchNegativesLoss(t2(x), [0, 0, 0, 0])), 0);
  });

  test('a single pair works: CoSENT 0, angle 0, ibn 0 (partner is the only candidate), total 0', () => {
    const x = randn(2, 4, 6);
    assert.equal(value(() => cosineLoss(t2(x), [0.7])), 0);
    assert.equal(value(() => angleLoss(t2(x), [1])), 0);
    close(value(() => inBatchNegativesLoss(t2(x), [1])), 0, 1e-6);
    close(value(() => angleTotalLoss(t2(x), [1])), 0, 1e-6);
    assert.ok(Number.isFinite(value(() => contrastiveWithNegativeLoss(t2([x[0]]), t2([x[1]]), t2([randn(1, 4, 9)[0]])))));
  });

  test('ibn: float64 reference of the target rule and the self mask', () => {
    const x = randn(6, 3, 11);
    const labels = [1, 0, 1];
    const n = x.length;
    const norm = x.map((r) => {
      const l = Math.hypot(...r);
      return r.map((v) => v / l);
    });
    let total = 0;
    for (let i = 0; i < n; i++) {
      const logits = norm.map((r, j) => (j === i ? -Infinity : 20 * r.reduce((s, v, k) => s + v * norm[i][k], 0)));
      if (labels[i >> 1] === 1) total += lse(logits.filter((v) => v !== -Infinity)) - logits[i ^ 1];
    }
    close(value(() => inBatchNegativesLoss(t2(x), labels)), total / n, 1e-5);
  });

  test("ibn: graded labels need an explicit rule; 'angle-int' reproduces AnglE's int cast", () => {
    const x = randn(8, 4, 12);
    throwsInput(() => inBatchNegativesLoss(t2(x), [4.2, 0.5, 3, 1]), /pair 0 has label 4.2/);
    const byPredicate = value(() => inBatchNegativesLoss(t2(x), [4.2, 0.5, 3, 1], { positives: (y) => y >= 1 }));
    const asBinary = value(() => inBatchNegativesLoss(t2(x), [1, 0, 1, 1]));
    close(byPredicate, asBinary, 1e-6);
    // binary labels: 'angle-int' is the same matrix as 'binary'
    const b = new Float64Array([1, 0, 1, 1, 0]);
    assert.deepEqual(inBatchTargets(b, { positives: 'angle-int' }), inBatchTargets(b));
    // graded labels: AnglE matches column c's c·int(y_c) against row r's partner(r)·int(y_r).
    // Labels [0, 4, 0, 2]: row 7 (partner 6, int 2) -> 12; column 6 -> 6·2 = 12 (the partner) and
    // column 3 -> 3·4 = 12 (spurious: row 3 belongs to another pair).
    const g = new Float64Array([0, 4, 0, 2]);
    const { targets } = inBatchTargets(g, { positives: 'angle-int' });
    const row7 = Array.from(targets.slice(7 * 8, 8 * 8));
    assert.deepEqual(row7, [0, 0, 0, 1, 0, 0, 1, 0]);
    // 0.5 truncates to 0: no target for pair 0 of [0.5, 1]
    const half = inBatchTargets(new Float64Array([0.5, 1]), { positives: 'angle-int' }).targets;
    assert.deepEqual(Array.from(half.slice(0, 4)), [0, 0, 0, 0]);
  });

  test("ibn ISP switch: 'ignore' = AnglE; 'drop' removes duplicates from the softmax; 'positive' makes them targets", () => {
    // rows: 0 = s, 1 = t (label 1), 2 = s again, 3 = u (label 0)
    const base = randn(4, 5, 13);
    base[2] = base[0].slice();
    const keys = ['s', 't', 's', 'u'];
    const labels = [1, 0];
    const norm = base.map((r) => {
      const l = Math.hypot(...r);
      return r.map((v) => v / l);
    });
    const cos = (i: number, j: number) => norm[i].reduce((s, v, k) => s + v * norm[j][k], 0);
    const rowLogits = (i: number, removed: number[]) =>
      [0, 1, 2, 3].filter((j) => j !== i && !removed.includes(j)).map((j) => ({ j, l: 20 * cos(i, j) }));
    const ce = (i: number, removed: number[], targets: number[]) => {
      const ls = rowLogits(i, removed);
      const z = lse(ls.map((e) => e.l));
      return targets.reduce((s, t) => s + (z - ls.find((e) => e.j === t)!.l), 0) / Math.max(1, targets.length);
    };
    const ignore = (ce(0, [], [1]) + ce(1, [], [0])) / 4;
    const drop = (ce(0, [2], [1]) + ce(1, [], [0])) / 4;
    const positive = (ce(0, [], [1, 2]) + ce(1, [], [0]) + ce(2, [], [0])) / 4;
    close(value(() => inBatchNegativesLoss(t2(base), labels)), ignore, 1e-5, 'ignore');
    close(value(() => inBatchNegativesLoss(t2(base), labels, { duplicates: 'ignore', keys })), ignore, 1e-5, 'ignore+keys');
    close(value(() => inBatchNegativesLoss(t2(base), labels, { duplicates: 'drop', keys })), drop, 1e-5, 'drop');
    close(value(() => inBatchNegativesLoss(t2(base), labels, { duplicates: 'positive', keys })), positive, 1e-5, 'positive');
    assert.ok(Math.abs(drop - ignore) > 1e-3 && Math.abs(positive - ignore) > 1e-3, 'modes must differ on this batch');
    throwsInput(() => inBatchNegativesLoss(t2(base), labels, { duplicates: 'drop' }), /needs keys/);
    throwsInput(() => inBatchNegativesLoss(t2(base), labels, { duplicates: 'positive', keys: ['a'] }), /1 keys for 4 rows/);
  });

  test('AnglE total: paper preset = cos + ibn + angle(tau 1); code preset = ibn + 0.02 angle(tau 20); zero weights skip terms', () => {
    const x = randn(8, 6, 14);
    const y = [1, 0, 1, 1];
    const cos = value(() => cosineLoss(t2(x), y, { tau: 20 }));
    const ibn = value(() => inBatchNegativesLoss(t2(x), y, { tau: 20 }));
    const ang1 = value(() => angleLoss(t2(x), y, { tau: 1 }));
    const ang20 = value(() => angleLoss(t2(x), y, { tau: 20 }));
    close(value(() => angleTotalLoss(t2(x), y)), cos + ibn + ang1, 1e-5, 'paper');
    close(value(() => angleTotalLoss(t2(x), y, { preset: 'code' })), ibn + 0.02 * ang20, 1e-5, 'code');
    close(value(() => angleTotalLoss(t2(x), y, { ...ANGLE_CODE_CONFIG })), ibn + 0.02 * ang20, 1e-5, 'code spread');
    // graded labels are fine when ibn is off
    const sts = [4.2, 0.5, 3, 3];
    close(
      value(() => angleTotalLoss(t2(x), sts, { weights: { ibn: 0 } })),
      value(() => cosineLoss(t2(x), sts)) + value(() => angleLoss(t2(x), sts)),
      1e-5,
    );
    throwsInput(() => angleTotalLoss(t2(x), sts), /ibn.*pair 0 has label 4.2/);
    throwsInput(() => angleTotalLoss(t2(x), y, { weights: { cosine: -1 } }), /weight 'cosine'/);
    const xt = t2(x);
    const before = tf.memory().numTensors;
    const terms = angleLossTerms(xt, y);
    assert.deepEqual(Object.keys(terms).sort(), ['angle', 'cosine', 'ibn', 'total']);
    assert.equal(tf.memory().numTensors, before + 4, 'exactly the four returned scalars are new');
    close(terms.total.dataSync()[0], cos + ibn + ang1, 1e-5);
    close(terms.ibn!.dataSync()[0], ibn, 1e-6);
    tf.dispose([...Object.values(terms), xt]);
  });

  test('AnglE total on triplets (format C): ½(CE(q,p) + CE(q,[p;n])) + w·angle + w·cosine of the zipped pairs', () => {
    const x = randn(9, 6, 15);
    const terms = angleTripletLossTerms(t2(x), { weights: { cosine: 1, ibn: 1, cln: 1, angle: 0.5 } });
    const { query, positive, negative } = splitTriplets(t2(x));
    const cll = value(() => tripletContrastiveLoss(t2(x), { tau: 20 }));
    const zipped = tf.concat([interleavePairs(query, positive), interleavePairs(query, negative)], 0) as tf.Tensor2D;
    const zl = [1, 1, 1, 0, 0, 0];
    const expected = cll + 0.5 * value(() => angleLoss(zipped, zl, { tau: 1 })) + value(() => cosineLoss(zipped, zl));
    close(terms.total.dataSync()[0], expected, 1e-5);
    close(terms.contrastive!.dataSync()[0], cll, 1e-6);
  });

  test('contrastive with negative: halved form = ½(loss.py(q,p) + loss.py(q,p,n)); weights drop terms', () => {
    const x = randn(12, 5, 16);
    const { query, positive, negative } = splitTriplets(t2(x));
    const qp = value(() => contrastiveWithNegativeLoss(query, positive));
    const qpn = value(() => contrastiveWithNegativeLoss(query, positive, negative));
    close(value(() => tripletContrastiveLoss(t2(x))), (qp + qpn) / 2, 1e-6);
    close(value(() => tripletContrastiveLoss(t2(x), { ibnWeight: 0 })), qpn / 2, 1e-6);
    // hand case: q = p = e1, n = e2, tau 1 -> -log(e / (e + 1))
    close(value(() => contrastiveWithNegativeLoss(t2([[1, 0]]), t2([[2, 0]]), t2([[0, 3]]), { tau: 1 })), Math.log1p(Math.exp(-1)), 1e-6);
  });
});

// ---------------------------------------------------------------- SimCSE / SimACE / ArcCon

describe('contrastive baselines', () => {
  test('SimCSE unsupervised InfoNCE by hand (two views, zigzag)', () => {
    // z1 = (1,0), (0,1); z2 = (1,1), (-1,1); cos = [[1/√2, -1/√2], [1/√2, 1/√2]]
    const x = [
      [1, 0],
      [1, 1],
      [0, 1],
      [-1, 1],
    ];
    const expected = (Math.log1p(Math.exp(-Math.SQRT2)) + Math.log(2)) / 2;
    close(value(() => simcseUnsupervisedLoss(t2(x), { temperature: 1 })), expected, 1e-6);
    // temperature 0.05 scales the logits by 20
    const expected20 = (Math.log1p(Math.exp(-20 * Math.SQRT2)) + Math.log(2)) / 2;
    close(value(() => simcsePairLoss(t2(x))), expected20, 1e-6);
  });

  test('SimCSE supervised InfoNCE with hard negatives by hand', () => {
    // q = (1,0),(0,1); p = q; n = (0,1),(1,0); tau 1: each row -log(e / (2e + 2)) = log(2 + 2/e)
    const rows = [
      [1, 0],
      [1, 0],
      [0, 1],
      [0, 1],
      [0, 1],
      [1, 0],
    ];
    close(value(() => simcseSupervisedLoss(t2(rows), { temperature: 1 })), Math.log(2 + 2 / Math.E), 1e-6);
    // the same through infoNceLoss on separate matrices; and equal to AnglE's tau = 1 / temperature
    const q = t2([rows[0], rows[3]]);
    const p = t2([rows[1], rows[4]]);
    const n = t2([rows[2], rows[5]]);
    close(value(() => infoNceLoss(q, p, n, { temperature: 0.05 })), value(() => contrastiveWithNegativeLoss(q, p, n, { tau: 20 })), 1e-6);
    throwsInput(() => infoNceLoss(q, t2([[1, 0]])), /positives must match/);
    throwsInput(() => simcseSupervisedLoss(t2(rows), { temperature: 0 }), /temperature must be a finite positive/);
    assert.equal(value(() => simcsePairLoss(t2([[1, 2], [3, 1]]))), 0); // single pair: one candidate
  });

  test('SimACE and ArcCon by hand (2 pairs, tau 1, margin 10 degrees)', () => {
    const x = [
      [1, 0],
      [1, 1],
      [0, 1],
      [-1, 1],
    ];
    const m = Math.PI / 18;
    const q = Math.PI / 4;
    // SimACE: θ = π/2 − arccos(cos): θ00 = π/4, θ01 = −π/4, θ10 = π/4, θ11 = π/4
    const simace = (lse([q - m, -q]) - (q - m) + lse([q, q - m]) - (q - m)) / 2;
    close(value(() => simaceLoss(t2(x), { temperature: 1 })), simace, 1e-5);
    close(value(() => simaceLoss(t2(x), { temperature: 1, margin: m, marginUnit: 'radians' })), simace, 1e-5);
    // ArcCon: positive logit cos(θ + m) with θ = π/4 for both rows; negatives keep the cosine
    const pos = Math.cos(q + m);
    const arccon = (lse([pos, -Math.SQRT1_2]) - pos + lse([Math.SQRT1_2, pos]) - pos) / 2;
    close(value(() => arcconLoss(t2(x), { temperature: 1 })), arccon, 1e-5);
    close(value(() => arcconLoss(t2(x), { temperature: 1, margin: m, marginUnit: 'radians' })), arccon, 1e-5);
    // margin 0: SimACE is plain angular InfoNCE, ArcCon is plain SimCSE
    close(value(() => arcconLoss(t2(x), { temperature: 1, margin: 0 })), value(() => simcsePairLoss(t2(x), { temperature: 1 })), 1e-5);
    throwsInput(() => simaceLoss(t2(x), { marginUnit: 'gradians' as 'degrees' }), /unknown SimACE margin unit 'gradians': expected one of degrees, radians/);
  });

  test('finite-difference gradient check: SimACE, ArcCon (clipped arccos), SimCSE', () => {
    // cosine-based losses are scale invariant: embeddings of norm ~5 keep third derivatives small
    // enough for float32 central differences with h = 1e-2.
    const xPairs = randn(8, 5, 21, 3);
    const xTrip = randn(9, 5, 22, 3);
    const cases: [string, (x: tf.Tensor2D) => tf.Scalar, number[][]][] = [
      ['SimACE', (x) => simaceLoss(x), xPairs],
      ['SimACE tau 0.5, margin -10', (x) => simaceLoss(x, { temperature: 0.5, margin: -10 }), xPairs],
      ['ArcCon', (x) => arcconLoss(x), xPairs],
      ['ArcCon tau 0.5, margin 30', (x) => arcconLoss(x, { temperature: 0.5, margin: 30 }), xPairs],
      ['SimCSE unsup', (x) => simcseUnsupervisedLoss(x), xPairs],
      ['SimCSE sup', (x) => simcseSupervisedLoss(x), xTrip],
    ];
    for (const [name, f, x] of cases) {
      const err = finiteDifferenceError(f, x, 1e-2);
      assert.ok(err < 2e-3, `${name}: finite-difference relative error ${err}`);
    }
  });

  test('identical views (cos = 1): clipped arccos keeps SimACE and ArcCon gradients finite', () => {
    const v = randn(3, 4, 23);
    const x = [v[0], v[0], v[1], v[1], v[2], v[2]];
    for (const f of [(e: tf.Tensor2D) => simaceLoss(e), (e: tf.Tensor2D) => arcconLoss(e)]) {
      const r = valueAndGrad(f, x);
      assert.ok(Number.isFinite(r.value));
      assert.ok(r.grad.every(Number.isFinite));
    }
    // without clipping the arccos gradient at cos = 1 would be infinite: tf's own acos shows it
    const g = tf.grad((c: tf.Tensor) => tf.sum(tf.acos(c)))(tf.tensor1d([1]));
    assert.ok(!Number.isFinite(g.dataSync()[0]));
  });

  test('losses leave no tensors behind', () => {
    const x = t2(randn(6, 4, 24));
    const before = tf.memory().numTensors;
    const fns = [
      () => cosineLoss(x, [1, 0, 2]),
      () => angleLoss(x, [1, 0, 2]),
      () => inBatchNegativesLoss(x, [1, 0, 1]),
      () => angleTotalLoss(x, [1, 0, 1]),
      () => tripletContrastiveLoss(x),
      () => simcseSupervisedLoss(x),
      () => simaceLoss(x),
      () => arcconLoss(x),
    ];
    for (const f of fns) {
      const s = f();
      assert.equal(tf.memory().numTensors, before + 1);
      s.dispose();
    }
    x.dispose();
  });
});
