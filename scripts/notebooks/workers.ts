/**
 * A notebook's runs spread over worker processes on this host (`npm run notebooks -- 02 --gpus
 * 0,1,2,3`, or `--workers 2` on the CPU backends), in three steps:
 *
 * 1. list: the notebook runs once with ANGLE_PLAN_LIST set, up to `plan.run()`, which writes the
 *    plan's runs (plan-run keys) and stops (lib/experiments/plan-workers.ts);
 * 2. run: the runs not yet finished go to a pool of workers, one per GPU (CUDA_VISIBLE_DEVICES
 *    bound to it, so the cuda backend's device 0 is that GPU) or per `--workers` slot; each run is
 *    one kernel process executing the notebook with ANGLE_PLAN_ONLY=<its key>, so a worker runs
 *    exactly one run and its executed notebook is that run's log
 *    (results/worker-logs/<notebook>/<key>.ipynb). The run store's lock per run key keeps
 *    two processes off the same run (a second `npm run notebooks` on the same results waits for
 *    or reuses it);
 * 3. render: once every run is in, the notebook runs as always and reuses every record.
 *
 * A Slurm array does step 2 with one task per run (./slurm.ts); the task calls `--only-run`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PLAN_LIST_VARIABLE, PLAN_ONLY_VARIABLE, PLAN_WORKER_VARIABLE, readListedRuns, type ListedRun } from '../../lib/experiments/plan-workers.js';
import { UsageError } from '../cli/command.js';
import { runNotebook, shown, type NotebookRun, type RunContext } from './runner.js';

/** One place a worker runs: a GPU, or a plain process slot. */
export interface WorkerSlot {
  /** For log lines: "GPU 2", "worker 1". */
  name: string;
  /** What the slot adds to a worker kernel's environment. */
  env: Record<string, string>;
}

/** The slots `--gpus 0,1,…` (each bound with CUDA_VISIBLE_DEVICES) or `--workers N` (unbound) give. */
export function workerSlots(gpus: string | undefined, workers: string | undefined): WorkerSlot[] | undefined {
  if (gpus !== undefined && workers !== undefined) throw new UsageError('--gpus and --workers are two ways to say how many workers run: give one');
  if (gpus !== undefined) {
    const ids = gpus.split(',').map((g) => g.trim());
    if (ids.length === 0 || ids.some((g) => !/^(\d+|GPU-[0-9a-fA-F-]+|MIG-[0-9a-zA-Z/-]+)$/.test(g))) {
      throw new UsageError(`--gpus expects device ids as CUDA_VISIBLE_DEVICES takes them, comma-separated (e.g. 0,1,2,3); got '${gpus}'`);
    }
    if (new Set(ids).size !== ids.length) throw new UsageError(`--gpus names a device twice: '${gpus}'`);
    return ids.map((id) => ({ name: `GPU ${id}`, env: { CUDA_VISIBLE_DEVICES: id } }));
  }
  if (workers !== undefined) {
    const n = Number(workers);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--workers expects a whole number >= 1, got '${workers}'`);
    return Array.from({ length: n }, (_, i) => ({ name: `worker ${i + 1}`, env: {} }));
  }
  return undefined;
}

/** Where a notebook's runs live: ANGLE_RESULTS_DIR as the kernels get it, else results/ of the package. */
export function resultsDirOf(env: NodeJS.ProcessEnv, root: string): string {
  const v = env.ANGLE_RESULTS_DIR?.trim();
  return v ? v : join(root, 'results');
}

/** Step 1: the plan's runs, from a run of the notebook up to `plan.run()` (none when a cell failed: `run.failure` says which). */
export async function listPlanRuns(file: string, name: string, ctx: RunContext): Promise<{ runs: ListedRun[]; run: NotebookRun }> {
  const scratch = mkdtempSync(join(tmpdir(), 'angle-plan-list-'));
  try {
    const list = join(scratch, 'runs.jsonl');
    const run = await runNotebook(file, `${name} (listing its runs)`, join(scratch, `${name}.ipynb`), { ...ctx, env: { ...ctx.env, [PLAN_LIST_VARIABLE]: list } });
    return { runs: run.failure ? [] : readListedRuns(list), run };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A worker's executed notebook: the log of the run it ran (results/worker-logs/<notebook>/<key>.ipynb). */
export function workerLogFile(resultsDir: string, notebook: string, key: string): string {
  return join(resultsDir, 'worker-logs', notebook, `${key}.ipynb`);
}

/**
 * One run of a notebook's plan by its plan-run key, in its own kernel process (what a worker and a
 * Slurm task do). `origin` says where it runs (a GPU, a Slurm job) and goes into the run's marker.
 */
export async function runOneByKey(
  file: string,
  name: string,
  run: { key: string; label?: string },
  ctx: RunContext,
  resultsDir: string,
  origin: Record<string, string> = {},
  slotEnv: Record<string, string> = {},
): Promise<NotebookRun> {
  const log = workerLogFile(resultsDir, name, run.key);
  mkdirSync(join(log, '..'), { recursive: true });
  // The log's path is relative to the results folder, as the runs table links it.
  const worker = { host: hostname(), log: relative(resultsDir, log), ...origin };
  const env = { ...ctx.env, ...slotEnv, [PLAN_ONLY_VARIABLE]: run.key, [PLAN_WORKER_VARIABLE]: JSON.stringify(worker) };
  const out = await runNotebook(file, `${name} ${run.label ?? run.key}${origin.device ? ` on ${origin.device}` : ''}`, log, { ...ctx, env });
  // Ended without the stop: the notebook never reached a plan's run() (plan.run() itself refuses a key it does not have).
  if (!out.failure && out.workerStop === undefined) return { failure: `${shown(file)}: the notebook ran to its end without a plan run (no plan.run() call?), so run ${run.key} did not run` };
  return out;
}

/**
 * Step 2: runs `pending` on the slots, each slot taking the next run when its last one ended.
 * Returns the failures (one line each); the others' runs go on after one fails.
 */
export async function runOnSlots(
  file: string,
  name: string,
  pending: readonly ListedRun[],
  slots: readonly WorkerSlot[],
  ctx: RunContext,
  resultsDir: string,
  running: Set<RunContext>,
  stopped: () => boolean,
): Promise<string[]> {
  const queue = [...pending];
  const failures: string[] = [];
  await Promise.all(
    slots.map(async (slot) => {
      for (let next = queue.shift(); next && !stopped(); next = queue.shift()) {
        const mine: RunContext = { ...ctx };
        running.add(mine);
        try {
          const out = await runOneByKey(file, name, next, mine, resultsDir, { device: slot.name }, slot.env);
          if (out.failure) failures.push(`${next.label} (key ${next.key}, on ${slot.name}): ${out.failure}; its log: ${shown(workerLogFile(resultsDir, name, next.key))}`);
        } finally {
          running.delete(mine);
        }
      }
    }),
  );
  return failures;
}

/** The runs a list holds that have no finished marker, and a line saying so. */
export function pendingRuns(runs: readonly ListedRun[]): { pending: ListedRun[]; line: string } {
  const pending = runs.filter((r) => !r.finished);
  return { pending, line: `${runs.length} run(s) in the plan, ${runs.length - pending.length} finished already, ${pending.length} to run` };
}

/** Whether a results folder exists to take the workers' logs (it is created otherwise). */
export function ensureResultsDir(dir: string): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
}
