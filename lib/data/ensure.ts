/**
 * Making a data set available: the one asynchronous step, after which the synchronous loaders
 * find it. A split already under the local data root is left alone; the others are downloaded
 * from the Hugging Face Hub into its cache (lib/hub: HF_ENDPOINT, HF_TOKEN,
 * HF_HUB_OFFLINE, HF_HOME / HF_HUB_CACHE) and prepared into the loader's format (prepare.ts).
 * A second call finds everything in the cache and makes no request.
 *
 *   await ensureDataset('QQP');            // train + dev
 *   const dev = loadQqp('dev');            // reads the prepared copy from the cache
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { hubSettings, repoCacheDir, resolveRepoFiles } from '../hub/index.js';
import { InputError, UnavailableError } from '../util/errors.js';
import { cachedCommit, extractedArchiveDir, hubCacheDir, preparedDir } from './cache.js';
import { findSplit, howToGet, type LocateOptions } from './locate.js';
import { extractArchiveRoot, flickrCsvToCaptions, parquetToPairsJsonl } from './prepare.js';
import { datasetEntry, hubFileOf, splitEntry, type DatasetId } from './registry.js';

export interface EnsureOptions extends LocateOptions {
  /** Splits to make available; default all of the data set's splits. */
  splits?: readonly string[];
  /** Download even the splits the data root has. */
  ignoreLocal?: boolean;
  /** Hub settings; each defaults as in huggingface_hub (see lib/hub/settings.ts). */
  endpoint?: string;
  offline?: boolean;
  token?: string;
  /** Re-resolve the revision on the Hub even when the cache has it. */
  refresh?: boolean;
  onProgress?: (msg: string) => void;
}

export type SplitSource = 'local' | 'cache' | 'hub';

export interface EnsuredDataset {
  id: DatasetId;
  /** Where each requested split was found: the data root, the cache, or downloaded now. */
  splits: Record<string, SplitSource>;
  /** The folder the Hub copy was prepared into (when any split came from the Hub or the cache). */
  preparedDir?: string;
  /** The data root folder (when any split is local). */
  localDir?: string;
  commit?: string;
}

/** The SentEval archive's root is the folder that holds STS/. */
const ARCHIVE_MARKER = 'STS';

/** Downloads (if needed) and prepares the Hub copy of `splits`; returns the prepared folder and commit. */
async function fromHub(id: DatasetId, splits: readonly string[], opts: EnsureOptions): Promise<{ dir: string; commit: string; downloaded: boolean }> {
  const e = datasetEntry(id);
  const cacheDir = hubCacheDir(opts);
  const files = [...new Set(splits.map((s) => hubFileOf(id, s)))];
  const known = cachedCommit(id, opts);
  const wasCached = known !== undefined && files.every((f) => existsSync(join(repoCacheDir(cacheDir, e.hub.repo, 'dataset'), 'snapshots', known, f)));
  const offline = opts.offline ?? hubSettings().offline;
  let got;
  try {
    got = await resolveRepoFiles({
      repo: e.hub.repo,
      repoType: 'dataset',
      revision: opts.revision,
      files,
      endpoint: opts.endpoint,
      cacheDir,
      offline,
      token: opts.token,
      refresh: opts.refresh,
      onProgress: opts.onProgress,
    });
  } catch (err) {
    if (!(err instanceof UnavailableError)) throw err;
    const how = splits.map((s) => `${s}: ${howToGet(id, s, opts)}`).join('; ');
    const why = offline
      ? `HF_HUB_OFFLINE is set and the Hugging Face cache ${cacheDir} does not have ${files.join(', ')} of ${e.hub.repo}`
      : `the download from the Hub failed`;
    throw new UnavailableError(
      `${id} (${splits.join(', ')}): not under the data root and ${why}. To provide it: ${how}` +
        (offline ? `; or run the download where the Hub is reachable (HF_HUB_OFFLINE unset) and copy its ${repoCacheDir(cacheDir, e.hub.repo, 'dataset')} folder here` : '') +
        `. (${err.message})`,
    );
  }
  const commit = got.commit;
  if (!commit) throw new UnavailableError(`${e.hub.repo}: the Hub answered without a commit, so the prepared copy cannot be pinned`);
  const dir = preparedDir(id, cacheDir, commit);
  switch (e.hub.kind) {
    case 'archive': {
      const file = e.hub.files['*'];
      const root = extractedArchiveDir(id, cacheDir, commit, file);
      if (!existsSync(root)) {
        opts.onProgress?.(`extracting ${e.hub.repo}/${file}`);
        await extractArchiveRoot(got.files[file], root, ARCHIVE_MARKER);
      }
      if (!existsSync(dir)) throw new InputError(`${file} has no folder ${e.hub.archivePath}/ (expected ${id}'s files there)`, { file: got.files[file] });
      break;
    }
    case 'file':
      break;
    case 'parquet':
      for (const s of splits) {
        const out = join(dir, (splitEntry(id, s).prepared ?? splitEntry(id, s).local)[0]);
        if (!existsSync(out)) {
          opts.onProgress?.(`converting ${e.hub.repo}/${hubFileOf(id, s)} to ${out}`);
          await parquetToPairsJsonl(got.files[hubFileOf(id, s)], e.hub.columns!, out);
        }
      }
      break;
    case 'captions-csv': {
      const missing = splits.filter((s) => !existsSync(join(dir, splitEntry(id, s).local[0])));
      if (missing.length > 0) await flickrCsvToCaptions(got.files[hubFileOf(id, missing[0])], dir, missing);
      break;
    }
  }
  return { dir, commit, downloaded: !wasCached };
}

/**
 * Makes the splits of `id` available to the loaders: those under the data root as they are, the
 * rest from the Hub cache, downloading and preparing what the cache lacks.
 */
export async function ensureDataset(id: DatasetId, opts: EnsureOptions = {}): Promise<EnsuredDataset> {
  const e = datasetEntry(id);
  const splits = opts.splits ?? Object.keys(e.splits);
  for (const s of splits) splitEntry(id, s);
  const out: EnsuredDataset = { id, splits: {} };
  const need: string[] = [];
  for (const s of splits) {
    const local = opts.ignoreLocal ? undefined : findSplit(id, s, { ...opts, useCache: false });
    if (local) {
      out.splits[s] = 'local';
      out.localDir = local.dir;
    } else need.push(s);
  }
  if (need.length === 0) return out;
  const hub = await fromHub(id, need, opts);
  for (const s of need) {
    const found = findSplit(id, s, { ...opts, useDataRoot: false, useCache: true });
    if (!found) throw new InputError(`${id} ${s}: prepared from the Hub but its files are not in ${hub.dir}`);
    out.splits[s] = hub.downloaded ? 'hub' : 'cache';
  }
  out.preparedDir = hub.dir;
  out.commit = hub.commit;
  return out;
}

