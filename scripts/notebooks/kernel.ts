/**
 * A notebook's kernel: a child process of the runner (./runner.ts) that executes cells with tslab's
 * executor in one shared context, as the tslab Jupyter kernel does, and reports what they print and
 * display as messages (./protocol.ts). Its working directory is the notebook's directory. Started
 * by the runner with `fork`; not meant to be run by hand.
 */
import { createRequire } from 'node:module';
import { format, inspect, types } from 'node:util';
import type { ErrorOutput, MimeBundle } from './ipynb.js';
import type { KernelInput, KernelMessage } from './protocol.js';

/** tslab's executor prints each compile diagnostic with console.error(DIAGNOSTIC_FORMAT, ...). */
const DIAGNOSTIC_FORMAT = '%s%d:%d - %s';

/** Stack frames of the machinery around a cell (Node's vm, tslab, this script), dropped from tracebacks. */
const MACHINERY_FRAME = /^\s+at .*(?:\bnode:|[\\/]tslab[\\/]dist[\\/]|scripts[\\/]notebooks[\\/])/;

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


await kernel();
