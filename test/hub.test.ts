/**
 * lib/models/hub against a real HTTP server on 127.0.0.1 that speaks the Hub's download protocol
 * (resolve URLs, X-Repo-Commit / ETag / X-Linked-Etag headers, LFS files redirected to a second
 * "CDN" server) and serves the golden bert-tiny model files. Needs ANGLE_GOLDEN_DIR (a golden
 * set such as .../golden/bert-tiny-seed1234); the server tests skip with a reason without it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';

import { initBackend } from '../lib/backend/index.js';
import { hubSettings, isHubId, repoCacheDir, resolveRepoFiles } from '../lib/hub/index.js';
import { loadModel } from '../lib/models/auto.js';
import { InputError, UnavailableError } from '../lib/util/errors.js';
import { GOLDEN_DIR } from './helpers/env.js';

const MODEL_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt'];
const COMMIT_A = 'a'.repeat(8) + '0123456789abcdef0123456789abcdef';
const COMMIT_B = 'b'.repeat(8) + 'fedcba9876543210fedcba9876543210';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const gitSha1 = (b: Buffer) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

/** The golden model directory, or undefined after marking the test skipped. */
function goldenModelDir(t: TestContext): string | undefined {
  const dir = GOLDEN_DIR;
  if (!dir) {
    t.skip('no encoder golden set (ANGLE_GOLDEN_DIR, e.g. golden/bert-tiny-seed1234, or ../shared beside the repository)');
    return undefined;
  }
  return join(dir, 'model');
}

interface FakeRepo {
  /** Branch or tag -> commit; commit hashes themselves are also accepted as revisions. */
  refs: Record<string, string>;
  files: Record<string, Buffer>;
  /** Files served like LFS: a 302 from the Hub to the CDN with X-Linked-Etag. */
  lfs?: Set<string>;
  /** When set, requests without exactly this bearer token get 401. */
  token?: string;
  /** Files whose body is cut off half way (the connection is destroyed). */
  truncate?: Set<string>;
  /** Files whose announced etag is the hash of other bytes. */
  lie?: Set<string>;
}

interface Req {
  server: 'hub' | 'cdn';
  path: string;
  auth?: string;
}

