/**
 * Hugging Face Hub downloads with a local cache (models now, datasets later).
 *
 *   resolveRepoFiles({ repo, files, optionalFiles?, repoType?, revision?, endpoint?, cacheDir?,
 *                      offline?, token?, refresh?, verify?, onProgress? })
 *     -> Promise<{ dir, files: Record<name, localPath>, commit? }>
 * (hubSettings and isHubId are in ./settings.ts, the cache layout helpers in ./cache.ts.)
 *
 * Why plain `fetch` and not `@huggingface/hub` (v2.17): its `downloadFileToCacheDir` first calls
 * the `/api/{type}s/{repo}/paths-info` endpoint, names the snapshot folder after the file's *last
 * commit* (huggingface_hub uses the repo commit from `X-Repo-Commit`, so the two caches would
 * diverge), writes no `refs/<revision>`, has no offline mode, no progress and logs through
 * console. The Hub's download protocol is a HEAD and a GET per file, so doing it here keeps the
 * cache byte-for-byte compatible with Python's and lets any HTTP server that answers the same way
 * (a mirror, a test server) stand in for the Hub.
 *
 * Protocol, as huggingface_hub 1.x speaks it (file_download.py `get_hf_file_metadata`,
 * `_get_metadata_or_catch_error`; utils/_http.py `hf_raise_for_status`), one file at a time:
 * 1. `HEAD {endpoint}/{repo}/resolve/{revision}/{file}` (datasets: `/datasets/{repo}/...`; the
 *    revision URL-encoded as one segment, so `refs/pr/1` is `refs%2Fpr%2F1`), with
 *    `Accept-Encoding: identity` and the token. Redirects within the Hub's origin are followed (a
 *    renamed repo answers 307 with a relative Location); a redirect to another host is not.
 * 2. The answer names the commit (`X-Repo-Commit`), the content (`X-Linked-Etag`, the sha256 of an
 *    LFS/Xet file, else `ETag`, the git blob sha1 of a small file) and the size (`X-Linked-Size`,
 *    else `Content-Length`). LFS and Xet-backed files answer `302 Found` to a CDN host
 *    (cdn-lfs.hf.co, or the Xet "LFS bridge" cas-bridge.xethub.hf.co, which serves the whole file
 *    to clients that are not Xet-aware: Hub docs, "Backward Compatibility with LFS"); the Xet
 *    headers (`X-Xet-Hash`, `Link: rel="xet-auth"`) are for Xet-aware clients and are not used.
 * 3. A blob already in the cache under that etag is linked, not fetched. Otherwise `GET` the
 *    location; the token goes only to the endpoint's origin, never to the CDN (its URL is signed,
 *    and huggingface_hub drops `authorization` when the host changes).
 * Errors come as `X-Error-Code` / `X-Error-Message`: `GatedRepo` (401 without a token, 403 when the
 * token's account has not accepted the licence) becomes a GatedRepoError whose one line names the
 * id, the page where the licence is accepted and HF_TOKEN; `RepoNotFound` (401 without a token for
 * a missing or private repo, 404 with one), `RevisionNotFound` and `EntryNotFound` (404, with
 * `X-Repo-Commit`) become InputErrors naming the repo, revision or file; 401 "Invalid credentials
 * in Authorization header" says the token was rejected. test/helpers/fake-hub.ts serves all of
 * this from two local servers, with the sources of each behaviour.
 *
 * Cache layout (huggingface_hub's, so an existing Python cache is reused and vice versa):
 *   {cacheDir}/models--org--name/blobs/<etag>                  file contents
 *   {cacheDir}/models--org--name/snapshots/<commit>/<file>     relative symlink to the blob
 *   {cacheDir}/models--org--name/refs/<revision>               the commit a branch/tag pointed at
 *                                                              (refs/refs/pr/1 for a pull request)
 *   {cacheDir}/models--org--name/.no_exist/<commit>/<file>     "this file is not in that commit"
 *
 * Caching policy: when every requested file is already in the snapshot that `refs/<revision>`
 * names (or `revision` is a commit hash), no request is made at all: runs are reproducible and
 * work without a network. Unlike huggingface_hub, a cached branch is therefore not re-checked for
 * new commits; pass `refresh: true` to re-resolve the revision. When something is missing, the
 * revision is resolved once and the rest of the files are fetched at that exact commit, so one
 * call never mixes two commits.
 *
 * Downloads stream into a uniquely named `*.incomplete` file next to the blobs, are checked
 * (length; sha256 for 64-hex LFS etags, git blob sha1 for 40-hex etags, unless `verify: false`),
 * fsynced, and only then renamed into place; snapshot links are made under a temporary name and
 * renamed too. On any failure the temporary file is removed, so no half-written file is left.
 *
 * Environment (read by hubSettings; explicit options win):
 *   HF_ENDPOINT     default https://huggingface.co
 *   HF_HUB_CACHE    else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub
 *   HF_HUB_OFFLINE  1/true/yes/on: never touch the network, resolve from the cache only
 *   HF_TOKEN        else the file $HF_TOKEN_PATH, else $HF_HOME/token; sent as `Authorization: Bearer`
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, open, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

import { writeFileAtomic as writeAtomic } from '../util/atomic-write.js';
import { InputError, UnavailableError, UnknownNameError } from '../util/errors.js';
import { GatedRepoError } from './errors.js';
import { cachedCommit, COMMIT_HASH, repoCacheDir, type RepoType } from './cache.js';
import { hubIdShaped, hubSettings } from './settings.js';

/** Files at least this big get periodic progress lines, not just the final one. */
const PROGRESS_MIN_BYTES = 1 << 20;
const PROGRESS_EVERY_MS = 5000;
const MAX_REDIRECTS = 10;


