/**
 * Where the Hub copy of a data set lives in the Hugging Face cache, found without the network so
 * that the synchronous loaders can read what `ensureDataset` downloaded.
 *
 * Inside the repo's cache folder (`datasets--org--name`, huggingface_hub's layout; its tools look
 * only at refs/, blobs/ and snapshots/, and deleting the repo's folder removes these as well):
 *
 *   snapshots/<commit>/<file>                          the downloaded file ('file' kind reads it here)
 *   angle-extracted/<commit>/<archive stem>/...         an extracted archive (senteval.tar)
 *   angle-prepared/<commit>/<id>/<split files>          parquet / csv converted to the loader's format
 *
 * Everything under angle-* is written to a temporary name and renamed into place, so a folder
 * that exists is complete.
 */
import { existsSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { cachedCommit as cachedRepoCommit, hubSettings, repoCacheDir } from '../hub/index.js';
import { datasetEntry, type DatasetId } from './registry.js';

export interface CacheOptions {
  /** The Hugging Face hub cache; default as huggingface_hub (HF_HUB_CACHE, HF_HOME, ...). */
  cacheDir?: string;
  /** Branch, tag or commit of the Hub repo; default main. */
  revision?: string;
}

export function hubCacheDir(opts: CacheOptions = {}): string {
  return opts.cacheDir ?? hubSettings().cacheDir;
}

/** The repo's cache folder for a data set. */
export function datasetRepoDir(id: DatasetId, cacheDir: string): string {
  return repoCacheDir(cacheDir, datasetEntry(id).hub.repo, 'dataset');
}

/** The commit the cache knows for the revision (refs/<revision>), or the revision itself if it is a commit. */
export function cachedCommit(id: DatasetId, opts: CacheOptions = {}): string | undefined {
  return cachedRepoCommit(datasetRepoDir(id, hubCacheDir(opts)), opts.revision ?? 'main');
}

/** Folder an archive of the repo is extracted into. */
export function extractedArchiveDir(id: DatasetId, cacheDir: string, commit: string, archiveFile: string): string {
  return join(datasetRepoDir(id, cacheDir), 'angle-extracted', commit, basename(archiveFile, extname(archiveFile)));
}

/** The folder holding the files a data set's loader reads from its Hub copy at `commit`. */
export function preparedDir(id: DatasetId, cacheDir: string, commit: string): string {
  const e = datasetEntry(id);
  const repoDir = datasetRepoDir(id, cacheDir);
  switch (e.hub.kind) {
    case 'archive':
      return join(extractedArchiveDir(id, cacheDir, commit, e.hub.files['*']), e.hub.archivePath ?? '');
    case 'file':
      return join(repoDir, 'snapshots', commit);
    case 'parquet':
    case 'captions-csv':
      return join(repoDir, 'angle-prepared', commit, id);
  }
}

/** The prepared folder when the cache has one for the revision, else undefined. */
export function cachedPreparedDir(id: DatasetId, opts: CacheOptions = {}): { dir: string; commit: string } | undefined {
  const commit = cachedCommit(id, opts);
  if (!commit) return undefined;
  const dir = preparedDir(id, hubCacheDir(opts), commit);
  return existsSync(dir) ? { dir, commit } : undefined;
}