interface FakeHub {
  endpoint: string;
  repos: Map<string, FakeRepo>;
  requests: Req[];
  close(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function url(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A Hub and a separate-origin CDN, both real HTTP servers. Keys of `repos`: "model:org/name". */
async function startFakeHub(): Promise<FakeHub> {
  const repos = new Map<string, FakeRepo>();
  const requests: Req[] = [];
  const blobs = new Map<string, { data: Buffer; truncate: boolean }>();

  const cdn = await listen((req, res) => {
    requests.push({ server: 'cdn', path: req.url ?? '', auth: req.headers.authorization });
    const blob = blobs.get((req.url ?? '').replace(/^\/blob\//, ''));
    if (!blob) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': blob.data.length, etag: '"cdn-etag-not-a-hash"' });
    if (blob.truncate) {
      res.write(blob.data.subarray(0, blob.data.length >> 1), () => res.destroy());
      return;
    }
    res.end(blob.data);
  });

  const hub = await listen((req, res) => {
    requests.push({ server: 'hub', path: req.url ?? '', auth: req.headers.authorization });
    const m = /^\/(datasets\/)?([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(req.url ?? '');
    if (!m) return void res.writeHead(404, { 'x-error-code': 'RepoNotFound' }).end();
    const repo = repos.get(`${m[1] ? 'dataset' : 'model'}:${m[2]}`);
    if (!repo) return void res.writeHead(404, { 'x-error-code': 'RepoNotFound' }).end();
    if (repo.token && req.headers.authorization !== `Bearer ${repo.token}`) return void res.writeHead(401).end();
    const rev = decodeURIComponent(m[3]);
    const commit = repo.refs[rev] ?? (Object.values(repo.refs).includes(rev) ? rev : undefined);
    if (!commit) return void res.writeHead(404, { 'x-error-code': 'RevisionNotFound' }).end();
    const file = m[4].split('/').map(decodeURIComponent).join('/');
    const data = repo.files[file];
    if (!data) {
      return void res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'x-repo-commit': commit }).end('Entry not found');
    }
    const truncate = repo.truncate?.has(file) ?? false;
    if (repo.lfs?.has(file)) {
      const oid = sha256(repo.lie?.has(file) ? Buffer.concat([data, Buffer.from('x')]) : data);
      blobs.set(oid, { data, truncate });
      res.writeHead(302, {
        location: `${url(cdn)}/blob/${oid}`,
        'x-repo-commit': commit,
        'x-linked-etag': `"${oid}"`,
        'x-linked-size': String(data.length),
        etag: 'W/"hub-page-etag"',
      });
      return void res.end();
    }
    res.writeHead(200, { 'x-repo-commit': commit, etag: `"${gitSha1(data)}"`, 'content-length': data.length });
    res.end(data);
  });

  return {
    endpoint: url(hub),
    repos,
    requests,
    close: async () => {
      await Promise.all([hub, cdn].map((s) => new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections()))));
    },
  };
}

function modelFiles(dir: string): Record<string, Buffer> {
  return Object.fromEntries(MODEL_FILES.map((f) => [f, readFileSync(join(dir, f))]));
}

function modelRepo(dir: string, extra: Partial<FakeRepo> = {}): FakeRepo {
  return { refs: { main: COMMIT_A }, files: modelFiles(dir), lfs: new Set(['model.safetensors']), ...extra };
}

/** Every path under `dir` (files and links), relative, sorted. */
function walk(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(join(dir, e.name), rel));
    else out.push(rel);
  }
  return out.sort();
}

/** A fake Hub and a temp HF_HOME for one test; both are removed when the test ends. */
async function setup(t: TestContext): Promise<{ hub: FakeHub; home: string; cacheDir: string; model: string } | undefined> {
  const model = goldenModelDir(t);
  if (!model) return undefined;
  const hub = await startFakeHub();
  const home = await mkdtemp(join(tmpdir(), 'hub-test-'));
  t.after(async () => {
    await hub.close();
    await rm(home, { recursive: true, force: true });
  });
  return { hub, home, cacheDir: hubSettings({ HF_HOME: home }).cacheDir, model };
}

test('isHubId: id-shaped strings that are not local paths', () => {
  assert.equal(isHubId('bert-base-uncased'), true);
  assert.equal(isHubId('google-bert/bert-base-uncased'), true);
  assert.equal(isHubId('WhereIsAI/UAE-Large-V1'), true);
  assert.equal(isHubId('facebook/opt-1.3b'), true);
  assert.equal(isHubId('./models/bert'), false);
  assert.equal(isHubId('/abs/path'), false);
  assert.equal(isHubId('a/b/c'), false);
  assert.equal(isHubId('org/-name'), false);
  assert.equal(isHubId('org--x/name'), false);
  assert.equal(isHubId(''), false);
  // "test" is id-shaped but is this repo's test directory (node --test runs from the root).
  assert.ok(existsSync('test'), 'run from the repository root');
  assert.equal(isHubId('test'), false);
});

test('hubSettings: huggingface_hub defaults from the environment', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'hub-env-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  await writeFile(join(home, 'token'), 'hf_from_file\n');

  const s = hubSettings({ HF_HOME: home });
  assert.deepEqual(s, { endpoint: 'https://huggingface.co', cacheDir: join(home, 'hub'), offline: false, token: 'hf_from_file' });
  assert.equal(hubSettings({ HF_HOME: home, HF_TOKEN: 'hf_env' }).token, 'hf_env');
  assert.equal(hubSettings({ HF_HOME: home, HF_HUB_CACHE: '/x/cache' }).cacheDir, '/x/cache');
  assert.equal(hubSettings({ XDG_CACHE_HOME: '/xdg', HF_TOKEN: 't' }).cacheDir, '/xdg/huggingface/hub');
  assert.equal(hubSettings({ HF_HOME: home, HF_ENDPOINT: 'https://hf-mirror.com/' }).endpoint, 'https://hf-mirror.com');
  for (const v of ['1', 'true', 'YES', 'on']) assert.equal(hubSettings({ HF_HOME: home, HF_HUB_OFFLINE: v }).offline, true, v);
  for (const v of ['0', 'false', '']) assert.equal(hubSettings({ HF_HOME: home, HF_HUB_OFFLINE: v }).offline, false, v);
  assert.equal(repoCacheDir('/c', 'org/name', 'dataset'), join('/c', 'datasets--org--name'));
});

