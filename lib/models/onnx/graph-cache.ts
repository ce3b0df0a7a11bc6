/**
 * Exported ONNX graphs cached on disk, keyed by what decides the graph: the exporter and its
 * version, the export options, the model's config (the exporter's signature) and the bytes of
 * every parameter as the model holds them now (so a fine-tuned model gets its own graph and a
 * reloaded checkpoint finds the graph it had).
 *
 * Where: ANGLE_ONNX_CACHE, else `<HF_HOME>/angle-onnx` (HF_HOME defaults to
 * $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface), beside the Hub's own caches. One folder
 * per graph, `<architecture>-<key>/`: `model.onnx` (the graph), `model.onnx.data` (the weights as
 * ONNX external data: written and loaded faster than inline weights, and ONNX Runtime can map it)
 * and `manifest.json` (key, exporter, output names, size and sha256 of each file). The folder
 * appears by one rename, so a reader never sees half of it; a folder whose files do not match its
 * manifest is corrupt, named in the log, and rebuilt. Least recently used graphs beyond
 * `maxBytes` (default 4 GiB) are removed after each build.
 *
 * Aliases (`aliases/<key>.json`) name a graph folder by what a caller knows before loading any
 * weights: the weight files' sha256, the config and the export options (onnxGraphAliasKey). An
 * inference-only load (lib/embed/engines/onnx-inference-model.ts) finds its graph through one and
 * never builds the tfjs model; the alias is only a pointer, so a missing or corrupt folder behind
 * it is simply a miss.
 */
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomicSync } from '../../util/atomic-write.js';
import type { TextModel } from '../types.js';
import type { ExportedOnnxGraph, OnnxExporter, OnnxExportOptions } from './exporter.js';
import { writeOnnxModel } from './model-file.js';

/** Part of every key: bump when the cache layout or the key's recipe changes. */
const CACHE_FORMAT = 'angle-onnx-cache/1';
const MODEL_FILE = 'model.onnx';
const MANIFEST_FILE = 'manifest.json';
export const DEFAULT_ONNX_CACHE_MAX_BYTES = 4 * 2 ** 30;

export interface OnnxGraphCacheOptions {
  /** Cache folder (default onnxCacheDir()). */
  dir?: string;
  /** Keep at most this many bytes of graphs (least recently used go first); default 4 GiB. */
  maxBytes?: number;
  /** Where lines about building, reusing or rebuilding a graph go (default: nowhere). */
  log?: (line: string) => void;
}

export interface CachedOnnxGraph {
  /** The .onnx file to load. */
  path: string;
  key: string;
  /** Output names (the exporter's). */
  outputs: Omit<ExportedOnnxGraph, 'model'>;
  /** Whether this call built it (false: found in the cache). */
  built: boolean;
}

interface Manifest {
  format: string;
  key: string;
  architecture: string;
  exporterVersion: number;
  options: OnnxExportOptions;
  outputs: Omit<ExportedOnnxGraph, 'model'>;
  files: Array<{ name: string; bytes: number; sha256: string }>;
  created: string;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

/** ANGLE_ONNX_CACHE, else <HF_HOME>/angle-onnx (HF_HOME as huggingface_hub derives it). */
export function onnxCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const own = nonEmpty(env.ANGLE_ONNX_CACHE);
  if (own) return own;
  const hfHome = nonEmpty(env.HF_HOME) ?? join(nonEmpty(env.XDG_CACHE_HOME) ?? join(homedir(), '.cache'), 'huggingface');
  return join(hfHome.startsWith('~/') ? join(homedir(), hfHome.slice(2)) : hfHome, 'angle-onnx');
}

/** The cache key of a model's graph: sha256 over the exporter, options, config and every parameter's bytes. */
export function onnxGraphKey(model: TextModel, exporter: OnnxExporter, opts: OnnxExportOptions): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ format: CACHE_FORMAT, architecture: exporter.architecture, version: exporter.version, opts, signature: exporter.signature(model) }));
  for (const name of [...model.params.keys()].sort()) {
    const v = model.params.get(name)!;
    const data = v.dataSync();
    h.update(`\n${name} ${v.dtype} [${v.shape.join(',')}]\n`);
    h.update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  }
  return h.digest('hex');
}

