/**
 * The project's OpenAI-compatible server (`npm run serve-llm`, scripts/serve-llm.ts over
 * ./server.ts and ./local-generator.ts) started as a child process, for a notebook or a test that
 * wants the whole client path — HTTP, the server's own model process, ./openai-client.ts — on
 * this machine: `startServeLlm` runs the command on a free localhost port (`--port 0`), waits
 * for its "listening on <base URL>" line and returns the base URL and a `stop()` that sends
 * SIGTERM and waits for the process to end (SIGKILL after `stopTimeoutMs`).
 *
 * The command is run from the project's root with Node's `--import tsx`, as `npm run serve-llm`
 * runs it; a server that exits before it listens is an error carrying the last lines it wrote.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UnavailableError } from '../util/errors.js';
import { packageRoot } from '../util/package-root.js';

export interface ServeLlmOptions {
  /** The decoder to serve: a directory or a Hub id (--model). */
  model: string;
  /** The name clients send and /v1/models lists (--served-model-name; default the model argument). */
  servedModelName?: string;
  /** tfjs backend of the server process (--backend; default its own: ANGLE_BACKEND, else cpu). */
  backend?: string;
  /** Requests decoded together at most (--max-batch-size; continuous batching). */
  maxBatchSize?: number;
  /** The pooling of /v1/embeddings requests that name none (--embedding-pooling: last or mean). */
  embeddingPooling?: 'last' | 'mean';
  /** Require this bearer key (--api-key). */
  apiKey?: string;
  /** Where the model runs (--generation-thread; default the command's: worker). */
  generationThread?: 'worker' | 'main';
  /** How long to wait for "listening on" (default 120 s: a large model loads first). */
  startTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL (default 10 s). */
  stopTimeoutMs?: number;
  /** Receives every line the server writes on stderr (its request log). */
  log?: (line: string) => void;
  /** Variables for the server process (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

export interface ServeLlmProcess {
  /** The API root, e.g. http://127.0.0.1:41235/v1. */
  baseURL: string;
  /** The served model's name (what requests send as `model`). */
  model: string;
  pid: number;
  /** The last lines the server wrote on stderr. */
  readonly lines: readonly string[];
  /** SIGTERM, then wait for the exit (SIGKILL after stopTimeoutMs); resolves with the exit code or signal. */
  stop(): Promise<number | string | null>;
}

const KEEP_LINES = 50;

/** The command line `npm run serve-llm -- <args>` runs, as [executable, ...arguments]. */
export function serveLlmCommand(o: ServeLlmOptions): string[] {
  const script = join(packageRoot(), 'scripts', 'serve-llm.ts');
  const args = [process.execPath, '--import', 'tsx', script, '--model', o.model, '--port', '0', '--host', '127.0.0.1'];
  if (o.servedModelName !== undefined) args.push('--served-model-name', o.servedModelName);
  if (o.backend !== undefined) args.push('--backend', o.backend);
  if (o.maxBatchSize !== undefined) args.push('--max-batch-size', String(o.maxBatchSize));
  if (o.embeddingPooling !== undefined) args.push('--embedding-pooling', o.embeddingPooling);
  if (o.apiKey !== undefined) args.push('--api-key', o.apiKey);
  if (o.generationThread !== undefined) args.push('--generation-thread', o.generationThread);
  return args;
}

/** Starts `serve-llm` on a free localhost port and resolves once it accepts requests. */
export async function startServeLlm(o: ServeLlmOptions): Promise<ServeLlmProcess> {
  const root = packageRoot();
  const [exe, ...args] = serveLlmCommand(o);
  if (!existsSync(args[2])) throw new UnavailableError(`serve-llm is not part of this installation (no ${args[2]})`);
  const child: ChildProcess = spawn(exe, args, { cwd: root, env: o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (line: string) => {
    lines.push(line);
    if (lines.length > KEEP_LINES) lines.shift();
  };
  let errBuf = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    errBuf += chunk;
    let i: number;
    while ((i = errBuf.indexOf('\n')) >= 0) {
      const line = errBuf.slice(0, i);
      errBuf = errBuf.slice(i + 1);
      keep(line);
      o.log?.(line);
    }
  });
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const baseURL = await new Promise<string>((resolve, reject) => {
    let outBuf = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new UnavailableError(`serve-llm did not start listening within ${(o.startTimeoutMs ?? 120_000) / 1000} s; its last lines:\n${lines.join('\n')}`));
    }, o.startTimeoutMs ?? 120_000);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      outBuf += chunk;
      const m = /serve-llm: listening on (\S+)/.exec(outBuf);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new UnavailableError(`serve-llm exited (${how}) before it listened; its last lines:\n${[...lines, errBuf].filter(Boolean).join('\n')}`));
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new UnavailableError(`serve-llm could not be started: ${e.message}`));
    });
  });
  return {
    baseURL,
    model: o.servedModelName ?? o.model,
    pid: child.pid!,
    lines,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), o.stopTimeoutMs ?? 10_000);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  };
}