test('first call downloads into the Hub cache layout; second call makes no request', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, cacheDir, model } = env;
  hub.repos.set('model:test-org/bert-tiny', modelRepo(model));
  const progress: string[] = [];
  const opts = { repo: 'test-org/bert-tiny', files: MODEL_FILES, endpoint: hub.endpoint, cacheDir, offline: false, token: '' };

  const first = await resolveRepoFiles({ ...opts, onProgress: (m) => progress.push(m) });
  const storage = join(cacheDir, 'models--test-org--bert-tiny');
  assert.equal(first.commit, COMMIT_A);
  assert.equal(first.dir, join(storage, 'snapshots', COMMIT_A));
  assert.deepEqual(Object.keys(first.files).sort(), [...MODEL_FILES].sort());
  for (const f of MODEL_FILES) {
    assert.equal(first.files[f], join(first.dir, f));
    assert.ok(readFileSync(first.files[f]).equals(readFileSync(join(model, f))), `${f} bytes`);
    // Snapshot entries are relative symlinks into blobs/<etag>, as huggingface_hub writes them.
    assert.ok(lstatSync(first.files[f]).isSymbolicLink(), `${f} is a symlink`);
    const data = readFileSync(join(model, f));
    const etag = f === 'model.safetensors' ? sha256(data) : gitSha1(data);
    assert.equal(readlinkSync(first.files[f]), join('..', '..', 'blobs', etag));
  }
  assert.equal(readFileSync(join(storage, 'refs', 'main'), 'utf8'), COMMIT_A);
  assert.deepEqual(walk(join(storage, 'blobs')).length, MODEL_FILES.length); // no temp files left
  assert.equal(hub.requests.filter((r) => r.server === 'hub').length, MODEL_FILES.length);
  assert.deepEqual(hub.requests.filter((r) => r.server === 'cdn').map((r) => r.path), [`/blob/${sha256(readFileSync(join(model, 'model.safetensors')))}`]);
  // Only the first request is at "main"; the rest are pinned to the commit it resolved.
  const hubPaths = hub.requests.filter((r) => r.server === 'hub').map((r) => r.path);
  assert.equal(hubPaths[0], '/test-org/bert-tiny/resolve/main/config.json');
  assert.ok(hubPaths.slice(1).every((p) => p.includes(`/resolve/${COMMIT_A}/`)), hubPaths.join(' '));
  // The 8.4 MB safetensors gets percentage lines; every downloaded file gets a final line.
  // Which percentages appear depends on how the stream is chunked (10 s of CI showed 41% then 51%).
  assert.ok(progress.some((m) => /model\.safetensors: .* \(([1-9]|[1-9]\d)%\)$/.test(m)), progress.join('\n'));
  assert.ok(progress.some((m) => /model\.safetensors: 8\.4 MB \/ 8\.4 MB \(100%\), done/.test(m)), progress.join('\n'));
  assert.equal(progress.filter((m) => m.endsWith('done')).length, MODEL_FILES.length);

  hub.requests.length = 0;
  const second = await resolveRepoFiles(opts);
  assert.deepEqual(second, first);
  assert.equal(hub.requests.length, 0, 'a fully cached snapshot needs no request');

  // A file deleted from the snapshot is fetched again, and only that one (blob reused, no CDN hit).
  await rm(first.files['model.safetensors']);
  const third = await resolveRepoFiles(opts);
  assert.ok(readFileSync(third.files['model.safetensors']).equals(readFileSync(join(model, 'model.safetensors'))));
  assert.deepEqual(hub.requests.map((r) => `${r.server} ${r.path}`), ['hub /test-org/bert-tiny/resolve/main/model.safetensors']);
});