export interface ResolveRepoFilesOptions {
  /** Hub id, "org/name" or "name". */
  repo: string;
  repoType?: RepoType;
  /** Branch, tag or commit hash; default "main". */
  revision?: string;
  /** Files that must exist; a 404 is an error naming the file. */
  files: string[];
  /** Files used when present (e.g. tokenizer_config.json); a 404 just leaves them out. */
  optionalFiles?: string[];
  endpoint?: string;
  cacheDir?: string;
  offline?: boolean;
  token?: string;
  /** Re-resolve a branch/tag over the network even when the cache already holds its snapshot. */
  refresh?: boolean;
  /** Check downloaded bytes against the Hub's etag (sha256 / git sha1); default true. */
  verify?: boolean;
  /** Human-readable progress lines (one per downloaded file, periodic ones for big files). */
  onProgress?: (msg: string) => void;
}

export interface ResolvedRepoFiles {
  /** The snapshot directory `snapshots/<commit>` (the repo's cache folder if no commit is known). */
  dir: string;
  /** Requested file name -> local path, for every required file and each optional file found. */
  files: Record<string, string>;
  /** The commit the files come from. */
  commit?: string;
}

function checkRelativeFile(file: string, repo: string): void {
  const parts = file.split(/[\\/]/);
  if (file === '' || file.startsWith('/') || /^[A-Za-z]:/.test(file) || parts.includes('..') || parts.includes('')) {
    throw new InputError(`invalid file name ${JSON.stringify(file)} for repo ${repo}: expected a relative path inside the repo`);
  }
}

function normalizeEtag(v: string | null): string | undefined {
  if (!v) return undefined;
  return v.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1') || undefined;
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isFile(); // follows the snapshot symlink: a dangling link is "missing"
  } catch {
    return false;
  }
}

function tmpSuffix(): string {
  return `.${process.pid}.${randomBytes(6).toString('hex')}.incomplete`;
}


