/**
 * The Hugging Face Hub: settings from the environment, the cache layout, and file downloads into
 * the cache. Shared by models (lib/models) and data sets (lib/data).
 *
 * What the client (./client.ts) and its test servers (test/helpers/fake-hub.ts) were checked
 * against, and what each source settled:
 * - huggingface_hub's source (github.com/huggingface/huggingface_hub, main of August 2026):
 *   src/huggingface_hub/file_download.py — `hf_hub_url` quotes the revision as one path segment
 *   (`quote(revision, safe="")`, so `refs/pr/1` is `refs%2Fpr%2F1`); `get_hf_file_metadata`
 *   makes a HEAD with `Accept-Encoding: identity`, follows only relative redirects, and reads
 *   `X-Repo-Commit`, `X-Linked-Etag` before `ETag`, `X-Linked-Size` before `Content-Length`,
 *   `Location`; `_get_metadata_or_catch_error` drops the `authorization` header when the download
 *   URL is on another host and caches an `EntryNotFound` under `.no_exist/<commit>/`;
 *   `_cache_commit_hash_for_specific_revision` writes `refs/<revision>` (so `refs/refs/pr/1`).
 *   src/huggingface_hub/utils/_http.py `hf_raise_for_status` and tests/test_utils_errors.py —
 *   `X-Error-Code` GatedRepo / RepoNotFound / RevisionNotFound / EntryNotFound with
 *   `X-Error-Message`; 401 without a code is a missing or private repo; "Invalid credentials in
 *   Authorization header" is a bad token.
 * - Hub documentation: https://huggingface.co/docs/hub/xet/legacy-git-lfs ("Backward Compatibility
 *   with LFS": a client that is not Xet-aware gets a single URL from the Xet bridge);
 *   https://huggingface.co/docs/hub/models-gated (access requests, granted per user);
 *   https://huggingface.co/docs/huggingface_hub/guides/download (`revision="refs/pr/3"`);
 *   https://huggingface.co/docs/huggingface_hub/guides/manage-cache (blobs/, snapshots/, refs/,
 *   .no_exist/).
 * - Stored Hub pages of resolve URLs: "Found. Redirecting to https://cas-bridge.xethub.hf.co/
 *   xet-bridge-us/<id>/<sha256>?X-Amz-...", i.e. a 302 to another host with a signed URL.
 * - Gated answers as users quote them: 401 "Access to model <id> is restricted. You must have
 *   access to it and be authenticated to access it. Please log in." (city96/ComfyUI_ExtraModels
 *   issue 99) and 403 "... is restricted and you are not in the authorized list. Visit
 *   https://huggingface.co/<id> to ask for access." (kubeai-project/kubeai issue 155); the
 *   `GatedRepo` code itself: huggingface_hub pull request 1225.
 * Not seen directly (no Hub from this machine): the exact `ETag` of today's 302 answers (the
 * client does not rely on it) and the CDN's own headers beyond the signed URL.
 */
export { hubSettings, isHubId, type HubSettings } from './settings.js';
export { cachedCommit, repoCacheDir, COMMIT_HASH, type RepoType } from './cache.js';
export { resolveRepoFiles, type ResolveRepoFilesOptions, type ResolvedRepoFiles } from './client.js';
export { GatedRepoError } from './errors.js';
