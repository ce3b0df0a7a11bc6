/**
 * A notebook's kernel when the runner is asked for Deno's (`--kernel deno`): a child process of the
 * runner (./runner.ts), like ./kernel.ts, that reports what cells print and display in the same
 * messages (./protocol.ts) — but executes them in Deno's own Jupyter kernel (`deno jupyter
 * --kernel`, from the npm package `deno`), spoken to over the Jupyter messaging protocol (ZeroMQ,
 * HMAC-SHA256 signed messages; jupyter_client's "Messaging in Jupyter", protocol 5.3). So the
 * headless run executes exactly what a person's Jupyter executes with the Deno kernel selected:
 * the same binary, the same REPL semantics, the same display path (`Deno.jupyter`).
 *
 * One shell request per cell, in order; the cell's outputs are the iopub messages whose parent is
 * that request; the cell ends when its execute_reply arrives and iopub has gone idle for it.
 * SIGINT (the runner's per-cell timeout) becomes an interrupt_request on the control channel.
 * Started by the runner with `fork`; not meant to be run by hand.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ErrorOutput, MimeBundle, NotebookOutput } from './ipynb.js';
import { denoBinary } from './deno-binary.js';
import type { KernelInput, KernelMessage } from './protocol.js';

const DELIMITER = '<IDS|MSG>';
/** How long the kernel may take to answer kernel_info after it started. */
const STARTUP_MS = 60_000;
/** The MIME type of the barrier display that closes a cell's outputs (never written to a notebook). */
const BARRIER_MIME = 'application/x.angle-notebooks.barrier';
/** How long a cell's barrier may take to come back before the cell is closed anyway. */
const BARRIER_MS = 60_000;

/** Four free TCP ports on the loopback interface (asked of the OS, then released). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<import('node:net').Server>((res, rej) => {
      const s = createServer();
      s.once('error', rej);
      s.listen(0, '127.0.0.1', () => res(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as import('node:net').AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((res) => s.close(res))));
  return ports;
}

interface Header {
  msg_id: string;
  session: string;
  username: string;
  date: string;
  msg_type: string;
  version: string;
}

interface Message {
  header: Header;
  parent_header: Partial<Header>;
  metadata: Record<string, unknown>;
  content: Record<string, unknown>;
}

/** Signs and frames one message (the wire format of the Jupyter messaging protocol). */
function frames(key: string, m: Message): Buffer[] {
  const parts = [m.header, m.parent_header, m.metadata, m.content].map((x) => Buffer.from(JSON.stringify(x)));
  const hmac = createHmac('sha256', key);
  for (const p of parts) hmac.update(p);
  return [Buffer.from(DELIMITER), Buffer.from(hmac.digest('hex')), ...parts];
}

/** Parses (and checks the signature of) a received multipart message. */
function parse(key: string, raw: Buffer[]): Message {
  const i = raw.findIndex((b) => b.toString() === DELIMITER);
  if (i < 0 || raw.length < i + 6) throw new Error('a message from the Deno kernel without the <IDS|MSG> frames');
  const [sig, header, parent, metadata, content] = raw.slice(i + 1, i + 6);
  const hmac = createHmac('sha256', key);
  for (const p of [header, parent, metadata, content]) hmac.update(p);
  if (hmac.digest('hex') !== sig.toString()) throw new Error('a message from the Deno kernel with a wrong signature');
  return { header: JSON.parse(header.toString()), parent_header: JSON.parse(parent.toString()), metadata: JSON.parse(metadata.toString()), content: JSON.parse(content.toString()) };
}

