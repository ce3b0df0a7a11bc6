/**
 * Two real HTTP servers on 127.0.0.1 that answer as huggingface.co and its file CDNs do, for the
 * tests of lib/hub and of what downloads through it (models, data sets). Each behaviour below is
 * what the Hub does today, with where it was checked:
 *
 * - `HEAD|GET /{repo}/resolve/{revision}/{file}` (datasets: `/datasets/{repo}/...`), the revision
 *   one URL-encoded path segment (`refs%2Fpr%2F1`), as huggingface_hub's `hf_hub_url` builds it
 *   (`quote(revision, safe="")`, file_download.py). HEAD answers with GET's headers and no body.
 * - A file stored in git: 200 with `X-Repo-Commit`, `ETag: "<git blob sha1>"`, `Content-Length`.
 * - An LFS or Xet-backed file: `302 Found` to another host (`cdn-lfs.hf.co` for LFS, the Xet
 *   bridge `cas-bridge.xethub.hf.co/xet-bridge-us/...` for Xet: here the second server) with a
 *   signed query string, and on the Hub's response `X-Repo-Commit`, `X-Linked-Etag: "<sha256>"`,
 *   `X-Linked-Size`; Xet files also carry `X-Xet-Hash` and a `Link: <...>; rel="xet-auth"`, which
 *   only Xet-aware clients use (huggingface_hub constants.py; Hub docs "Backward Compatibility
 *   with LFS": legacy clients get a single URL from the bridge). The `ETag` of the 302 is not the
 *   file's hash, so a client must prefer `X-Linked-Etag` (huggingface_hub `get_hf_file_metadata`).
 * - The CDN serves a signed URL and answers 400 when an `Authorization` header comes too (as S3
 *   does: one auth mechanism per request), so a client that forwards the token fails here as it
 *   would there; huggingface_hub drops the header for another host (`_get_metadata_or_catch_error`).
 * - Errors carry `X-Error-Code` / `X-Error-Message` (huggingface_hub utils/_http.py
 *   `hf_raise_for_status`): a missing or private repo is 401 `RepoNotFound` without a valid token
 *   and 404 with one; a wrong token is 401 "Invalid credentials in Authorization header"; a gated
 *   repo (meta-llama) is 401 `GatedRepo` without a token and 403 `GatedRepo` ("... you are not in
 *   the authorized list. Visit https://huggingface.co/<id> to ask for access.") when the token's
 *   account has not accepted the licence (messages as users report them, e.g. kubeai-project/kubeai
 *   #155, city96/ComfyUI_ExtraModels #99); `RevisionNotFound` and `EntryNotFound` are 404, the latter
 *   with `X-Repo-Commit` (huggingface_hub caches it under `.no_exist/<commit>/`).
 * - A renamed repo answers 307 with a relative `Location` to its new name (huggingface_hub follows
 *   only relative redirects on its HEAD, `_httpx_follow_relative_redirects_with_backoff`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** The git blob id of a file: what the Hub sends as ETag for files stored in git. */
export const gitSha1 = (b: Uint8Array) => createHash('sha1').update(`blob ${b.byteLength}\0`).update(b).digest('hex');

export type RepoType = 'model' | 'dataset';
export type Storage = 'git' | 'lfs' | 'xet';

export interface FakeRepo {
  /** Branch, tag or `refs/pr/N` -> commit; commit hashes themselves are accepted as revisions. */
  refs: Record<string, string>;
  /** The files at every commit, unless `filesAt` has the commit. */
  files: Record<string, Buffer>;
  /** Files at a particular commit (e.g. a pull request that adds a conversion). */
  filesAt?: Record<string, Record<string, Buffer>>;
  /** How a file is stored (default: weights, archives and parquet in Xet, the rest in git). */
  storage?: (file: string) => Storage;
  /** Tokens that may read the repo (private: without one it looks missing). */
  privateTo?: Set<string>;
  /** Gated: tokens whose accounts accepted the licence. */
  gatedFor?: Set<string>;
  /** Files whose body the CDN cuts off half way (the connection is destroyed). */
  truncate?: Set<string>;
  /** Files whose announced etag is the hash of other bytes. */
  lie?: Set<string>;
}

export interface HubRequest {
  server: 'hub' | 'cdn';
  method: string;
  path: string;
  auth?: string;
}

export interface FakeHub {
  endpoint: string;
  /** The CDN's origin (another port: another host, for the client's purposes). */
  cdn: string;
  /** Keys: "model:org/name" or "dataset:org/name". */
  repos: Map<string, FakeRepo>;
  /** Old id -> new id ("model:org/old" -> "org/new"). */
  renamed: Map<string, string>;
  /** Tokens the Hub knows (any other bearer token is invalid). */
  tokens: Set<string>;
  requests: HubRequest[];
  close(): Promise<void>;
}

/** Files the Hub's default .gitattributes sends to LFS (today: Xet) storage. */
export function defaultStorage(file: string): Storage {
  return /\.(safetensors|bin|pt|pth|h5|msgpack|onnx|parquet|tar|gz|zip|arrow)$/.test(file) ? 'xet' : 'git';
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function origin(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function fail(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: headers['x-error-message'] ?? body }));
}

