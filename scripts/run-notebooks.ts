/**
 * Runs notebooks headless, the way the tslab Jupyter kernel runs them, and writes the executed
 * notebooks (outputs filled) to results/notebooks/.
 *
 *   npm run notebooks [-- <names...>] [--preset smoke|paper] [--shared <dir>] [--out <dir>]
 *                        [--dir <notebooks dir>] [--timeout-per-cell <s>] [--verbose]
 *
 * Each notebook runs in a fresh child process (its kernel) holding one tslab executor, so cells
 * share one context as in Jupyter; the kernel's working directory is the notebook's directory.
 * The parent assembles the outputs it reports, enforces the per-cell timeout (SIGINT, as Jupyter's
 * "interrupt"; SIGKILL if that does not stop it) and writes each notebook atomically, also when a
 * cell fails. docs/jupyter.md describes the options and how this compares with nbconvert.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, inspect, parseArgs, types } from 'node:util';
import {
  joinText,
  readNotebook,
  splitLines,
  writeNotebook,
  type CodeCell,
  type DisplayDataOutput,
  type ErrorOutput,
  type MimeBundle,
  type Notebook,
  type NotebookOutput,
} from '../lib/notebook/ipynb.js';
import { isPresetName, presetByName, presetVariables, PRESET_NAMES, type PresetName } from '../lib/notebook/presets.js';
import { InputError } from '../lib/util/errors.js';
import { packageRoot } from '../lib/util/package-root.js';

const SCRIPT = fileURLToPath(import.meta.url);
const DEFAULT_TIMEOUT_S = 30 * 60;
/** setTimeout's longest delay (about 24.8 days); longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How long a kernel may take to stop after the timeout's SIGINT before it is killed. */
const KILL_GRACE_MS = 10_000;
/** What `tslab install` writes as the kernelspec (tslab's python/install.py). */
const TSLAB_KERNELSPEC = { display_name: 'TypeScript', language: 'typescript', name: 'tslab' };
/** The environment variables notebooks read (lib/config.ts), shown in the run's header. */
const ANGLE_VARS = ['ANGLE_PRESET', 'ANGLE_MODEL', 'ANGLE_DATA_DIR', 'ANGLE_GOLDEN_DIR', 'ANGLE_BACKEND', 'ANGLE_RESULTS_DIR'];

// ---------------------------------------------------------------------------------------------
// Messages between the runner and a notebook's kernel process.

interface KernelInput {
  dir: string;
  cells: { index: number; source: string }[];
}

type KernelMessage =
  | { type: 'kernel-info'; languageInfo: Record<string, unknown> }
  | { type: 'cell-start'; cell: number; executionCount: number }
  | { type: 'output'; cell: number; output: NotebookOutput; displayId?: string }
  | { type: 'update-display'; displayId: string; data: MimeBundle; metadata: Record<string, unknown> }
  | { type: 'cell-end'; cell: number; ok: boolean }
  | { type: 'done' };

// ---------------------------------------------------------------------------------------------
// The kernel: a child process executing cells with tslab's executor, reporting what they print.

/** tslab's executor prints each compile diagnostic with console.error(DIAGNOSTIC_FORMAT, ...). */
const DIAGNOSTIC_FORMAT = '%s%d:%d - %s';

/** Stack frames of the machinery around a cell (Node's vm, tslab, this script), dropped from tracebacks. */
const MACHINERY_FRAME = /^\s+at .*(?:\bnode:|[\\/]tslab[\\/]dist[\\/]|run-notebooks\.ts)/;

function errorOutput(errorCalls: unknown[][]): ErrorOutput {
  const diagnostics = errorCalls.filter((a) => a[0] === DIAGNOSTIC_FORMAT).map((a) => format(...a));
  if (diagnostics.length > 0) {
    return { output_type: 'error', ename: 'CompileError', evalue: diagnostics.join('\n'), traceback: diagnostics };
  }
  if (errorCalls.length === 0) {
    return { output_type: 'error', ename: 'Error', evalue: 'the cell failed without an error message', traceback: [] };
  }
  const thrown = errorCalls[errorCalls.length - 1]![0];
  if (types.isNativeError(thrown) || thrown instanceof Error) {
    const e = thrown as Error;
    // Printed as the kernel prints it (util.inspect), less the frames of the machinery.
    try {
      e.stack = e.stack
        ?.split('\n')
        .filter((line) => !MACHINERY_FRAME.test(line))
        .join('\n');
    } catch {
      /* a read-only stack stays whole */
    }
    return { output_type: 'error', ename: e.name, evalue: e.message, traceback: inspect(e).split('\n') };
  }
  const shown = inspect(thrown);
  return { output_type: 'error', ename: 'Uncaught', evalue: shown, traceback: [`Uncaught ${shown}`] };
}