/** Points `pointer` at `blob` with a relative symlink (a copy where symlinks are not allowed). */
async function linkIntoSnapshot(blob: string, pointer: string): Promise<void> {
  await mkdir(dirname(pointer), { recursive: true });
  const tmp = pointer + tmpSuffix();
  try {
    try {
      await symlink(relative(dirname(pointer), blob), tmp);
    } catch {
      await copyFile(blob, tmp);
    }
    await rename(tmp, pointer);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = -1;
  do {
    v /= 1000;
    i++;
  } while (v >= 1000 && i < units.length - 1);
  return `${v.toFixed(1)} ${units[i]}`;
}

/** Per-call state: where things go, how to reach the Hub, and the commit once it is known. */
interface Context {
  repo: string;
  repoType: RepoType;
  revision: string;
  endpoint: string;
  token?: string;
  storage: string;
  verify: boolean;
  commit?: string;
  onProgress?: (msg: string) => void;
}

function describe(ctx: Context): string {
  return `${ctx.repoType} repo ${ctx.repo} at revision ${ctx.revision}`;
}

function fileUrl(ctx: Context, revision: string, file: string): string {
  const prefix = ctx.repoType === 'dataset' ? 'datasets/' : '';
  // The revision is one path segment: `refs/pr/1` goes as `refs%2Fpr%2F1`, as huggingface_hub's
  // hf_hub_url quotes it (`quote(revision, safe="")`).
  const path = file.split('/').map(encodeURIComponent).join('/');
  return `${ctx.endpoint}/${prefix}${ctx.repo}/resolve/${encodeURIComponent(revision)}/${path}`;
}

/** A URL for messages: without its query (a CDN URL's signature need not end up in logs). */
function shown(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?…`;
}

/** The repo's page on the Hub, where a gated repo's licence is accepted. */
function repoPage(ctx: Context): string {
  return `${ctx.endpoint}/${ctx.repoType === 'dataset' ? 'datasets/' : ''}${ctx.repo}`;
}

/** One request; the token goes only to the endpoint's own origin, never to a CDN. */
async function request(ctx: Context, method: 'HEAD' | 'GET', url: string): Promise<Response> {
  const headers: Record<string, string> = { 'accept-encoding': 'identity', 'user-agent': 'angle-notebooks' };
  if (ctx.token && new URL(url).origin === new URL(ctx.endpoint).origin) headers.authorization = `Bearer ${ctx.token}`;
  try {
    return await fetch(url, { method, headers, redirect: 'manual' });
  } catch (e) {
    const cause = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
    throw new UnavailableError(
      `cannot reach ${shown(url)} for ${describe(ctx)}: ${cause}. ` + 'Set HF_HUB_OFFLINE=1 to use only the local cache, or HF_ENDPOINT for a mirror.',
    );
  }
}

/** What the Hub says about a file before it is downloaded (huggingface_hub's HfFileMetadata). */
interface FileMetadata {
  /** The resolve URL that answered (after same-origin redirects such as a renamed repo). */
  url: string;
  commit?: string;
  /** X-Linked-Etag (the LFS/Xet sha256) or ETag (the git blob sha1), unquoted. */
  etag?: string;
  size?: number;
  /** Where the bytes are: a CDN URL from the redirect, else `url`. */
  location: string;
}

type HeadResult = { ok: true; meta: FileMetadata } | { ok: false; res: Response; url: string };

/**
 * HEAD of a resolve URL, as huggingface_hub's get_hf_file_metadata makes it (file_download.py):
 * `Accept-Encoding: identity`, redirects followed only within the Hub's origin (a renamed repo
 * answers 307 with a relative Location), and a redirect to another host (the CDN of an LFS or Xet
 * file) read for its headers, not followed.
 */
async function headFile(ctx: Context, revision: string, file: string): Promise<HeadResult> {
  let url = fileUrl(ctx, revision, file);
  for (let hop = 0; ; hop++) {
    const res = await request(ctx, 'HEAD', url);
    const location = res.headers.get('location');
    const redirect = res.status >= 300 && res.status < 400 && location !== null;
    if (redirect && new URL(location, url).origin === new URL(url).origin) {
      if (hop >= MAX_REDIRECTS) throw new UnavailableError(`too many redirects from ${fileUrl(ctx, revision, file)}`);
      url = new URL(location, url).toString();
      continue;
    }
    if (!res.ok && !redirect) return { ok: false, res, url };
    const h = res.headers;
    const commit = h.get('x-repo-commit')?.trim() || undefined;
    const etag = normalizeEtag(h.get('x-linked-etag')) ?? normalizeEtag(h.get('etag'));
    const sizeHeader = h.get('x-linked-size') ?? (redirect ? null : h.get('content-length'));
    const size = sizeHeader && /^\d+$/.test(sizeHeader) ? Number(sizeHeader) : undefined;
    return { ok: true, meta: { url, commit, etag, size, location: redirect ? new URL(location, url).toString() : url } };
  }
}

/** GET of the file's bytes, following redirects by hand so the token never leaves the Hub's origin. */
async function getFile(ctx: Context, file: string, meta: FileMetadata): Promise<{ res: Response; url: string }> {
  let url = meta.location;
  for (let hop = 0; ; hop++) {
    const res = await request(ctx, 'GET', url);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new UnavailableError(`too many redirects from ${meta.location}`);
      url = new URL(location, url).toString();
      continue;
    }
    if (!res.ok) throw await failure(ctx, file, res, url);
    return { res, url };
  }
}

/** The Hub's error as one line that says what to do (X-Error-Code / X-Error-Message, as huggingface_hub reads them). */
async function failure(ctx: Context, file: string, res: Response, url: string): Promise<Error> {
  const code = res.headers.get('x-error-code') ?? '';
  const serverMsg = (res.headers.get('x-error-message') ?? '').trim().replace(/\s+/g, ' ');
  await res.body?.cancel();
  const detail = `HTTP ${res.status}${code ? ` ${code}` : ''}${serverMsg ? `: ${serverMsg}` : ''}`;
  const kind = `${ctx.repoType} repo`;
  if (code === 'GatedRepo') {
    const how = ctx.token
      ? `the account of the token in use has not been granted access: accept the licence at ${repoPage(ctx)} with that account (some gated repos also wait for the authors' approval), or set HF_TOKEN to a token of an account that has access`
      : `accept its licence at ${repoPage(ctx)} while logged in, then set HF_TOKEN to an access token of that account (${ctx.endpoint}/settings/tokens)`;
    return new GatedRepoError(ctx.repo, ctx.repoType, res.status, `${ctx.repo} is a gated ${kind}: ${how} (the Hub answered ${detail})`);
  }
  if (res.status === 401 && /invalid credentials/i.test(serverMsg)) {
    return new UnavailableError(
      `the Hub rejected the token (HF_TOKEN, or the token file under HF_HOME) for ${describe(ctx)}: ${detail}; create a new token at ${ctx.endpoint}/settings/tokens`,
    );
  }
  if (code === 'RepoNotFound' || (res.status === 401 && code === '')) {
    // Without a token the Hub answers 401 for a missing and for a private repo alike.
    const privateHint = ctx.token ? '' : ' or is private (no token was sent: set HF_TOKEN if you have access)';
    return new InputError(`${kind} ${ctx.repo} does not exist${privateHint}; check the id (${detail})`, { file: url });
  }
  if (code === 'RevisionNotFound') return new InputError(`revision ${ctx.revision} does not exist in ${kind} ${ctx.repo} (${detail})`, { file: url });
  if (res.status === 404) return new InputError(`file ${file} is not in ${describe(ctx)} (${detail})`, { file: url });
  if (res.status === 401 || res.status === 403) {
    const hint = ctx.token ? 'the token has no access to it' : 'set HF_TOKEN (or pass token) if you have access';
    return new UnavailableError(`cannot download ${file} of ${describe(ctx)} from ${shown(url)}: ${detail}; ${hint}`);
  }
  return new UnavailableError(`cannot download ${file} of ${describe(ctx)} from ${shown(url)}: ${detail}`);
}

/** Streams a response body into `blob`, verified and atomically renamed. */
async function downloadBlob(ctx: Context, file: string, ans: { res: Response; url: string; etag: string; size?: number }, blob: string): Promise<void> {
  const { res, etag, size } = ans;
  await mkdir(dirname(blob), { recursive: true });
  const tmp = blob + tmpSuffix();
  // Hub etags are content hashes: sha256 for LFS/Xet files, the git blob id for small files.
  let hash: Hash | undefined;
  if (ctx.verify && etag && /^[0-9a-f]{64}$/.test(etag)) hash = createHash('sha256');
  else if (ctx.verify && etag && /^[0-9a-f]{40}$/.test(etag) && size !== undefined) {
    hash = createHash('sha1').update(`blob ${size}\0`);
  }
  const name = `${ctx.repo}/${file}`;
  const progress = ctx.onProgress;
  const periodic = progress && (size === undefined || size >= PROGRESS_MIN_BYTES);
  const line = (got: number) =>
    size ? `${name}: ${formatBytes(got)} / ${formatBytes(size)} (${Math.floor((100 * got) / size)}%)` : `${name}: ${formatBytes(got)}`;
  let got = 0;
  const fh = await open(tmp, 'wx');
  try {
    if (periodic) progress(`downloading ${name}${size !== undefined ? ` (${formatBytes(size)})` : ''}`);
    let lastTenth = 0;
    let lastTime = Date.now();
    if (res.body) {
      for await (const chunk of res.body) {
        const buf = chunk as Uint8Array;
        await fh.write(buf);
        hash?.update(buf);
        got += buf.byteLength;
        if (periodic && got !== size) {
          const tenth = size ? Math.floor((10 * got) / size) : 0;
          const now = Date.now();
          if (tenth > lastTenth || now - lastTime >= PROGRESS_EVERY_MS) {
            lastTenth = tenth;
            lastTime = now;
            progress(line(got));
          }
        }
      }
    }
    await fh.sync();
    await fh.close();
    if (size !== undefined && got !== size) {
      throw new UnavailableError(`download of ${file} from ${shown(ans.url)} was cut short: ${got} of ${size} bytes`);
    }
    if (hash) {
      const digest = hash.digest('hex');
      if (digest !== etag) {
        throw new UnavailableError(
          `download of ${file} from ${shown(ans.url)} is corrupt: content hash ${digest} differs from the Hub's etag ${etag}` +
            ' (pass verify: false for a server whose etags are not content hashes)',
        );
      }
    }
    await rename(tmp, blob);
    progress?.(`${line(got)}, done`);
  } catch (e) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    await res.body?.cancel().catch(() => undefined);
    if (e instanceof InputError || e instanceof UnavailableError) throw e;
    const msg = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
    throw new UnavailableError(`download of ${file} of ${describe(ctx)} from ${shown(ans.url)} failed: ${msg}`);
  }
}

