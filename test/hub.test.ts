/**
 * lib/hub against two real HTTP servers on 127.0.0.1 that answer as huggingface.co and its CDNs do
 * today (test/helpers/fake-hub.ts: HEAD/GET on resolve URLs, 302 to a CDN host for LFS and
 * Xet-backed files, X-Repo-Commit / X-Linked-Etag / X-Linked-Size, a CDN that refuses a forwarded
 * token, gated repos answering 401/403, RepoNotFound / RevisionNotFound / EntryNotFound, refs/pr/N
 * revisions, a renamed repo). The model files are the tiny BERT of test/fixtures/torch (written by
 * torch.save), so these tests need nothing outside the repository; the two that check progress
 * lines on an 8.4 MB file and a loaded golden model need ANGLE_GOLDEN_DIR and skip without it.
 */
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

import { initBackend } from '../lib/backend/index.js';
import { GatedRepoError, hubSettings, isHubId, repoCacheDir, resolveRepoFiles } from '../lib/hub/index.js';
import { loadModel, type LoadedModel } from '../lib/models/auto.js';
import { readSafetensors, serializeSafetensors } from '../lib/models/safetensors.js';
import { InputError, UnavailableError } from '../lib/util/errors.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { gitSha1, sha256, startFakeHub, type FakeHub, type FakeRepo } from './helpers/fake-hub.js';

const TORCH_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'torch');
const COMMIT_A = 'a'.repeat(8) + '0123456789abcdef0123456789abcdef';
const COMMIT_B = 'b'.repeat(8) + 'fedcba9876543210fedcba9876543210';
const COMMIT_PR = 'c'.repeat(8) + '00112233445566778899aabbccddeeff';

const read = (dir: string, f: string) => readFileSync(join(dir, f));
const BIN = join(TORCH_FIXTURES, 'bert-tiny-bin');
const SHARDED = join(TORCH_FIXTURES, 'bert-tiny-sharded');
const SHARDS = ['pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin'];
const TEXT_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];
/** The tiny BERT as a Hub repo with only pytorch_model.bin, as many older repos are. */
const binFiles = (): Record<string, Buffer> => ({ ...Object.fromEntries(TEXT_FILES.map((f) => [f, read(BIN, f)])), 'pytorch_model.bin': read(BIN, 'pytorch_model.bin') });
const FILES = ['config.json', 'tokenizer.json', 'pytorch_model.bin'];

