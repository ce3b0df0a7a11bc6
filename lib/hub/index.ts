/**
 * The Hugging Face Hub: settings from the environment, the cache layout, and file downloads into
 * the cache. Shared by models (lib/models) and data sets (lib/data).
 */
export { hubSettings, isHubId, type HubSettings } from './settings.js';
export { cachedCommit, repoCacheDir, COMMIT_HASH, type RepoType } from './cache.js';
export { resolveRepoFiles, type ResolveRepoFilesOptions, type ResolvedRepoFiles } from './client.js';
