/**
 * Loaders: real files under ANGLE_DATA_DIR (skipped with a reason when unset) with row counts
 * verified independently (awk/python3 over the same files), and error cases on temp files.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DATASETS,
  STS_SUBSETS,
  loadBinaryTask,
  loadFlickr30kCaptions,
  loadGithubIssues,
  loadMrpc,
  loadQnli,
  loadQqp,
  loadSickFile,
  loadSickRelatedness,
  loadStsBenchmark,
  loadStsBenchmarkFile,
  loadStsSubsetFiles,
  loadStsYear,
  loadCaptionFile,
  loadBinaryTsv,
  resolveDataDir,
  pySplitLines,
  pySplitWhitespace,
  pyStrip,
  sentevalSentence,
} from '../lib/data/index.js';
import { InputError } from '../lib/util/errors.js';
import { DATA_DIR } from './helpers/env.js';

const DATA = DATA_DIR;
const skipReal = DATA ? false : 'no data root: set ANGLE_DATA_DIR (e.g. shared/data) or keep ../shared beside the repository';

/** Asserts an InputError that names the file and the line and contains `what`. */
function assertInputError(fn: () => unknown, file: string, line: number | undefined, what: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof InputError, `expected InputError, got ${String(e)}`);
    assert.equal(e.file, file);
    if (line !== undefined) assert.equal(e.line, line, e.message);
    assert.ok(e.message.startsWith(line !== undefined ? `${file}:${line}: ` : `${file}`), e.message);
    assert.match(e.message, what);
    return true;
  });
}

