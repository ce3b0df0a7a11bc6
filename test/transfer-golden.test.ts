/**
 * SentEval transfer tasks against the golden set computed by SentEval's own code
 * (golden/senteval-transfer-glove50; README there): numpy's rounding and means on SentEval's
 * recorded scores, MRPC's pair features on the recorded embeddings, and the whole parity
 * (lib/parity/transfer.ts: loading, tokenisation, order, X bit for bit, folds, the objective at
 * SentEval's coefficients, the converged solution, SentEval's capped lbfgs fits iterate for iterate,
 * the task numbers within the README's tolerances). The golden set and data are found through ANGLE_GOLDEN_TRANSFER_DIR and
 * ANGLE_DATA_DIR, else ../shared/golden/senteval-transfer-glove50 and ../shared/data beside the
 * repository; without them the tests skip with the reason.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { matrix, numpyMean, numpyRound2, pairFeatures } from '../lib/eval/transfer/index.js';
import { checkTransferGolden } from '../lib/parity/transfer.js';
import { DATA_DIR, TRANSFER_GOLDEN_DIR } from './helpers/env.js';

const GOLDEN = TRANSFER_GOLDEN_DIR ?? '(no shared folder)';
const DATA = DATA_DIR ?? '(no shared folder)';
const haveGolden = existsSync(join(GOLDEN, 'golden.json'));
const haveData = existsSync(join(DATA, 'senteval-transfer'));
const skipGolden = haveGolden ? false : `no golden set at ${GOLDEN} (set ANGLE_GOLDEN_TRANSFER_DIR)`;
const skipBoth = skipGolden || (haveData ? false : `no SentEval transfer data under ${DATA} (set ANGLE_DATA_DIR)`);
if (skipBoth) console.log(`transfer-golden: skipped: ${skipBoth}`);

type Json = Record<string, any>;
const golden = (): Json => JSON.parse(readFileSync(join(GOLDEN, 'golden.json'), 'utf8'));

describe('SentEval transfer golden', () => {
  test("numpy's mean and round(·, 2) reproduce every score SentEval derived from raw accuracies", { skip: skipGolden }, () => {
    const g = golden();
    let n = 0;
    for (const [task, rec] of Object.entries(g.tasks as Json)) {
      const cv = rec.cv;
      if (cv.classifier === 'InnerKFoldClassifier') {
        for (const f of cv.folds) {
          f.inner_scores.forEach((s: number[], r: number) => assert.equal(numpyRound2(100 * numpyMean(s)), f.reg_scores[r], `${task} C=${cv.regs[r]}`));
          assert.equal(numpyRound2(100 * f.test_acc_raw), f.test_acc);
          n += f.reg_scores.length + 1;
        }
        assert.equal(numpyRound2(numpyMean(cv.devresults)), rec.result.devacc, task);
        assert.equal(numpyRound2(numpyMean(cv.testresults)), rec.result.acc, task);
      } else if (cv.classifier === 'KFoldClassifier') {
        cv.fold_scores.forEach((s: number[], r: number) => assert.equal(numpyRound2(100 * numpyMean(s)), cv.reg_scores[r], `${task} C=${cv.regs[r]}`));
        assert.equal(numpyRound2(100 * cv.test_acc_raw), rec.result.acc);
        n += cv.reg_scores.length;
      } else {
        cv.dev_scores_raw.forEach((s: number, r: number) => assert.equal(numpyRound2(100 * s), cv.dev_scores[r]));
        n += cv.dev_scores.length;
      }
      n += 2;
    }
    assert.ok(n > 0);
  });

  test("MRPC pair features of SentEval's embeddings A, B equal its X bit for bit", { skip: skipGolden }, () => {
    const g = golden();
    const rec = g.tasks.MRPC;
    if (!rec) return;
    for (const split of ['train', 'test']) {
      const { A, B } = rec.X.first_rows_AB[split];
      const f = pairFeatures(matrix(Float64Array.from(A.flat()), A.length, A[0].length), matrix(Float64Array.from(B.flat()), B.length, B[0].length));
      assert.deepEqual(Array.from(f.data), rec.X.first_rows[split].flat());
    }
  });

  test('a set with a subset of the tasks is checked on those tasks only; altered numbers fail their checks', { skip: skipBoth, timeout: 900_000 }, async () => {
    const g = golden();
    const dir = mkdtempSync(join(tmpdir(), 'angle-transfer-golden-'));
    try {
      // only MRPC, as a second set with fewer tasks would be
      const sub = { ...g, meta: { ...g.meta, tasks: ['MRPC'] }, tasks: { MRPC: g.tasks.MRPC } };
      writeFileSync(join(dir, 'golden.json'), JSON.stringify(sub));
      const ok = await checkTransferGolden(dir, DATA);
      assert.deepEqual(ok.filter((c) => !c.ok), []);
      assert.ok(ok.every((c) => c.name === 'transfer/vectors' || c.name.startsWith('transfer/MRPC/')));
      // the same set with four numbers altered
      const bad = structuredClone(sub) as Json;
      const rec = bad.tasks.MRPC;
      rec.result.acc += 2;
      rec.X.digest.train.sha256_f64le = rec.X.digest.train.sha256_f64le.replace(/^./, (c: string) => (c === '0' ? '1' : '0'));
      const [a, b] = [rec.cv.folds_test_idx[0], rec.cv.folds_test_idx[1]];
      [a[0], b[0]] = [b[0], a[0]];
      rec.cv.final.objective *= 1.001;
      writeFileSync(join(dir, 'golden.json'), JSON.stringify(bad));
      const checks = await checkTransferGolden(dir, DATA);
      const failed = checks.filter((c) => !c.ok).map((c) => c.name);
      for (const name of ['result', 'X', 'folds', 'objective']) assert.ok(failed.includes(`transfer/MRPC/${name}`), `${name} should fail: ${failed}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // SentEval's own lbfgs, capped at 100 iterations, on 7 tasks (3,000+ fits): minutes of CPU (see the result lines' times)
test('parity: every check passes (one line per task with our numbers vs SentEval’s)', { skip: skipBoth, timeout: 3_600_000 }, async () => {
    const t0 = Date.now();
    const checks = await checkTransferGolden(GOLDEN, DATA);
    for (const c of checks) console.log(`${c.ok ? 'PASS' : 'FAIL'} ${c.name}: ${c.detail}`);
    console.log(`transfer parity: ${checks.length} checks in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const failed = checks.filter((c) => !c.ok);
    assert.deepEqual(failed, []);
    // every task of the set got its result line
    for (const t of golden().meta.tasks as string[]) assert.ok(checks.some((c) => c.name === `transfer/${t}/result`), t);
  });
});