async function kernel(): Promise<void> {
  const input = await new Promise<KernelInput>((res) => process.once('message', (m) => res(m as KernelInput)));
  process.on('disconnect', () => process.exit(1));
  const send = (m: KernelMessage, then?: () => void) => process.send!(m, undefined, {}, then);
  process.chdir(input.dir);

  const require = createRequire(import.meta.url);
  const { createConverter } = require('tslab/dist/converter') as typeof import('tslab/dist/converter.js');
  const { createExecutor } = require('tslab/dist/executor') as typeof import('tslab/dist/executor.js');
  // tslab.display.* writes through this module-level hook, which the kernel sets per execution.
  const jupyter = require('tslab/dist/jupyter') as {
    lastWriteDisplayData: unknown;
    JupyterHandlerImpl: new (executor: unknown, isJs: boolean) => { handleKernel(): { language_info: Record<string, unknown> } };
  };

  // Like the kernel: whatever the process writes goes to the cell that ran last, also after the
  // cell's promise settled (until the next cell starts).
  let current: number | undefined;
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = process[name];
    const original = stream.write.bind(stream);
    const decoder = new TextDecoder();
    stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((e?: Error | null) => void), cb?: (e?: Error | null) => void) => {
      if (typeof encoding === 'function') [cb, encoding] = [encoding, undefined];
      if (current === undefined) return original(chunk, encoding ?? 'utf8', cb);
      const text =
        typeof chunk === 'string'
          ? encoding && encoding !== 'utf8' && encoding !== 'utf-8'
            ? Buffer.from(chunk, encoding).toString('utf8')
            : chunk
          : decoder.decode(chunk, { stream: true });
      if (text !== '') send({ type: 'output', cell: current, output: { output_type: 'stream', name, text } });
      if (cb) process.nextTick(cb);
      return true;
    }) as typeof stream.write;
  }
  interface DisplayData {
    data: MimeBundle;
    metadata: Record<string, unknown>;
    transient?: { display_id?: string };
  }
  jupyter.lastWriteDisplayData = (d: DisplayData, update: boolean) => {
    const displayId = d.transient?.display_id;
    if (update && displayId) send({ type: 'update-display', displayId, data: d.data, metadata: d.metadata });
    else if (current !== undefined) {
      send({ type: 'output', cell: current, output: { output_type: 'display_data', data: d.data, metadata: d.metadata }, displayId });
    }
  };

  const node = createConverter({ isJS: false, isBrowser: false });
  let browser: ReturnType<typeof createConverter> | undefined;
  const convs = {
    node,
    get browser() {
      return (browser ??= createConverter({ isJS: false, isBrowser: true }));
    },
    close() {
      node.close();
      browser?.close();
    },
  };
  // The executor prints the last expression's value with log() and errors with error().
  let printed: { value?: unknown[]; errors: unknown[][] } = { errors: [] };
  const executor = createExecutor(process.cwd(), convs, {
    log: (...args: unknown[]) => void (printed.value = args),
    error: (...args: unknown[]) => void printed.errors.push(args),
  });
  send({ type: 'kernel-info', languageInfo: new jupyter.JupyterHandlerImpl(executor, false).handleKernel().language_info });
  // The kernel's handlers: SIGINT interrupts the running cell; stray errors are printed, not fatal.
  process.on('SIGINT', () => executor.interrupt());
  process.on('uncaughtException', (err) => console.error('UncaughtException:', err));
  process.on('unhandledRejection', (reason) => console.error('UnhandledPromiseRejection:', reason));

  let count = 0;
  for (const { index, source } of input.cells) {
    current = index;
    printed = { errors: [] };
    const executionCount = ++count;
    send({ type: 'cell-start', cell: index, executionCount });
    const ok = await executor.execute(source);
    if (!ok) {
      send({ type: 'output', cell: index, output: errorOutput(printed.errors) });
    } else {
      // Diagnostics of a `//@module` cell: printed, not a failure (as in the kernel).
      if (printed.errors.length > 0) {
        const text = printed.errors.map((a) => format(...a) + '\n').join('');
        send({ type: 'output', cell: index, output: { output_type: 'stream', name: 'stderr', text } });
      }
      if (printed.value) {
        const data = { 'text/plain': format(...printed.value) };
        send({ type: 'output', cell: index, output: { output_type: 'execute_result', execution_count: executionCount, data, metadata: {} } });
      }
    }
    send({ type: 'cell-end', cell: index, ok });
    if (!ok) break;
  }
  send({ type: 'done' }, () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// The runner.

class UsageError extends Error {}

interface Options {
  names: string[];
  dir: string;
  out: string;
  preset?: string;
  shared?: string;
  timeoutS: number;
  verbose: boolean;
}

const USAGE = `usage: npm run notebooks [-- [names...] [options]]
  names                   notebooks by name or prefix (00, 00-encode-and-compare); none = all, in order
  --preset smoke|paper    environment defaults (explicit ANGLE_* variables win); default: smoke
                          when ANGLE_MODEL is unset, else none
  --shared <dir>          the shared directory the smoke preset reads (default: ../shared beside
                          the repository, if it exists)
  --out <dir>             where executed notebooks go (default: results/notebooks)
  --dir <dir>             the notebooks directory (default: notebooks)
  --timeout-per-cell <s>  fail a cell that runs longer (default: ${DEFAULT_TIMEOUT_S})
  -v, --verbose           also echo what cells print, as they print it`;

function parseCli(argv: string[], root: string): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      preset: { type: 'string' },
      shared: { type: 'string' },
      out: { type: 'string' },
      dir: { type: 'string' },
      'timeout-per-cell': { type: 'string' },
      verbose: { type: 'boolean', short: 'v' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const timeoutS = Number(values['timeout-per-cell'] ?? DEFAULT_TIMEOUT_S);
  if (!(timeoutS > 0)) throw new UsageError(`--timeout-per-cell expects seconds > 0, got ${values['timeout-per-cell']}`);
  return {
    names: positionals,
    dir: resolve(values.dir ?? join(root, 'notebooks')),
    out: resolve(values.out ?? join(root, 'results', 'notebooks')),
    preset: values.preset,
    shared: values.shared,
    timeoutS,
    verbose: values.verbose ?? false,
  };
}

/** A path for messages: relative to the working directory when below it. */
function shown(p: string): string {
  const r = relative(process.cwd(), p);
  return r === '' ? '.' : r.startsWith('..') ? p : r;
}

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

/** The environment the kernels get: the runner's, with paths made absolute and the preset applied. */
function kernelEnvironment(opts: Options, root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const set = (k: string) => (env[k] ?? '').trim() !== '';
  // The kernel's working directory is the notebook's, so relative paths are resolved here first.
  for (const k of ['ANGLE_DATA_DIR', 'ANGLE_GOLDEN_DIR', 'ANGLE_RESULTS_DIR']) if (set(k)) env[k] = resolve(env[k]!.trim());
  if (set('ANGLE_MODEL') && existsSync(env.ANGLE_MODEL!.trim())) env.ANGLE_MODEL = resolve(env.ANGLE_MODEL!.trim());

  const name = opts.preset ?? (set('ANGLE_PRESET') ? env.ANGLE_PRESET!.trim() : set('ANGLE_MODEL') ? undefined : 'smoke');
  if (name === undefined) return env;
  if (!isPresetName(name)) throw new UsageError(`unknown preset "${name}"; expected one of: ${PRESET_NAMES.join(', ')}`);
  let shared: string | undefined;
  if (presetByName(name).needsShared) {
    const fallback = resolve(root, '..', 'shared');
    shared = opts.shared !== undefined ? resolve(opts.shared) : existsSync(fallback) ? fallback : undefined;
    if (shared === undefined || !statSync(shared, { throwIfNoEntry: false })?.isDirectory()) {
      throw new UsageError(
        `the ${name} preset reads data and the golden model from a shared directory, ` +
          (shared === undefined ? `and ${fallback} does not exist` : `and ${shared} is not a directory`) +
          `: pass --shared <dir> (holding data/ and golden/), or use --preset paper (model and data from the Hub), or set ANGLE_MODEL`,
      );
    }
  }
  for (const [k, v] of Object.entries(presetVariables(name as PresetName, shared))) if (!set(k)) env[k] = v;
  env.ANGLE_PRESET = name;
  return env;
}

interface NotebookRun {
  /** `notebooks/<name>.ipynb: cell <n> (code cell <k>): <error>` when it failed. */
  failure?: string;
}

interface RunContext {
  opts: Options;
  env: NodeJS.ProcessEnv;
  /** Set while a kernel runs, for the SIGINT handler. */
  child?: ChildProcess;
}

/** Jupyter stores multi-line text as lists of lines. */
function asStored(o: NotebookOutput): NotebookOutput {
  const split = (mime: string, v: unknown) =>
    typeof v === 'string' && (mime.startsWith('text/') || mime === 'image/svg+xml' || mime === 'application/javascript') ? splitLines(v) : v;
  switch (o.output_type) {
    case 'stream':
      return { ...o, text: splitLines(joinText(o.text)) };
    case 'display_data':
    case 'execute_result':
      return { ...o, data: Object.fromEntries(Object.entries(o.data).map(([m, v]) => [m, split(m, v)])) };
    case 'error':
      return o;
  }
}

async function runNotebook(file: string, label: string, outFile: string, ctx: RunContext): Promise<NotebookRun> {
  const started = Date.now();
  const nb = await readNotebook(shown(file));
  const executed: Notebook = structuredClone(nb);
  executed.metadata = { ...nb.metadata, kernelspec: TSLAB_KERNELSPEC };
  const codeNumber = new Map<number, number>();
  const toRun: KernelInput['cells'] = [];
  executed.cells.forEach((c, index) => {
    if (c.cell_type !== 'code') return;
    codeNumber.set(index, codeNumber.size + 1);
    c.outputs = [];
    c.execution_count = null;
    const source = joinText(c.source);
    // Like nbclient, whitespace-only cells are not sent to the kernel.
    if (source.trim() !== '') toRun.push({ index, source });
  });
  const codeCell = (index: number) => executed.cells[index] as CodeCell;

  const displays = new Map<string, DisplayDataOutput[]>();
  const addOutput = (index: number, o: NotebookOutput, displayId?: string) => {
    const outputs = codeCell(index).outputs;
    const last = outputs[outputs.length - 1];
    if (o.output_type === 'stream' && last?.output_type === 'stream' && last.name === o.name) {
      last.text = joinText(last.text) + joinText(o.text);
    } else {
      outputs.push(o);
    }
    if (o.output_type === 'display_data' && displayId) displays.set(displayId, [...(displays.get(displayId) ?? []), o]);
    if (o.output_type === 'stream' && ctx.opts.verbose) process.stderr.write(joinText(o.text));
  };

  let failed: { index: number; error: ErrorOutput } | undefined;
  let running: number | undefined;
  let timedOut = false;
  let done = false;
  let timers: NodeJS.Timeout[] = [];
  const clearTimers = () => {
    timers.forEach(clearTimeout);
    timers = [];
  };
  const timeoutError = (traceback: string[], killed: boolean): ErrorOutput => ({
    output_type: 'error',
    ename: 'TimeoutError',
    evalue:
      `the cell ran longer than ${ctx.opts.timeoutS} s (--timeout-per-cell) and was interrupted` +
      (killed ? `; it did not stop within ${KILL_GRACE_MS / 1000} s, so its kernel was killed` : ''),
    traceback,
  });

  if (toRun.length > 0) {
    const child = fork(SCRIPT, ['--kernel'], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: ctx.env });
    ctx.child = child;
    // Everything a cell writes arrives as a message; what reaches the real streams is the
    // process's own (startup warnings, native libraries) and goes to the runner's stderr.
    child.stdout!.pipe(process.stderr, { end: false });
    child.stderr!.pipe(process.stderr, { end: false });
    child.on('error', (e) => console.error(`run-notebooks: ${shown(file)}: kernel process: ${e.message}`));
    child.on('message', (m: KernelMessage) => {
      switch (m.type) {
        case 'kernel-info':
          executed.metadata.language_info = m.languageInfo;
          break;
        case 'cell-start': {
          running = m.cell;
          timedOut = false;
          codeCell(m.cell).execution_count = m.executionCount;
          console.log(`${label}: cell ${m.cell + 1}/${executed.cells.length} ...`);
          timers.push(
            setTimeout(() => {
              timedOut = true;
              child.kill('SIGINT');
              timers.push(setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS));
            }, Math.min(ctx.opts.timeoutS * 1000, MAX_TIMER_MS)),
          );
          break;
        }
        case 'output': {
          let o = m.output;
          if (o.output_type === 'error') {
            if (timedOut) o = timeoutError(o.traceback, false);
            failed = { index: m.cell, error: o };
          }
          addOutput(m.cell, o, m.displayId);
          break;
        }
        case 'update-display':
          for (const o of displays.get(m.displayId) ?? []) Object.assign(o, { data: m.data, metadata: m.metadata });
          break;
        case 'cell-end':
          clearTimers();
          break;
        case 'done':
          done = true;
          break;
      }
    });
    child.send({ dir: resolve(file, '..'), cells: toRun } satisfies KernelInput);
    // Ended: the process exited and its message channel is drained. Not 'close', which also waits
    // for stdout/stderr, and those may be held open by a process the notebook started.
    const [exit] = await Promise.all([
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('exit', (code, signal) => res({ code, signal }))),
      new Promise((res) => child.on('disconnect', res)),
    ]);
    clearTimers();
    ctx.child = undefined;
    if (!done && failed === undefined) {
      const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
      const error: ErrorOutput = timedOut
        ? timeoutError([], true)
        : { output_type: 'error', ename: 'KernelDied', evalue: `the kernel process ended (${how}) while running this cell`, traceback: [] };
      if (running !== undefined) {
        addOutput(running, error);
        failed = { index: running, error };
      } else {
        failed = { index: -1, error: { ...error, evalue: `the kernel process ended (${how}) before running a cell` } };
      }
    }
  }

  executed.cells.forEach((c) => {
    if (c.cell_type === 'code') c.outputs = c.outputs.map(asStored);
  });
  await writeNotebook(outFile, executed);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (failed === undefined) {
    console.log(`${label}: ok, ${toRun.length} code cells in ${seconds} s -> ${shown(outFile)}`);
    return {};
  }
  const where = failed.index >= 0 ? `cell ${failed.index + 1} (code cell ${codeNumber.get(failed.index)}): ` : '';
  const failure = `${shown(file)}: ${where}${failed.error.ename}: ${failed.error.evalue}`;
  console.log(`${label}: FAILED after ${seconds} s -> ${shown(outFile)}`);
  console.error(failure);
  const trace = failed.error.traceback.filter((l) => l.trim() !== '');
  if (failed.error.ename !== 'CompileError' && trace.length > 0) console.error(trace.map((l) => `    ${l}`).join('\n'));
  return { failure };
}

