/**
 * A figure's static image (PNG), drawn synchronously: for notebook outputs, whose display call
 * (`showFigure(fig)`, not awaited in the notebooks) must send the interactive HTML and its static
 * image in one MIME bundle before the cell ends.
 *
 * plotly needs a browser to lay a figure out (./render-static.ts says why), and starting one is
 * asynchronous. So a worker thread (./static-image-worker.ts) keeps headless Chromium with plotly.js
 * loaded, and this thread waits for its answer with Atomics.wait, then takes the reply off the
 * message port with receiveMessageOnPort: the cell's code stays synchronous, Chromium starts once
 * per kernel (and again only after 30 s without a figure), and each figure costs one plotly draw
 * and export in that page. A notebook's setup cell starts it ahead (`warmStaticFigureImages`), so
 * the start overlaps the notebook's work instead of delaying its first figure.
 *
 * When Chromium cannot be used (not installed, fails to start, too slow), `staticFigureImage`
 * returns why, and later calls in the process return the same reason at once without trying again.
 * `ANGLE_STATIC_FIGURES=off` turns the images off (the reason then says so).
 */
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { chromiumUnavailableReason } from './chromium.js';
import type { Figure } from './figure.js';
import type { StaticImageReply, StaticImageRequest, StaticImageWarmUp, StaticImageWorkerData } from './static-image-worker.js';

export type StaticFigureImage = { png: Buffer; width: number; height: number; ms: number } | { unavailable: string };

