/**
 * `npm run notebooks -- <nb> --submit slurm`: a notebook's plan runs as one Slurm job array, one
 * task per run not yet finished, each running exactly that run by its plan-run key (`--only-run`,
 * ./workers.ts), and a dependent job that renders the notebook from the records once every task
 * succeeded (afterok; if a task fails for good, Slurm cancels the render job: kill-on-invalid-dep).
 * Slurm schedules; nothing here does.
 *
 * Preemption and time limits: each task asks for USR1 `--signal-before` seconds before its limit
 * (`--signal=B:USR1@s`, to the batch shell); the shell then requeues its own task (`scontrol
 * requeue`), Slurm sends SIGTERM to the task's processes (the worker's plan.run() asks the trainer
 * to stop after the current step with a checkpoint: lib/experiments/plan.ts) and SIGKILL KillWait
 * later, and the requeued task resumes bit-identically from the run's newest checkpoint (the
 * trainer's resume). A preempted task (PreemptMode=REQUEUE) goes the same way.
 * The run store's lock makes a requeued task whose previous incarnation still ends wait for it.
 *
 * Everything a submission writes goes to results/slurm/<notebook>/<time>/: the two batch scripts,
 * runs.txt (task i runs line i+1), submission.json (job ids, keys, labels, log paths), logs/ (one
 * per task, appended across requeues), and array-state.txt (`scontrol show job` of the array, written
 * by the render job). Each run's marker names its task's job and log; the runs table shows them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ListedRun } from '../../lib/experiments/plan-workers.js';
import { UsageError } from '../cli/command.js';
import { NOTEBOOK_VARIABLES } from './environment.js';

export interface SlurmOptions {
  partition?: string;
  /** GPUs each task asks for (--gres=gpu:N); 0: none (CPU backends). */
  gpusPerRun: number;
  /** Each task's time limit, HH:MM:SS (or D-HH:MM:SS); none: the partition's default. */
  time?: string;
  /** Seconds before the limit at which a task checkpoints and requeues itself. */
  signalBeforeS: number;
  /** Wait for the render job to end (sbatch --wait) and exit with its status. */
  wait: boolean;
  /** Print the scripts instead of submitting them. */
  dryRun: boolean;
}

/** The Slurm options from the command line's values, checked. */
export function slurmOptions(v: { partition?: string; 'gpus-per-run'?: string; time?: string; 'signal-before'?: string; wait?: boolean; 'dry-run'?: boolean }): SlurmOptions {
  const gpus = Number(v['gpus-per-run'] ?? 1);
  if (!Number.isInteger(gpus) || gpus < 0) throw new UsageError(`--gpus-per-run expects a whole number >= 0, got '${v['gpus-per-run']}'`);
  if (v.time !== undefined && !/^(\d+-)?\d{1,2}:\d{2}:\d{2}$/.test(v.time)) throw new UsageError(`--time expects HH:MM:SS or D-HH:MM:SS, got '${v.time}'`);
  const signalBeforeS = Number(v['signal-before'] ?? 300);
  if (!Number.isInteger(signalBeforeS) || signalBeforeS < 1 || signalBeforeS > 65535) throw new UsageError(`--signal-before expects seconds (1..65535), got '${v['signal-before']}'`);
  if (v.partition !== undefined && !/^[A-Za-z0-9_.,-]+$/.test(v.partition)) throw new UsageError(`--partition expects a partition name, got '${v.partition}'`);
  return { ...(v.partition ? { partition: v.partition } : {}), gpusPerRun: gpus, ...(v.time ? { time: v.time } : {}), signalBeforeS, wait: v.wait ?? false, dryRun: v['dry-run'] ?? false };
}

/** A value for a bash script, single-quoted. */
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface SlurmSubmission {
  dir: string;
  arrayScript: string;
  renderScript: string;
}

/** What the cli passes through to the tasks and the render job (the notebook folder, the output folder, the cell timeout). */
export interface NotebookCommand {
  root: string;
  notebook: string;
  notebooksDir: string;
  outDir: string;
  timeoutS: number;
  env: NodeJS.ProcessEnv;
}

