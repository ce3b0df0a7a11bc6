/**
 * The on-disk cache of embeddings from an endpoint (./openai-embeddings-client.ts), so that a rerun
 * or a crash never asks twice for a vector and an evaluation resumes where it stopped.
 *
 * Key: sha256 of the canonical JSON (./json-entry-cache.ts canonicalJson) of
 *   { model, revision, prompt: { template, prepareText } | null, pooling, text }
 * — the served model's name, the revision of its weights the caller declares (an endpoint cannot
 * say which weights it serves, so a cache shared across weight updates needs it), the prompt
 * template as filled on our side (demonstrations included) or null when texts are sent as they are,
 * the pooling asked for (absent: the server's own), and the text itself. Fields the caller left out
 * are absent, never filled with a default.
 *
 * Layout: ./json-entry-cache.ts over ./keyed-file-store.ts (one atomically written JSON file per entry). An entry holds its
 * key material, the width and the vector as little-endian float32 in base64 (exact, and a quarter
 * of the size of printed numbers). A file that is not a readable entry of its key (edited by hand,
 * truncated, another key's) is a miss and is replaced by the next answer. Only vectors that passed
 * the client's checks (count, width, model) are stored.
 */
import { base64ToFloat32, float32ToBase64 } from './embeddings-wire.js';
import { canonicalJson, JsonEntryCache, keyOfMaterial } from './json-entry-cache.js';

export const EMBEDDING_CACHE_FORMAT = 'angle-embedding-cache/1';

/** What a vector is keyed by. */
export interface EmbeddingKeyMaterial {
  model: string;
  revision?: string;
  /** The template as filled (in-context demonstrations expanded) and the text clean-up; null: the text as it is. */
  prompt: { template: string; prepareText?: string } | null;
  pooling?: string;
  text: string;
}

export interface EmbeddingCacheEntry {
  format: typeof EMBEDDING_CACHE_FORMAT;
  key: string;
  material: EmbeddingKeyMaterial;
  dim: number;
  /** float32 little-endian, base64. */
  vector: string;
  createdAt: string;
}

/** sha256 (hex) of the canonical JSON of the key material. */
export function embeddingCacheKey(material: EmbeddingKeyMaterial): string {
  return keyOfMaterial(material);
}

/** The vectors, one file per key (./json-entry-cache.ts). */
export class EmbeddingCache extends JsonEntryCache<Float32Array> {
  /** The vector stored for `key` (whose material must be `material`), or undefined. */
  get(key: string, material: EmbeddingKeyMaterial): Promise<Float32Array | undefined> {
    return this.lookup(key, (parsed) => {
      const j = parsed as EmbeddingCacheEntry;
      if (j.format !== EMBEDDING_CACHE_FORMAT || j.key !== key || canonicalJson(j.material) !== canonicalJson(material) || typeof j.vector !== 'string') return undefined;
      const v = base64ToFloat32(j.vector);
      return v && v.length === j.dim && v.every(Number.isFinite) ? v : undefined;
    });
  }

  /** Stores a vector atomically (replacing any entry of its key). */
  async put(key: string, material: EmbeddingKeyMaterial, vector: Float32Array): Promise<void> {
    const entry: EmbeddingCacheEntry = { format: EMBEDDING_CACHE_FORMAT, key, material, dim: vector.length, vector: float32ToBase64(vector), createdAt: new Date().toISOString() };
    await this.write(key, entry);
  }
}