function snapshotPath(ctx: Context, commit: string, file: string): string {
  return join(ctx.storage, 'snapshots', commit, file);
}

function noExistPath(ctx: Context, commit: string, file: string): string {
  return join(ctx.storage, '.no_exist', commit, file);
}

interface CacheLookup {
  files: Record<string, string>;
  /** Required files not in the snapshot. */
  missing: string[];
  /** Optional files neither in the snapshot nor recorded as absent. */
  unknownOptional: string[];
}

async function lookInCache(ctx: Context, commit: string, files: string[], optional: string[]): Promise<CacheLookup> {
  const out: CacheLookup = { files: {}, missing: [], unknownOptional: [] };
  for (const f of files) {
    const p = snapshotPath(ctx, commit, f);
    if (await isFile(p)) out.files[f] = p;
    else out.missing.push(f);
  }
  for (const f of optional) {
    const p = snapshotPath(ctx, commit, f);
    if (await isFile(p)) out.files[f] = p;
    else if (!existsSync(noExistPath(ctx, commit, f))) out.unknownOptional.push(f);
  }
  return out;
}

/** Makes sure `file` is in the snapshot of ctx.commit (resolving the commit if still unknown). */
async function obtain(ctx: Context, file: string, optional: boolean): Promise<string | undefined> {
  if (ctx.commit) {
    const p = snapshotPath(ctx, ctx.commit, file);
    if (await isFile(p)) return p;
    if (optional && existsSync(noExistPath(ctx, ctx.commit, file))) return undefined;
  }
  // Pin every request after the first to the commit the first one resolved.
  const head = await headFile(ctx, ctx.commit ?? ctx.revision, file);
  if (!head.ok) {
    const { res } = head;
    const commit = res.headers.get('x-repo-commit')?.trim();
    const code = res.headers.get('x-error-code') ?? '';
    if (res.status === 404 && commit && COMMIT_HASH.test(commit) && code === 'EntryNotFound') {
      ctx.commit ??= commit;
      // Remember the absence, as huggingface_hub does, so the next call needs no request.
      await mkdir(dirname(noExistPath(ctx, commit, file)), { recursive: true });
      await writeFile(noExistPath(ctx, commit, file), '');
    }
    // A missing optional file is skipped; a missing repo or revision is an error all the same.
    if (optional && res.status === 404 && (code === 'EntryNotFound' || code === '')) {
      await res.body?.cancel();
      return undefined;
    }
    throw await failure(ctx, file, res, head.url);
  }
  const { meta } = head;
  if (!meta.commit || !meta.etag) {
    throw new UnavailableError(
      `${meta.url} answered without ${!meta.commit ? 'X-Repo-Commit' : 'an ETag'}: ${ctx.endpoint} does not look like a Hugging Face Hub ` +
        '(check HF_ENDPOINT and any proxy in between)',
    );
  }
  if (!/^[\w.-]+$/.test(meta.etag) || !COMMIT_HASH.test(meta.commit)) {
    throw new UnavailableError(`${meta.url} answered with an unusable commit ${meta.commit} or etag ${meta.etag}`);
  }
  ctx.commit ??= meta.commit;
  const pointer = snapshotPath(ctx, meta.commit, file);
  const blob = join(ctx.storage, 'blobs', meta.etag);
  // Content the cache already holds (e.g. unchanged between two commits) is not fetched again.
  if (!(await isFile(blob))) {
    const got = await getFile(ctx, file, meta);
    await downloadBlob(ctx, file, { res: got.res, url: got.url, etag: meta.etag, size: meta.size }, blob);
  }
  if (!(await isFile(pointer))) await linkIntoSnapshot(blob, pointer);
  return pointer;
}

