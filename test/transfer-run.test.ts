/**
 * AnglE Table 6's rows as the notebook runs them (lib/experiments/transfer-run.ts and
 * transfer-resources.ts, evaluation-data.ts):
 * - the GloVe bag-of-words row on the shared 4k-word vectors, scikit-learn path, lands within the
 *   golden README's tolerance of SentEval's converged numbers (golden `informative_converged_result`:
 *   0.3 points, TREC 1.0), MRPC's F1 too; the record holds per-task accuracies as SentEval prints them;
 * - the PyTorch path, restricted to one task, runs only that task, and is within a few points of the
 *   scikit-learn path on the same embeddings;
 * - a task folder missing from the data root: the row records the failure naming the files, the
 *   other tasks finish, the data check says which files to put where; a second run with the folder
 *   back re-runs that row (a record with failures is never reused), a third reuses it;
 * - the GloVe file and SentEval's own per-task seconds are found in the shared folder.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { checkEvaluationData } from '../lib/experiments/evaluation-data.js';
import { locateWordVectors, sentevalTimings } from '../lib/experiments/transfer-resources.js';
import { bowTransferRow, pytorchPath, runTransferRows, sklearnPath } from '../lib/experiments/transfer-run.js';
import { DATA_DIR, TRANSFER_GOLDEN_DIR } from './helpers/env.js';

const skip = DATA_DIR && TRANSFER_GOLDEN_DIR ? false : 'needs the shared data and the transfer golden set';

describe('SentEval transfer rows', { skip }, () => {
  let tmp: string;
  let partial: string;
  before(async () => {
    await initBackend('cpu', { quiet: true });
    tmp = mkdtempSync(join(tmpdir(), 'angle-transfer-run-'));
    // a data root whose senteval-transfer/ has MRPC but not TREC
    partial = join(tmp, 'data');
    mkdirSync(join(partial, 'senteval-transfer'), { recursive: true });
    symlinkSync(join(DATA_DIR!, 'senteval-transfer', 'MRPC'), join(partial, 'senteval-transfer', 'MRPC'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  test('resources: the shared GloVe subset and SentEval timings; a wrong GLOVE_FILE is named', () => {
    const wv = locateWordVectors();
    assert.ok(wv.file?.endsWith('glove50_4k.txt') && wv.subset, JSON.stringify(wv));
    assert.match(locateWordVectors('/nope/glove.txt').note, /^not found: GLOVE_FILE = \/nope\/glove.txt .*glove\.840B\.300d/);
    const t = sentevalTimings(TRANSFER_GOLDEN_DIR);
    const g = JSON.parse(readFileSync(join(TRANSFER_GOLDEN_DIR!, 'golden.json'), 'utf8'));
    assert.deepEqual(t?.seconds, g.meta.plain_runtime_s);
  });

  test('GloVe row: sklearn path within the golden tolerance; a missing task is named and retried; then reused', { timeout: 300_000 }, async () => {
    const golden = JSON.parse(readFileSync(join(TRANSFER_GOLDEN_DIR!, 'golden.json'), 'utf8'));
    const row = bowTransferRow(locateWordVectors().file!, { paperRow: 'GloVe (avg.)' });
    const logs: string[] = [];
    const base = { rows: [row], tasks: ['TREC', 'MRPC'], experiment: 'table6', resultsDir: join(tmp, 'results'), log: (l: string) => logs.push(l) };

    const status = await checkEvaluationData(['TREC', 'SentEvalMRPC'], { dataDir: partial, download: false });
    assert.ok(status.ready.has('SentEvalMRPC'));
    assert.match(status.problems.get('TREC')!, /train: missing — put .*train_5500\.label.* in .*senteval-transfer\/TREC\//);

    const [broken] = await runTransferRows({ ...base, paths: [sklearnPath()], dataDir: partial });
    assert.equal(broken!.failed.length, 1);
    assert.equal(broken!.failed[0]!.task, 'TREC');
    assert.match(broken!.failed[0]!.message, /TREC/);
    assert.deepEqual(broken!.tasks.map((t) => t.task), ['MRPC']);

    const [sk, pt] = await runTransferRows({ ...base, paths: [sklearnPath(), pytorchPath(['MRPC'])], dataDir: DATA_DIR });
    assert.equal(sk!.status, 'evaluated', 'a record with failures is not reused');
    assert.deepEqual(sk!.failed, []);
    for (const t of sk!.tasks) {
      const ref = golden.tasks[t.task].informative_converged_result;
      const tol = t.task === 'TREC' ? 1.0 : 0.3;
      assert.ok(Math.abs(t.acc - ref.acc) <= tol, `${t.task} acc ${t.acc} vs converged SentEval ${ref.acc}`);
      assert.ok(Math.abs(t.devacc - ref.devacc) <= tol, `${t.task} devacc ${t.devacc} vs ${ref.devacc}`);
      if (t.task === 'MRPC') assert.ok(Math.abs(t.f1! - ref.f1) <= 0.3);
      assert.equal(t.ntest, ref.ntest);
      assert.ok(Math.abs(sk!.run.record.metrics[`test_${t.task}`]! - t.acc) < 1e-9);
    }
    assert.equal(sk!.run.record.metrics.test_Avg, undefined, 'no average over two of seven tasks');
    assert.deepEqual(pt!.tasks.map((t) => t.task), ['MRPC']);
    const gap = Math.abs(pt!.tasks[0]!.acc - sk!.tasks.find((t) => t.task === 'MRPC')!.acc);
    console.log(`# MRPC, GloVe 50d: PyTorch path ${pt!.tasks[0]!.acc} vs scikit-learn path ${sk!.tasks.find((t) => t.task === 'MRPC')!.acc}`);
    assert.ok(gap < 3, `paths ${gap} points apart`);

    const again = await runTransferRows({ ...base, paths: [sklearnPath(), pytorchPath(['MRPC'])], dataDir: DATA_DIR });
    assert.deepEqual(again.map((r) => r.status), ['reused', 'reused']);
    assert.deepEqual(again[0]!.tasks, sk!.tasks);
  });
});

describe('vocabulary coverage', { skip }, () => {
  test("equals the golden's per-task coverage of the 4k-word GloVe subset (SentEval's counts)", async () => {
    const { readWordVectors } = await import('../lib/eval/transfer/bow.js');
    const { vocabularyCoverage } = await import('../lib/experiments/transfer-resources.js');
    const golden = JSON.parse(readFileSync(join(TRANSFER_GOLDEN_DIR!, 'golden.json'), 'utf8'));
    const wv = readWordVectors(locateWordVectors().file!);
    for (const c of vocabularyCoverage(wv, ['MR', 'CR', 'MPQA', 'TREC', 'MRPC'], { dataDir: DATA_DIR })) {
      const g = golden.tasks[c.task].data.coverage;
      const parts = 'sentences' in g ? [g] : Object.values(g as Record<string, Record<string, number>>);
      const sum = (k: string) => parts.reduce((s: number, x: Record<string, number>) => s + x[k]!, 0);
      assert.deepEqual(
        [c.sentences, c.tokens, c.tokensInVocab, c.emptySentences, c.sentencesWithoutKnownToken],
        [sum('sentences'), sum('tokens'), sum('tokens_in_vocab'), sum('empty_sentences'), sum('sentences_without_known_token')],
        c.task,
      );
    }
  });
});
