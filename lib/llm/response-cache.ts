/**
 * The on-disk cache of chat-completion answers, so that a rerun or a crash never pays twice for the
 * same answer and a notebook resumes where it stopped.
 *
 * Key: sha256 of the canonical JSON (object keys sorted, no whitespace) of
 *   { model, messages: [{ role, content }], params: { temperature, top_p, max_tokens, stop: [..], seed } }
 * with the fields the request left out absent (no default is filled in: servers differ in theirs)
 * and `stop` always a list. The prompt's id is not part of the key: two prompts with the same text
 * and parameters share one answer (STS-B train repeats some sentence1 texts).
 *
 * Layout: one file per answer, `<dir>/<key[0:2]>/<key>.json`, written atomically
 * (./json-entry-cache.ts over ./keyed-file-store.ts, which says why: crash-safe, lock-free for concurrent writers, one small read
 * per lookup). For both prompts over STS-B train's 5,749 texts that is about 11,500 files.
 *
 * A file that cannot be read back as the entry of its key (edited by hand, a foreign file) counts
 * as a miss and is replaced by the next answer; it is never served. Only answers are cached, never
 * failures, so a rerun retries exactly the prompts that failed.
 */
import { canonicalJson, JsonEntryCache, keyOfMaterial } from './json-entry-cache.js';
import { stopStrings } from './request.js';
import type { ChatMessage, ChatRequest, ChatResult } from './types.js';

export const CACHE_FORMAT = 'angle-llm-cache/1';

/** What an answer is keyed by. */
export interface CacheKeyMaterial {
  model: string;
  messages: ChatMessage[];
  params: { temperature?: number; top_p?: number; max_tokens?: number; stop?: string[]; seed?: number };
}

/** One cached answer as stored. */
export interface CacheEntry {
  format: typeof CACHE_FORMAT;
  key: string;
  request: CacheKeyMaterial;
  result: Pick<ChatResult, 'text' | 'usage' | 'finishReason' | 'model' | 'costUsd'>;
  /** The id of the prompt that paid for it. */
  id?: string;
  /** The generator that produced it (its name). */
  generator?: string;
  createdAt: string;
}

/** The key material of a request (its model, or `defaultModel` when it names none). */
export function cacheKeyMaterial(r: ChatRequest, defaultModel: string): CacheKeyMaterial {
  const params: CacheKeyMaterial['params'] = {};
  if (r.temperature !== undefined) params.temperature = r.temperature;
  if (r.top_p !== undefined) params.top_p = r.top_p;
  if (r.max_tokens !== undefined) params.max_tokens = r.max_tokens;
  const stop = stopStrings(r);
  if (stop.length > 0) params.stop = stop;
  if (r.seed !== undefined) params.seed = r.seed;
  return { model: r.model ?? defaultModel, messages: r.messages.map((m) => ({ role: m.role, content: m.content })), params };
}

/** sha256 (hex) of the canonical JSON of the key material. */
export function cacheKey(material: CacheKeyMaterial): string {
  return keyOfMaterial(material);
}

/** The chat-completion answers, one file per key (./json-entry-cache.ts). */
export class ResponseCache extends JsonEntryCache<CacheEntry> {
  /** The entry of `key`, or undefined (absent, or not a readable entry of this key). */
  get(key: string, material?: CacheKeyMaterial): Promise<CacheEntry | undefined> {
    return this.lookup(key, (parsed) => {
      const j = parsed as CacheEntry;
      const ok =
        j.format === CACHE_FORMAT && j.key === key && typeof j.result?.text === 'string' && typeof j.result.usage?.totalTokens === 'number' && (!material || canonicalJson(j.request) === canonicalJson(material));
      return ok ? j : undefined;
    });
  }

  /** Writes an entry atomically (replacing any entry of its key). */
  async put(entry: Omit<CacheEntry, 'format' | 'createdAt'> & { createdAt?: string }): Promise<void> {
    const full: CacheEntry = { format: CACHE_FORMAT, ...entry, createdAt: entry.createdAt ?? new Date().toISOString() };
    await this.write(entry.key, full);
  }
}