describe('Python string semantics', () => {
  test('split / strip use Python whitespace, not JS \\s', () => {
    assert.deepEqual(pySplitWhitespace('  a\tb\u00a0c\x1fd  '), ['a', 'b', 'c', 'd']);
    // U+FEFF is whitespace for JS but not for Python's str.split()
    assert.deepEqual(pySplitWhitespace('a \ufeffb'), ['a', '\ufeffb']);
    assert.equal(pyStrip('\x1c x \x85'), 'x');
    assert.equal(sentevalSentence(' a   b\tc '), 'a b c');
  });
  test('splitlines breaks on \\r\\n, \\r, \\v, \\f, \\x1c-\\x1e, \\x85, \\u2028/9 and drops the final empty line', () => {
    assert.deepEqual(pySplitLines('a\r\nb\rc\vd\fe\x1cf\x85g\u2028h\n'), ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    assert.deepEqual(pySplitLines('a\n\nb'), ['a', '', 'b']);
  });
});

describe('data root', () => {
  test('no argument and no ANGLE_DATA_DIR is a clear error', () => {
    const saved = process.env.ANGLE_DATA_DIR;
    delete process.env.ANGLE_DATA_DIR;
    try {
      assert.throws(() => resolveDataDir(), /no data directory: pass dataDir or set ANGLE_DATA_DIR/);
    } finally {
      if (saved !== undefined) process.env.ANGLE_DATA_DIR = saved;
    }
  });
  test('a missing directory is named', () => {
    assert.throws(() => resolveDataDir('/nonexistent/angle-data'), /\/nonexistent\/angle-data: data directory does not exist/);
  });
});

describe('real files', { skip: skipReal }, () => {
  // Counts from awk/python3 over the files (non-blank gold lines; data rows without header).
  const STS_COUNTS: Record<string, Record<string, number>> = {
    STS12: { MSRpar: 750, MSRvid: 750, SMTeuroparl: 459, 'surprise.OnWN': 750, 'surprise.SMTnews': 399 },
    STS13: { FNWN: 189, headlines: 750, OnWN: 561 },
    STS14: { 'deft-forum': 450, 'deft-news': 300, headlines: 750, images: 750, OnWN: 750, 'tweet-news': 750 },
    STS15: { 'answers-forums': 375, 'answers-students': 750, belief: 375, headlines: 750, images: 750 },
    STS16: { 'answer-answer': 254, headlines: 249, plagiarism: 230, postediting: 244, 'question-question': 209 },
  };
  for (const [year, subsets] of Object.entries(STS_COUNTS)) {
    test(`${year}: SentEval subsets and counts`, () => {
      const sets = loadStsYear(year as 'STS12', { dataDir: DATA });
      assert.deepEqual(
        sets.map((s) => s.name),
        [...STS_SUBSETS[year as 'STS12']],
      );
      for (const s of sets) {
        assert.equal(s.pairs.length, subsets[s.name], `${year} ${s.name}`);
        for (const p of s.pairs) {
          assert.ok(p.score >= 0 && p.score <= 5);
          assert.equal(p.a, p.a.split(/ +/).join(' '));
        }
      }
    });
  }
  test('STS13 has no SMT subset (its gold file exists, its input does not)', () => {
    assert.ok(!loadStsYear('STS13', { dataDir: DATA }).some((s) => s.name === 'SMT'));
  });
  test('STS15 keeps source line numbers of the scored lines (blank gold lines skipped)', () => {
    const forums = loadStsYear('STS15', { dataDir: DATA }).find((s) => s.name === 'answers-forums')!;
    assert.equal(forums.pairs.length, 375);
    assert.ok(forums.pairs[forums.pairs.length - 1].source.line <= 2000);
    assert.ok(forums.pairs.some((p, i) => p.source.line !== i + 1), 'blank gold lines are skipped, so line numbers jump');
  });
  test('STS-B train/dev/test: 5749 / 1500 / 1379 pairs; test has 338 pairs with gold >= 4 and 2551 distinct sentences', () => {
    assert.equal(loadStsBenchmark('train', { dataDir: DATA }).pairs.length, 5749);
    assert.equal(loadStsBenchmark('dev', { dataDir: DATA }).pairs.length, 1500);
    const t = loadStsBenchmark('test', { dataDir: DATA });
    assert.equal(t.pairs.length, 1379);
    assert.equal(t.pairs.filter((p) => p.score >= 4).length, 338);
    assert.equal(new Set(t.pairs.flatMap((p) => [p.a, p.b])).size, 2551);
    assert.deepEqual([t.pairs[0].a, t.pairs[0].b, t.pairs[0].score], ['a girl is styling her hair .', 'a girl is brushing her hair .', 2.5]);
  });
  test('SICK-R train/dev(trial)/test: 4500 / 500 / 4927 (test file has CRLF line ends)', () => {
    assert.equal(loadSickRelatedness('train', { dataDir: DATA }).pairs.length, 4500);
    assert.equal(loadSickRelatedness('dev', { dataDir: DATA }).pairs.length, 500);
    const t = loadSickRelatedness('test', { dataDir: DATA });
    assert.equal(t.pairs.length, 4927);
    assert.ok(t.pairs.every((p) => !p.b.includes('\r') && p.score >= 1 && p.score <= 5));
  });
  test('MRPC test from msr_paraphrase_test.txt: 1725 pairs, 1147 positive (BOM before the header)', () => {
    const m = loadMrpc('test', { dataDir: DATA });
    assert.equal(m.pairs.length, 1725);
    assert.equal(m.pairs.filter((p) => p.score === 1).length, 1147);
    assert.equal(m.pairs[0].source.line, 2);
  });
  test('QNLI dev: 5463 pairs, 2702 entailment (= 1)', () => {
    const q = loadQnli('dev', { dataDir: DATA });
    assert.equal(q.pairs.length, 5463);
    assert.equal(q.pairs.filter((p) => p.score === 1).length, 2702);
  });
  test('Flickr30k test: 5000 captions, 1000 images; dev: 5070 / 1014', () => {
    const t = loadFlickr30kCaptions('test', { dataDir: DATA });
    assert.equal(t.captions.length, 5000);
    assert.equal(t.images, 1000);
    assert.equal(t.captions[0], 'The man with pierced ears is wearing glasses and an orange hat .');
    assert.equal(loadFlickr30kCaptions('dev', { dataDir: DATA }).images, 1014);
  });
  test('absent data sets (QQP, GitHub Issues) name what is missing, where it was looked for and how to get it', () => {
    const opts = { dataDir: DATA, useCache: false };
    assert.throws(
      () => loadQqp('dev', opts),
      /QQP dev: missing file dev\.tsv \(not under .*\/qqp\/; cache not consulted\)\. To get it: put dev\.tsv in .*\/qqp\/, or download it from the Hugging Face Hub \(dataset nyu-mll\/glue, qqp\/validation-00000-of-00001\.parquet\) with `npm run data -- download QQP`/,
    );
    assert.throws(() => loadGithubIssues('test', opts), /GitHubIssues test: missing file test\.jsonl .*WhereIsAI\/github-issue-similarity, data\/test-00000-of-00001\.parquet/);
    assert.throws(() => loadBinaryTask('QQP', opts), InputError);
  });
});

describe('loader errors on temp files', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'angle-data-test-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string): string => {
    const f = join(dir, name);
    writeFileSync(f, text);
    return f;
  };

  test('STS subset: missing column', () => {
    const inp = write('in1.txt', 'a b\tc d\nonly one sentence\n');
    const gs = write('gs1.txt', '1.0\n2.0\n');
    assertInputError(() => loadStsSubsetFiles('STS12', 'x', inp, gs), inp, 2, /expected 2 tab-separated sentences, found 1 field \(missing column\)/);
  });
  test('STS subset: NaN score, out-of-range score, line-count mismatch, blank lines skipped', () => {
    const inp = write('in2.txt', 'a\tb\nc\td\ne\tf\n');
    assertInputError(() => loadStsSubsetFiles('STS12', 'x', inp, write('gs2.txt', '1\nNaN\n3\n')), join(dir, 'gs2.txt'), 2, /expected a number for STS gold score in \[0, 5\], found 'NaN'/);
    assertInputError(() => loadStsSubsetFiles('STS12', 'x', inp, write('gs3.txt', '1\n2\n5.5\n')), join(dir, 'gs3.txt'), 3, /STS gold score 5.5 is out of range: expected a value in \[0, 5\]/);
    assertInputError(() => loadStsSubsetFiles('STS12', 'x', inp, write('gs4.txt', '1\n2\n')), join(dir, 'gs4.txt'), 3, /gold file has 2 lines but .* has 3/);
    const ok = loadStsSubsetFiles('STS12', 'x', inp, write('gs5.txt', '1\n\n4\n'));
    assert.deepEqual(
      ok.pairs.map((p) => [p.a, p.score, p.source.line]),
      [
        ['a', 1, 1],
        ['e', 4, 3],
      ],
    );
  });
  test('empty files', () => {
    const e = write('empty.txt', '');
    assertInputError(() => loadStsBenchmarkFile(e, 'test'), e, 1, /empty file: expected tab-separated STS-B rows/);
    assertInputError(() => loadSickFile(e, 'test'), e, 1, /empty file/);
    assertInputError(() => loadCaptionFile(e, 'test'), e, 1, /empty file/);
    const inp = write('in6.txt', 'a\tb\n');
    assertInputError(() => loadStsSubsetFiles('STS12', 'x', inp, e), e, 1, /empty file: expected one gold score per line/);
    const headerOnly = write('sick-header.txt', 'pair_ID\tsentence_A\tsentence_B\trelatedness_score\n');
    assertInputError(() => loadSickFile(headerOnly, 'test'), headerOnly, 2, /no data rows after the header line/);
  });
  test('a missing file is named', () => {
    const f = join(dir, 'nope.csv');
    assertInputError(() => loadStsBenchmarkFile(f, 'test'), f, undefined, /missing file: expected tab-separated STS-B rows/);
  });
  test('STS-B: missing column and bad score', () => {
    const f = write('stsb.csv', 'g\tf\ty\t1\t3.0\ta\tb\ng\tf\ty\t2\t4.0\ta\n');
    assertInputError(() => loadStsBenchmarkFile(f, 'test'), f, 2, /expected at least 7 tab-separated columns .*found 6 \(missing column\)/);
    const g = write('stsb2.csv', 'g\tf\ty\t1\tx\ta\tb\n');
    assertInputError(() => loadStsBenchmarkFile(g, 'test'), g, 1, /expected a number for STS gold score/);
    const h = write('stsb3.csv', 'g\tf\ty\t1\t-0.5\ta\tb\n');
    assertInputError(() => loadStsBenchmarkFile(h, 'test'), h, 1, /out of range/);
  });
  test('SICK: score outside [1, 5], CRLF tolerated', () => {
    const f = write('sick.txt', 'pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\r\n1\tA b\tC d\t0.5\tNEUTRAL\r\n');
    assertInputError(() => loadSickFile(f, 'test'), f, 2, /SICK relatedness score 0.5 is out of range: expected a value in \[1, 5\]/);
    const g = write('sick2.txt', 'h\th\th\th\th\r\n1\tA  b\tC d\t4.5\tNEUTRAL\r\n');
    assert.deepEqual(loadSickFile(g, 'test').pairs.map((p) => [p.a, p.b, p.score]), [['A b', 'C d', 4.5]]);
  });
  test('binary TSV: missing header column, short row, bad label', () => {
    const spec = { a: 'question', b: 'sentence', label: 'label', labelNames: { entailment: 1, not_entailment: 0 } as Record<string, 0 | 1>, what: 'QNLI rows' };
    const f = write('q1.tsv', 'index\tquestion\tsentence\n0\ta\tb\n');
    assertInputError(() => loadBinaryTsv(f, 'QNLI', 'dev', spec), f, 1, /header has no column 'label' \(missing column\)/);
    const g = write('q2.tsv', 'index\tquestion\tsentence\tlabel\n0\ta\tb\tentailment\n1\ta\tb\n');
    assertInputError(() => loadBinaryTsv(g, 'QNLI', 'dev', spec), g, 3, /expected 4 tab-separated columns .* found 3 \(missing column\)/);
    const h = write('q3.tsv', 'index\tquestion\tsentence\tlabel\n0\ta\tb\tmaybe\n');
    assertInputError(() => loadBinaryTsv(h, 'QNLI', 'dev', spec), h, 2, /expected a binary label \(0, 1, entailment, not_entailment\), found 'maybe'/);
  });
  test('GitHub Issues JSON lines, and parquet-only folders', () => {
    const root = join(dir, 'root');
    mkdirSync(join(root, 'github-issues'), { recursive: true });
    writeFileSync(join(root, 'github-issues', 'test.jsonl'), '{"text1":"a","text2":"b","label":1}\n{"text1":"c","text2":"d","label":0}\n{"text1":"e","label":0}\n');
    assertInputError(() => loadGithubIssues('test', { dataDir: root }), join(root, 'github-issues', 'test.jsonl'), 3, /missing field 'text2'/);
    writeFileSync(join(root, 'github-issues', 'valid-00000-of-00001.parquet'), 'PAR1');
    assert.throws(() => loadGithubIssues('valid', { dataDir: root }), /found parquet files \(valid-00000-of-00001.parquet\) but no valid\.jsonl/);
  });
  test('captions: count must be a multiple of 5, no empty caption', () => {
    const f = write('caps.txt', 'a\nb\nc\n');
    assertInputError(() => loadCaptionFile(f, 'test'), f, 3, /3 captions is not a multiple of 5/);
    const g = write('caps2.txt', 'a\n\nc\nd\ne\n');
    assertInputError(() => loadCaptionFile(g, 'test'), g, 2, /empty caption/);
  });
});

test('registry: every data set has a local folder, splits with known sizes and a Hub source', () => {
  for (const [id, e] of Object.entries(DATASETS)) {
    assert.equal(e.id, id);
    assert.ok(e.localDir && Object.keys(e.splits).length > 0 && e.hub.repo.includes('/'), id);
    for (const s of Object.values(e.splits)) assert.ok(Number.isInteger(s.rows) && s.rows > 0 && s.local.length > 0, id);
  }
});