/**
 * The alias key of a graph known by its files rather than its loaded parameters: sha256 over the
 * exporter and its version, the options, the model's config.json text and its weight files' sha256.
 */
export function onnxGraphAliasKey(exporter: Pick<OnnxExporter, 'architecture' | 'version'>, opts: OnnxExportOptions, configText: string, weightsSha256: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ format: CACHE_FORMAT, alias: 1, architecture: exporter.architecture, version: exporter.version, opts, weightsSha256 }))
    .update('\n')
    .update(configText)
    .digest('hex');
}

const ALIAS_DIR = 'aliases';

/** The cached graph an alias points to, when the alias and the folder behind it are intact; else undefined. */
export function cachedOnnxGraphByAlias(alias: string, cache: Pick<OnnxGraphCacheOptions, 'dir' | 'log'> = {}): CachedOnnxGraph | undefined {
  const root = cache.dir ?? onnxCacheDir();
  const file = join(root, ALIAS_DIR, `${alias}.json`);
  if (!existsSync(file)) return undefined;
  let folder: string;
  let key: string;
  try {
    ({ folder, key } = JSON.parse(readFileSync(file, 'utf8')) as { folder: string; key: string });
  } catch {
    return undefined;
  }
  const dir = join(root, folder);
  if (typeof folder !== 'string' || folder.includes('/') || !existsSync(dir)) return undefined;
  const { manifest, problem } = checkEntry(dir, key);
  if (!manifest) {
    cache.log?.(`onnx: cached graph ${dir} (through alias ${alias.slice(0, 12)}…) is unusable (${problem}); it will be rebuilt`);
    return undefined;
  }
  const now = new Date();
  utimesSync(join(dir, MANIFEST_FILE), now, now);
  return { path: join(dir, MODEL_FILE), key, outputs: manifest.outputs, built: false };
}

/** Records that `alias` names this cached graph. */
export function rememberOnnxGraphAlias(alias: string, graph: CachedOnnxGraph, cache: Pick<OnnxGraphCacheOptions, 'dir'> = {}): void {
  const root = cache.dir ?? onnxCacheDir();
  mkdirSync(join(root, ALIAS_DIR), { recursive: true });
  writeFileAtomicSync(join(root, ALIAS_DIR, `${alias}.json`), JSON.stringify({ folder: basename(dirname(graph.path)), key: graph.key }) + '\n');
}

/** sha256 of a file, read in 16 MiB pieces (a whole BERT-base weight file at once would add 0.4 GiB to the peak). */
function sha256File(path: string): string {
  const h = createHash('sha256');
  const buf = Buffer.allocUnsafe(16 * 2 ** 20);
  const fd = openSync(path, 'r');
  try {
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return h.digest('hex');
}

/** Why the cached folder is unusable, or undefined when its files match its manifest. */
function checkEntry(dir: string, key: string): { manifest?: Manifest; problem?: string } {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as Manifest;
  } catch (e) {
    return { problem: `${MANIFEST_FILE} unreadable (${(e as Error).message})` };
  }
  if (manifest.format !== CACHE_FORMAT || manifest.key !== key || !Array.isArray(manifest.files)) return { problem: `${MANIFEST_FILE} does not describe this graph` };
  for (const f of manifest.files) {
    const p = join(dir, f.name);
    if (!existsSync(p)) return { problem: `${f.name} is missing` };
    const bytes = statSync(p).size;
    if (bytes !== f.bytes) return { problem: `${f.name} has ${bytes} bytes, the manifest says ${f.bytes}` };
    if (sha256File(p) !== f.sha256) return { problem: `${f.name} does not match its sha256` };
  }
  return { manifest };
}