async function main(argv: string[]): Promise<number> {
  const root = packageRoot();
  let opts: Options;
  let names: string[];
  let env: NodeJS.ProcessEnv;
  try {
    opts = parseCli(argv, root);
    names = selectNotebooks(opts.dir, opts.names);
    env = kernelEnvironment(opts, root);
  } catch (e) {
    if (e instanceof UsageError || e instanceof InputError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`run-notebooks: ${(e as Error).message}\n\n${USAGE}`);
      return 2;
    }
    throw e;
  }
  const ctx: RunContext = { opts, env };
  let interrupted = false;
  process.on('SIGINT', () => {
    if (interrupted) {
      ctx.child?.kill('SIGKILL');
      process.exit(130);
    }
    interrupted = true;
    console.error('run-notebooks: interrupted; writing the current notebook (Ctrl-C again to quit at once)');
    ctx.child?.kill('SIGINT');
  });

  console.log(
    `running ${names.length} notebook(s) from ${shown(opts.dir)}; ` +
      ANGLE_VARS.filter((k) => env[k]).map((k) => `${k}=${env[k]}`).join(' '),
  );
  const failures: string[] = [];
  for (const [i, name] of names.entries()) {
    const label = `[${i + 1}/${names.length}] ${name}`;
    const file = join(opts.dir, `${name}.ipynb`);
    let run: NotebookRun;
    try {
      run = await runNotebook(file, label, join(opts.out, `${name}.ipynb`), ctx);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      console.error(e.message);
      run = { failure: e.message };
    }
    if (run.failure) failures.push(run.failure);
    if (interrupted) return 130;
  }
  if (failures.length > 0) {
    if (names.length > 1) console.error(`\n${failures.length} of ${names.length} notebooks failed:\n${failures.join('\n')}`);
    return 1;
  }
  return 0;
}

if (process.argv[2] === '--kernel') {
  await kernel();
} else {
  process.exitCode = await main(process.argv.slice(2));
}
