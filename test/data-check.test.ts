/**
 * `npm run data -- check` (scripts/data.ts over lib/data/check.ts) and the dataset cards: on the
 * real data root every data set available here is found with its known size and the absent ones
 * are reported missing with instructions (exit 0); a present split that fails its loader makes
 * the command exit 1. The child processes get an empty Hugging Face cache so a developer's cache
 * cannot change what they see.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkDatasets, DATASET_IDS, DATASETS, datasetCard, datasetCardsTable, DATASET_CARD_TEXT } from '../lib/data/index.js';
import { showDatasetCards } from '../lib/notebook/data-cards.js';
import { DATA_DIR } from './helpers/env.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, 'fixtures', 'data', 'root');

let emptyCache: string;
before(() => {
  emptyCache = mkdtempSync(join(tmpdir(), 'angle-check-cache-'));
});
after(() => rmSync(emptyCache, { recursive: true, force: true }));

function runData(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(HERE, '..', 'scripts', 'data.ts'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, HF_HUB_CACHE: emptyCache, HF_HUB_OFFLINE: '1', ANGLE_DATA_DIR: '' },
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('check on the real data root', { skip: DATA_DIR ? false : 'ANGLE_DATA_DIR is not set (point it at a data root such as shared/data)' }, () => {
  test('every data set available here with its expected count; NLI, QQP, QNLI train, GitHub Issues missing; Wiki1M a sample', () => {
    const rows = checkDatasets({ dataDir: DATA_DIR, useCache: false });
    const byStatus = (s: string) => rows.filter((r) => r.status === s).map((r) => `${r.id}/${r.split}`);
    assert.deepEqual(byStatus('missing'), ['QNLI/train', 'QQP/train', 'QQP/dev', 'GitHubIssues/train', 'GitHubIssues/valid', 'GitHubIssues/test', 'NLI/train']);
    assert.deepEqual(byStatus('sample'), ['Wiki1M/train']);
    assert.deepEqual(byStatus('invalid'), []);
    for (const r of rows.filter((x) => x.status === 'local')) assert.equal(r.rows, r.expected, `${r.id} ${r.split}`);
    assert.equal(byStatus('local').length, 29);
    const sts = Object.fromEntries(rows.filter((r) => r.id.startsWith('STS1')).map((r) => [r.id, r.rows]));
    assert.deepEqual(sts, { STS12: 3108, STS13: 1500, STS14: 3750, STS15: 3000, STS16: 1186 });
    for (const r of rows.filter((x) => x.status === 'missing')) assert.match(r.note ?? '', /npm run data -- download /);
    assert.equal(rows.find((r) => r.id === 'Wiki1M')!.rows, 11914);
  });
  test('the command prints the table and the instructions and exits 0', () => {
    const r = runData(['check', '--data-dir', DATA_DIR!]);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^STS12\s+test\s+local\s+3108\s+3108\s+scored pairs\s+\S+sts\/STS12-en-test$/m);
    assert.match(r.stdout, /^MRPC\s+train\s+local\s+3668\s+3668\s+pairs/m);
    assert.match(r.stdout, /^QQP\s+dev\s+missing\s+40430\s+pairs$/m);
    assert.match(r.stdout, /^NLI train \(missing\): put nli_for_simcse\.csv in \S+\/nli\/, or download it from the Hugging Face Hub \(dataset princeton-nlp\/datasets-for-simcse, nli_for_simcse\.csv\) with `npm run data -- download NLI`/m);
    assert.match(r.stdout, /^Wiki1M train \(sample\): partial copy, not the corpus: 11,914 complete lines/m);
    assert.match(r.stdout, /^data: 37 splits: 29 local, 0 cache, 1 sample, 7 missing, 0 invalid$/m);
  });
});

describe('check on malformed or undersized data', () => {
  test('present splits that fail their size check are invalid (exit 1); --allow-size-mismatch accepts them (exit 0)', () => {
    const strict = runData(['check', '--data-dir', ROOT, '--ids', 'STSBenchmark,QNLI']);
    assert.equal(strict.status, 1, strict.stderr);
    assert.match(strict.stdout, /^STSBenchmark\s+test\s+invalid\s+1379/m);
    assert.match(strict.stdout, /^STSBenchmark test \(invalid\): \S+sts-test\.csv: STSBenchmark test: read 3 scored pairs but expected 1379/m);
    assert.match(strict.stdout, /^QNLI\s+train\s+missing/m);
    const lax = runData(['check', '--data-dir', ROOT, '--ids', 'STSBenchmark,QNLI', '--allow-size-mismatch', '--json']);
    assert.equal(lax.status, 0, lax.stderr);
    const rows = JSON.parse(lax.stdout) as { id: string; split: string; status: string; rows?: number }[];
    assert.deepEqual(rows.map((r) => [r.id, r.split, r.status, r.rows]), [
      ['STSBenchmark', 'train', 'local', 2],
      ['STSBenchmark', 'dev', 'local', 1],
      ['STSBenchmark', 'test', 'local', 3],
      ['QNLI', 'train', 'missing', undefined],
      ['QNLI', 'dev', 'local', 2],
    ]);
  });
  test('an unknown data set id is a usage error (exit 2)', () => {
    const r = runData(['check', '--ids', 'STS99']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /unknown data set 'STS99': expected one of STS12, STS13/);
  });
});

describe('dataset cards', () => {
  test('every data set has a card whose split sizes are the registry\'s', () => {
    assert.deepEqual(Object.keys(DATASET_CARD_TEXT).sort(), [...DATASET_IDS].sort());
    for (const id of DATASET_IDS) {
      const c = datasetCard(id);
      for (const k of ['source', 'licence', 'citation', 'usedIn', 'hub'] as const) assert.ok(c[k].length > 10, `${id} ${k}`);
      assert.deepEqual(c.splits.map((s) => [s.split, s.rows]), Object.entries(DATASETS[id].splits).map(([s, e]) => [s, e.rows]));
    }
    assert.deepEqual(datasetCard('STSBenchmark').splits.map((s) => s.rows), [5749, 1500, 1379]);
    assert.equal(datasetCard('GitHubIssues').licence, 'MIT (Hub repository)');
  });
  test('the cards render as one table row per data set', () => {
    const t = datasetCardsTable(['SICKRelatedness', 'MRPC']);
    assert.equal(t.rows.length, 2);
    assert.deepEqual(t.rows[0].slice(0, 2), ['SICKRelatedness: SICK relatedness (SICK-R)', 'train 4,500 scored pairs; dev 500 scored pairs; test 4,927 scored pairs']);
    const lines: string[] = [];
    const log = console.log;
    console.log = (s: string) => void lines.push(s);
    try {
      showDatasetCards(['MRPC']);
    } finally {
      console.log = log;
    }
    assert.match(lines.join('\n'), /MRPC: Microsoft Research Paraphrase Corpus \(GLUE MRPC\)\s+train 3,668 pairs; dev 408 pairs; test 1,725 pairs/);
  });
});