test('defaults come from HF_HOME, HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, home, model } = env;
  hub.repos.set('model:test-org/bert-tiny', modelRepo(model, { token: 'hf_secret' }));
  const saved = Object.fromEntries(['HF_HOME', 'HF_HUB_CACHE', 'HF_ENDPOINT', 'HF_TOKEN', 'HF_HUB_OFFLINE'].map((k) => [k, process.env[k]]));
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  delete process.env.HF_HUB_CACHE;
  process.env.HF_HOME = home;
  process.env.HF_ENDPOINT = hub.endpoint;
  process.env.HF_TOKEN = 'hf_secret';
  process.env.HF_HUB_OFFLINE = '0';

  const got = await resolveRepoFiles({ repo: 'test-org/bert-tiny', files: ['config.json'] });
  assert.equal(got.files['config.json'], join(home, 'hub', 'models--test-org--bert-tiny', 'snapshots', COMMIT_A, 'config.json'));

  process.env.HF_HUB_OFFLINE = '1';
  hub.requests.length = 0;
  assert.deepEqual(await resolveRepoFiles({ repo: 'test-org/bert-tiny', files: ['config.json'] }), got);
  await assert.rejects(resolveRepoFiles({ repo: 'test-org/bert-tiny', files: ['vocab.txt'] }), /offline.*vocab\.txt/);
  assert.equal(hub.requests.length, 0);
});

test('offline mode resolves from the cache and fails clearly for what is not cached', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, cacheDir, model } = env;
  hub.repos.set('model:test-org/bert-tiny', modelRepo(model));
  const base = { endpoint: hub.endpoint, cacheDir, token: '' };
  const online = await resolveRepoFiles({ ...base, repo: 'test-org/bert-tiny', files: ['config.json', 'vocab.txt'], offline: false });
  hub.requests.length = 0;

  const off = await resolveRepoFiles({
    ...base,
    repo: 'test-org/bert-tiny',
    files: ['config.json', 'vocab.txt'],
    optionalFiles: ['tokenizer_config.json'], // not cached: offline just leaves it out
    offline: true,
  });
  assert.deepEqual(off, online);

  await assert.rejects(
    resolveRepoFiles({ ...base, repo: 'test-org/never-downloaded', files: ['config.json'], offline: true }),
    (e: Error) => e instanceof UnavailableError && /offline/.test(e.message) && /test-org\/never-downloaded/.test(e.message) && /config\.json/.test(e.message),
  );
  await assert.rejects(
    resolveRepoFiles({ ...base, repo: 'test-org/bert-tiny', files: ['config.json', 'model.safetensors'], offline: true }),
    (e: Error) => e instanceof UnavailableError && /offline/.test(e.message) && /model\.safetensors/.test(e.message) && !/config\.json/.test(e.message),
  );
  assert.equal(hub.requests.length, 0, 'offline never touches the network');
});

test('a missing required file is an error naming it; a missing optional file is skipped', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, cacheDir, model } = env;
  hub.repos.set('model:test-org/bert-tiny', modelRepo(model));
  const base = { repo: 'test-org/bert-tiny', endpoint: hub.endpoint, cacheDir, offline: false, token: '' };

  await assert.rejects(
    resolveRepoFiles({ ...base, files: ['config.json', 'pytorch_model.bin'] }),
    (e: Error) =>
      e instanceof InputError &&
      /pytorch_model\.bin/.test(e.message) &&
      /test-org\/bert-tiny/.test(e.message) &&
      /revision main/.test(e.message) &&
      /404/.test(e.message),
  );
  const storage = join(cacheDir, 'models--test-org--bert-tiny');
  assert.ok(!existsSync(join(storage, 'snapshots', COMMIT_A, 'pytorch_model.bin')));

  hub.requests.length = 0;
  const got = await resolveRepoFiles({ ...base, files: ['config.json'], optionalFiles: ['special_tokens_map.json', 'vocab.txt'] });
  assert.deepEqual(Object.keys(got.files).sort(), ['config.json', 'vocab.txt']);
  assert.ok(existsSync(join(storage, '.no_exist', COMMIT_A, 'special_tokens_map.json')), 'absence recorded as huggingface_hub does');

  hub.requests.length = 0;
  assert.deepEqual(await resolveRepoFiles({ ...base, files: ['config.json'], optionalFiles: ['special_tokens_map.json', 'vocab.txt'] }), got);
  assert.equal(hub.requests.length, 0, 'a recorded absence needs no request');

  hub.repos.delete('model:test-org/bert-tiny');
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'test-org/gone', files: ['config.json'] }), /test-org\/gone does not exist/);
});