function repo(extra: Partial<FakeRepo> = {}): FakeRepo {
  return { refs: { main: COMMIT_A }, files: binFiles(), ...extra };
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
async function setup(t: TestContext): Promise<{ hub: FakeHub; home: string; cacheDir: string; base: { endpoint: string; cacheDir: string; offline: boolean; token: string } }> {
  const hub = await startFakeHub();
  const home = await mkdtemp(join(tmpdir(), 'hub-test-'));
  t.after(async () => {
    await hub.close();
    await rm(home, { recursive: true, force: true });
  });
  const cacheDir = hubSettings({ HF_HOME: home }).cacheDir;
  return { hub, home, cacheDir, base: { endpoint: hub.endpoint, cacheDir, offline: false, token: '' } };
}

const requestsOf = (hub: FakeHub) => hub.requests.map((r) => `${r.server} ${r.method} ${r.path}`);

test('isHubId: id-shaped strings that are not local paths', () => {
  assert.equal(isHubId('bert-base-uncased'), true);
  assert.equal(isHubId('google-bert/bert-base-uncased'), true);
  assert.equal(isHubId('WhereIsAI/UAE-Large-V1'), true);
  assert.equal(isHubId('facebook/opt-1.3b'), true);
  assert.equal(isHubId('meta-llama/Llama-2-7b-hf'), true);
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

test('HEAD then GET per file as huggingface_hub does; the cache layout is huggingface_hub\'s; a second call makes no request', async (t) => {
  const { hub, cacheDir, base } = await setup(t);
  hub.repos.set('model:test-org/bert-tiny', repo({ storage: (f) => (f === 'pytorch_model.bin' ? 'lfs' : 'git') }));
  const opts = { ...base, repo: 'test-org/bert-tiny', files: FILES };
  const first = await resolveRepoFiles(opts);
  const storage = join(cacheDir, 'models--test-org--bert-tiny');
  assert.equal(first.commit, COMMIT_A);
  assert.equal(first.dir, join(storage, 'snapshots', COMMIT_A));
  for (const f of FILES) {
    const data = read(BIN, f);
    assert.ok(readFileSync(first.files[f]).equals(data), `${f} bytes`);
    // Snapshot entries are relative symlinks into blobs/<etag>: sha256 for LFS files, the git blob sha1 otherwise.
    assert.ok(lstatSync(first.files[f]).isSymbolicLink(), `${f} is a symlink`);
    assert.equal(readlinkSync(first.files[f]), join('..', '..', 'blobs', f === 'pytorch_model.bin' ? sha256(data) : gitSha1(data)));
  }
  assert.equal(readFileSync(join(storage, 'refs', 'main'), 'utf8'), COMMIT_A);
  assert.equal(walk(join(storage, 'blobs')).length, FILES.length, 'no temporary file left');
  const oid = sha256(read(BIN, 'pytorch_model.bin'));
  assert.deepEqual(requestsOf(hub), [
    // The first file resolves "main"; every later request is pinned to the commit it named.
    'hub HEAD /test-org/bert-tiny/resolve/main/config.json',
    'hub GET /test-org/bert-tiny/resolve/main/config.json',
    `hub HEAD /test-org/bert-tiny/resolve/${COMMIT_A}/tokenizer.json`,
    `hub GET /test-org/bert-tiny/resolve/${COMMIT_A}/tokenizer.json`,
    `hub HEAD /test-org/bert-tiny/resolve/${COMMIT_A}/pytorch_model.bin`,
    // The LFS file: the Hub's 302 is read, not followed; its CDN URL is fetched directly.
    `cdn GET /repos/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`,
  ]);

  hub.requests.length = 0;
  assert.deepEqual(await resolveRepoFiles(opts), first);
  assert.equal(hub.requests.length, 0, 'a fully cached snapshot needs no request');

  // A file deleted from the snapshot is linked again from its blob: one HEAD, no download.
  await rm(first.files['pytorch_model.bin']);
  assert.deepEqual(await resolveRepoFiles(opts), first);
  assert.deepEqual(requestsOf(hub), ['hub HEAD /test-org/bert-tiny/resolve/main/pytorch_model.bin']);
});

test('progress lines for a large file (the golden 8.4 MB model.safetensors, Xet-backed)', async (t) => {
  if (!GOLDEN_DIR) return void t.skip('no encoder golden set (ANGLE_GOLDEN_DIR, or ../shared beside the repository)');
  const { hub, base } = await setup(t);
  const model = join(GOLDEN_DIR, 'model');
  hub.repos.set('model:test-org/bert-golden', { refs: { main: COMMIT_A }, files: { 'model.safetensors': read(model, 'model.safetensors') } });
  const progress: string[] = [];
  const got = await resolveRepoFiles({ ...base, repo: 'test-org/bert-golden', files: ['model.safetensors'], onProgress: (m) => progress.push(m) });
  assert.ok(readFileSync(got.files['model.safetensors']).equals(read(model, 'model.safetensors')));
  // Which percentages appear depends on how the stream is chunked (10 s of CI showed 41% then 51%).
  assert.ok(progress.some((m) => /model\.safetensors: .* \(([1-9]|[1-9]\d)%\)$/.test(m)), progress.join('\n'));
  assert.ok(progress.some((m) => /model\.safetensors: 8\.4 MB \/ 8\.4 MB \(100%\), done/.test(m)), progress.join('\n'));
  // A Xet-backed file goes through the bridge like any LFS file for a client that is not Xet-aware.
  assert.ok(hub.requests.some((r) => r.server === 'cdn' && r.path.startsWith('/xet-bridge-us/')));
});

test('defaults come from HF_HOME, HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE', async (t) => {
  const { hub, home } = await setup(t);
  hub.tokens.add('hf_secret');
  hub.repos.set('model:test-org/bert-tiny', repo({ privateTo: new Set(['hf_secret']) }));
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
  await assert.rejects(resolveRepoFiles({ repo: 'test-org/bert-tiny', files: ['tokenizer.json'] }), /offline.*tokenizer\.json/);
  assert.equal(hub.requests.length, 0);
});

test('offline mode resolves from the cache and fails clearly for what is not cached', async (t) => {
  const { hub, base } = await setup(t);
  hub.repos.set('model:test-org/bert-tiny', repo());
  const online = await resolveRepoFiles({ ...base, repo: 'test-org/bert-tiny', files: ['config.json', 'tokenizer.json'] });
  hub.requests.length = 0;
  const off = await resolveRepoFiles({
    ...base,
    repo: 'test-org/bert-tiny',
    files: ['config.json', 'tokenizer.json'],
    optionalFiles: ['tokenizer_config.json'], // not cached: offline just leaves it out
    offline: true,
  });
  assert.deepEqual(off, online);
  await assert.rejects(
    resolveRepoFiles({ ...base, repo: 'test-org/never-downloaded', files: ['config.json'], offline: true }),
    (e: Error) => e instanceof UnavailableError && /offline/.test(e.message) && /test-org\/never-downloaded/.test(e.message) && /config\.json/.test(e.message),
  );
  await assert.rejects(
    resolveRepoFiles({ ...base, repo: 'test-org/bert-tiny', files: ['config.json', 'pytorch_model.bin'], offline: true }),
    (e: Error) => e instanceof UnavailableError && /offline/.test(e.message) && /pytorch_model\.bin/.test(e.message) && !/config\.json/.test(e.message),
  );
  assert.equal(hub.requests.length, 0, 'offline never touches the network');
});

test('a missing file (EntryNotFound), revision (RevisionNotFound) or repo (RepoNotFound) says which; optional files are skipped', async (t) => {
  const { hub, cacheDir, base } = await setup(t);
  hub.tokens.add('hf_reader');
  hub.repos.set('model:test-org/bert-tiny', repo());
  const opts = { ...base, repo: 'test-org/bert-tiny' };

  await assert.rejects(resolveRepoFiles({ ...opts, files: ['config.json', 'model.safetensors'] }), (e: Error) => {
    assert.ok(e instanceof InputError);
    assert.match(e.message, /file model\.safetensors is not in model repo test-org\/bert-tiny at revision main \(HTTP 404 EntryNotFound: Entry not found\)$/);
    return true;
  });
  const storage = join(cacheDir, 'models--test-org--bert-tiny');
  assert.ok(existsSync(join(storage, '.no_exist', COMMIT_A, 'model.safetensors')), 'absence recorded as huggingface_hub does');

  hub.requests.length = 0;
  const got = await resolveRepoFiles({ ...opts, files: ['config.json'], optionalFiles: ['special_tokens_map.json', 'tokenizer.json'] });
  assert.deepEqual(Object.keys(got.files).sort(), ['config.json', 'tokenizer.json']);
  hub.requests.length = 0;
  assert.deepEqual(await resolveRepoFiles({ ...opts, files: ['config.json'], optionalFiles: ['special_tokens_map.json', 'tokenizer.json'] }), got);
  assert.equal(hub.requests.length, 0, 'a recorded absence needs no request');

  await assert.rejects(resolveRepoFiles({ ...opts, files: ['config.json'], revision: 'no-such-branch' }), (e: Error) => {
    assert.ok(e instanceof InputError);
    assert.match(e.message, /revision no-such-branch does not exist in model repo test-org\/bert-tiny \(HTTP 404 RevisionNotFound: Invalid rev id: no-such-branch\)$/);
    return true;
  });
  // Without a token the Hub answers 401 for a missing (or private) repo; with one, 404. An
  // optional file does not hide it.
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'test-org/gone', files: [], optionalFiles: ['modules.json'] }), (e: Error) => {
    assert.ok(e instanceof InputError);
    assert.match(e.message, /model repo test-org\/gone does not exist or is private \(no token was sent: set HF_TOKEN if you have access\); check the id \(HTTP 401 RepoNotFound: Repository not found\)$/);
    return true;
  });
  await assert.rejects(resolveRepoFiles({ ...base, token: 'hf_reader', repo: 'test-org/gone', files: ['config.json'] }), /model repo test-org\/gone does not exist; check the id \(HTTP 404 RepoNotFound/);
});

test('gated repos (meta-llama): 401 without a token, 403 until the licence is accepted; one line that says what to do', async (t) => {
  const { hub, base } = await setup(t);
  hub.tokens.add('hf_accepted');
  hub.tokens.add('hf_not_accepted');
  const id = 'meta-llama/Llama-2-7b-hf';
  hub.repos.set(`model:${id}`, repo({ gatedFor: new Set(['hf_accepted']) }));
  const opts = { ...base, repo: id, files: FILES };

  await assert.rejects(resolveRepoFiles(opts), (e: Error) => {
    assert.ok(e instanceof GatedRepoError && e instanceof UnavailableError);
    assert.equal((e as GatedRepoError).status, 401);
    assert.doesNotMatch(e.message, /\n/);
    assert.equal(
      e.message,
      `${id} is a gated model repo: accept its licence at ${hub.endpoint}/${id} while logged in, then set HF_TOKEN to an access token of that account (${hub.endpoint}/settings/tokens) ` +
        `(the Hub answered HTTP 401 GatedRepo: Access to model ${id} is restricted. You must have access to it and be authenticated to access it. Please log in.)`,
    );
    return true;
  });
  await assert.rejects(resolveRepoFiles({ ...opts, token: 'hf_not_accepted' }), (e: Error) => {
    assert.ok(e instanceof GatedRepoError);
    assert.equal(e.status, 403);
    assert.match(e.message, new RegExp(`^${id} is a gated model repo: the account of the token in use has not been granted access: accept the licence at ${hub.endpoint}/${id} with that account`));
    assert.match(e.message, /HTTP 403 GatedRepo: Access to model meta-llama\/Llama-2-7b-hf is restricted and you are not in the authorized list/);
    return true;
  });
  await assert.rejects(resolveRepoFiles({ ...opts, token: 'hf_typo' }), /the Hub rejected the token \(HF_TOKEN, or the token file under HF_HOME\) for model repo meta-llama\/Llama-2-7b-hf at revision main: HTTP 401: Invalid credentials in Authorization header/);
  const got = await resolveRepoFiles({ ...opts, token: 'hf_accepted' });
  assert.ok(readFileSync(got.files['pytorch_model.bin']).equals(read(BIN, 'pytorch_model.bin')));

  // Through loadModel the first request (the sentence-transformers probe) already says so.
  hub.requests.length = 0;
  await assert.rejects(loadModel(id, { hub: { ...base, cacheDir: join(base.cacheDir, 'other') } }), GatedRepoError);
  assert.equal(hub.requests.length, 1);
});

test('the token goes to the Hub, never to the CDN (which refuses a second auth mechanism, as S3 does)', async (t) => {
  const { hub, base } = await setup(t);
  hub.tokens.add('hf_secret');
  hub.repos.set('model:test-org/private', repo({ privateTo: new Set(['hf_secret']) }));
  const opts = { ...base, repo: 'test-org/private', files: ['config.json', 'pytorch_model.bin'] };
  await assert.rejects(resolveRepoFiles(opts), /model repo test-org\/private does not exist or is private .*HTTP 401 RepoNotFound/);
  hub.requests.length = 0;
  await resolveRepoFiles({ ...opts, token: 'hf_secret' });
  const fromHub = hub.requests.filter((r) => r.server === 'hub');
  assert.ok(fromHub.length >= 3 && fromHub.every((r) => r.auth === 'Bearer hf_secret'), JSON.stringify(fromHub));
  const cdn = hub.requests.filter((r) => r.server === 'cdn');
  assert.equal(cdn.length, 1);
  assert.equal(cdn[0].auth, undefined);
  assert.match(cdn[0].path, /^\/xet-bridge-us\/[0-9a-f]{24}\/[0-9a-f]{64}$/, 'a Xet-backed file through the bridge');
});

test('a renamed repo: the Hub\'s relative redirect is followed with the token; the cache is under the id asked for', async (t) => {
  const { hub, cacheDir, base } = await setup(t);
  hub.tokens.add('hf_secret');
  hub.repos.set('model:new-org/bert-tiny', repo());
  hub.renamed.set('model:old-org/bert-tiny', 'new-org/bert-tiny');
  const got = await resolveRepoFiles({ ...base, token: 'hf_secret', repo: 'old-org/bert-tiny', files: ['config.json'] });
  assert.equal(got.files['config.json'], join(cacheDir, 'models--old-org--bert-tiny', 'snapshots', COMMIT_A, 'config.json'));
  assert.deepEqual(
    hub.requests.map((r) => `${r.method} ${r.path} ${r.auth}`),
    [
      'HEAD /old-org/bert-tiny/resolve/main/config.json Bearer hf_secret',
      'HEAD /new-org/bert-tiny/resolve/main/config.json Bearer hf_secret',
      'GET /new-org/bert-tiny/resolve/main/config.json Bearer hf_secret',
    ],
  );
});

test('dataset repos use the /datasets/ prefix and datasets--org--name', async (t) => {
  const { hub, cacheDir, base } = await setup(t);
  const tok = read(BIN, 'tokenizer.json');
  hub.repos.set('dataset:test-org/some-data', { refs: { main: COMMIT_B }, files: { 'data/tokenizer.json': tok } });
  const got = await resolveRepoFiles({ ...base, repo: 'test-org/some-data', repoType: 'dataset', files: ['data/tokenizer.json'] });
  assert.deepEqual(requestsOf(hub), ['hub HEAD /datasets/test-org/some-data/resolve/main/data/tokenizer.json', 'hub GET /datasets/test-org/some-data/resolve/main/data/tokenizer.json']);
  assert.equal(got.files['data/tokenizer.json'], join(cacheDir, 'datasets--test-org--some-data', 'snapshots', COMMIT_B, 'data', 'tokenizer.json'));
  assert.ok(readFileSync(got.files['data/tokenizer.json']).equals(tok));
  assert.equal(readFileSync(join(cacheDir, 'datasets--test-org--some-data', 'refs', 'main'), 'utf8'), COMMIT_B);
  // The same id as a model repo is another repo.
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'test-org/some-data', files: ['data/tokenizer.json'] }), /model repo test-org\/some-data does not exist/);
});