export interface StaticFigureImageOptions {
  /** Pixels; default the layout's width, else 900. */
  width?: number;
  /** Pixels; default the layout's height, else 480. */
  height?: number;
  /** Pixel density; default 1 (the image sits in a notebook beside the interactive figure). */
  scale?: number;
  /** How long to wait for one image, Chromium's start included; default 120 s (a loaded 2-core machine took 20-60 s to start it). */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** The variable that turns static images off (`off`, `0`, `false`, `no`). */
export const STATIC_FIGURES_VARIABLE = 'ANGLE_STATIC_FIGURES';

interface WorkerState {
  worker: Worker;
  port: import('node:worker_threads').MessagePort;
  signal: Int32Array;
}

/** Kept on globalThis: one worker per process, also when the library is loaded twice (dist/ and lib/). */
const STATE = Symbol.for('angle-notebooks.static-image-worker');
const g = globalThis as unknown as Record<symbol, { state?: WorkerState; unavailable?: string } | undefined>;

function shared(): { state?: WorkerState; unavailable?: string } {
  return (g[STATE] ??= {});
}

/**
 * The worker's first code, plain CommonJS: it listens at once (messages that arrive before the
 * worker module loaded are kept for it: Deno drops those that find no listener), imports the worker
 * module (registering tsx first when that module is TypeScript, as under the tests), and if that
 * fails answers every request with why, so this thread never waits on a worker that could not start.
 */
const BOOTSTRAP = `
const { parentPort, workerData } = require('node:worker_threads');
const early = [];
let handle = (m) => early.push(m);
parentPort.on('message', (m) => handle(m));
(async () => {
  try {
    if (workerData.tsx) (await import(workerData.tsx)).register();
    handle = (await import(workerData.url)).staticImageHandler(workerData);
  } catch (e) {
    const error = 'the static-image worker did not start: ' + String(e && e.message || e).split('\\n')[0];
    handle = (m) => {
      if (m && m.warm) return;
      workerData.port.postMessage({ error, unavailable: true });
      Atomics.store(workerData.signal, 0, 1);
      Atomics.notify(workerData.signal, 0);
    };
  }
  early.splice(0).forEach((m) => handle(m));
})();
`;

function startWorker(): WorkerState {
  const { port1, port2 } = new MessageChannel();
  const signal = new Int32Array(new SharedArrayBuffer(4));
  // lib/ under tsx has .ts files, dist/ has .js: the worker is this file's sibling either way.
  const ts = import.meta.url.endsWith('.ts');
  const data: StaticImageWorkerData & { url: string; tsx?: string } = {
    port: port2,
    signal,
    url: new URL(`./static-image-worker${ts ? '.ts' : '.js'}`, import.meta.url).href,
    tsx: ts ? import.meta.resolve('tsx/esm/api') : undefined,
  };
  const worker = new Worker(BOOTSTRAP, { eval: true, workerData: data, transferList: [port2] });
  // Neither keeps the kernel alive: it exits as it would without figures (Chromium, started over a
  // pipe, ends when this process does).
  worker.unref();
  port1.unref();
  worker.on('error', (e) => {
    const s = shared();
    s.unavailable = `the static-image worker failed: ${e.message.split('\n')[0]}`;
    s.state = undefined;
  });
  return { worker, port: port1, signal };
}

function disabledBy(env: NodeJS.ProcessEnv): string | undefined {
  const v = env[STATIC_FIGURES_VARIABLE]?.trim().toLowerCase();
  return v && ['off', '0', 'false', 'no'].includes(v) ? `${STATIC_FIGURES_VARIABLE}=${env[STATIC_FIGURES_VARIABLE]} turns them off` : undefined;
}

/**
 * Starts headless Chromium in the background, without waiting for it, so that the first figure
 * (usually after minutes of training) does not wait for the browser's start (seconds; 20-30 s on a
 * loaded 2-core machine). Does nothing where images are off or Chromium is missing.
 */
export function warmStaticFigureImages(env: NodeJS.ProcessEnv = process.env): void {
  const s = shared();
  if (disabledBy(env) || s.unavailable || chromiumUnavailableReason(env)) return;
  s.state ??= startWorker();
  const warm: StaticImageWarmUp = { warm: true };
  s.state.worker.postMessage(warm);
}

/**
 * The figure as a PNG drawn by plotly in headless Chromium, or why there is none. Blocks the
 * calling thread until the image is there (see the file comment).
 */
export function staticFigureImage(fig: Figure, opts: StaticFigureImageOptions = {}): StaticFigureImage {
  const env = opts.env ?? process.env;
  const off = disabledBy(env);
  if (off) return { unavailable: off };
  const s = shared();
  if (s.unavailable) return { unavailable: s.unavailable };
  const missing = chromiumUnavailableReason(env);
  if (missing) {
    s.unavailable = missing;
    return { unavailable: missing };
  }
  const width = opts.width ?? (typeof fig.layout.width === 'number' ? fig.layout.width : 900);
  const height = opts.height ?? (typeof fig.layout.height === 'number' ? fig.layout.height : 480);
  const timeoutMs = opts.timeoutMs ?? 120_000;
  s.state ??= startWorker();
  const { worker, port, signal } = s.state;
  Atomics.store(signal, 0, 0);
  const req: StaticImageRequest = { fig: JSON.parse(JSON.stringify(fig)) as Figure, width, height, scale: opts.scale ?? 1 };
  worker.postMessage(req);
  const waited = Atomics.wait(signal, 0, 0, timeoutMs);
  const msg = receiveMessageOnPort(port)?.message as StaticImageReply | undefined;
  if (waited === 'timed-out' || !msg) {
    // A browser that cannot draw one figure in this long would slow every cell: stop trying.
    s.unavailable = waited === 'timed-out' ? `headless Chromium gave no image within ${timeoutMs / 1000} s` : 'the static-image worker stopped';
    s.state = undefined;
    void worker.terminate();
    return { unavailable: s.unavailable };
  }
  if ('error' in msg) {
    if (msg.unavailable) s.unavailable = msg.error;
    return { unavailable: msg.error };
  }
  return { png: Buffer.from(msg.png.buffer, msg.png.byteOffset, msg.png.byteLength), width, height, ms: msg.ms };
}