test('the token is sent as a bearer header to the Hub, never to the CDN', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, cacheDir, model } = env;
  hub.repos.set('model:test-org/private', modelRepo(model, { token: 'hf_secret' }));
  const base = { repo: 'test-org/private', files: ['config.json', 'model.safetensors'], endpoint: hub.endpoint, cacheDir, offline: false };

  await assert.rejects(
    resolveRepoFiles({ ...base, token: '' }),
    (e: Error) => e instanceof UnavailableError && /401/.test(e.message) && /HF_TOKEN/.test(e.message),
  );
  hub.requests.length = 0;
  await resolveRepoFiles({ ...base, token: 'hf_secret' });
  const hubAuth = hub.requests.filter((r) => r.server === 'hub').map((r) => r.auth);
  assert.deepEqual(hubAuth, ['Bearer hf_secret', 'Bearer hf_secret']);
  const cdn = hub.requests.filter((r) => r.server === 'cdn');
  assert.equal(cdn.length, 1);
  assert.equal(cdn[0].auth, undefined);
});

test('dataset repos use the /datasets/ prefix and datasets--org--name', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, cacheDir, model } = env;
  const vocab = readFileSync(join(model, 'vocab.txt'));
  hub.repos.set('dataset:test-org/some-data', { refs: { main: COMMIT_B }, files: { 'data/vocab.txt': vocab } });

  const got = await resolveRepoFiles({
    repo: 'test-org/some-data',
    repoType: 'dataset',
    files: ['data/vocab.txt'],
    endpoint: hub.endpoint,
    cacheDir,
    offline: false,
    token: '',
  });
  assert.deepEqual(hub.requests.map((r) => r.path), ['/datasets/test-org/some-data/resolve/main/data/vocab.txt']);
  assert.equal(got.files['data/vocab.txt'], join(cacheDir, 'datasets--test-org--some-data', 'snapshots', COMMIT_B, 'data', 'vocab.txt'));
  assert.ok(readFileSync(got.files['data/vocab.txt']).equals(vocab));
  assert.equal(readFileSync(join(cacheDir, 'datasets--test-org--some-data', 'refs', 'main'), 'utf8'), COMMIT_B);
  // The same id as a model repo is another repo.
  await assert.rejects(
    resolveRepoFiles({ repo: 'test-org/some-data', files: ['data/vocab.txt'], endpoint: hub.endpoint, cacheDir, offline: false, token: '' }),
    /model repo test-org\/some-data does not exist/,
  );
});

test('revisions: tags and commits, refs files, unknown revisions, refresh after a branch moves', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, cacheDir, model } = env;
  const repo = modelRepo(model, { refs: { main: COMMIT_A, 'v1.0': COMMIT_A } });
  hub.repos.set('model:test-org/bert-tiny', repo);
  const base = { repo: 'test-org/bert-tiny', files: ['config.json', 'model.safetensors'], endpoint: hub.endpoint, cacheDir, offline: false, token: '' };
  const storage = join(cacheDir, 'models--test-org--bert-tiny');

  const tagged = await resolveRepoFiles({ ...base, revision: 'v1.0' });
  assert.equal(tagged.commit, COMMIT_A);
  assert.equal(readFileSync(join(storage, 'refs', 'v1.0'), 'utf8'), COMMIT_A);
  assert.ok(!existsSync(join(storage, 'refs', 'main')));

  // A commit hash needs no refs file, and is served from the snapshot the tag filled.
  hub.requests.length = 0;
  const pinned = await resolveRepoFiles({ ...base, revision: COMMIT_A });
  assert.deepEqual(pinned, tagged);
  assert.equal(hub.requests.length, 0);
  assert.deepEqual(walk(join(storage, 'refs')), ['v1.0']);

  await assert.rejects(
    resolveRepoFiles({ ...base, revision: 'no-such-branch' }),
    (e: Error) => e instanceof InputError && /revision no-such-branch does not exist/.test(e.message),
  );

  // main moves to a new commit: the cache keeps answering with the old snapshot until refresh.
  await resolveRepoFiles(base);
  repo.refs.main = COMMIT_B;
  hub.requests.length = 0;
  assert.equal((await resolveRepoFiles(base)).commit, COMMIT_A);
  assert.equal(hub.requests.length, 0);
  const refreshed = await resolveRepoFiles({ ...base, refresh: true });
  assert.equal(refreshed.commit, COMMIT_B);
  assert.equal(readFileSync(join(storage, 'refs', 'main'), 'utf8'), COMMIT_B);
  assert.ok(readFileSync(refreshed.files['model.safetensors']).equals(readFileSync(join(model, 'model.safetensors'))));
  assert.equal(hub.requests.filter((r) => r.server === 'cdn').length, 0, 'unchanged blobs are reused, not downloaded');
  assert.equal(walk(join(storage, 'blobs')).length, 2);
});