/**
 * Downloads (or finds in the cache) the named files of a Hub repo. See the file header for the
 * protocol, the cache layout and the environment variables.
 */
export async function resolveRepoFiles(opts: ResolveRepoFilesOptions): Promise<ResolvedRepoFiles> {
  const repoType = opts.repoType ?? 'model';
  if (repoType !== 'model' && repoType !== 'dataset') {
    throw new UnknownNameError('Hub repo type', String(repoType), ['model', 'dataset']);
  }
  if (!hubIdShaped(opts.repo)) {
    throw new InputError(`${JSON.stringify(opts.repo)} is not a Hub repo id: expected "org/name" or "name"`);
  }
  const revision = opts.revision ?? 'main';
  if (revision === '' || revision.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw new InputError(`invalid revision ${JSON.stringify(revision)} for ${repoType} repo ${opts.repo}`);
  }
  const files = [...new Set(opts.files)];
  const optional = [...new Set(opts.optionalFiles ?? [])].filter((f) => !files.includes(f));
  for (const f of [...files, ...optional]) checkRelativeFile(f, opts.repo);

  // Only consult the environment for what the caller left out (reading it touches the token file).
  const needEnv = opts.endpoint === undefined || opts.cacheDir === undefined || opts.offline === undefined || opts.token === undefined;
  const env = needEnv ? hubSettings() : undefined;
  const cacheDir = opts.cacheDir ?? env!.cacheDir;
  const ctx: Context = {
    repo: opts.repo,
    repoType,
    revision,
    endpoint: (opts.endpoint ?? env!.endpoint).replace(/\/+$/, ''),
    token: opts.token ?? env!.token,
    storage: repoCacheDir(cacheDir, opts.repo, repoType),
    verify: opts.verify ?? true,
    onProgress: opts.onProgress,
  };
  const offline = opts.offline ?? env!.offline;

  const known = cachedCommit(ctx.storage, ctx.revision);
  if (offline) {
    if (!known) {
      throw new UnavailableError(
        `offline (HF_HUB_OFFLINE): cannot resolve ${[...files, ...optional].join(', ')} of ${describe(ctx)}:` +
          ` the revision is not in the cache ${cacheDir} (no refs/${revision})`,
      );
    }
    const hit = await lookInCache(ctx, known, files, optional);
    if (hit.missing.length > 0) {
      throw new UnavailableError(
        `offline (HF_HUB_OFFLINE): ${hit.missing.join(', ')} of ${describe(ctx)} (commit ${known}) is not cached in ${cacheDir}`,
      );
    }
    return { dir: join(ctx.storage, 'snapshots', known), files: hit.files, commit: known };
  }

  if (known && !opts.refresh) {
    const hit = await lookInCache(ctx, known, files, optional);
    if (hit.missing.length === 0 && hit.unknownOptional.length === 0) {
      return { dir: join(ctx.storage, 'snapshots', known), files: hit.files, commit: known };
    }
  }

  if (COMMIT_HASH.test(revision)) ctx.commit = revision;
  // Ask first for a file the cache lacks: that request resolves the commit, and files already in
  // that commit's snapshot then need no request at all.
  const inKnown = (f: string) => known !== undefined && existsSync(snapshotPath(ctx, known, f));
  const byNeed = (list: string[]) => [...list.filter((f) => !inKnown(f)), ...list.filter(inKnown)];
  const out: Record<string, string> = {};
  for (const f of byNeed(files)) out[f] = (await obtain(ctx, f, false))!;
  for (const f of byNeed(optional)) {
    const p = await obtain(ctx, f, true);
    if (p !== undefined) out[f] = p;
  }
  const commit = ctx.commit;
  if (commit && commit !== revision && commit !== known) {
    await writeAtomic(join(ctx.storage, 'refs', revision), commit);
  }
  return { dir: commit ? join(ctx.storage, 'snapshots', commit) : ctx.storage, files: out, commit };
}
