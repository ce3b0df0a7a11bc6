/**
 * The Hub path of lib/data against the two local servers of test/helpers/fake-hub.ts, which answer
 * as huggingface.co and its CDN do (HEAD/GET on /datasets/<repo>/resolve/<rev>/<file>,
 * X-Repo-Commit, ETag; big files as a 302 to the CDN host with X-Linked-Etag / X-Linked-Size, the
 * token never forwarded there). It serves the four data repositories
 * with fixture files: senteval.tar made by GNU tar, parquet splits made by hyparquet-writer with
 * the Hub's column names and label conventions, and csv / text files.
 *
 * Checked: the first ensureDataset downloads and prepares, the loaders then read the cache; the
 * second call makes no request; HF_HUB_OFFLINE with an empty cache is a clear error saying how to
 * provide the data; a corrupt archive leaves nothing behind. With ANGLE_DATA_DIR, a senteval.tar
 * and GLUE parquet built from the real files must load exactly as the local files do.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  checkDatasets,
  ensureDataset,
  glueMrpcPairs,
  loadFlickr30kCaptions,
  loadGithubIssues,
  loadMrpc,
  loadNliTriplets,
  loadQnli,
  loadQqp,
  loadSickRelatedness,
  loadStsBenchmark,
  loadStsYear,
  loadTransferTask,
  loadWiki1m,
  readMsrParaphrase,
  STS_YEARS,
  TRANSFER_TASKS,
  type LoadOptions,
  type ScoredPair,
} from '../lib/data/index.js';
import { InputError, UnavailableError } from '../lib/util/errors.js';
import { gnuTar, makeTar, writePairsParquet } from './fixtures/data/build.js';
import { DATA_DIR } from './helpers/env.js';
import { startFakeHub, type FakeHub as SharedHub } from './helpers/fake-hub.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'data');
const ROOT = join(FIXTURES, 'root');
const COMMIT = 'c0ffee0000000000000000000000000000000001';
/** Files at least this big are served the way the Hub serves LFS files: a redirect to a CDN URL. */
const LFS_MIN = 2048;


/** The data-set repos of the shared fake Hub (test/helpers/fake-hub.ts), set as "org/name" -> file -> bytes. */
class DatasetRepos extends Map<string, Map<string, Buffer>> {
  constructor(private readonly hub: SharedHub) {
    super();
  }
  override set(id: string, files: Map<string, Buffer>): this {
    super.set(id, files);
    // Big files are LFS-backed (a 302 to the CDN host), small ones stored in git, as on the Hub.
    this.hub.repos.set(`dataset:${id}`, { refs: { main: COMMIT }, files: Object.fromEntries(files), storage: (f) => ((files.get(f)?.length ?? 0) >= LFS_MIN ? 'lfs' : 'git') });
    return this;
  }
}

interface FakeHub {
  endpoint: string;
  repos: DatasetRepos;
  /** "hub HEAD /datasets/..." or "cdn GET /repos/..." per request. */
  readonly requests: string[];
  clearRequests(): void;
  close(): Promise<void>;
}

async function startDataHub(): Promise<FakeHub> {
  const hub = await startFakeHub();
  return {
    endpoint: hub.endpoint,
    repos: new DatasetRepos(hub),
    get requests() {
      return hub.requests.map((r) => `${r.server} ${r.method} ${r.path}`);
    },
    clearRequests: () => void (hub.requests.length = 0),
    close: () => hub.close(),
  };
}

/** SentEval's data/downstream layout from a data root laid out as lib/data/registry.ts describes. */
function sentevalTar(out: string, root: string, prefix: string): void {
  const present = ['sts', 'stsb', 'sick', 'senteval-transfer'].filter((d) => existsSync(join(root, d)));
  makeTar(out, root, [
    '--exclude=SOURCE.txt',
    `--transform=s,^sts/,${prefix}STS/,`,
    `--transform=s,^stsb,${prefix}STS/STSBenchmark,`,
    `--transform=s,^sick,${prefix}SICK,`,
    `--transform=s,^senteval-transfer/,${prefix},`,
    ...present,
  ]);
}

