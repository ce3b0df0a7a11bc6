/**
 * One JSON file per key: `<dir>/<key[0:2]>/<key>.json`, each written atomically (a temporary file
 * beside it, then renamed over it: lib/util/atomic-write.ts). The storage of both on-disk caches of
 * this folder — chat answers (./response-cache.ts) and embeddings (./embedding-cache.ts). Why this
 * and not one JSONL log:
 * - a crash (or kill -9) at any moment leaves every entry either complete or absent: there is no
 *   torn last line to repair and nothing to replay;
 * - concurrent writers — the requests of one run in parallel, or two processes (a notebook and a
 *   script) sharing a cache — need no lock, because each entry is its own file and rename is
 *   atomic within a file system; two writers of the same key write the same content, and the last
 *   rename wins whole;
 * - a lookup reads one small file by name, whatever the size of the cache, with no index to load;
 * - an entry can be inspected, deleted or copied on its own.
 * The cost is a file per entry, spread over 256 subfolders by the key's first byte (keys are hex
 * digests); that is well within what file systems handle.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.js';

export class KeyedFileStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  pathOf(key: string): string {
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  /** The text stored under `key`, or undefined when there is none. */
  async read(key: string): Promise<string | undefined> {
    try {
      return await readFile(this.pathOf(key), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return undefined;
    }
  }

  /** Stores `value` as indented JSON under `key` (replacing what was there). */
  async write(key: string, value: unknown): Promise<void> {
    await writeFileAtomic(this.pathOf(key), `${JSON.stringify(value, null, 1)}\n`);
  }

  /** Every key stored (a walk of the folder: for reports and tests, not for lookups). */
  async keys(): Promise<string[]> {
    if (!existsSync(this.dir)) return [];
    const out: string[] = [];
    for (const sub of await readdir(this.dir, { withFileTypes: true })) {
      if (!sub.isDirectory() || !/^[0-9a-f]{2}$/.test(sub.name)) continue;
      for (const f of await readdir(join(this.dir, sub.name))) {
        const m = /^([0-9a-f]{64})\.json$/.exec(f);
        if (m) out.push(m[1]);
      }
    }
    return out.sort();
  }
}
