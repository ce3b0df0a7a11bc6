/**
 * One on-disk cache of JSON entries, each under the sha256 of its key material: what the answer
 * cache (./response-cache.ts) and the embedding cache (./embedding-cache.ts) share. Each of them
 * says what an entry holds and when a stored file is a readable entry of its key; this class does
 * the lookup, the atomic write (./keyed-file-store.ts) and the hit/miss counts.
 *
 * A file that is not a readable entry of its key (edited by hand, truncated, another key's) is a
 * miss, counted as unreadable, and is replaced by the next write; it is never served.
 */
import { createHash } from 'node:crypto';
import { KeyedFileStore } from './keyed-file-store.js';

/** JSON with object keys sorted at every level and no whitespace: equal values, equal text. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
}

/** sha256 (hex) of the canonical JSON of a key's material. */
export function keyOfMaterial(material: unknown): string {
  return createHash('sha256').update(canonicalJson(material)).digest('hex');
}

export class JsonEntryCache<Value> {
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

  /**
   * The value stored for `key`, or undefined. `read` gives the value a parsed file holds when it is
   * a readable entry of `key` (and of the caller's key material), else undefined; it may throw on a
   * malformed file: that is a miss too.
   */
  async lookup(key: string, read: (parsed: unknown) => Value | undefined): Promise<Value | undefined> {
    const text = await this.store.read(key);
    if (text === undefined) {
      this.stats.misses++;
      return undefined;
    }
    let value: Value | undefined;
    try {
      value = read(JSON.parse(text));
    } catch {
      value = undefined;
    }
    if (value === undefined) {
      this.stats.unreadable++;
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    return value;
  }

  /** Writes an entry atomically (replacing any entry of its key). */
  async write(key: string, entry: unknown): Promise<void> {
    await this.store.write(key, entry);
    this.stats.writes++;
  }

  /** Every entry's key (a walk of the folder: for reports and tests, not for lookups). */
  keys(): Promise<string[]> {
    return this.store.keys();
  }
}