test('revisions: tags and commits, refs files, refresh after a branch moves', async (t) => {
  const { hub, cacheDir, base } = await setup(t);
  const r = repo({ refs: { main: COMMIT_A, 'v1.0': COMMIT_A } });
  hub.repos.set('model:test-org/bert-tiny', r);
  const opts = { ...base, repo: 'test-org/bert-tiny', files: ['config.json', 'pytorch_model.bin'] };
  const storage = join(cacheDir, 'models--test-org--bert-tiny');

  const tagged = await resolveRepoFiles({ ...opts, revision: 'v1.0' });
  assert.equal(tagged.commit, COMMIT_A);
  assert.equal(readFileSync(join(storage, 'refs', 'v1.0'), 'utf8'), COMMIT_A);
  assert.ok(!existsSync(join(storage, 'refs', 'main')));

  // A commit hash needs no refs file, and is served from the snapshot the tag filled.
  hub.requests.length = 0;
  assert.deepEqual(await resolveRepoFiles({ ...opts, revision: COMMIT_A }), tagged);
  assert.equal(hub.requests.length, 0);
  assert.deepEqual(walk(join(storage, 'refs')), ['v1.0']);

  // main moves to a new commit: the cache keeps answering with the old snapshot until refresh.
  await resolveRepoFiles(opts);
  r.refs.main = COMMIT_B;
  hub.requests.length = 0;
  assert.equal((await resolveRepoFiles(opts)).commit, COMMIT_A);
  assert.equal(hub.requests.length, 0);
  const refreshed = await resolveRepoFiles({ ...opts, refresh: true });
  assert.equal(refreshed.commit, COMMIT_B);
  assert.equal(readFileSync(join(storage, 'refs', 'main'), 'utf8'), COMMIT_B);
  assert.ok(readFileSync(refreshed.files['pytorch_model.bin']).equals(read(BIN, 'pytorch_model.bin')));
  assert.equal(hub.requests.filter((q) => q.server === 'cdn').length, 0, 'unchanged blobs are reused, not downloaded');
  assert.deepEqual(hub.requests.map((q) => q.method), ['HEAD', 'HEAD'], 'metadata only');
  assert.equal(walk(join(storage, 'blobs')).length, 2);
});

