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
 * (./keyed-file-store.ts says why: crash-safe, lock-free for concurrent writers, one small read
 * per lookup). For both prompts over STS-B train's 5,749 texts that is about 11,500 files.
 *
 * A file that cannot be read back as the entry of its key (edited by hand, a foreign file) counts
 * as a miss and is replaced by the next answer; it is never served. Only answers are cached, never
 * failures, so a rerun retries exactly the prompts that failed.
 */
import { createHash } from 'node:crypto';
import { KeyedFileStore } from './keyed-file-store.js';
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

/** JSON with object keys sorted at every level and no whitespace: equal values, equal text. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
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
  return createHash('sha256').update(canonicalJson(material)).digest('hex');
}

export class ResponseCache {
  private readonly store: KeyedFileStore;
  /** Lookups answered, lookups missed, entries written, unreadable entries met. */
  readonly stats = { hits: 0, misses: 0, writes: 0, unreadable: 0 };

  constructor(dir: string) {
    this.store = new KeyedFileStore(dir);
  }

  get dir(): string {
    return this.store.dir;
  }

  pathOf(key: string): string {
    return this.store.pathOf(key);
  }

  /** The entry of `key`, or undefined (absent, or not a readable entry of this key). */
  async get(key: string, material?: CacheKeyMaterial): Promise<CacheEntry | undefined> {
    const text = await this.store.read(key);
    if (text === undefined) {
      this.stats.misses++;
      return undefined;
    }
    let entry: CacheEntry | undefined;
    try {
      const j = JSON.parse(text) as CacheEntry;
      const ok =
        j.format === CACHE_FORMAT && j.key === key && typeof j.result?.text === 'string' && typeof j.result.usage?.totalTokens === 'number' && (!material || canonicalJson(j.request) === canonicalJson(material));
      entry = ok ? j : undefined;
    } catch {
      entry = undefined;
    }
    if (!entry) {
      this.stats.unreadable++;
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    return entry;
  }

  /** Writes an entry atomically (replacing any entry of its key). */
  async put(entry: Omit<CacheEntry, 'format' | 'createdAt'> & { createdAt?: string }): Promise<void> {
    const full: CacheEntry = { format: CACHE_FORMAT, ...entry, createdAt: entry.createdAt ?? new Date().toISOString() };
    await this.store.write(entry.key, full);
    this.stats.writes++;
  }

  /** Every entry's key (a walk of the folder: for reports and tests, not for lookups). */
  keys(): Promise<string[]> {
    return this.store.keys();
  }
}