/** A GLUE-style parquet split from pairs whose score is our label (1 = paraphrase/duplicate/entailment). */
function glueParquet(file: string, names: [string, string, string], pairs: readonly ScoredPair[], positive: 0 | 1): Buffer {
  mkdirSync(dirname(file), { recursive: true });
  writePairsParquet(file, {
    text1: { name: names[0], data: pairs.map((p) => p.a) },
    text2: { name: names[1], data: pairs.map((p) => p.b) },
    label: { name: names[2], data: pairs.map((p) => BigInt(p.score === 1 ? positive : 1 - positive)) },
  });
  return readFileSync(file);
}

const texts = (pairs: readonly ScoredPair[]) => pairs.map((p) => [p.a, p.b, p.score]);

const TAR = gnuTar() ? false : 'GNU tar is not on PATH (needed to build senteval.tar)';

describe('Hub download path against a local server', { skip: TAR }, () => {
  let hub: FakeHub;
  let tmp: string;
  let cacheDir: string;
  let emptyRoot: string;
  /** Loader options that see only the cache (an empty data root, so ANGLE_DATA_DIR cannot interfere). */
  let cached: LoadOptions;
  let hubOpts: { endpoint: string; cacheDir: string; offline: boolean; token: string; dataDir: string };
  const FIX = { dataDir: ROOT, useCache: false, allowSizeMismatch: true };

  before(async () => {
    hub = await startDataHub();
    tmp = mkdtempSync(join(tmpdir(), 'angle-data-hub-'));
    cacheDir = join(tmp, 'hf', 'hub');
    emptyRoot = join(tmp, 'empty-root');
    mkdirSync(emptyRoot);
    cached = { dataDir: emptyRoot, cacheDir, allowSizeMismatch: true };
    hubOpts = { endpoint: hub.endpoint, cacheDir, offline: false, token: '', dataDir: emptyRoot };

    const build = join(tmp, 'build');
    mkdirSync(build);
    sentevalTar(join(build, 'senteval.tar'), ROOT, 'downstream/');
    hub.repos.set(
      'princeton-nlp/datasets-for-simcse',
      new Map([
        ['senteval.tar', readFileSync(join(build, 'senteval.tar'))],
        ['nli_for_simcse.csv', readFileSync(join(ROOT, 'nli', 'nli_for_simcse.csv'))],
        ['wiki1m_for_simcse.txt', Buffer.from('first sentence\nsecond sentence\n\nfourth sentence\n')],
      ]),
    );
    // GLUE with the Hub's names and label conventions (qnli: 0 = entailment).
    const mrpcTrain = loadMrpc('train', FIX).pairs;
    const glue = new Map<string, Buffer>([
      ['mrpc/train-00000-of-00001.parquet', glueParquet(join(build, 'mrpc-train.parquet'), ['sentence1', 'sentence2', 'label'], mrpcTrain, 1)],
      ['mrpc/validation-00000-of-00001.parquet', glueParquet(join(build, 'mrpc-dev.parquet'), ['sentence1', 'sentence2', 'label'], loadMrpc('dev', FIX).pairs, 1)],
      ['mrpc/test-00000-of-00001.parquet', glueParquet(join(build, 'mrpc-test.parquet'), ['sentence1', 'sentence2', 'label'], loadMrpc('test', FIX).pairs, 1)],
      ['qnli/train-00000-of-00001.parquet', glueParquet(join(build, 'qnli-train.parquet'), ['question', 'sentence', 'label'], [...loadQnli('dev', FIX).pairs].reverse(), 0)],
      ['qnli/validation-00000-of-00001.parquet', glueParquet(join(build, 'qnli-dev.parquet'), ['question', 'sentence', 'label'], loadQnli('dev', FIX).pairs, 0)],
      ['qqp/train-00000-of-00001.parquet', glueParquet(join(build, 'qqp-train.parquet'), ['question1', 'question2', 'is_duplicate'], loadQqp('dev', FIX).pairs.slice(0, 2), 1)],
      ['qqp/validation-00000-of-00001.parquet', glueParquet(join(build, 'qqp-dev.parquet'), ['question1', 'question2', 'is_duplicate'], loadQqp('dev', FIX).pairs, 1)],
    ]);
    hub.repos.set('nyu-mll/glue', glue);
    const gis = loadGithubIssues('test', FIX).pairs;
    hub.repos.set(
      'WhereIsAI/github-issue-similarity',
      new Map(['train', 'valid', 'test'].map((s) => [`data/${s}-00000-of-00001.parquet`, glueParquet(join(build, `gis-${s}.parquet`), ['text1', 'text2', 'label'], gis, 1)])),
    );
    hub.repos.set('nlphuji/flickr30k', new Map([['flickr_annotations_30k.csv', readFileSync(join(FIXTURES, 'hub', 'flickr_annotations_30k.csv'))]]));
  });
  after(async () => {
    await hub.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('senteval.tar: downloaded once (an LFS redirect), extracted, then STS13, STS-B, SICK, MR and TREC load from the cache', async () => {
    hub.clearRequests();
    const r = await ensureDataset('STS13', hubOpts);
    assert.deepEqual(r.splits, { test: 'hub' });
    assert.equal(r.commit, COMMIT);
    assert.equal(r.preparedDir, join(cacheDir, 'datasets--princeton-nlp--datasets-for-simcse', 'angle-extracted', COMMIT, 'senteval', 'STS', 'STS13-en-test'));
    // HEAD on the Hub (a 302 naming the LFS blob), then the blob from the CDN host.
    assert.equal(hub.requests.length, 2);
    assert.match(hub.requests[0], /^hub HEAD \/datasets\/princeton-nlp\/datasets-for-simcse\/resolve\/main\/senteval\.tar$/);
    assert.match(hub.requests[1], /^cdn GET \/repos\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/);

    const fromCache = loadStsYear('STS13', cached);
    assert.ok(fromCache.every((s) => s.where === 'cache'));
    assert.deepEqual(fromCache.map((s) => texts(s.pairs)), loadStsYear('STS13', FIX).map((s) => texts(s.pairs)));

    hub.clearRequests();
    for (const id of ['STSBenchmark', 'SICKRelatedness', 'MR', 'TREC'] as const) {
      const e = await ensureDataset(id, hubOpts);
      assert.ok(Object.values(e.splits).every((w) => w === 'cache'), `${id}: ${JSON.stringify(e.splits)}`);
    }
    assert.deepEqual(hub.requests, [], 'the archive is downloaded and extracted once');
    assert.deepEqual(texts(loadStsBenchmark('test', cached).pairs), texts(loadStsBenchmark('test', FIX).pairs));
    assert.deepEqual(texts(loadSickRelatedness('test', cached).pairs), texts(loadSickRelatedness('test', FIX).pairs));
    assert.deepEqual(loadTransferTask('MR', 'all', cached).examples.map((x) => [x.text, x.label]), loadTransferTask('MR', 'all', FIX).examples.map((x) => [x.text, x.label]));
    assert.equal(loadTransferTask('TREC', 'test', cached).where, 'cache');
  });

  test('the second call makes no request', async () => {
    await ensureDataset('STS13', hubOpts);
    hub.clearRequests();
    assert.deepEqual((await ensureDataset('STS13', hubOpts)).splits, { test: 'cache' });
    assert.deepEqual(hub.requests, []);
  });

  test('GLUE and GitHub Issues parquet: converted once, labels mapped to 1 = paraphrase / duplicate / entailment', async () => {
    hub.clearRequests();
    assert.deepEqual((await ensureDataset('QNLI', hubOpts)).splits, { train: 'hub', dev: 'hub' });
    assert.deepEqual(hub.requests.filter((r) => r.startsWith('hub HEAD /datasets/')).length, 2);
    const dev = loadQnli('dev', cached);
    assert.equal(dev.where, 'cache');
    assert.deepEqual(texts(dev.pairs), texts(loadQnli('dev', FIX).pairs), 'the Hub stores 0 for entailment; ours is 1');
    assert.deepEqual(texts(loadQnli('train', cached).pairs), texts([...loadQnli('dev', FIX).pairs].reverse()));

    await ensureDataset('MRPC', hubOpts);
    for (const s of ['train', 'dev', 'test'] as const) assert.deepEqual(texts(loadMrpc(s, cached).pairs), texts(loadMrpc(s, FIX).pairs), s);
    await ensureDataset('QQP', hubOpts);
    assert.deepEqual(texts(loadQqp('dev', cached).pairs), texts(loadQqp('dev', FIX).pairs));
    await ensureDataset('GitHubIssues', hubOpts);
    assert.deepEqual(texts(loadGithubIssues('valid', cached).pairs), texts(loadGithubIssues('test', FIX).pairs));

    hub.clearRequests();
    assert.deepEqual((await ensureDataset('QNLI', hubOpts)).splits, { train: 'cache', dev: 'cache' });
    assert.deepEqual(hub.requests, []);
  });

  test('Flickr30k csv: the test and val rows become 5-caption groups in csv order', async () => {
    await ensureDataset('Flickr30k', hubOpts);
    const t = loadFlickr30kCaptions('test', cached);
    assert.deepEqual([t.where, t.images, t.captions.length], ['cache', 2, 10]);
    assert.equal(t.captions[0], 'The man with pierced ears is wearing glasses and an orange hat.');
    assert.equal(t.captions[5], 'A "quoted" caption, with a comma.');
    assert.equal(loadFlickr30kCaptions('dev', cached).captions[4], 'A girl going into a wooden building.');
  });

  test('NLI and Wiki1M are read from the snapshot as they are; a Hub Wiki1M copy is the corpus, not a sample', async () => {
    await ensureDataset('NLI', hubOpts);
    const nli = loadNliTriplets(cached);
    assert.equal(nli.where, 'cache');
    assert.deepEqual(nli.triplets.map((t) => [t.sent0, t.sent1, t.hardNeg]), loadNliTriplets(FIX).triplets.map((t) => [t.sent0, t.sent1, t.hardNeg]));
    await ensureDataset('Wiki1M', hubOpts);
    assert.throws(() => loadWiki1m({ ...cached, allowSizeMismatch: false }), /Wiki1M train: read 4 sentences but expected 1000000/);
    const w = loadWiki1m(cached);
    assert.deepEqual([w.sample, w.sentences], [false, ['first sentence', 'second sentence', '', 'fourth sentence']]);
  });

  test('a split under the data root is used as it is; only the others are downloaded', async () => {
    const r = await ensureDataset('QNLI', { ...hubOpts, dataDir: ROOT });
    assert.deepEqual(r.splits, { train: 'cache', dev: 'local' });
    assert.equal(r.localDir, join(ROOT, 'qnli'));
  });

  test('npm run data -- check sees the cached copies', () => {
    const rows = checkDatasets({ ...cached, ids: ['STS13', 'QNLI', 'Flickr30k', 'SentEvalMRPC'] });
    assert.deepEqual(rows.map((r) => [r.id, r.split, r.status, r.rows]), [
      ['STS13', 'test', 'cache', 5],
      ['QNLI', 'train', 'cache', 2],
      ['QNLI', 'dev', 'cache', 2],
      ['Flickr30k', 'test', 'cache', 2],
      ['Flickr30k', 'dev', 'cache', 1],
      ['SentEvalMRPC', 'train', 'missing', undefined],
      ['SentEvalMRPC', 'test', 'missing', undefined],
    ]);
  });

  test('npm run data -- download: fetches into the cache, says where each split came from, exits 1 when one fails', async () => {
    const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'data.ts');
    const env = { ...process.env, HF_ENDPOINT: hub.endpoint, HF_HOME: join(tmp, 'cli-home'), HF_HUB_CACHE: join(tmp, 'cli-cache'), HF_HUB_OFFLINE: '0', HF_TOKEN: '', ANGLE_DATA_DIR: '' };
    // Asynchronous: the server answering the child runs in this process.
    const child = spawn(process.execPath, ['--import', 'tsx', script, 'download', 'QNLI', 'SentEvalMRPC', '--data-dir', emptyRoot], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    assert.equal(code, 1, stderr + stdout);
    assert.match(stdout, new RegExp(`^QNLI: train: hub, dev: hub -> ${join(tmp, 'cli-cache', 'datasets--nyu-mll--glue', 'angle-prepared', COMMIT, 'QNLI')}$`, 'm'));
    // The fixture archive has no MRPC/ folder: a clear failure for that data set only.
    assert.match(stdout, /^SentEvalMRPC: FAILED .*senteval\.tar: senteval\.tar has no folder MRPC\/ \(expected SentEvalMRPC's files there\)$/m);
    assert.match(stderr, /converting nyu-mll\/glue\/qnli\/validation-00000-of-00001\.parquet/);
  });

  test('HF_HUB_OFFLINE with an empty cache: a clear error saying how to provide the data, and no request', async () => {
    const emptyCache = join(tmp, 'empty-cache');
    hub.clearRequests();
    await assert.rejects(ensureDataset('QQP', { ...hubOpts, cacheDir: emptyCache, offline: true }), (e: unknown) => {
      assert.ok(e instanceof UnavailableError, String(e));
      assert.match(e.message, /QQP \(train, dev\): not under the data root and HF_HUB_OFFLINE is set and the Hugging Face cache .*empty-cache does not have qqp\/train-00000-of-00001\.parquet, qqp\/validation-00000-of-00001\.parquet of nyu-mll\/glue/);
      assert.match(e.message, /To provide it: train: put train\.tsv in .*empty-root\/qqp\/, or download it from the Hugging Face Hub \(dataset nyu-mll\/glue, qqp\/train-00000-of-00001\.parquet\) with `npm run data -- download QQP`/);
      assert.match(e.message, /run the download where the Hub is reachable \(HF_HUB_OFFLINE unset\) and copy its .*datasets--nyu-mll--glue folder here/);
      return true;
    });
    // The same from the environment, as .ci/run sets it.
    const saved = { HF_HUB_OFFLINE: process.env.HF_HUB_OFFLINE, HF_HUB_CACHE: process.env.HF_HUB_CACHE };
    process.env.HF_HUB_OFFLINE = '1';
    process.env.HF_HUB_CACHE = emptyCache;
    try {
      await assert.rejects(ensureDataset('Flickr30k', { dataDir: emptyRoot, endpoint: hub.endpoint, token: '' }), /Flickr30k \(test, dev\): not under the data root and HF_HUB_OFFLINE is set/);
      // A cache that has the files still works offline.
      process.env.HF_HUB_CACHE = cacheDir;
      assert.deepEqual((await ensureDataset('Flickr30k', { dataDir: emptyRoot, endpoint: hub.endpoint, token: '' })).splits, { test: 'cache', dev: 'cache' });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    assert.deepEqual(hub.requests, []);
  });

  test('a corrupt senteval.tar fails with the byte offset and leaves no extracted folder behind', async () => {
    const badCache = join(tmp, 'bad-cache');
    const good = hub.repos.get('princeton-nlp/datasets-for-simcse')!;
    const bad = Buffer.from(good.get('senteval.tar')!);
    bad[3] ^= 0xff; // a byte of the first entry's name: its header checksum no longer matches
    hub.repos.set('princeton-nlp/datasets-for-simcse', new Map([['senteval.tar', bad]]));
    try {
      await assert.rejects(ensureDataset('STS13', { ...hubOpts, cacheDir: badCache }), (e: unknown) => {
        assert.ok(e instanceof InputError, String(e));
        assert.match(e.message, /corrupt tar header at byte 0: checksum mismatch/);
        return true;
      });
    } finally {
      hub.repos.set('princeton-nlp/datasets-for-simcse', good);
    }
    const extracted = join(badCache, 'datasets--princeton-nlp--datasets-for-simcse', 'angle-extracted', COMMIT);
    assert.deepEqual(existsSync(extracted) ? readdirSync(extracted) : [], []);
  });
});

describe('real files through the Hub path', { skip: TAR || (DATA_DIR ? false : 'ANGLE_DATA_DIR is not set (point it at a data root such as shared/data)') }, () => {
  let hub: FakeHub;
  let tmp: string;
  let cached: LoadOptions;
  let hubOpts: { endpoint: string; cacheDir: string; offline: boolean; token: string; dataDir: string };
  const REAL = { dataDir: DATA_DIR, useCache: false };

  before(async () => {
    hub = await startDataHub();
    tmp = mkdtempSync(join(tmpdir(), 'angle-data-hub-real-'));
    const emptyRoot = join(tmp, 'empty-root');
    mkdirSync(emptyRoot);
    const cacheDir = join(tmp, 'hf', 'hub');
    cached = { dataDir: emptyRoot, cacheDir };
    hubOpts = { endpoint: hub.endpoint, cacheDir, offline: false, token: '', dataDir: emptyRoot };
    // As SimCSE's senteval.tar is unpacked inside data/downstream: STS/, SICK/, MR/, ... at the top.
    sentevalTar(join(tmp, 'senteval.tar'), DATA_DIR!, '');
    hub.repos.set('princeton-nlp/datasets-for-simcse', new Map([['senteval.tar', readFileSync(join(tmp, 'senteval.tar'))]]));
    const mrpc = join(DATA_DIR!, 'mrpc');
    const train = glueMrpcPairs(join(mrpc, 'msr_paraphrase_train.txt'), join(mrpc, 'dev_ids.tsv'), 'train');
    const names: [string, string, string] = ['sentence1', 'sentence2', 'label'];
    hub.repos.set(
      'nyu-mll/glue',
      new Map([
        ['mrpc/train-00000-of-00001.parquet', glueParquet(join(tmp, 'mrpc-train.parquet'), names, train, 1)],
        ['mrpc/validation-00000-of-00001.parquet', glueParquet(join(tmp, 'mrpc-dev.parquet'), names, readMsrParaphrase(join(mrpc, 'dev.tsv')).map((r) => r.pair), 1)],
        ['mrpc/test-00000-of-00001.parquet', glueParquet(join(tmp, 'mrpc-test.parquet'), names, readMsrParaphrase(join(mrpc, 'msr_paraphrase_test.txt')).map((r) => r.pair), 1)],
        ['qnli/validation-00000-of-00001.parquet', glueParquet(join(tmp, 'qnli-dev.parquet'), ['question', 'sentence', 'label'], loadQnli('dev', REAL).pairs, 0)],
      ]),
    );
  });
  after(async () => {
    await hub.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('every SentEval data set from senteval.tar loads exactly as the local files, with the known sizes', async () => {
    for (const id of [...STS_YEARS, 'STSBenchmark', 'SICKRelatedness', ...TRANSFER_TASKS] as const) await ensureDataset(id, hubOpts);
    for (const y of STS_YEARS) assert.deepEqual(loadStsYear(y, cached).map((s) => texts(s.pairs)), loadStsYear(y, REAL).map((s) => texts(s.pairs)), y);
    for (const s of ['train', 'dev', 'test'] as const) {
      assert.deepEqual(texts(loadStsBenchmark(s, cached).pairs), texts(loadStsBenchmark(s, REAL).pairs), `STS-B ${s}`);
      assert.deepEqual(texts(loadSickRelatedness(s, cached).pairs), texts(loadSickRelatedness(s, REAL).pairs), `SICK ${s}`);
    }
    for (const t of TRANSFER_TASKS) {
      for (const s of t === 'SST2' ? ['train', 'dev', 'test'] : t === 'TREC' || t === 'SentEvalMRPC' ? ['train', 'test'] : ['all']) {
        const a = loadTransferTask(t, s, cached);
        assert.equal(a.where, 'cache');
        assert.deepEqual(a.examples.map((x) => [x.text, x.text2, x.label]), loadTransferTask(t, s, REAL).examples.map((x) => [x.text, x.text2, x.label]), `${t} ${s}`);
      }
    }
  });

  test('GLUE MRPC (3668 / 408 / 1725) and QNLI dev (5463) from Hub-layout parquet equal the local files', async () => {
    await ensureDataset('MRPC', hubOpts);
    await ensureDataset('QNLI', { ...hubOpts, splits: ['dev'] });
    for (const s of ['train', 'dev', 'test'] as const) {
      const a = loadMrpc(s, cached);
      assert.equal(a.where, 'cache');
      assert.deepEqual(texts(a.pairs), texts(loadMrpc(s, REAL).pairs), s);
    }
    assert.deepEqual(texts(loadQnli('dev', cached).pairs), texts(loadQnli('dev', REAL).pairs));
  });
});
