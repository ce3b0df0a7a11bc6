/**
 * The Hugging Face cache as huggingface_hub lays it out, read without the network: a repo's
 * folder, and the commit a branch or tag pointed at when it was last resolved. Shared by the
 * model and the data-set downloads, so both read the cache the same way.
 *
 *   {cacheDir}/models--org--name/refs/<revision>        the commit a branch/tag pointed at
 *   {cacheDir}/datasets--org--name/...                  the same for data sets
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type RepoType = 'model' | 'dataset';

/** A full git commit hash, as the Hub's refs and X-Repo-Commit carry them. */
export const COMMIT_HASH = /^[0-9a-f]{40}$/;

/** The repo's folder in the cache: `models--org--name` / `datasets--org--name`. */
export function repoCacheDir(cacheDir: string, repo: string, repoType: RepoType = 'model'): string {
  return join(cacheDir, `${repoType}s--${repo.split('/').join('--')}`);
}

/** The commit the cache knows for `revision` (refs/<revision>), or the revision itself if it is a commit. */
export function cachedCommit(repoDir: string, revision = 'main'): string | undefined {
  if (COMMIT_HASH.test(revision)) return revision;
  try {
    const c = readFileSync(join(repoDir, 'refs', revision), 'utf8').trim();
    return COMMIT_HASH.test(c) ? c : undefined;
  } catch {
    return undefined;
  }
}
