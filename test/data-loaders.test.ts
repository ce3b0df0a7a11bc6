/**
 * The data-set loaders on two roots: the small, well-formed fixture root under
 * test/fixtures/data/root (always runs; its splits are far below the known sizes, which is how
 * the size check is tested), and the real files under ANGLE_DATA_DIR (skipped with a reason when
 * unset), whose counts and sample values were computed independently with python3 over the same
 * files, reading them as SentEval / GLUE's script do.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  glueMrpcPairs,
  loadFlickr30kCaptions,
  loadGithubIssues,
  loadMrpc,
  loadNliPairs,
  loadNliTriplets,
  loadQnli,
  loadQqp,
  loadSickRelatedness,
  loadStsbSentence1,
  loadStsBenchmark,
  loadStsYear,
  loadTransferTask,
  loadWiki1m,
  readText,
  type TransferSet,
} from '../lib/data/index.js';
import { InputError } from '../lib/util/errors.js';
import { DATA_DIR } from './helpers/env.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'data');
const ROOT = join(FIXTURES, 'root');
/** The fixture root, never the Hub cache (a developer's cache must not change the results). */
const FIX = { dataDir: ROOT, useCache: false };
const LAX = { ...FIX, allowSizeMismatch: true };

function assertInputError(fn: () => unknown, file: string, what: RegExp, line?: number): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof InputError, `expected InputError, got ${String(e)}`);
    assert.equal(e.file, file);
    if (line !== undefined) assert.equal(e.line, line, e.message);
    assert.match(e.message, what);
    return true;
  });
}

const countLabels = (s: TransferSet) => s.examples.reduce<Record<number, number>>((m, x) => ((m[x.label] = (m[x.label] ?? 0) + 1), m), {});

