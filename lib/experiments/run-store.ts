/**
 * The one store of a notebook's runs. Every kind of run — a training (./run-recipe.ts), an
 * evaluation of fixed weights (./run-evaluation.ts), the STS suite on a model (./sts-suite-run.ts),
 * the transfer tasks of a row (./transfer-run.ts), a Flickr30k retrieval (./flickr30k-run.ts) — is
 * identified by a key, a hash of everything that decides its numbers, and goes through `storedRun`:
 *
 *   key → the finished run with that key in results/<experiment>/ (its record's `details.runKey`)
 *       → reused, unless forced or the caller refuses it (a record with failures is tried again)
 *       → otherwise the work runs and writes its record → a run card beside it → one log line.
 *
 * So running a notebook again costs nothing for what already finished, a changed setting (a new
 * key) runs anew beside the old record, and every record has its card. Several processes may share
 * one results folder (`npm run notebooks -- --gpus`, a Slurm array): a run key's work runs under
 * its lock (./run-lock.ts), so no key runs twice at once.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { resolveResultsDir } from '../config.js';
import { loadRun, type LoadedRun } from '../report/results-reader.js';
import { writeRunCard, type RunCardOptions } from '../report/run-card.js';
import { acquireRunLock, type RunLockOptions } from './run-lock.js';

/** The key of a run: the first 16 hex digits of the sha256 of its identity as JSON. */
export function keyOf(identity: unknown): string {
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
}

/**
 * The run key of each record file read so far, by path, valid while the file's size and mtime are
 * unchanged: a folder of many runs (a demonstration search writes hundreds) is then looked up by
 * a stat per file instead of parsing every record (and its predictions sidecar) on every lookup.
 */
const runKeys = new Map<string, { size: number; mtimeMs: number; runKey: string | undefined }>();

/** A record file's `details.runKey` (undefined: none, or not a readable record). */
function runKeyOf(file: string): string | undefined {
  let st: { size: number; mtimeMs: number };
  try {
    st = statSync(file);
  } catch {
    return undefined;
  }
  const known = runKeys.get(file);
  if (known && known.size === st.size && known.mtimeMs === st.mtimeMs) return known.runKey;
  let runKey: string | undefined;
  try {
    const details = (JSON.parse(readFileSync(file, 'utf8')) as { details?: { runKey?: unknown } } | null)?.details;
    runKey = typeof details?.runKey === 'string' ? details.runKey : undefined;
  } catch {
    runKey = undefined;
  }
  runKeys.set(file, { size: st.size, mtimeMs: st.mtimeMs, runKey });
  return runKey;
}

/** The finished run with this key in results/<experiment>/, if any (the newest one). */
export function finishedRun(resultsDir: string, experiment: string, key: string): LoadedRun | undefined {
  const dir = join(resultsDir, experiment);
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.endsWith('.predictions.json'))
    .sort()
    .reverse();
  for (const f of files) {
    // Only the record whose key matches is loaded whole (with its sidecar, checked).
    if (runKeyOf(join(dir, f)) !== key) continue;
    try {
      return loadRun(join(dir, f));
    } catch {
      // A foreign or broken file is not this run; the results reader reports such files.
    }
  }
  return undefined;
}

export interface StoreRequest {
  experiment: string;
  /** Default ANGLE_RESULTS_DIR (results/). */
  resultsDir?: string;
  key: string;
  /** What the log lines call the run (a table row, a model and its pooling). */
  label: string;
  /** Run even when a finished run has this key (a new record beside the old one). */
  force?: boolean;
  /** Whether a finished run may stand for this one (default yes); e.g. not when it recorded failures. */
  accept?: (run: LoadedRun) => boolean;
  log?: (line: string) => void;
  /** How the run key's lock waits (tests: a short poll). */
  lock?: RunLockOptions;
}

/** What the work of a run did: the record it wrote, its card, and the log line's ending. */
export interface RunOutcome<S extends string, T> {
  /** The record file the work wrote (details.runKey = the key). */
  file: string;
  status: S;
  /** The run card's recipe table (lib/report/run-card.ts); none: the record's config. */
  card?: RunCardOptions;
  /** What happened, for the log line after the label (e.g. "trained, 24 steps in 3.1 s"). */
  message: string;
  /** What the caller wants back beside the record (the trainer's result, per-query details). */
  result?: T;
}

export interface StoredRun<S extends string, T> {
  key: string;
  status: 'reused' | S;
  run: LoadedRun;
  result?: T;
}

/**
 * The finished run that stands for this request (logged as reused), or undefined when the work must
 * run: the first half of `storedRun`, for work that produces several records at once (./transfer-run.ts
 * embeds each task once for every row and path that still needs it).
 */
export function reusableRun(req: StoreRequest): LoadedRun | undefined {
  if (req.force) return undefined;
  const done = finishedRun(resolveResultsDir(req.resultsDir), req.experiment, req.key);
  if (!done || !(req.accept?.(done) ?? true)) return undefined;
  req.log?.(`${req.label}: reused run ${done.record.runId} (key ${req.key}; FORCE to run again)`);
  return done;
}

/** The second half of `storedRun`: the record the work wrote gets its card and a log line. */
export function recordedRun<S extends string, T>(req: StoreRequest, out: RunOutcome<S, T>): StoredRun<S, T> {
  writeRunCard(out.file, out.card);
  const run = loadRun(out.file);
  req.log?.(`${req.label}: ${out.message} (run ${run.record.runId})`);
  return { key: req.key, status: out.status, run, ...(out.result !== undefined ? { result: out.result } : {}) };
}

/**
 * A run from the store, or done now; see the file comment. The work runs under the run key's lock
 * (./run-lock.ts): a second process asking for the same key waits for the first and then reuses
 * its record (or, when the first died, takes the lock and resumes from its checkpoint).
 */
export async function storedRun<S extends string, T = undefined>(req: StoreRequest, work: (resultsDir: string) => Promise<RunOutcome<S, T>>): Promise<StoredRun<S, T>> {
  const done = reusableRun(req);
  if (done) return { key: req.key, status: 'reused', run: done };
  const resultsDir = resolveResultsDir(req.resultsDir);
  const lock = await acquireRunLock(resultsDir, req.experiment, req.key, req.label, {
    onWait: (h) => req.log?.(`${req.label}: waiting for pid ${h.pid} on ${h.host}, which has run key ${req.key} since ${h.since}`),
    ...req.lock,
  });
  try {
    // What the holder we waited for finished is reused (not under force: that asks for a run of our own).
    const now = reusableRun(req);
    if (now) return { key: req.key, status: 'reused', run: now };
    return recordedRun(req, await work(resultsDir));
  } finally {
    lock.release();
  }
}
