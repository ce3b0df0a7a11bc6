/**
 * A lock per run key, so that two processes on the same results folder (the workers of
 * `npm run notebooks -- --gpus`, the tasks of a Slurm array, a second notebook started by hand)
 * never run the same run: the run store (./run-store.ts) holds it while a run's work runs, and a
 * second process waits for it and then reuses the record the first wrote.
 *
 * The lock is a file, results/<experiment>/locks/<key>.lock, created with O_EXCL (atomic on local
 * file systems and on NFSv3+), holding who took it: pid, host, the process's start time and when.
 * It survives a killed holder: a lock is stale when
 *   - its holder is on this host and its process is gone (or the pid now belongs to a process that
 *     started later: pids are reused), or
 *   - its holder is on another host (a cluster's shared folder) and it has not been touched for
 *     `staleAfterMs`: the holder touches it every `heartbeatMs` while it runs.
 * A stale lock is broken under a second, short-lived lock (<key>.lock.break), so two waiters that
 * both found it stale do not both break it (one of them would remove the other's fresh lock).
 * No flock(2): Node has none, and O_EXCL files work where the results folder is shared over NFS.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';

/** Who holds a lock, as its file says. */
export interface LockHolder {
  pid: number;
  host: string;
  /** The holder process's start (Linux: clock ticks since boot, /proc/<pid>/stat field 22); absent elsewhere. */
  processStart?: number;
  /** When the lock was taken (ISO time). */
  since: string;
  /** What the holder runs (the run's label), for the waiter's log line. */
  label: string;
}

export interface RunLockOptions {
  /** How often a waiter looks again (default 500 ms). */
  pollMs?: number;
  /** How often the holder touches its lock (default 30 s). */
  heartbeatMs?: number;
  /** A lock of another host untouched this long is stale (default 10 min). */
  staleAfterMs?: number;
  /** Called once when the lock is held by another live process (and again when the holder changes). */
  onWait?: (holder: LockHolder) => void;
  signal?: AbortSignal;
}

export interface HeldRunLock {
  file: string;
  release(): void;
}

/** The lock file of a run key. */
export function runLockFile(resultsDir: string, experiment: string, key: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(key)) throw new InputError(`a run key is letters, digits, '.', '_' or '-'; got '${key}'`);
  return join(resultsDir, experiment, 'locks', `${key}.lock`);
}

/** A process's start time in clock ticks since boot (Linux), or undefined where /proc has none. */
export function processStartOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return Number.isFinite(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, owned by someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The holder a lock file names, or undefined when it cannot be read (being written, or gone). */
export function readLockHolder(file: string): LockHolder | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockHolder>;
    return typeof v.pid === 'number' && typeof v.host === 'string' ? (v as LockHolder) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a lock file is stale, or undefined while its holder may still be running. */
export function staleReason(file: string, holder: LockHolder | undefined, staleAfterMs: number, now = Date.now()): string | undefined {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    return undefined; // gone: not stale, just free
  }
  if (!holder) {
    // Written in one call right after O_EXCL creation: unreadable for long means its writer died in between.
    return now - mtimeMs > 60_000 ? 'an unreadable lock file older than a minute' : undefined;
  }
  if (holder.host === hostname()) {
    if (!processAlive(holder.pid)) return `its holder (pid ${holder.pid}) is gone`;
    const start = processStartOf(holder.pid);
    if (holder.processStart !== undefined && start !== undefined && start !== holder.processStart) return `pid ${holder.pid} now belongs to another process`;
    return undefined;
  }
  return now - mtimeMs > staleAfterMs ? `its holder on ${holder.host} has not touched it for ${((now - mtimeMs) / 60_000).toFixed(1)} min` : undefined;
}

/** Creates `file` with `content` if it does not exist; false when it does. */
function createExclusive(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function unlinkQuiet(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/**
 * Removes `file` if it is still the stale lock `seen` describes, under the break lock; true when
 * this call removed it. A break lock older than a minute is itself left by a dead breaker.
 */
function breakStale(file: string, seen: LockHolder | undefined): boolean {
  const brk = `${file}.break`;
  if (!createExclusive(brk, String(process.pid))) {
    try {
      if (Date.now() - statSync(brk).mtimeMs > 60_000) unlinkQuiet(brk);
    } catch {
      // gone meanwhile
    }
    return false;
  }
  try {
    const now = readLockHolder(file);
    if (JSON.stringify(now) !== JSON.stringify(seen)) return false; // someone took it afresh
    // Renamed aside first, then removed: a reader never sees half a file.
    const aside = `${file}.stale-${process.pid}`;
    try {
      renameSync(file, aside);
    } catch {
      return false;
    }
    unlinkQuiet(aside);
    return true;
  } finally {
    unlinkQuiet(brk);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((res, rej) => {
    if (signal?.aborted) return rej(signal.reason ?? new Error('aborted'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      res();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      rej(signal!.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Takes the lock of a run key, waiting while another live process holds it; see the file comment. */
export async function acquireRunLock(resultsDir: string, experiment: string, key: string, label: string, o: RunLockOptions = {}): Promise<HeldRunLock> {
  const file = runLockFile(resultsDir, experiment, key);
  mkdirSync(join(resultsDir, experiment, 'locks'), { recursive: true });
  const me: LockHolder = { pid: process.pid, host: hostname(), ...(processStartOf(process.pid) !== undefined ? { processStart: processStartOf(process.pid) } : {}), since: '', label };
  let lastSeen = '';
  for (;;) {
    if (createExclusive(file, JSON.stringify({ ...me, since: new Date().toISOString() }) + '\n')) break;
    const holder = readLockHolder(file);
    const stale = staleReason(file, holder, o.staleAfterMs ?? 10 * 60_000);
    if (stale && breakStale(file, holder)) continue;
    if (!stale && holder && holder.pid === me.pid && holder.host === me.host) {
      throw new InputError(`this process already holds the lock of run ${key} (${holder.label}); a run cannot wait for itself`, { file });
    }
    const id = JSON.stringify(holder ?? null);
    if (holder && !stale && id !== lastSeen) o.onWait?.(holder);
    lastSeen = id;
    await sleep(o.pollMs ?? 500, o.signal);
  }
  // The heartbeat that tells other hosts this holder still runs; unref'd, so it never keeps a process alive.
  const beat = setInterval(() => {
    try {
      const t = new Date();
      utimesSync(file, t, t);
    } catch {
      // removed by a waiter that found it stale: nothing to do until release
    }
  }, o.heartbeatMs ?? 30_000);
  beat.unref();
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      clearInterval(beat);
      // Only our own lock: one broken as stale and taken by another must stay.
      const now = readLockHolder(file);
      if (now && now.pid === me.pid && now.host === me.host) unlinkQuiet(file);
    },
  };
}
