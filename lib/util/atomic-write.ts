/**
 * Atomic file writes: the bytes go to a uniquely named temporary file beside the target, which is
 * then renamed over it, so a reader never sees half a file and a failure leaves nothing behind.
 * (Results, checkpoints, notebooks, Hub refs: everything this project writes goes through here;
 * directories such as checkpoints go through `writeDirectoryAtomicSync`.)
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A temporary name beside `path`, unique per process and call. */
export function tempPathFor(path: string): string {
  return `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Writes a directory atomically: `fill` writes its files into a fresh temporary directory beside
 * `dir`, which then replaces `dir` by rename. Stale temporaries of earlier crashes are removed
 * first; on failure the temporary goes too, and an existing `dir` is left as it was.
 */
export function writeDirectoryAtomicSync(dir: string, fill: (tmp: string) => void): void {
  const parent = dirname(dir);
  const base = basename(dir);
  mkdirSync(parent, { recursive: true });
  for (const e of readdirSync(parent)) if (e.startsWith(`${base}.tmp-`)) rmSync(join(parent, e), { recursive: true, force: true });
  const tmp = join(parent, `${base}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(tmp);
    fill(tmp);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}
