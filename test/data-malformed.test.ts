/**
 * Malformed input: every reader fails with an InputError naming the file and the line (or the
 * byte offset / row, for binary formats) and saying what was expected. Fixtures are the small
 * files under test/fixtures/data/malformed, byte-level cases written here (so the bytes are in
 * plain sight), tar archives made by GNU tar and parquet files made by hyparquet-writer.
 */
import assert from 'node:assert/strict';
import { readFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import {
  csvTable,
  extractTar,
  firstInvalidUtf8,
  flickrCsvToCaptions,
  glueMrpcPairs,
  loadBinaryJsonl,
  loadStsBenchmarkFile,
  parquetToPairsJsonl,
  parseCsv,
  readMsrParaphrase,
  readNliCsv,
  readParquetColumns,
  readSentevalLines,
  readSstFile,
  readText,
  readTrecFile,
} from '../lib/data/index.js';
import { InputError, UnavailableError } from '../lib/util/errors.js';
import { gnuTar, makeTar, writePairsParquet } from './fixtures/data/build.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'data');
const M = (name: string) => join(FIXTURES, 'malformed', name);
const ROOT = join(FIXTURES, 'root');

function assertInputError(fn: () => unknown, file: string, what: RegExp, line?: number): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof InputError, `expected InputError, got ${String(e)}`);
    assert.equal(e.file, file);
    if (line !== undefined) assert.equal(e.line, line, e.message);
    assert.match(e.message, what);
    return true;
  });
}

async function assertRejectsInput(p: Promise<unknown>, file: string, what: RegExp, line?: number): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof InputError, `expected InputError, got ${String(e)}`);
    assert.equal(e.file, file);
    if (line !== undefined) assert.equal(e.line, line, e.message);
    assert.match(e.message, what);
    return true;
  });
}

let tmp: string;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'angle-malformed-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));
const write = (name: string, data: string | Uint8Array): string => {
  const f = join(tmp, name);
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, data);
  return f;
};

