/**
 * Finding a split's files without the network: first under the local data root (the argument,
 * else ANGLE_DATA_DIR), then in the Hugging Face cache where `ensureDataset` / `npm run data --
 * download` put the Hub copy. When neither has it, the error says exactly which files to put
 * where, or which command fetches them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';
import { cachedPreparedDir, hubCacheDir, type CacheOptions } from './cache.js';
import { optionalDataDir } from './paths.js';
import { datasetEntry, hubFileOf, splitEntry, type DatasetId } from './registry.js';

export interface LocateOptions extends CacheOptions {
  /** Data root; default ANGLE_DATA_DIR. Unset: only the Hub cache is looked at. */
  dataDir?: string;
  /** false: never look in the Hugging Face cache (only the data root). */
  useCache?: boolean;
  /** false: never look under the data root (only the cache), even with ANGLE_DATA_DIR set. */
  useDataRoot?: boolean;
}

/** Which of the split's file lists was found (they are read differently). */
export type SplitLayout = 'local' | 'localFallback' | 'prepared';

export interface LocatedSplit {
  id: DatasetId;
  split: string;
  where: 'local' | 'cache';
  layout: SplitLayout;
  dir: string;
  /** Absolute paths, in the order of the registry's file list for `layout`. */
  files: string[];
  /** The Hub commit of a cached copy. */
  commit?: string;
}

function allExist(dir: string, names: readonly string[]): string[] | undefined {
  const files = names.map((n) => join(dir, n));
  return files.every((f) => existsSync(f)) ? files : undefined;
}

/** The split's files, or undefined when neither the data root nor the cache has them. */
export function findSplit(id: DatasetId, split: string, opts: LocateOptions = {}): LocatedSplit | undefined {
  const e = datasetEntry(id);
  const s = splitEntry(id, split);
  const root = opts.useDataRoot === false ? undefined : optionalDataDir(opts.dataDir);
  if (root) {
    const dir = join(root, e.localDir);
    const primary = allExist(dir, s.local);
    if (primary) return { id, split, where: 'local', layout: 'local', dir, files: primary };
    const fallback = s.localFallback && allExist(dir, s.localFallback);
    if (fallback) return { id, split, where: 'local', layout: 'localFallback', dir, files: fallback };
  }
  if (opts.useCache !== false) {
    const cached = cachedPreparedDir(id, opts);
    const files = cached && allExist(cached.dir, s.prepared ?? s.local);
    if (cached && files) return { id, split, where: 'cache', layout: 'prepared', dir: cached.dir, files, commit: cached.commit };
  }
  return undefined;
}

/** What to do to provide a split that was not found (used in errors and by `npm run data -- check`). */
export function howToGet(id: DatasetId, split: string, opts: LocateOptions = {}): string {
  const e = datasetEntry(id);
  const s = splitEntry(id, split);
  let root: string | undefined;
  try {
    root = optionalDataDir(opts.dataDir);
  } catch {
    root = undefined;
  }
  const where = root ? join(root, e.localDir) : `<ANGLE_DATA_DIR>/${e.localDir}`;
  const files = [s.local, ...(s.localFallback ? [s.localFallback] : [])].map((l) => l.join(' + ')).join(' or ');
  const hubFile = hubFileOf(id, split);
  return (
    `put ${files} in ${where}/, or download it from the Hugging Face Hub (dataset ${e.hub.repo}, ${hubFile}) ` +
    `with \`npm run data -- download ${id}\` (in code: await ensureDataset('${id}'))`
  );
}

/** Like findSplit, but a split that is nowhere is an InputError saying where it was looked for and how to get it. */
export function locateSplit(id: DatasetId, split: string, opts: LocateOptions = {}): LocatedSplit {
  const found = findSplit(id, split, opts);
  if (found) return found;
  const e = datasetEntry(id);
  const s = splitEntry(id, split);
  const root = optionalDataDir(opts.dataDir);
  const looked = [
    root ? `not under ${join(root, e.localDir)}/` : 'no data root (ANGLE_DATA_DIR is not set)',
    opts.useCache === false ? 'cache not consulted' : `not in the Hugging Face cache ${hubCacheDir(opts)}`,
  ].join('; ');
  const missing = root ? s.local.map((n) => join(root, e.localDir, n)).find((f) => !existsSync(f)) : undefined;
  throw new InputError(`${id} ${split}: missing file ${s.local.join(' + ')} (${looked}). To get it: ${howToGet(id, split, opts)}`, {
    file: missing,
  });
}