/** The two batch scripts of a submission (the array's `--dependency` is filled in at submission). */
export function slurmScripts(c: NotebookCommand, runs: readonly ListedRun[], o: SlurmOptions, dir: string): { array: string; render: (arrayJob: string | undefined) => string } {
  const node = process.execPath;
  const cli = [q(node), '--import', 'tsx', 'scripts/notebooks/cli.ts', q(c.notebook), '--dir', q(c.notebooksDir), '--timeout-per-cell', String(c.timeoutS)].join(' ');
  const exports = NOTEBOOK_VARIABLES.filter((k) => c.env[k]).map((k) => `export ${k}=${q(c.env[k]!)}`);
  const common = [...(o.partition ? [`#SBATCH --partition=${o.partition}`] : []), ...(o.time ? [`#SBATCH --time=${o.time}`] : [])];
  const logs = join(dir, 'logs');
  const array = [
    '#!/bin/bash',
    `#SBATCH --job-name=angle-${c.notebook}`,
    `#SBATCH --array=0-${runs.length - 1}`,
    `#SBATCH --output=${logs}/run-%A_%a.out`,
    '#SBATCH --open-mode=append',
    '#SBATCH --requeue',
    `#SBATCH --signal=B:USR1@${o.signalBeforeS}`,
    ...(o.gpusPerRun > 0 ? [`#SBATCH --gres=gpu:${o.gpusPerRun}`] : []),
    ...common,
    `# One run of ${c.notebook}'s plan per task, by its plan-run key (line SLURM_ARRAY_TASK_ID+1 of runs.txt).`,
    `cd ${q(c.root)}`,
    ...exports,
    `key=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" ${q(join(dir, 'runs.txt'))})`,
    `export ANGLE_SLURM_LOG=${q(relative(c.env.ANGLE_RESULTS_DIR ?? join(c.root, 'results'), logs))}/run-\${SLURM_ARRAY_JOB_ID}_\${SLURM_ARRAY_TASK_ID}.out`,
    'echo "task ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} (restart ${SLURM_RESTART_COUNT:-0}) on $(hostname): run ${key}"',
    '# Near the time limit Slurm sends USR1 here: requeue this task; Slurm then sends SIGTERM to the worker,',
    '# whose training writes a checkpoint and stops; the requeued task resumes from it.',
    'trap \'echo "USR1: time limit near, requeueing ${SLURM_JOB_ID}"; scontrol requeue "${SLURM_JOB_ID}"\' USR1',
    '# SIGTERM (a requeue, a preemption, scancel) reaches the worker too; this shell stays until the worker has',
    '# written its checkpoint: once the batch shell ends, Slurm kills what is left of the task at once.',
    'trap \'echo "SIGTERM: waiting for the worker to write its checkpoint"\' TERM',
    `${cli} --only-run "$key" &`,
    'worker=$!',
    '# wait returns early when the trap runs; wait again for the worker itself.',
    'while true; do wait "$worker"; status=$?; kill -0 "$worker" 2>/dev/null || break; done',
    'exit "$status"',
    '',
  ].join('\n');
  const render = (arrayJob: string | undefined) =>
    [
      '#!/bin/bash',
      `#SBATCH --job-name=angle-${c.notebook}-render`,
      `#SBATCH --output=${logs}/render-%j.out`,
      ...(arrayJob ? [`#SBATCH --dependency=afterok:${arrayJob}`, '#SBATCH --kill-on-invalid-dep=yes'] : []),
      ...(o.gpusPerRun > 0 ? [`#SBATCH --gres=gpu:1`] : []),
      ...common,
      `# ${c.notebook} rendered from the records its runs wrote (every run is reused).`,
      `cd ${q(c.root)}`,
      ...exports,
      ...(arrayJob ? [`scontrol show job ${arrayJob} > ${q(join(dir, 'array-state.txt'))} 2>&1 || true`] : []),
      `exec ${cli} --out ${q(c.outDir)}`,
      '',
    ].join('\n');
  return { array, render };
}

function sbatch(args: string[], script: string): { jobId?: string; error?: string; status: number | null } {
  const r = spawnSync('sbatch', ['--parsable', ...args, script], { encoding: 'utf8' });
  if (r.error) return { error: `sbatch: ${r.error.message} (is Slurm installed and SLURM_CONF set?)`, status: null };
  if (r.status !== 0) return { error: `sbatch ${script}: exit ${r.status}: ${r.stderr.trim()}`, status: r.status };
  return { jobId: r.stdout.trim().split(';')[0], status: 0 };
}

/**
 * Writes the submission folder and submits (or, with dryRun, prints the scripts): the array over
 * `pending` (none: only the render job), then the render job after it. Returns a failure line or
 * undefined.
 */
export function submitToSlurm(c: NotebookCommand, pending: readonly ListedRun[], o: SlurmOptions, resultsDir: string, log: (line: string) => void): string | undefined {
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
  const dir = join(resultsDir, 'slurm', c.notebook, stamp);
  const { array, render } = slurmScripts(c, pending, o, dir);
  if (o.dryRun) {
    log(`# ${dir}/array.sbatch (${pending.length} task(s))`);
    if (pending.length > 0) log(array);
    log(`# ${dir}/render.sbatch`);
    log(render(pending.length > 0 ? '<array job id>' : undefined));
    return undefined;
  }
  mkdirSync(join(dir, 'logs'), { recursive: true });
  writeFileSync(join(dir, 'runs.txt'), pending.map((r) => r.key).join('\n') + '\n');
  const submission: Record<string, unknown> = { notebook: c.notebook, submittedAt: new Date().toISOString(), options: o, runs: pending.map((r, i) => ({ task: i, key: r.key, label: r.label })) };
  let arrayJob: string | undefined;
  if (pending.length > 0) {
    writeFileSync(join(dir, 'array.sbatch'), array);
    const a = sbatch([], join(dir, 'array.sbatch'));
    if (a.error) return a.error;
    arrayJob = a.jobId!;
    submission.arrayJob = arrayJob;
    log(`${c.notebook}: submitted job array ${arrayJob} (${pending.length} task(s)); logs in ${dir}/logs/`);
  }
  writeFileSync(join(dir, 'render.sbatch'), render(arrayJob));
  writeFileSync(join(dir, 'submission.json'), JSON.stringify(submission, null, 2) + '\n');
  if (!o.wait) {
    const r = sbatch([], join(dir, 'render.sbatch'));
    if (r.error) return r.error;
    submission.renderJob = r.jobId;
    writeFileSync(join(dir, 'submission.json'), JSON.stringify(submission, null, 2) + '\n');
    log(`${c.notebook}: submitted render job ${r.jobId} (after the array succeeds); the notebook goes to ${c.outDir}`);
    return undefined;
  }
  log(`${c.notebook}: submitting the render job and waiting for it (sbatch --wait)`);
  const r = sbatch(['--wait'], join(dir, 'render.sbatch'));
  if (r.error) return `${r.error}; the array's state and the task logs are in ${dir}`;
  log(`${c.notebook}: render job ${r.jobId} finished; the notebook is in ${c.outDir}, the array's state in ${dir}/array-state.txt`);
  return undefined;
}