describe('encodings', () => {
  test('strict UTF-8 agrees with the WHATWG decoder on valid and invalid sequences', () => {
    const cases = [
      [0x61, 0xc3, 0xa9], // é
      [0xe2, 0x82, 0xac], // €
      [0xf0, 0x9f, 0x98, 0x80], // emoji
      [0x61, 0xe9, 0x62], // Latin-1 é
      [0xc0, 0xaf], // overlong '/'
      [0xe0, 0x80, 0xaf], // overlong
      [0xed, 0xa0, 0x80], // surrogate
      [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
      [0xf5, 0x80, 0x80, 0x80],
      [0xe2, 0x82], // cut off
      [0x80],
    ];
    const decoder = new TextDecoder('utf-8', { fatal: true });
    for (const c of cases) {
      let ok = true;
      try {
        decoder.decode(new Uint8Array(c));
      } catch {
        ok = false;
      }
      assert.equal(firstInvalidUtf8(new Uint8Array(c)) === -1, ok, `bytes ${c.map((b) => b.toString(16)).join(' ')}`);
    }
    assert.equal(firstInvalidUtf8(new Uint8Array([0x61, 0x62, 0xe9, 0x63])), 2);
  });
  test('a Latin-1 byte in a UTF-8 file names the line (wrong encoding); a BOM and CRLF are fine', () => {
    const f = write('stsb-latin1.csv', Buffer.concat([Buffer.from('g\tf\ty\t1\t3.0\ta\tb\ng\tf\ty\t2\t4.0\tcaf'), Buffer.from([0xe9]), Buffer.from('\tb\n')]));
    assertInputError(() => loadStsBenchmarkFile(f, 'test'), f, /wrong encoding: byte 31 \(e9 09 62 0a\) is not valid UTF-8; expected tab-separated STS-B rows .* in UTF-8/, 2);
    const g = write('stsb-bom-crlf.csv', '\ufeffg\tf\ty\t1\t3.0\ta  b\tc\r\ng\tf\ty\t2\t4.0\td\te\r\n');
    assert.deepEqual(loadStsBenchmarkFile(g, 'test').pairs.map((p) => [p.a, p.score, p.source.line]), [['a b', 3, 1], ['d', 4, 2]]);
  });
  test("SentEval's Latin-1 reading: every byte maps, and \\x85 ends a line as in Python's splitlines()", () => {
    const f = write('mr.pos', Buffer.from([...Buffer.from('caf'), 0xe9, ...Buffer.from(' au  lait'), 0x85, ...Buffer.from('second\n\nfourth\n')]));
    assert.deepEqual(readSentevalLines(f, 1).map((x) => [x.text, x.source.line]), [['caf\u00e9 au lait', 1], ['second', 2], ['', 3], ['fourth', 4]]);
  });
  test('empty files', () => {
    assertInputError(() => readText(M('empty.txt'), 'one sentence per line'), M('empty.txt'), /empty file: expected one sentence per line/, 1);
    assertInputError(() => readNliCsv(M('empty.txt')), M('empty.txt'), /empty file: expected a csv with the columns sent0, sent1, hard_neg/, 1);
    assertInputError(() => readTrecFile(M('empty.txt')), M('empty.txt'), /empty file/, 1);
  });
  test('a file cut in the middle of its last line is named, with the line, instead of loading shortened', () => {
    const whole = 'main-captions\tMSRvid\t2012test\t0001\t5.000\tA man is playing a guitar.\tA man plays a guitar.\n';
    const cut = write('sts-cut.csv', whole + whole.slice(0, 60));
    assertInputError(() => loadStsBenchmarkFile(cut, 'test'), cut, /the last line has no line break: the file looks cut off .*expected tab-separated STS-B rows/, 2);
    assert.equal(loadStsBenchmarkFile(write('sts-whole.csv', whole + whole), 'test').pairs.length, 2);
  });
});

describe('csv (NLI, Flickr30k)', () => {
  test('quotes, doubled quotes, quoted line breaks, CRLF and blank lines as pandas reads them', () => {
    const recs = parseCsv('a,b,c\r\n"x, y","say ""hi""","two\nlines"\r\n\r\n1,,3\n', 'f.csv');
    assert.deepEqual(recs, [
      { fields: ['a', 'b', 'c'], line: 1 },
      { fields: ['x, y', 'say "hi"', 'two\nlines'], line: 2 },
      { fields: ['1', '', '3'], line: 5 },
    ]);
  });
  test('missing column, unterminated quote, extra field, header only', () => {
    assertInputError(() => readNliCsv(M('nli-missing-column.csv')), M('nli-missing-column.csv'), /header has no column 'hard_neg' \(missing column\): expected a csv with the columns sent0, sent1, hard_neg; found sent0, sent1/, 1);
    assertInputError(() => readNliCsv(M('nli-unterminated.csv')), M('nli-unterminated.csv'), /unterminated quoted field/, 3);
    assertInputError(() => readNliCsv(M('nli-extra-field.csv')), M('nli-extra-field.csv'), /expected 3 comma-separated fields \(sent0, sent1, hard_neg\), found 4/, 3);
    assertInputError(() => readNliCsv(M('nli-header-only.csv')), M('nli-header-only.csv'), /no data rows after the header line/, 2);
    assertInputError(() => csvTable('a,b\n1\n', 'x.csv', ['a'], 'two columns'), 'x.csv', /found 1 \(missing column\)/, 2);
  });
  test('Flickr30k csv: raw must be a JSON list of 5 one-line captions; split column required', async () => {
    await assertRejectsInput(flickrCsvToCaptions(M('flickr-bad-json.csv'), join(tmp, 'f1'), ['test']), M('flickr-bad-json.csv'), /column raw is not a JSON list of captions/, 2);
    await assertRejectsInput(flickrCsvToCaptions(M('flickr-four-captions.csv'), join(tmp, 'f2'), ['test']), M('flickr-four-captions.csv'), /must list exactly 5 non-empty one-line captions/, 2);
    await assertRejectsInput(flickrCsvToCaptions(M('flickr-no-split-column.csv'), join(tmp, 'f3'), ['test']), M('flickr-no-split-column.csv'), /header has no column 'split'/, 1);
    assert.ok(!existsSync(join(tmp, 'f2', 'test_caps.txt')), 'nothing half-written');
  });
});

describe('line formats (SST-2, TREC, MRPC, JSON lines)', () => {
  test('SST-2: bad label, missing column', () => {
    assertInputError(() => readSstFile(M('sst-bad-label.txt')), M('sst-bad-label.txt'), /expected a label 0 or 1 in column 2, found 'negative'/, 2);
    assertInputError(() => readSstFile(M('sst-missing-column.txt')), M('sst-missing-column.txt'), /missing column/, 2);
  });
  test('TREC: unknown coarse label, no label', () => {
    assertInputError(() => readTrecFile(M('trec-unknown-label.txt')), M('trec-unknown-label.txt'), /unknown TREC label 'WHAT': expected one of ABBR, DESC, ENTY, HUM, LOC, NUM/, 2);
    assertInputError(() => readTrecFile(M('trec-no-colon.txt')), M('trec-no-colon.txt'), /expected "LABEL:fine question", found no ':'/, 2);
  });
  test('MRPC: missing column; dev_ids that do not belong to the train file; a malformed dev id line', () => {
    assertInputError(() => readMsrParaphrase(M('mrpc-missing-column.txt')), M('mrpc-missing-column.txt'), /header has no column '#2 String' \(missing column\)/, 1);
    const train = join(ROOT, 'mrpc', 'msr_paraphrase_train.txt');
    assertInputError(() => glueMrpcPairs(train, M('dev-ids-foreign.tsv'), 'train'), M('dev-ids-foreign.tsv'), /2 dev pairs listed but 1 of them are in .*: the two files do not belong together/);
    assertInputError(() => glueMrpcPairs(train, M('dev-ids-bad.tsv'), 'train'), M('dev-ids-bad.tsv'), /expected two tab-separated numeric sentence ids, found '108 109'/, 2);
  });
  test('JSON lines: label out of range', () => {
    assertInputError(() => loadBinaryJsonl(M('jsonl-bad-label.jsonl'), 'GitHubIssues', 'test'), M('jsonl-bad-label.jsonl'), /expected a binary label \(0, 1\), found '2'/, 2);
  });
});

describe('tar (archives made by GNU tar)', { skip: gnuTar() ? false : 'GNU tar is not on PATH (needed to build the archives)' }, () => {
  let src: string;
  const longDir = 'STS/' + 'a-rather-long-folder-name-'.repeat(3) + 'end';
  before(() => {
    src = join(tmp, 'tarsrc');
    mkdirSync(join(src, 'data', longDir), { recursive: true });
    writeFileSync(join(src, 'data', longDir, 'STS.input.' + 'x'.repeat(60) + '.txt'), 'a\tb\n');
    writeFileSync(join(src, 'data', 'STS', 'small.txt'), Buffer.alloc(3000, 0x61));
    writeFileSync(join(src, 'data', 'empty.txt'), '');
  });
  for (const format of ['gnu', 'ustar', 'pax']) {
    test(`${format} format: long names, empty and multi-block files extract byte for byte`, async () => {
      const t = join(tmp, `a-${format}.tar`);
      makeTar(t, src, [`--format=${format}`, 'data']);
      const out = join(tmp, `out-${format}`);
      const r = await extractTar(t, out);
      const files = [join('data', longDir, 'STS.input.' + 'x'.repeat(60) + '.txt'), 'data/STS/small.txt', 'data/empty.txt'];
      assert.deepEqual([...r.files].sort(), [...files].sort());
      for (const f of files) assert.ok(readFileSync(join(out, f)).equals(readFileSync(join(src, f))), f);
    });
  }
  test('a damaged header, a truncated archive and unsafe paths are refused with the byte offset', async () => {
    const t = join(tmp, 'ok.tar');
    makeTar(t, src, ['data/STS/small.txt']);
    const bytes = readFileSync(t);
    const bad = Buffer.from(bytes);
    bad[10] ^= 0xff;
    await assertRejectsInput(extractTar(write('bad.tar', bad), join(tmp, 'x1')), join(tmp, 'bad.tar'), /corrupt tar header at byte 0: checksum mismatch/);
    await assertRejectsInput(extractTar(write('cut.tar', bytes.subarray(0, 512 + 1000)), join(tmp, 'x2')), join(tmp, 'cut.tar'), /truncated tar archive: entry 'data\/STS\/small.txt' at byte 0 needs 3000 bytes/);
    const up = join(tmp, 'up.tar');
    makeTar(up, join(src, 'data'), ['-P', '../data/empty.txt']);
    await assertRejectsInput(extractTar(up, join(tmp, 'x3')), up, /unsafe path '\.\.\/data\/empty\.txt' at byte 0: '\.\.' would leave the destination/);
    const abs = join(tmp, 'abs.tar');
    makeTar(abs, '/', ['-P', join(src, 'data', 'empty.txt')]);
    await assertRejectsInput(extractTar(abs, join(tmp, 'x4')), abs, /unsafe path '\/.*empty\.txt' at byte 0: absolute paths are not extracted/);
    assert.ok(!existsSync(join(tmp, 'x4')) || readdirSync(join(tmp, 'x4')).length === 0);
  });
});

describe('parquet (files made by hyparquet-writer)', () => {
  const cols = (labels: bigint[], t1: (string | null)[] = labels.map((_, i) => `q${i}`)) => ({
    text1: { name: 'question', data: t1 },
    text2: { name: 'sentence', data: labels.map((_, i) => `s${i}`) },
    label: { name: 'label', data: labels },
  });
  const spec = { text1: 'question', text2: 'sentence', label: 'label', positive: 0 as const };
  test('labels map to ours (QNLI: 0 = entailment -> 1), int64 labels included', async () => {
    const f = join(tmp, 'qnli.parquet');
    writePairsParquet(f, cols([0n, 1n, 1n, 0n]));
    const out = join(tmp, 'qnli.jsonl');
    assert.equal(await parquetToPairsJsonl(f, spec, out), 4);
    const rows = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(rows, [0, 1, 2, 3].map((i) => ({ text1: `q${i}`, text2: `s${i}`, label: [1, 0, 0, 1][i], idx: i })));
  });
  test('not a parquet file, a missing column, an unlabelled (-1) row, a null text', async () => {
    const junk = write('junk.parquet', 'PAR1 this is not parquet');
    await assertRejectsInput(readParquetColumns(junk, ['label']), junk, /not a parquet file \(no PAR1 magic at both ends/);
    const f = join(tmp, 'p1.parquet');
    writePairsParquet(f, cols([0n, 1n]));
    await assertRejectsInput(readParquetColumns(f, ['question', 'answer']), f, /parquet file has no column 'answer' \(missing column\): found question, sentence, label, idx/);
    const g = join(tmp, 'p2.parquet');
    writePairsParquet(g, cols([0n, -1n]));
    await assertRejectsInput(parquetToPairsJsonl(g, spec, join(tmp, 'p2.jsonl')), g, /row 1: label -1 is not 0 or 1 \(-1 marks an unlabelled GLUE test split\)/);
    assert.ok(!existsSync(join(tmp, 'p2.jsonl')), 'nothing half-written');
    const h = join(tmp, 'p3.parquet');
    writePairsParquet(h, cols([0n, 1n], ['q0', null]));
    await assertRejectsInput(parquetToPairsJsonl(h, spec, join(tmp, 'p3.jsonl')), h, /row 1: question and sentence must be strings, found object and string/);
  });
  test('a codec hyparquet cannot read (GZIP) is refused by name before any row is read', async () => {
    const f = join(tmp, 'gzip.parquet');
    writePairsParquet(f, cols([0n, 1n]), { codec: 'GZIP', compressors: { GZIP: (b) => gzipSync(b) } });
    await assert.rejects(readParquetColumns(f, ['question', 'sentence', 'label']), (e: unknown) => {
      assert.ok(e instanceof UnavailableError, String(e));
      assert.match(e.message, /column 'question' is GZIP-compressed; hyparquet reads UNCOMPRESSED and SNAPPY pages only/);
      return true;
    });
  });
});
