/**
 * npm run notebooks [-- <names...>] [--preset smoke|paper|rehearsal] [--shared <dir>] [--out <dir>]
 *                      [--dir <notebooks dir>] [--timeout-per-cell <s>] [--verbose] [--build] [--jobs <n>]
 *                      [--gpus <ids> | --workers <n> | --list-runs | --only-run <key>]
 *                      [--submit slurm [--partition P] [--gpus-per-run N] [--time HH:MM:SS] [--wait] [--dry-run]]
 *
 * Runs notebooks headless, the way the tslab Jupyter kernel runs them, and writes the executed
 * notebooks (outputs filled) to results/notebooks/. Each notebook runs in a fresh kernel process
 * (./kernel.ts, driven by ./runner.ts); this file is the command line: options, which notebooks,
 * the environment a preset gives the kernels (./environment.ts, shared with `npm run jupyter`),
 * and the run loop. docs/jupyter.md describes the options and how this compares with nbconvert.
 * `--jobs n` runs n notebooks at a time, each in its own kernel (their runs never collide: the run
 * store locks each run, lib/experiments/run-lock.ts). `--gpus`/`--workers` spread a notebook's runs over worker processes (./workers.ts,
 * docs/distributed.md); `--only-run` is one such worker, by its plan-run key; `--submit slurm`
 * makes each run a task of a Slurm job array (./slurm.ts).
 *
 * Every argument is checked (options, notebook names, preset, shared folder, output folder) before
 * anything is built or run; then `--build` (which the npm script passes) compiles lib/ to dist/,
 * since the notebooks import the built library.
 */
import { readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { clearRehearsalRows } from '../../lib/experiments/rehearsal/summary.js';
import { InputError } from '../../lib/util/errors.js';
import { packageRoot } from '../../lib/util/package-root.js';
import { buildLibrary, BuildFailedError } from '../cli/build-library.js';
import { checkWritableDir, EXIT, helpText, parseOptions, reportError, UsageError, validateArguments, type OptionSpecs } from '../cli/command.js';
import { notebookEnvironment, notebookVariablesLine } from './environment.js';
import { executedNotebooksDir, KERNEL_NAMES, type KernelName } from './kernels.js';
import { runNotebook, shown, type NotebookRun, type RunContext } from './runner.js';
import { slurmOptions, submitToSlurm, type SlurmOptions } from './slurm.js';
import { ensureResultsDir, listPlanRuns, pendingRuns, resultsDirOf, runOnSlots, runOneByKey, workerSlots, type WorkerSlot } from './workers.js';

const DEFAULT_TIMEOUT_S = 30 * 60;

interface Options {
  names: string[];
  dir: string;
  out: string;
  preset?: string;
  shared?: string;
  timeoutS: number;
  verbose: boolean;
  kernel: KernelName;
  build: boolean;
  /** --jobs: notebooks run at a time (1: one after the other). */
  jobs: number;
  /** --gpus / --workers: the worker slots. */
  slots?: WorkerSlot[];
  listRuns: boolean;
  onlyRun?: string;
  /** --submit slurm: how. */
  slurm?: SlurmOptions;
}

const OPTIONS = {
  preset: { type: 'string', value: 'smoke|paper|rehearsal', help: 'environment defaults (ANGLE_* variables you set win)', default: 'ANGLE_PRESET, else smoke when ANGLE_MODEL is unset, else none' },
  shared: { type: 'string', value: '<dir>', help: 'the shared directory the smoke preset reads (data/, golden/)', default: 'ANGLE_SHARED_DIR, else ../shared beside the repository, if it exists' },
  out: { type: 'string', value: '<dir>', help: 'where executed notebooks go', default: 'results/notebooks (results/notebooks-deno with --kernel deno)' },
  dir: { type: 'string', value: '<dir>', help: 'the notebooks directory', default: 'notebooks' },
  'timeout-per-cell': { type: 'string', value: '<s>', help: 'fail a cell that runs longer', default: String(DEFAULT_TIMEOUT_S) },
  verbose: { type: 'boolean', short: 'v', help: 'also echo what cells print, as they print it' },
  kernel: { type: 'string', value: KERNEL_NAMES.join('|'), help: "the Jupyter kernel the cells run in: tslab (Node, the notebooks' own) or deno (Deno's kernel, the npm package deno); docs/jupyter.md", default: 'tslab' },
  build: { type: 'boolean', help: 'compile lib/ to dist/ (npm run build) once the arguments are checked, before the first notebook; the npm script passes it' },
  jobs: { type: 'string', value: '<n>', help: "run n notebooks at a time, each in its own kernel, taken in order as lanes free up (a run two notebooks share is trained once: the other waits for its record); on a CPU machine, n = the cores the kernels may use", default: '1' },
  gpus: { type: 'string', value: '<ids>', help: "run the plan's runs concurrently, one worker process per GPU (CUDA_VISIBLE_DEVICES=<id> each, e.g. 0,1,2,3), then render the notebook from their records (docs/distributed.md)" },
  workers: { type: 'string', value: '<n>', help: 'as --gpus, with n worker processes bound to no device (the CPU backends; what the tests use)' },
  'list-runs': { type: 'boolean', help: "print each notebook's plan runs (plan-run key, finished or not, label) and run nothing" },
  submit: { type: 'string', value: 'slurm', help: "submit the plan's unfinished runs as one Slurm job array (a task per run, by key) and a dependent job that renders the notebook from their records (docs/distributed.md)" },
  partition: { type: 'string', value: '<P>', help: 'with --submit: the Slurm partition', default: "the cluster's default" },
  'gpus-per-run': { type: 'string', value: '<n>', help: 'with --submit: GPUs each task asks for (--gres=gpu:n); 0 for the CPU backends', default: '1' },
  time: { type: 'string', value: '<HH:MM:SS>', help: "with --submit: each task's time limit; the task checkpoints and requeues itself --signal-before it", default: "the partition's" },
  'signal-before': { type: 'string', value: '<s>', help: 'with --submit: seconds before the time limit at which a task checkpoints and requeues (sbatch --signal=B:USR1@s)', default: '300' },
  wait: { type: 'boolean', help: 'with --submit: wait until the notebook is rendered (sbatch --wait on the render job); exit 1 if it was not' },
  'dry-run': { type: 'boolean', help: 'with --submit: print the two batch scripts, submit nothing' },
  'only-run': { type: 'string', value: '<key>', help: "run the one plan run with this key (from --list-runs) and stop at plan.run(): what each worker and Slurm task does; its executed notebook goes to results/worker-logs/<notebook>/<key>.ipynb" },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} satisfies OptionSpecs;

const USAGE = helpText(
  'usage: npm run notebooks [-- [names...] [options]]\n  names: notebooks by name or prefix (00, 00-encode-and-compare); none = all, in order',
  OPTIONS,
  'Exit status: 0 every notebook ran, 1 a cell failed, 2 usage error (unknown option, notebook or preset,\nno shared directory), 130 interrupted.',
);

/** The options, or undefined after printing --help. */
function parseCli(argv: string[], root: string): Options | undefined {
  const { values, positionals } = parseOptions(OPTIONS, argv, true);
  if (values.help) {
    console.log(USAGE);
    return undefined;
  }
  const timeoutS = Number(values['timeout-per-cell'] ?? DEFAULT_TIMEOUT_S);
  if (!(timeoutS > 0)) throw new UsageError(`--timeout-per-cell expects seconds > 0, got ${values['timeout-per-cell']}`);
  const kernel = values.kernel ?? 'tslab';
  if (!(KERNEL_NAMES as readonly string[]).includes(kernel)) throw new UsageError(`--kernel expects one of ${KERNEL_NAMES.join(', ')}, got '${kernel}'`);
  const jobs = Number(values.jobs ?? 1);
  if (!(Number.isInteger(jobs) && jobs >= 1)) throw new UsageError(`--jobs expects a whole number of notebooks >= 1, got '${values.jobs}'`);
  const slots = workerSlots(values.gpus, values.workers);
  const modes = [slots && (values.gpus !== undefined ? '--gpus' : '--workers'), values['list-runs'] && '--list-runs', values['only-run'] !== undefined && '--only-run', values.submit !== undefined && '--submit'].filter(Boolean);
  if (modes.length > 1) throw new UsageError(`${modes.join(' and ')} do different things: give one`);
  if (jobs > 1 && modes.length > 0) throw new UsageError(`--jobs runs whole notebooks side by side; ${modes[0]} does not go with it`);
  if (values.submit !== undefined && values.submit !== 'slurm') throw new UsageError(`--submit knows slurm only, got '${values.submit}'`);
  const slurmOnly = (['partition', 'gpus-per-run', 'time', 'signal-before', 'wait', 'dry-run'] as const).filter((k) => values[k] !== undefined);
  if (values.submit === undefined && slurmOnly.length > 0) throw new UsageError(`--${slurmOnly[0]} goes with --submit slurm`);
  const slurm = values.submit === 'slurm' ? slurmOptions(values) : undefined;
  if (values['only-run'] !== undefined && !/^[0-9a-f]{16}$/.test(values['only-run'])) throw new UsageError(`--only-run expects a plan-run key (16 hex digits, from --list-runs), got '${values['only-run']}'`);
  if (values['only-run'] !== undefined && positionals.length !== 1) throw new UsageError('--only-run runs one run of one notebook: name exactly one notebook');
  return {
    names: positionals,
    dir: resolve(values.dir ?? join(root, 'notebooks')),
    out: resolve(values.out ?? executedNotebooksDir(root, kernel as KernelName)),
    preset: values.preset,
    shared: values.shared,
    timeoutS,
    verbose: values.verbose ?? false,
    kernel: kernel as KernelName,
    build: values.build ?? false,
    jobs,
    ...(slots ? { slots } : {}),
    listRuns: values['list-runs'] ?? false,
    ...(slurm ? { slurm } : {}),
    ...(values['only-run'] !== undefined ? { onlyRun: values['only-run'] } : {}),
  };
}

/** The notebooks `names` select (by name or prefix), in file order; all of them for none. */
function selectNotebooks(dir: string, names: string[]): string[] {
  let all: string[];
  try {
    all = readdirSync(dir)
      .filter((f) => f.endsWith('.ipynb') && !f.startsWith('.'))
      .map((f) => f.slice(0, -'.ipynb'.length))
      .sort();
  } catch {
    throw new UsageError(`no notebooks directory ${shown(dir)}`);
  }
  if (all.length === 0) throw new UsageError(`no notebooks (*.ipynb) in ${shown(dir)}`);
  if (names.length === 0) return all;
  const chosen = new Set<string>();
  for (const raw of names) {
    const name = basename(raw).replace(/\.ipynb$/, '');
    const hits = all.includes(name) ? [name] : all.filter((n) => n.startsWith(name));
    if (hits.length === 0) {
      throw new UsageError(`no notebook named or starting with "${raw}" in ${shown(dir)}; available: ${all.join(', ')}`);
    }
    hits.forEach((h) => chosen.add(h));
  }
  return all.filter((n) => chosen.has(n));
}

async function main(argv: string[]): Promise<number> {
  const root = packageRoot();
  let opts: Options;
  let names: string[];
  let env: NodeJS.ProcessEnv;
  try {
    const parsed = validateArguments(() => parseCli(argv, root));
    if (!parsed) return EXIT.ok;
    opts = parsed;
    names = validateArguments(() => selectNotebooks(opts.dir, opts.names));
    const chosen = notebookEnvironment({ preset: opts.preset, shared: opts.shared }, root);
    if (chosen.shared) console.log(`shared: ${chosen.shared.path} (from ${chosen.shared.from})`);
    env = chosen.env;
    // Before any notebook runs: a folder that cannot take the executed notebooks fails now.
    checkWritableDir(opts.out, 'executed notebooks', 'choose another with --out');
    // Only now, with every argument checked: the notebooks import the built library.
    if (opts.build) buildLibrary(root);
  } catch (e) {
    if (e instanceof BuildFailedError) {
      console.error(`notebooks: ${e.message}`);
      return EXIT.failed;
    }
    return reportError('notebooks', e);
  }
  const ctx: RunContext = { env, timeoutS: opts.timeoutS, verbose: opts.verbose, kernel: opts.kernel };
  // The kernels running now: one, or one per worker.
  const running = new Set<RunContext>([ctx]);
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) {
      running.forEach((c) => c.child?.kill('SIGKILL'));
      process.exit(130);
    }
    interrupted = true;
    console.error('notebooks: interrupted; writing the current notebook(s) (Ctrl-C again to quit at once)');
    running.forEach((c) => c.child?.kill('SIGINT'));
  };
  // A worker (a Slurm task being requeued or preempted) passes SIGTERM on: its training then stops
  // after the current step with a checkpoint (lib/experiments/plan.ts), where SIGINT would interrupt the cell.
  const onWorkerTerm = () => {
    interrupted = true;
    console.error('notebooks: SIGTERM; the run writes a checkpoint and stops');
    running.forEach((c) => c.child?.kill('SIGTERM'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', opts.onlyRun ? onWorkerTerm : onSignal);

  console.log(
    `running ${names.length} notebook(s) from ${shown(opts.dir)}; ` +
      notebookVariablesLine(env),
  );
  // A rehearsal replaces what the notebooks it runs rehearsed before (the others' rows stay).
  if (env.ANGLE_PRESET === 'rehearsal' && env.ANGLE_RESULTS_DIR) clearRehearsalRows(env.ANGLE_RESULTS_DIR, names);
  // Notebook i's failure at index i, so that the summary keeps the notebooks' order under --jobs.
  const failures: (string | undefined)[] = [];
  let next = 0;
  // One lane per job: each takes the next notebook in order when its last one ends, in a kernel of
  // its own (its own RunContext, so that Ctrl-C reaches every running kernel).
  const lane = async (laneCtx: RunContext) => {
    running.add(laneCtx);
    while (next < names.length && !interrupted) {
      const i = next++;
      const name = names[i];
      const label = `[${i + 1}/${names.length}] ${name}`;
      const file = join(opts.dir, `${name}.ipynb`);
      let run: NotebookRun;
      try {
        run = await runInMode(opts, file, name, label, laneCtx, resultsDirOf(env, root), running, () => interrupted);
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        console.error(e.message);
        run = { failure: e.message };
      }
      failures[i] = run.failure;
    }
  };
  // The rehearsal's rows go to one summary file per results folder, rewritten by each notebook
  // (read, replace its rows, write): two at once would lose rows, so a rehearsal runs one at a time.
  const rehearsal = env.ANGLE_PRESET === 'rehearsal';
  if (rehearsal && opts.jobs > 1) console.log('the rehearsal preset runs one notebook at a time (its rows share one summary file); --jobs ignored');
  const lanes = rehearsal ? 1 : Math.min(opts.jobs, names.length);
  if (lanes > 1) console.log(`${lanes} notebooks at a time (--jobs ${opts.jobs})`);
  await Promise.all(Array.from({ length: lanes }, (_, j) => lane(j === 0 ? ctx : { ...ctx, child: undefined })));
  if (interrupted) return 130;
  const failed = failures.filter((f): f is string => f !== undefined);
  if (failed.length > 0) {
    if (names.length > 1) console.error(`\n${failed.length} of ${names.length} notebooks failed:\n${failed.join('\n')}`);
    return 1;
  }
  return 0;
}

/**
 * One notebook as the options ask: run as always; or its plan's runs listed; or one of them run by
 * key; or all of them spread over workers and then the notebook rendered from their records.
 */
async function runInMode(opts: Options, file: string, name: string, label: string, ctx: RunContext, resultsDir: string, running: Set<RunContext>, stopped: () => boolean): Promise<NotebookRun> {
  const out = join(opts.out, `${name}.ipynb`);
  if (opts.onlyRun) return runOneByKey(file, name, { key: opts.onlyRun }, ctx, resultsDir, workerOriginFromEnv());
  if (!opts.listRuns && !opts.slots && !opts.slurm) return runNotebook(file, label, out, ctx);
  const { runs, run } = await listPlanRuns(file, name, ctx);
  if (run.failure) return run;
  const { pending, line } = pendingRuns(runs);
  if (opts.slurm) {
    console.log(`${label}: ${line}`);
    const command = { root: packageRoot(), notebook: name, notebooksDir: opts.dir, outDir: opts.out, timeoutS: opts.timeoutS, env: ctx.env };
    const failure = submitToSlurm(command, pending, opts.slurm, resultsDir, (l) => console.log(l));
    return failure ? { failure: `${label}: ${failure}` } : {};
  }
  if (opts.listRuns) {
    console.log(`${label}: ${line}`);
    for (const r of runs) console.log(`  ${r.key}  ${r.finished ? 'finished' : 'to run  '}  ${r.experiment}: ${r.label}`);
    return {};
  }
  console.log(`${label}: ${line}, on ${opts.slots!.length} worker(s): ${opts.slots!.map((s) => s.name).join(', ')}`);
  ensureResultsDir(resultsDir);
  const failures = await runOnSlots(file, name, pending, opts.slots!, ctx, resultsDir, running, stopped);
  if (stopped()) return { failure: `${label}: interrupted` };
  if (failures.length > 0) {
    return { failure: `${label}: ${failures.length} of ${pending.length} run(s) failed, so the notebook was not rendered (run the same command again: finished runs are reused):\n  ${failures.join('\n  ')}` };
  }
  return runNotebook(file, `${label} (rendering from the runs' records)`, out, ctx);
}

/** A Slurm task says where it runs (its job and log) through the environment Slurm gives it. */
function workerOriginFromEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const o: Record<string, string> = {};
  if (env.SLURM_ARRAY_JOB_ID) o.slurmJob = `${env.SLURM_ARRAY_JOB_ID}_${env.SLURM_ARRAY_TASK_ID ?? ''}`;
  else if (env.SLURM_JOB_ID) o.slurmJob = env.SLURM_JOB_ID;
  if (env.SLURM_JOB_NODELIST) o.node = env.SLURM_JOB_NODELIST;
  if (env.ANGLE_SLURM_LOG) o.slurmLog = env.ANGLE_SLURM_LOG;
  if (env.CUDA_VISIBLE_DEVICES) o.device = `GPU ${env.CUDA_VISIBLE_DEVICES}`;
  return o;
}

process.exitCode = await main(process.argv.slice(2));
