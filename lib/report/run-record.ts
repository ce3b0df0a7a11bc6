/**
 * One results file per run: `results/<experiment>/<run-id>.json` holding the full
 * configuration, the data and model identities, the seed, provenance, wall time and metrics, and
 * — when the run reproduces a paper cell — the paper's number with its source.
 *
 * Files are written atomically and never overwrite another run's file.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { resolveResultsDir } from '../config.js';
import { InputError } from '../util/errors.js';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import type { Provenance } from './provenance.js';

export interface DataIdentity {
  id: string;
  split: string;
  rows: number;
  files?: string[];
  sha256?: string;
}

export interface ModelIdentity {
  /** A Hub id, or a local directory as lib/report/training-record.ts portablePath writes it. */
  id: string;
  /** The Hub commit, for Hub models. */
  commit?: string;
  weightsSha256?: string;
}

export interface PaperCell {
  value: number;
  /** Where the number is printed, e.g. "000_c0fdd0968b088fcd.txt, Table 4" (lib/paper). */
  source: string;
}

export interface RunRecord {
  experiment: string;
  runId: string;
  startedAt: string;
  finishedAt: string;
  wallSeconds: number;
  seed: number;
  config: Record<string, unknown>;
  data: DataIdentity[];
  model: ModelIdentity;
  provenance: Provenance;
  /** Spearman and similar as ρ × 100 where the papers report them that way. */
  metrics: Record<string, number>;
  paper?: Record<string, PaperCell>;
  /** Why a run has no paper cell beside it (e.g. a model no paper reports), when `paper` is absent. */
  paperNote?: string;
  /** Anything else worth keeping (training log, per-subset scores). */
  details?: Record<string, unknown>;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A run id that sorts by time and does not collide: 2026-11-22T13-05-12Z-3fa9. */
export function newRunId(now = new Date()): string {
  return `${now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}-${randomBytes(2).toString('hex')}`;
}

export function runRecordPath(experiment: string, runId: string, resultsDir = resolveResultsDir()): string {
  for (const [what, v] of [['experiment', experiment], ['run id', runId]] as const) {
    if (!SAFE_NAME.test(v)) throw new InputError(`${what} '${v}' must be letters, digits, '.', '_' or '-' (it names a file)`);
  }
  return join(resultsDir, experiment, `${runId}.json`);
}

/** Writes the record; refuses to replace an existing run's file. Returns the path. */
export function writeRunRecord(record: RunRecord, resultsDir = resolveResultsDir()): string {
  const path = runRecordPath(record.experiment, record.runId, resultsDir);
  if (existsSync(path)) throw new InputError(`a results file for run '${record.runId}' already exists; runs never overwrite each other`, { file: path });
  writeFileAtomicSync(path, JSON.stringify(record, null, 1) + '\n');
  return path;
}