test('refs/pr/N: URL-encoded as one path segment, cached under refs/refs/pr/N; a conversion PR loads its safetensors', async (t) => {
  const { hub, cacheDir, base } = await setup(t);
  await initBackend('cpu', { quiet: true });
  // As the safetensors conversion bot's pull requests do: main has pytorch_model.bin, refs/pr/1 adds model.safetensors.
  const withSafetensors = { ...binFiles(), 'model.safetensors': read(TORCH_FIXTURES, 'bert-tiny.safetensors') };
  hub.repos.set('model:test-org/bert-tiny', repo({ refs: { main: COMMIT_A, 'refs/pr/1': COMMIT_PR }, filesAt: { [COMMIT_PR]: withSafetensors } }));
  const storage = join(cacheDir, 'models--test-org--bert-tiny');

  const pr = await resolveRepoFiles({ ...base, repo: 'test-org/bert-tiny', revision: 'refs/pr/1', files: ['model.safetensors'] });
  assert.equal(pr.commit, COMMIT_PR);
  assert.equal(hub.requests[0].path, '/test-org/bert-tiny/resolve/refs%2Fpr%2F1/model.safetensors');
  assert.equal(readFileSync(join(storage, 'refs', 'refs', 'pr', '1'), 'utf8'), COMMIT_PR);
  hub.requests.length = 0;
  assert.deepEqual(await resolveRepoFiles({ ...base, repo: 'test-org/bert-tiny', revision: 'refs/pr/1', files: ['model.safetensors'] }), pr);
  assert.equal(hub.requests.length, 0, 'the PR ref is cached like a branch');

  const fromPr = await loadModel('test-org/bert-tiny', { revision: 'refs/pr/1', hub: base });
  const fromMain = await loadModel('test-org/bert-tiny', { hub: base });
  t.after(() => [fromPr, fromMain].forEach((m) => m.model.dispose()));
  assert.deepEqual(fromPr.weightFiles, [join(storage, 'snapshots', COMMIT_PR, 'model.safetensors')]);
  assert.deepEqual(fromMain.weightFiles, [join(storage, 'snapshots', COMMIT_A, 'pytorch_model.bin')]);
  const batch = fromMain.tokenizer.encodeBatch(['a man is playing guitar .']);
  assert.deepEqual(fromPr.model.forward(batch).lastHiddenState.dataSync(), fromMain.model.forward(batch).lastHiddenState.dataSync());
});