export async function startFakeHub(): Promise<FakeHub> {
  const repos = new Map<string, FakeRepo>();
  const renamed = new Map<string, string>();
  const tokens = new Set<string>();
  const requests: HubRequest[] = [];
  /** Signed path -> what the CDN serves there. */
  const blobs = new Map<string, { data: Buffer; truncate: boolean }>();

  const cdn = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ server: 'cdn', method: req.method ?? '', path: url.pathname, auth: req.headers.authorization });
    if (req.headers.authorization) {
      // S3 refuses a request signed twice (query signature and Authorization header).
      res.writeHead(400, { 'content-type': 'application/xml' });
      return void res.end('<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>');
    }
    const blob = blobs.get(url.pathname);
    if (!blob || !url.searchParams.has('X-Amz-Signature')) return void res.writeHead(403).end();
    res.writeHead(200, { 'content-length': blob.data.length, etag: '"0d2a7a3b5c-1"', 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' });
    if (req.method === 'HEAD') return void res.end();
    if (blob.truncate) return void res.write(blob.data.subarray(0, blob.data.length >> 1), () => res.destroy());
    res.end(blob.data);
  });
  const cdnOrigin = origin(cdn);

  const hub = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const auth = req.headers.authorization;
    requests.push({ server: 'hub', method: req.method ?? '', path: req.url ?? '', auth });
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405).end();
    const m = /^\/(datasets\/)?([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (!m) return void fail(res, 404, {}, 'Not Found');
    const type: RepoType = m[1] ? 'dataset' : 'model';
    const id = m[2];
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
    if (token !== undefined && !tokens.has(token)) {
      return void fail(res, 401, { 'x-error-message': 'Invalid credentials in Authorization header' }, 'Unauthorized');
    }
    const newName = renamed.get(`${type}:${id}`);
    if (newName) {
      res.writeHead(307, { location: `${m[1] ? '/datasets' : ''}/${newName}/resolve/${m[3]}/${m[4]}` });
      return void res.end();
    }
    const repo = repos.get(`${type}:${id}`);
    if (!repo || (repo.privateTo && !(token && repo.privateTo.has(token)))) {
      // Without a token the Hub cannot say whether the repo is missing or private: 401 either way.
      return void fail(res, token ? 404 : 401, { 'x-error-code': 'RepoNotFound', 'x-error-message': 'Repository not found' }, 'Repository not found');
    }
    const kind = type === 'dataset' ? 'dataset' : 'model';
    if (repo.gatedFor && !(token && repo.gatedFor.has(token))) {
      const msg = token
        ? `Access to ${kind} ${id} is restricted and you are not in the authorized list. Visit https://huggingface.co/${type === 'dataset' ? 'datasets/' : ''}${id} to ask for access.`
        : `Access to ${kind} ${id} is restricted. You must have access to it and be authenticated to access it. Please log in.`;
      return void fail(res, token ? 403 : 401, { 'x-error-code': 'GatedRepo', 'x-error-message': msg }, msg);
    }
    const rev = decodeURIComponent(m[3]);
    const commit = repo.refs[rev] ?? (Object.values(repo.refs).includes(rev) ? rev : undefined);
    if (!commit) return void fail(res, 404, { 'x-error-code': 'RevisionNotFound', 'x-error-message': `Invalid rev id: ${rev}` }, 'Revision not found');
    const file = m[4].split('/').map(decodeURIComponent).join('/');
    const data = (repo.filesAt?.[commit] ?? repo.files)[file];
    if (!data) {
      return void fail(res, 404, { 'x-error-code': 'EntryNotFound', 'x-error-message': 'Entry not found', 'x-repo-commit': commit }, 'Entry not found');
    }
    const storage = (repo.storage ?? defaultStorage)(file);
    if (storage !== 'git') {
      const oid = sha256(data);
      const etag = repo.lie?.has(file) ? sha256(Buffer.concat([data, Buffer.from('x')])) : oid;
      const path = storage === 'xet' ? `/xet-bridge-us/${sha256(Buffer.from(id)).slice(0, 24)}/${oid}` : `/repos/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
      blobs.set(path, { data, truncate: repo.truncate?.has(file) ?? false });
      const signature = randomBytes(16).toString('hex');
      const headers: Record<string, string> = {
        location: `${cdnOrigin}${path}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=${signature}`,
        'x-repo-commit': commit,
        'x-linked-etag': `"${etag}"`,
        'x-linked-size': String(data.length),
        etag: `W/"${gitSha1(Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${data.length}\n`))}"`,
        'content-type': 'text/plain; charset=utf-8',
      };
      if (storage === 'xet') {
        const xetHash = sha256(Buffer.concat([Buffer.from('xet'), data]));
        headers['x-xet-hash'] = xetHash;
        headers.link = `<${origin(hub)}/api/${kind}s/${id}/xet-read-token/${commit}>; rel="xet-auth", <${cdnOrigin}/v1/reconstructions/${xetHash}>; rel="xet-reconstruction-info"`;
      }
      res.writeHead(302, headers);
      return void res.end(req.method === 'HEAD' ? undefined : `Found. Redirecting to ${headers.location}`);
    }
    res.writeHead(200, { 'x-repo-commit': commit, etag: `"${gitSha1(data)}"`, 'content-length': data.length, 'content-type': 'application/octet-stream' });
    res.end(req.method === 'HEAD' ? undefined : data);
  });

  return {
    endpoint: origin(hub),
    cdn: cdnOrigin,
    repos,
    renamed,
    tokens,
    requests,
    close: async () => {
      await Promise.all([hub, cdn].map((s) => new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections()))));
    },
  };
}