describe('fixture root: size checks', () => {
  test('a split below its known size is an error naming the file, the count and the expected size', () => {
    assertInputError(() => loadStsBenchmark('test', FIX), join(ROOT, 'stsb', 'sts-test.csv'), /STSBenchmark test: read 3 scored pairs but expected 1379 \(STS-B release .*allowSizeMismatch/);
    assertInputError(() => loadStsYear('STS13', FIX), join(ROOT, 'sts', 'STS13-en-test', 'STS.input.FNWN.txt'), /STS13 FNWN: read 2 scored pairs but expected 189/);
    assertInputError(() => loadNliTriplets(FIX), join(ROOT, 'nli', 'nli_for_simcse.csv'), /NLI train: read 3 triplets but expected 275601/);
  });
  test('allowSizeMismatch accepts it and records why', () => {
    const t = loadStsBenchmark('test', LAX);
    assert.equal(t.pairs.length, 3);
    assert.equal(t.where, 'local');
    assert.match(t.sizeNote ?? '', /read 3 scored pairs but expected 1379 \(STS-B release .*\); accepted \(allowSizeMismatch\)/);
  });
});

describe('fixture root: every loader', () => {
  test('STS13: subsets in SentEval order, blank gold lines skipped with their line numbers kept', () => {
    const sets = loadStsYear('STS13', LAX);
    assert.deepEqual(sets.map((s) => [s.name, s.pairs.length]), [['FNWN', 2], ['headlines', 2], ['OnWN', 1]]);
    assert.deepEqual(sets[1].pairs.map((p) => [p.a, p.score, p.source.line]), [['stocks fall in asia', 4.2, 1], ['two killed in crash', 5, 3]]);
  });
  test('SICK test with CRLF line ends; dev is the trial file', () => {
    assert.deepEqual(loadSickRelatedness('test', LAX).pairs.map((p) => [p.b, p.score]), [['A boy is playing outdoors', 3.3], ['An onion is being sliced', 4.9]]);
    assert.equal(loadSickRelatedness('dev', LAX).pairs[0].a, 'The young boys are playing outdoors');
  });
  test('MRPC: train = msr_paraphrase_train.txt minus dev_ids.tsv (GLUE), dev = dev.tsv, test = labelled msr test', () => {
    const train = loadMrpc('train', LAX);
    assert.deepEqual(train.pairs.map((p) => [p.a, p.score]), [['He said the food was good .', 1], ['She bought a car .', 1], ['It rained all day .', 0]]);
    assert.deepEqual(train.files.map((f) => f.slice(ROOT.length + 1)), ['mrpc/msr_paraphrase_train.txt', 'mrpc/dev_ids.tsv']);
    assert.deepEqual(glueMrpcPairs(train.files[0], train.files[1], 'dev').map((p) => p.a), loadMrpc('dev', LAX).pairs.map((p) => p.a));
    assert.deepEqual(loadMrpc('test', LAX).pairs.map((p) => p.score), [1, 0]);
  });
  test("MRPC train falls back to GLUE's train.tsv when the MSR source files are absent", () => {
    const tmp = mkdtempSync(join(tmpdir(), 'angle-mrpc-'));
    try {
      mkdirSync(join(tmp, 'mrpc'));
      cpSync(join(ROOT, 'mrpc', 'train.tsv'), join(tmp, 'mrpc', 'train.tsv'));
      assertInputError(() => loadMrpc('train', { dataDir: tmp, useCache: false }), join(tmp, 'mrpc', 'train.tsv'), /MRPC train: read 2 pairs but expected 3668/);
      assert.equal(loadMrpc('train', { dataDir: tmp, useCache: false, allowSizeMismatch: true }).pairs.length, 2);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
  test('QNLI (entailment -> 1) and QQP (is_duplicate) GLUE tsv', () => {
    assert.deepEqual(loadQnli('dev', LAX).pairs.map((p) => p.score), [1, 0]);
    const q = loadQqp('dev', LAX);
    assert.deepEqual(q.pairs.map((p) => p.score), [0, 0, 1]);
    assert.equal(q.pairs[1].a, 'I want to pursue PhD in Computer Science about social network,what is the open problem in social network?');
  });
  test('GitHub Issues JSON lines keep empty and HTML texts as they are', () => {
    assert.deepEqual(loadGithubIssues('test', LAX).pairs.map((p) => [p.a, p.score]), [['Crash on start <code>npe</code>', 1], ['', 0]]);
  });
  test('NLI: quoted fields with commas, doubled quotes and a line break; pairs are (sent0, sent1, 1), (sent0, hard_neg, 0)', () => {
    const t = loadNliTriplets(LAX).triplets;
    assert.equal(t.length, 3);
    assert.ok(t[0].sent0.startsWith('you know during the season') && t[0].sent0.endsWith('goes up to replace him'));
    assert.deepEqual([t[2].sent0, t[2].sent1, t[2].hardNeg, t[2].source.line], ['He said, "hello"', 'He greeted someone.', 'He said nothing,\nat all.', 4]);
    const p = loadNliPairs(LAX).pairs;
    assert.deepEqual(p.map((x) => x.score), [1, 0, 1, 0, 1, 0]);
    assert.deepEqual([p[4].b, p[5].b], ['He greeted someone.', 'He said nothing,\nat all.']);
  });
  test('Wiki1M: a partial copy needs allowSample, is marked, and its cut-off last line is dropped', () => {
    const sample = join(ROOT, 'wiki1m-sample', 'wiki1m_for_simcse.txt');
    assertInputError(() => loadWiki1m(FIX), sample, /Wiki1M: only a partial sample is available \(not the 1,000,000-sentence corpus\); pass allowSample: true/);
    const w = loadWiki1m({ ...FIX, allowSample: true });
    assert.equal(w.sample, true);
    assert.equal(w.fullSize, 1000000);
    assert.deepEqual(w.sentences, ['YMCA in South Australia', "South Australia (SA) has a unique position in Australia's history", '', 'The city is known for its festivals and wine']);
    assert.equal(w.truncatedTail, 'Also, operation panels inside the elevators are insta');
  });
  test('transfer tasks: MR labels by file, TREC coarse labels, SST-2 splits', () => {
    const mr = loadTransferTask('MR', undefined, LAX);
    assert.deepEqual(mr.examples.map((x) => [x.text, x.label]), [['a gorgeous , witty , seductive movie .', 1], ['the film is a treat .', 1], ['a dull , lifeless film .', 0]]);
    const trec = loadTransferTask('TREC', 'train', LAX);
    assert.deepEqual(trec.examples.map((x) => [trec.labelNames[x.label], x.text]), [['DESC', 'How did serfdom develop in and then leave Russia ?'], ['ENTY', 'What films featured the character Popeye Doyle ?']]);
    assert.deepEqual(loadTransferTask('SST2', 'dev', LAX).examples.map((x) => x.label), [1]);
    assert.throws(() => loadTransferTask('SentEvalMRPC', 'train', FIX), /SentEvalMRPC train: missing file msr_paraphrase_train\.txt/);
  });
  test('Flickr30k captions grouped by image; STS-B train sentence1 texts', () => {
    const f = loadFlickr30kCaptions('test', LAX);
    assert.deepEqual([f.images, f.captions.length, f.captionsPerImage], [1, 5, 5]);
    assert.deepEqual(loadStsbSentence1(LAX).texts, ['a plane is taking off .', 'stocks rise']);
  });
});

describe('real files', { skip: DATA_DIR ? false : 'ANGLE_DATA_DIR is not set (point it at a data root such as shared/data)' }, () => {
  const REAL = { dataDir: DATA_DIR, useCache: false };
  test("MRPC train: 3668 pairs (2474 paraphrases) built as GLUE's script does; dev 408 (279)", () => {
    const t = loadMrpc('train', REAL);
    assert.equal(t.pairs.length, 3668);
    assert.equal(t.pairs.filter((p) => p.score === 1).length, 2474);
    assert.ok(t.pairs[0].a.startsWith('Amrozi accused his brother , whom he called " the witness "'));
    assert.ok(t.pairs[3667].b.startsWith('The 30-year bond US30YT = RR grew 1-3 / 32 for a yield of 4.'));
    const d = loadMrpc('dev', REAL);
    assert.equal(d.pairs.length, 408);
    assert.equal(d.pairs.filter((p) => p.score === 1).length, 279);
  });
  describe("the shared copy of GLUE's train.tsv (3667 rows, one pair short)", () => {
    let tmp: string;
    before(() => {
      tmp = mkdtempSync(join(tmpdir(), 'angle-mrpc-real-'));
      mkdirSync(join(tmp, 'mrpc'));
      symlinkSync(join(DATA_DIR!, 'mrpc', 'train.tsv'), join(tmp, 'mrpc', 'train.tsv'));
    });
    after(() => rmSync(tmp, { recursive: true, force: true }));
    test('fails the size check naming the file, or loads 3667 pairs when a mismatch is accepted', () => {
      assertInputError(() => loadMrpc('train', { dataDir: tmp, useCache: false }), join(tmp, 'mrpc', 'train.tsv'), /MRPC train: read 3667 pairs but expected 3668/);
      const lax = loadMrpc('train', { dataDir: tmp, useCache: false, allowSizeMismatch: true });
      assert.equal(lax.pairs.length, 3667);
      assert.match(lax.sizeNote ?? '', /accepted/);
    });
  });
  test('STS-B train sentence1: 5749 texts in file order, 5432 distinct', () => {
    const c = loadStsbSentence1(REAL);
    assert.equal(c.texts.length, 5749);
    assert.equal(c.texts[0], 'a plane is taking off .');
    assert.equal(c.texts[5748], 'putin spokesman : doping charges appear unfounded');
    assert.equal(new Set(c.texts).size, 5432);
  });
  test('Wiki1M sample: 11,914 complete lines, the cut-off 11,915th dropped; never loaded as the corpus', () => {
    assert.throws(() => loadWiki1m(REAL), /only a partial sample/);
    const w = loadWiki1m({ ...REAL, allowSample: true });
    assert.equal(w.sample, true);
    assert.equal(w.sentences.length, 11914);
    assert.equal(w.sentences[0], 'YMCA in South Australia');
    assert.ok(w.truncatedTail?.startsWith('Also, operation panels inside the elevators are installed at a level that can be'));
  });
  test('MR, CR, SUBJ, MPQA: SentEval sizes and label balance; empty lines kept (CR pos lines 2323 and 2407)', () => {
    const sizes: Record<string, [number, number]> = { MR: [5331, 5331], CR: [2407, 1368], SUBJ: [5000, 5000], MPQA: [3312, 7294] };
    for (const [task, [pos, neg]] of Object.entries(sizes)) {
      const s = loadTransferTask(task as 'MR', 'all', REAL);
      assert.deepEqual(countLabels(s), { 1: pos, 0: neg }, task);
    }
    const cr = loadTransferTask('CR', 'all', REAL);
    assert.deepEqual(cr.examples.filter((x) => x.text === '' && x.label === 1).map((x) => x.source.line), [2323, 2407]);
    assert.ok(loadTransferTask('MR', 'all', REAL).examples[0].text.startsWith("the rock is destined to be the 21st century 's new `` conan ``"));
  });
  test('SST-2: 67349 / 872 / 1821 with 37569 / 444 / 909 positives', () => {
    assert.deepEqual(countLabels(loadTransferTask('SST2', 'train', REAL)), { 1: 37569, 0: 29780 });
    assert.deepEqual(countLabels(loadTransferTask('SST2', 'dev', REAL)), { 1: 444, 0: 428 });
    const t = loadTransferTask('SST2', 'test', REAL);
    assert.deepEqual(countLabels(t), { 1: 909, 0: 912 });
    assert.deepEqual([t.examples[0].text, t.examples[0].label], ['uneasy mishmash of styles and genres .', 0]);
  });
  test('TREC: train_5500.label is Latin-1 (strict UTF-8 fails at line 66), 5452 / 500 questions, coarse label counts', () => {
    const file = join(DATA_DIR!, 'senteval-transfer', 'TREC', 'train_5500.label');
    assertInputError(() => readText(file, 'TREC questions'), file, /wrong encoding: byte 3665 \(f0 63 69 74\) is not valid UTF-8/, 66);
    const t = loadTransferTask('TREC', 'train', REAL);
    const byName = Object.fromEntries(Object.entries(countLabels(t)).map(([k, v]) => [t.labelNames[Number(k)], v]));
    assert.deepEqual(byName, { ENTY: 1250, HUM: 1223, DESC: 1162, NUM: 896, LOC: 835, ABBR: 86 });
    assert.equal(t.examples[65].text, 'Which city has the oldest relationship as a sister\u00f0city with Los Angeles ?');
    assert.equal(loadTransferTask('TREC', 'test', REAL).examples.length, 500);
  });
  test('SentEval MRPC: 4076 (2753 paraphrases) / 1725 (1147); the BOM header is skipped', () => {
    const tr = loadTransferTask('SentEvalMRPC', 'train', REAL);
    assert.deepEqual(countLabels(tr), { 1: 2753, 0: 1323 });
    const te = loadTransferTask('SentEvalMRPC', 'test', REAL);
    assert.deepEqual(countLabels(te), { 1: 1147, 0: 578 });
    assert.ok(te.examples[0].text.startsWith("PCCW 's chief operating officer , Mike Butcher , and Alex Ar"));
    assert.equal(te.examples[0].source.line, 2);
  });
  test('Flickr30k dev: 1014 images, first caption of the first image', () => {
    const d = loadFlickr30kCaptions('dev', REAL);
    assert.equal(d.images, 1014);
    assert.equal(d.captions[0], 'A group of people stand in the back of a truck filled with cotton .');
  });
});
