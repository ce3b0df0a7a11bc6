/**
 * Running one notebook headless: its code cells go to a fresh kernel process (./kernel.ts), the
 * outputs it reports are assembled into the executed notebook, a per-cell timeout interrupts a cell
 * (SIGINT, as Jupyter's "interrupt"; SIGKILL if that does not stop it), and the executed notebook is
 * written atomically, also when a cell fails.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { relative, resolve } from 'node:path';
import {
  joinText,
  readNotebook,
  splitLines,
  writeNotebook,
  type CodeCell,
  type DisplayDataOutput,
  type ErrorOutput,
  type Notebook,
  type NotebookOutput,
} from './ipynb.js';
import { notebookKernel, type KernelName } from './kernels.js';
import type { KernelInput, KernelMessage } from './protocol.js';

/** setTimeout's longest delay (about 24.8 days); longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How long a kernel may take to stop after the timeout's SIGINT before it is killed. */
const KILL_GRACE_MS = 10_000;

/** A path for messages: relative to the working directory when below it. */
export function shown(p: string): string {
  const r = relative(process.cwd(), p);
  return r === '' ? '.' : r.startsWith('..') ? p : r;
}

export interface NotebookRun {
  /** `notebooks/<name>.ipynb: cell <n> (code cell <k>): <error>` when it failed. */
  failure?: string;
  /**
   * A worker's notebook (lib/experiments/plan-workers.ts) ends at `plan.run()` once its runs are
   * listed or done: what that stop said. Not a failure.
   */
  workerStop?: string;
}

/** The error name `plan.run()` ends a worker's notebook with (lib/experiments/plan-workers.ts PlanWorkerStop). */
const WORKER_STOP = 'PlanWorkerStop';

export interface RunContext {
  /** Seconds a cell may run. */
  timeoutS: number;
  /** The kernel the cells run in (./kernels.ts); default tslab. */
  kernel?: KernelName;
  /** Echo what cells print as they print it. */
  verbose: boolean;
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


export async function runNotebook(file: string, label: string, outFile: string, ctx: RunContext): Promise<NotebookRun> {
  const started = Date.now();
  const nb = await readNotebook(shown(file));
  const executed: Notebook = structuredClone(nb);
  const kernel = notebookKernel(ctx.kernel ?? 'tslab');
  executed.metadata = { ...nb.metadata, kernelspec: kernel.kernelspec };
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
    if (o.output_type === 'stream' && ctx.verbose) process.stderr.write(joinText(o.text));
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
      `the cell ran longer than ${ctx.timeoutS} s (--timeout-per-cell) and was interrupted` +
      (killed ? `; it did not stop within ${KILL_GRACE_MS / 1000} s, so its kernel was killed` : ''),
    traceback,
  });

  if (toRun.length > 0) {
    const child = fork(kernel.script, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: ctx.env });
    ctx.child = child;
    // Everything a cell writes arrives as a message; what reaches the real streams is the
    // process's own (startup warnings, native libraries) and goes to the runner's stderr.
    child.stdout!.pipe(process.stderr, { end: false });
    child.stderr!.pipe(process.stderr, { end: false });
    child.on('error', (e) => console.error(`notebooks: ${shown(file)}: kernel process: ${e.message}`));
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
            }, Math.min(ctx.timeoutS * 1000, MAX_TIMER_MS)),
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
  if (failed.error.ename === WORKER_STOP) {
    console.log(`${label}: ${failed.error.evalue} (${seconds} s) -> ${shown(outFile)}`);
    return { workerStop: failed.error.evalue };
  }
  const where = failed.index >= 0 ? `cell ${failed.index + 1} (code cell ${codeNumber.get(failed.index)}): ` : '';
  const failure = `${shown(file)}: ${where}${failed.error.ename}: ${failed.error.evalue}`;
  console.log(`${label}: FAILED after ${seconds} s -> ${shown(outFile)}`);
  console.error(failure);
  const trace = failed.error.traceback.filter((l) => l.trim() !== '');
  if (failed.error.ename !== 'CompileError' && trace.length > 0) console.error(trace.map((l) => `    ${l}`).join('\n'));
  return { failure };
}