test('loadModel from the Hub: only pytorch_model.bin; shards through pytorch_model.bin.index.json or model.safetensors.index.json; both formats (the .bin is never fetched)', async (t) => {
  const { hub, base } = await setup(t);
  await initBackend('cpu', { quiet: true });
  hub.repos.set('model:facebook/tiny-bin', repo());
  const sharded = Object.fromEntries([...TEXT_FILES, 'pytorch_model.bin.index.json', ...SHARDS].map((f) => [f, read(SHARDED, f)]));
  hub.repos.set('model:facebook/tiny-sharded', repo({ files: sharded }));
  hub.repos.set('model:google-bert/tiny-both', repo({ files: { ...binFiles(), 'model.safetensors': read(TORCH_FIXTURES, 'bert-tiny.safetensors') } }));
  // The same weights as two safetensors shards and model.safetensors.index.json, as save_pretrained shards them.
  const reference = readSafetensors(join(TORCH_FIXTURES, 'bert-tiny.safetensors')).tensors;
  const names = [...reference.keys()];
  const stShards = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
  const half = (k: number) => Object.fromEntries(names.filter((_, i) => (i < names.length / 2) === (k === 0)).map((n) => [n, { shape: reference.get(n)!.shape, data: reference.get(n)!.data }]));
  const weightMap = Object.fromEntries(names.map((n, i) => [n, stShards[i < names.length / 2 ? 0 : 1]]));
  hub.repos.set('model:test-org/tiny-st-sharded', repo({
    files: {
      ...Object.fromEntries(TEXT_FILES.map((f) => [f, read(BIN, f)])),
      [stShards[0]]: Buffer.from(serializeSafetensors(half(0))),
      [stShards[1]]: Buffer.from(serializeSafetensors(half(1))),
      'model.safetensors.index.json': Buffer.from(JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap })),
    },
  }));

  const models: LoadedModel[] = [];
  for (const id of ['facebook/tiny-bin', 'facebook/tiny-sharded', 'google-bert/tiny-both', 'test-org/tiny-st-sharded']) {
    hub.requests.length = 0;
    const m = await loadModel(id, { hub: base });
    models.push(m);
    const asked = hub.requests.filter((r) => r.method === 'HEAD').map((r) => r.path.replace(/^.*\/resolve\/[^/]+\//, ''));
    if (id === 'google-bert/tiny-both') assert.ok(!asked.includes('pytorch_model.bin') && !asked.includes('pytorch_model.bin.index.json'), asked.join(' '));
    if (id === 'facebook/tiny-sharded') assert.ok(SHARDS.every((s) => asked.includes(s)), asked.join(' '));
  }
  t.after(() => models.forEach((m) => m.model.dispose()));
  assert.deepEqual(models.map((m) => m.weightFiles.map((f) => f.replace(/^.*\//, ''))), [['pytorch_model.bin'], SHARDS, ['model.safetensors'], stShards]);
  const batch = models[0].tokenizer.encodeBatch(['the dog runs in the park .', 'a cat sits on the mat']);
  const want = models[2].model.forward(batch).lastHiddenState.dataSync();
  for (const m of [models[0], models[1], models[3]]) assert.deepEqual(m.model.forward(batch).lastHiddenState.dataSync(), want);
  // A repo with no weights at all names every layout it looked for.
  hub.repos.set('model:test-org/no-weights', repo({ files: Object.fromEntries(TEXT_FILES.map((f) => [f, read(BIN, f)])) }));
  await assert.rejects(loadModel('test-org/no-weights', { hub: base }), /Hub repo test-org\/no-weights has none of model\.safetensors, model\.safetensors\.index\.json, pytorch_model\.bin, pytorch_model\.bin\.index\.json at revision a{8}/);
});

test('a cut-off or corrupt download leaves nothing behind', async (t) => {
  const { hub, cacheDir, base } = await setup(t);
  const opts = { ...base, files: ['pytorch_model.bin'] };
  hub.repos.set('model:test-org/cut', repo({ truncate: new Set(['pytorch_model.bin']) }));
  await assert.rejects(resolveRepoFiles({ ...opts, repo: 'test-org/cut' }), (e: Error) => e instanceof UnavailableError && /pytorch_model\.bin/.test(e.message));
  assert.deepEqual(walk(join(cacheDir, 'models--test-org--cut')), []);

  hub.repos.set('model:test-org/lying', repo({ lie: new Set(['pytorch_model.bin']) }));
  await assert.rejects(resolveRepoFiles({ ...opts, repo: 'test-org/lying' }), /corrupt: content hash [0-9a-f]{64} differs from the Hub's etag/);
  assert.deepEqual(walk(join(cacheDir, 'models--test-org--lying')), []);
  // verify: false accepts a server whose etags are not content hashes.
  const unchecked = await resolveRepoFiles({ ...opts, repo: 'test-org/lying', verify: false });
  assert.ok(readFileSync(unchecked.files['pytorch_model.bin']).equals(read(BIN, 'pytorch_model.bin')));
});

test('bad arguments are input errors', async () => {
  const base = { endpoint: 'http://127.0.0.1:9', cacheDir: '/nonexistent', offline: true, token: '' };
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'a/b/c', files: ['x'] }), InputError);
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'a/b', files: ['../x'] }), InputError);
  await assert.rejects(resolveRepoFiles({ ...base, repo: 'a/b', files: ['x'], revision: '../main' }), InputError);
});

test('loadModel(hub id) of the golden model downloads through the servers, then loads offline from the cache', async (t) => {
  if (!GOLDEN_DIR) return void t.skip('no encoder golden set (ANGLE_GOLDEN_DIR, or ../shared beside the repository)');
  const model = join(GOLDEN_DIR, 'model');
  const { hub, base } = await setup(t);
  await initBackend('cpu', { quiet: true });
  const files = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt'];
  hub.repos.set('model:test-org/bert-tiny', { refs: { main: COMMIT_A }, files: Object.fromEntries(files.map((f) => [f, read(model, f)])) });
  const fromHub = await loadModel('test-org/bert-tiny', { hub: base });
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
  const offline = await loadModel('test-org/bert-tiny', { hub: { ...base, offline: true } });
  offline.model.dispose();
  assert.equal(hub.requests.length, 0, 'offline load makes no request');
  await assert.rejects(loadModel('test-org/not-there', { hub: base }), /test-org\/not-there/);
});