async function kernel(): Promise<void> {
  const input = await new Promise<KernelInput>((res) => process.once('message', (m) => res(m as KernelInput)));
  process.on('disconnect', () => process.exit(1));
  const send = (m: KernelMessage, then?: () => void) => process.send!(m, undefined, {}, then);

  const require = createRequire(import.meta.url);
  const zmq = require('zeromq') as typeof import('zeromq');
  const key = randomBytes(32).toString('hex');
  const [shellPort, iopubPort, stdinPort, controlPort, hbPort] = await freePorts(5);
  const connDir = mkdtempSync(join(tmpdir(), 'angle-deno-kernel-'));
  const connFile = join(connDir, 'connection.json');
  writeFileSync(
    connFile,
    JSON.stringify({ ip: '127.0.0.1', transport: 'tcp', shell_port: shellPort, iopub_port: iopubPort, stdin_port: stdinPort, control_port: controlPort, hb_port: hbPort, key, signature_scheme: 'hmac-sha256', kernel_name: 'deno' }),
  );
  // The kernel runs in the notebook's directory (relative imports such as ../dist/index.js resolve
  // from there, as in Jupyter), with the runner's environment (the preset's variables).
  const deno: ChildProcess = spawn(denoBinary(), ['jupyter', '--kernel', '--conn', connFile], { cwd: input.dir, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  deno.stdout!.pipe(process.stderr, { end: false });
  deno.stderr!.pipe(process.stderr, { end: false });
  let denoExit: string | undefined;
  const denoEnded = new Promise<void>((res) => {
    deno.on('error', (e) => {
      denoExit = `could not start ${denoBinary()}: ${e.message} (install the dev dependency \`deno\`: npm install)`;
      res();
    });
    deno.on('exit', (code, signal) => {
      denoExit ??= `the Deno kernel ended (${signal ? `signal ${signal}` : `exit code ${code}`})`;
      res();
    });
  });
  const cleanup = () => {
    if (deno.exitCode === null && deno.signalCode === null) deno.kill('SIGKILL');
    rmSync(connDir, { recursive: true, force: true });
  };
  process.on('exit', cleanup);

  const session = randomUUID();
  const shell = new zmq.Dealer();
  const control = new zmq.Dealer();
  const iopub = new zmq.Subscriber();
  shell.connect(`tcp://127.0.0.1:${shellPort}`);
  control.connect(`tcp://127.0.0.1:${controlPort}`);
  iopub.connect(`tcp://127.0.0.1:${iopubPort}`);
  iopub.subscribe();

  const request = (msgType: string, content: Record<string, unknown>): Message => ({
    header: { msg_id: randomUUID(), session, username: 'angle-notebooks', date: new Date().toISOString(), msg_type: msgType, version: '5.3' },
    parent_header: {},
    metadata: {},
    content,
  });

  // Replies on shell, routed to whoever waits for their request's id. iopub is read in order:
  // Deno's kernel sends a cell's status messages under the cell's request, but what the cell
  // displays (and its execute_result) through a later, asynchronous path — after the cell's idle
  // status, and parented to whatever request came last (seen with deno 2.9.6: a 4 MB display
  // arriving after the next cell's idle, under the next cell's id). So outputs are not routed by
  // parent: every output that arrives while cell N is open belongs to cell N, and cell N stays open
  // until a barrier it sent after itself comes back through the same display path.
  const replies = new Map<string, (m: Message) => void>();
  const statusHandlers = new Map<string, (m: Message) => void>();
  let onOutput: ((m: Message) => void) | undefined;
  let onBarrier: ((id: string) => void) | undefined;
  void (async () => {
    for await (const raw of shell) {
      const m = parse(key, raw as Buffer[]);
      const id = m.parent_header.msg_id;
      if (id) replies.get(id)?.(m);
    }
  })().catch(() => undefined);
  void (async () => {
    for await (const raw of control) void raw; // interrupt replies: nothing to do with them
  })().catch(() => undefined);
  void (async () => {
    for await (const raw of iopub) {
      const m = parse(key, raw as Buffer[]);
      const id = m.parent_header.msg_id;
      const barrier = m.header.msg_type === 'display_data' ? (m.content.data as Record<string, unknown> | undefined)?.[BARRIER_MIME] : undefined;
      if (typeof barrier === 'string') onBarrier?.(barrier);
      else if (m.header.msg_type === 'status') {
        if (id) statusHandlers.get(id)?.(m);
      } else if (m.header.msg_type !== 'execute_input') onOutput?.(m);
    }
  })().catch(() => undefined);

  const ask = (socket: import('zeromq').Dealer, m: Message) => {
    const reply = new Promise<Message>((res) => replies.set(m.header.msg_id, res));
    void socket.send(frames(key, m));
    return reply;
  };

  // kernel_info until the kernel answers (its sockets bind while our first requests may be queued).
  const info = request('kernel_info_request', {});
  const started = await Promise.race([
    ask(shell, info).then((m) => m),
    denoEnded.then(() => undefined),
    new Promise<undefined>((res) => setTimeout(() => res(undefined), STARTUP_MS).unref()),
  ]);
  if (!started) {
    console.error(`notebooks: ${denoExit ?? `the Deno kernel did not answer within ${STARTUP_MS / 1000} s`}`);
    cleanup();
    process.exit(3);
  }
  // ZeroMQ's subscriptions start late: what iopub publishes before ours reached the kernel is lost.
  // As jupyter_client does, ask kernel_info until iopub carries a message of ours.
  for (let tries = 0; ; tries++) {
    const probe = request('kernel_info_request', {});
    const heard = new Promise<boolean>((res) => {
      statusHandlers.set(probe.header.msg_id, () => res(true));
      setTimeout(() => res(false), 250).unref();
    });
    await ask(shell, probe);
    const ok = await heard;
    statusHandlers.delete(probe.header.msg_id);
    if (ok) break;
    if (tries * 250 > STARTUP_MS) {
      console.error(`notebooks: the Deno kernel's iopub channel sent nothing within ${STARTUP_MS / 1000} s`);
      cleanup();
      process.exit(3);
    }
  }
  send({ type: 'kernel-info', languageInfo: (started.content.language_info ?? {}) as Record<string, unknown> });

  /** Runs `code` and waits for its reply and its idle status; the reply, or undefined if the kernel died. */
  const execute = async (code: string, silent: boolean): Promise<Message | undefined> => {
    const m = request('execute_request', { code, silent, store_history: !silent, user_expressions: {}, allow_stdin: false, stop_on_error: true });
    const idle = new Promise<void>((res) => statusHandlers.set(m.header.msg_id, (st) => st.content.execution_state === 'idle' && res()));
    running = m;
    const reply = await Promise.race([ask(shell, m), denoEnded.then(() => undefined)]);
    if (reply) await Promise.race([idle, denoEnded]);
    statusHandlers.delete(m.header.msg_id);
    running = undefined;
    return reply;
  };

  let running: Message | undefined;
  let count = 0;
  process.on('SIGINT', () => {
    if (running) void control.send(frames(key, request('interrupt_request', {})));
  });

  for (const { index, source } of input.cells) {
    const executionCount = ++count;
    send({ type: 'cell-start', cell: index, executionCount });
    let error: ErrorOutput | undefined;
    onOutput = (o) => {
      const c = o.content;
      switch (o.header.msg_type) {
        case 'stream':
          send({ type: 'output', cell: index, output: { output_type: 'stream', name: c.name as 'stdout' | 'stderr', text: String(c.text) } });
          break;
        case 'display_data': {
          const displayId = (c.transient as { display_id?: string } | undefined)?.display_id;
          send({ type: 'output', cell: index, output: { output_type: 'display_data', data: c.data as MimeBundle, metadata: (c.metadata ?? {}) as Record<string, unknown> }, displayId });
          break;
        }
        case 'update_display_data': {
          const displayId = (c.transient as { display_id?: string } | undefined)?.display_id;
          if (displayId) send({ type: 'update-display', displayId, data: c.data as MimeBundle, metadata: (c.metadata ?? {}) as Record<string, unknown> });
          break;
        }
        case 'execute_result': {
          const output: NotebookOutput = { output_type: 'execute_result', execution_count: executionCount, data: c.data as MimeBundle, metadata: (c.metadata ?? {}) as Record<string, unknown> };
          send({ type: 'output', cell: index, output });
          break;
        }
        case 'error':
          error = { output_type: 'error', ename: String(c.ename), evalue: String(c.evalue), traceback: (c.traceback as string[]) ?? [] };
          send({ type: 'output', cell: index, output: error });
          break;
      }
    };
    const reply = await execute(source, false);
    if (!reply) break; // the kernel died: the runner reports it for the running cell
    // The barrier: a display of our own, sent after the cell through the path its displays took.
    const barrierId = randomUUID();
    const barrierBack = new Promise<void>((res) => (onBarrier = (id) => id === barrierId && res()));
    const barrierReply = await execute(`void Deno.jupyter.broadcast("display_data", { data: { ${JSON.stringify(BARRIER_MIME)}: ${JSON.stringify(barrierId)} }, metadata: {}, transient: {} });`, true);
    if (!barrierReply) break;
    await Promise.race([barrierBack, denoEnded, new Promise((res) => setTimeout(res, BARRIER_MS).unref())]);
    onOutput = undefined;
    onBarrier = undefined;
    const ok = reply.content.status === 'ok';
    if (!ok && !error) {
      // An error reply without an error message on iopub (an interrupt, say): the reply's own words.
      error = { output_type: 'error', ename: String(reply.content.ename ?? 'Error'), evalue: String(reply.content.evalue ?? `the cell ended with status ${String(reply.content.status)}`), traceback: (reply.content.traceback as string[]) ?? [] };
      send({ type: 'output', cell: index, output: error });
    }
    send({ type: 'cell-end', cell: index, ok });
    if (!ok) break;
  }
  if (denoExit !== undefined) {
    cleanup();
    process.exit(1);
  }
  void ask(shell, request('shutdown_request', { restart: false }));
  await Promise.race([denoEnded, new Promise((res) => setTimeout(res, 5000).unref())]);
  shell.close();
  control.close();
  iopub.close();
  send({ type: 'done' }, () => {
    cleanup();
    process.exit(0);
  });
}

await kernel();