/** Removes the least recently used graph folders until the cache holds at most maxBytes (never `keep`). */
function prune(dir: string, maxBytes: number, keep: string, log?: (line: string) => void): void {
  const entries = readdirSync(dir)
    .filter((e) => !e.includes('.tmp-') && e !== ALIAS_DIR)
    .map((e) => join(dir, e))
    .filter((p) => existsSync(join(p, MANIFEST_FILE)))
    .map((p) => ({ p, used: statSync(join(p, MANIFEST_FILE)).mtimeMs, bytes: readdirSync(p).reduce((s, f) => s + statSync(join(p, f)).size, 0) }))
    .sort((a, b) => b.used - a.used);
  let total = 0;
  for (const e of entries) {
    total += e.bytes;
    if (total > maxBytes && e.p !== keep) {
      rmSync(e.p, { recursive: true, force: true });
      total -= e.bytes;
      log?.(`onnx: removed least recently used cached graph ${e.p} (cache over ${(maxBytes / 2 ** 30).toFixed(1)} GiB)`);
    }
  }
}

/**
 * Fills a fresh temporary folder beside `dir` and renames it to `dir`. Another process may publish
 * the same graph at the same time (parallel test files): whichever rename comes second replaces or
 * yields to an identical folder, and no process removes another's temporary folder.
 */
function publishDirectory(dir: string, fill: (tmp: string) => void): void {
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(tmp, { recursive: true });
  try {
    fill(tmp);
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(tmp, dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The cached graph of `model` with these options, built (and cached) when absent or corrupt.
 * `rebuild` forces a new build, e.g. after ONNX Runtime refused to load the cached one.
 */
export function cachedOnnxGraph(model: TextModel, exporter: OnnxExporter, opts: OnnxExportOptions, cache: OnnxGraphCacheOptions & { rebuild?: string } = {}): CachedOnnxGraph {
  const root = cache.dir ?? onnxCacheDir();
  const key = onnxGraphKey(model, exporter, opts);
  const dir = join(root, `${exporter.architecture}-${key.slice(0, 32)}`);
  const path = join(dir, MODEL_FILE);
  if (existsSync(dir) && cache.rebuild === undefined) {
    const { manifest, problem } = checkEntry(dir, key);
    if (manifest) {
      const now = new Date();
      utimesSync(join(dir, MANIFEST_FILE), now, now); // most recently used, for pruning
      // A reuse is the normal case and says nothing (a notebook would show a line per encoder);
      // builds, rebuilds and removals are logged.
      return { path, key, outputs: manifest.outputs, built: false };
    }
    cache.log?.(`onnx: cached graph ${dir} is corrupt (${problem}); rebuilding it`);
  } else if (cache.rebuild !== undefined) {
    cache.log?.(`onnx: cached graph ${dir} could not be loaded (${cache.rebuild}); rebuilding it`);
  }
  const t0 = performance.now();
  const { model: graph, ...outputs } = exporter.export(model, opts);
  publishDirectory(dir, (tmp) => {
    // Weights always as external data: for BERT-base this writes in 2 s instead of 7 s, loads in
    // 3.4 s instead of 7.7 s and peaks 0.8 GiB lower than inline initializers (a one-off development
    // measurement on this 2-core machine, not in bench/results).
    const written = writeOnnxModel(graph, join(tmp, MODEL_FILE), { externalDataAbove: 0 });
    const files = written.files.map((f) => {
      const name = f.slice(tmp.length + 1);
      return { name, bytes: statSync(f).size, sha256: sha256File(f) };
    });
    const manifest: Manifest = { format: CACHE_FORMAT, key, architecture: exporter.architecture, exporterVersion: exporter.version, options: opts, outputs, files, created: new Date().toISOString() };
    writeFileSync(join(tmp, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
  });
  const bytes = readdirSync(dir).reduce((s, f) => s + statSync(join(dir, f)).size, 0);
  cache.log?.(`onnx: built ${exporter.architecture} graph in ${((performance.now() - t0) / 1000).toFixed(1)} s (${(bytes / 2 ** 20).toFixed(0)} MiB): ${dir}`);
  prune(root, cache.maxBytes ?? DEFAULT_ONNX_CACHE_MAX_BYTES, dir, cache.log);
  return { path, key, outputs, built: true };
}
