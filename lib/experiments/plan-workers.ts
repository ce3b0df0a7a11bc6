/**
 * A plan's runs handed out to worker processes: the contract between a notebook's `plan.run()`
 * (./plan.ts) and the commands that spread its runs over the GPUs of a host or the tasks of a
 * Slurm array (scripts/notebooks/workers.ts, scripts/notebooks/slurm.ts). The notebook itself does
 * not change; the environment its kernel starts with says what `plan.run()` does:
 *
 * - ANGLE_PLAN_LIST=<file>: list, do not run. Each distinct runnable run of the plan (a row at a
 *   seed, with its evaluation after training) is appended to <file> as one JSON line
 *   (`ListedRun`: its plan-run key, label, and whether it already finished), then `plan.run()`
 *   stops the notebook with `PlanWorkerStop`.
 * - ANGLE_PLAN_ONLY=<key>[,<key>…]: run only these plan runs (reusing, resuming or training them
 *   as always, through the run store and its lock), then stop with `PlanWorkerStop`.
 * - neither: the notebook as always; it reuses every run the workers finished, so rendering the
 *   notebook once they are all in is a plain run.
 *
 * A plan-run key is a hash of the experiment, the run's identity as the plan dedupes runs (the
 * model, the data and the recipe as it runs) and the seed: computed without loading a model, so
 * listing a plan is cheap. It is not the run store's key (that one hashes the model's weights and
 * the training data, which needs them loaded); a marker file links the two once the run finished:
 * results/<experiment>/plan-runs/<plan-run key>.json (`PlanRunMarker`), with the records it wrote
 * and, when a worker ran it, where (its log, its Slurm job or its GPU). "Not yet in the run store"
 * means no marker; a marker whose records were deleted only costs the rendering run a retraining.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import { keyOf } from './run-store.js';

/** The variables `plan.run()` reads; see the file comment. */
export const PLAN_LIST_VARIABLE = 'ANGLE_PLAN_LIST';
export const PLAN_ONLY_VARIABLE = 'ANGLE_PLAN_ONLY';
/** Where a worker says it ran (a log path, a Slurm job, a GPU), copied into the markers it writes. */
export const PLAN_WORKER_VARIABLE = 'ANGLE_PLAN_WORKER';

/** What the environment asks `plan.run()` to do, or undefined for a plain run. */
export type PlanSelection = { list: string } | { only: ReadonlySet<string> };

export function planSelection(env: NodeJS.ProcessEnv = process.env): PlanSelection | undefined {
  const list = env[PLAN_LIST_VARIABLE]?.trim();
  const only = env[PLAN_ONLY_VARIABLE]?.trim();
  if (list && only) throw new InputError(`${PLAN_LIST_VARIABLE} and ${PLAN_ONLY_VARIABLE} are both set; a worker either lists a plan's runs or runs some of them`);
  if (list) return { list };
  if (only) return { only: new Set(only.split(',').map((k) => k.trim()).filter(Boolean)) };
  return undefined;
}

/** The key of one run of a plan (a row's recipe at a seed); see the file comment. */
export function planRunKey(experiment: string, identity: string, seed: number): string {
  return keyOf({ experiment, identity, seed });
}

/** One line of a plan's list. */
export interface ListedRun {
  experiment: string;
  key: string;
  /** The row (and paper file, where the plan spans several) and the seed. */
  label: string;
  /** A marker says it finished (see the file comment). */
  finished: boolean;
}

export function appendListedRuns(file: string, runs: readonly ListedRun[]): void {
  appendFileSync(file, runs.map((r) => JSON.stringify(r) + '\n').join(''));
}

/** The runs a list file holds, once each (by key), in order; a bad line is named by file and line. */
export function readListedRuns(file: string): ListedRun[] {
  if (!existsSync(file)) return [];
  const seen = new Set<string>();
  const out: ListedRun[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let v: Partial<ListedRun>;
      try {
        v = JSON.parse(line) as Partial<ListedRun>;
      } catch (e) {
        throw new InputError(`not a JSON line: ${(e as Error).message}`, { file, line: i + 1 });
      }
      if (typeof v.key !== 'string' || typeof v.experiment !== 'string' || typeof v.label !== 'string') {
        throw new InputError('expected {"experiment", "key", "label", "finished"}', { file, line: i + 1 });
      }
      if (seen.has(v.key)) return;
      seen.add(v.key);
      out.push({ experiment: v.experiment, key: v.key, label: v.label, finished: v.finished === true });
    });
  return out;
}

/** How a worker's `plan.run()` ends the notebook once its runs are done (the runner counts it a success). */
export class PlanWorkerStop extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanWorkerStop';
  }
}

/** A finished plan run: which records it wrote, and where it ran. */
export interface PlanRunMarker {
  key: string;
  label: string;
  /** The training record's run id and file (relative to results/<experiment>/). */
  training: { runId: string; file: string; status: string };
  evaluation?: { runId: string; file: string; status: string };
  /** ANGLE_PLAN_WORKER of the process that ran it: its log, its Slurm job, its GPU. */
  worker?: Record<string, string>;
  finishedAt: string;
}

export function planRunMarkerFile(resultsDir: string, experiment: string, key: string): string {
  return join(resultsDir, experiment, 'plan-runs', `${key}.json`);
}

export function readPlanRunMarker(resultsDir: string, experiment: string, key: string): PlanRunMarker | undefined {
  const file = planRunMarkerFile(resultsDir, experiment, key);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as PlanRunMarker;
  } catch {
    return undefined; // a marker cut off: the run is not known to be finished, the store still reuses its record
  }
}

/** Where this process runs as a worker (ANGLE_PLAN_WORKER, a JSON object), or undefined. */
export function workerOrigin(env: NodeJS.ProcessEnv = process.env): Record<string, string> | undefined {
  const raw = env[PLAN_WORKER_VARIABLE]?.trim();
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)]));
  } catch {
    // not JSON: kept as said
  }
  return { worker: raw };
}

/**
 * Writes a finished run's marker. A process that only reused the run's records keeps the marker
 * there is (the one of the process that ran it: where it ran is what the runs table links).
 */
export function writePlanRunMarker(resultsDir: string, experiment: string, m: Omit<PlanRunMarker, 'finishedAt' | 'worker'>, env: NodeJS.ProcessEnv = process.env): void {
  const old = readPlanRunMarker(resultsDir, experiment, m.key);
  const reusedOnly = m.training.status === 'reused' && (m.evaluation?.status ?? 'reused') === 'reused';
  if (old && reusedOnly && old.training.runId === m.training.runId && old.evaluation?.runId === m.evaluation?.runId) return;
  mkdirSync(join(resultsDir, experiment, 'plan-runs'), { recursive: true });
  const worker = workerOrigin(env);
  writeFileAtomicSync(planRunMarkerFile(resultsDir, experiment, m.key), JSON.stringify({ ...m, ...(worker ? { worker } : {}), finishedAt: new Date().toISOString() }, null, 2) + '\n');
}