test('a cut-off or corrupt download leaves nothing behind', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, cacheDir, model } = env;
  const base = { files: ['model.safetensors'], endpoint: hub.endpoint, cacheDir, offline: false, token: '' };

  hub.repos.set('model:test-org/cut', modelRepo(model, { truncate: new Set(['model.safetensors']) }));
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'test-org/cut' }), (e: Error) => e instanceof UnavailableError && /model\.safetensors/.test(e.message));
  assert.deepEqual(walk(join(cacheDir, 'models--test-org--cut')), []);

  hub.repos.set('model:test-org/lying', modelRepo(model, { lie: new Set(['model.safetensors']) }));
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'test-org/lying' }), /corrupt/);
  assert.deepEqual(walk(join(cacheDir, 'models--test-org--lying')), []);
  // verify: false accepts a server whose etags are not content hashes.
  const unchecked = await resolveRepoFiles({ ...base, repo: 'test-org/lying', verify: false });
  assert.ok(readFileSync(unchecked.files['model.safetensors']).equals(readFileSync(join(model, 'model.safetensors'))));
});

test('bad arguments are input errors', async () => {
  const base = { endpoint: 'http://127.0.0.1:9', cacheDir: '/nonexistent', offline: true, token: '' };
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'a/b/c', files: ['x'] }), InputError);
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'a/b', files: ['../x'] }), InputError);
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'a/b', files: ['x'], revision: '../main' }), InputError);
});

test('loadModel(hub id) downloads through the server, then loads offline from the cache', async (t) => {
  const env = await setup(t);
  if (!env) return;
  const { hub, cacheDir, model } = env;
  await initBackend('cpu', { quiet: true });
  hub.repos.set('model:test-org/bert-tiny', modelRepo(model));
  const hubOpts = { endpoint: hub.endpoint, cacheDir, offline: false, token: '' };
  const fromHub = await loadModel('test-org/bert-tiny', { hub: hubOpts });
  const local = await loadModel(model);
  try {
    assert.equal(fromHub.source, 'hub');
    assert.equal(fromHub.commit, COMMIT_A);
    assert.equal(fromHub.weightsSha256, local.weightsSha256);
    const batch = local.tokenizer.encodeBatch(['a girl is styling her hair .', 'a man is playing a guitar .']);
    assert.deepEqual(fromHub.tokenizer.encodeBatch(['a girl is styling her hair .', 'a man is playing a guitar .']), batch);
    assert.deepEqual(fromHub.model.forward(batch).lastHiddenState.dataSync(), local.model.forward(batch).lastHiddenState.dataSync());
  } finally {
    fromHub.model.dispose();
    local.model.dispose();
  }
  hub.requests.length = 0;
  const offline = await loadModel('test-org/bert-tiny', { hub: { ...hubOpts, offline: true } });
  offline.model.dispose();
  assert.equal(hub.requests.length, 0, 'offline load makes no request');
  await assert.rejects(loadModel('test-org/not-there', { hub: hubOpts }), /test-org\/not-there/);
});
