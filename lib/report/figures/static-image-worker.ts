/**
 * The worker thread behind ./static-image-sync.ts: it owns one headless Chromium page with
 * plotly.js loaded (./render-static.ts's FigureRenderer) and draws each figure it is sent as a PNG.
 *
 * Protocol (one request at a time; the caller blocks on `signal` until the reply is posted):
 * the caller posts { fig, width, height, scale }; the worker posts on `port` either
 * { png: Uint8Array, ms } or { error: string, unavailable: boolean }, then sets signal[0] = 1 and
 * notifies. Chromium is started at the first request (or a warm-up, { warm: true }, which gets no
 * reply) and closed after IDLE_MS without one (WARM_IDLE_MS after a warm-up), so a kernel that
 * stopped drawing figures does not keep a browser (about 150 MB) alive.
 */
import type { MessagePort } from 'node:worker_threads';
import { UnavailableError } from '../../util/errors.js';
import type { Figure } from './figure.js';
import { FigureRenderer } from './render-static.js';

export interface StaticImageRequest {
  fig: Figure;
  width?: number;
  height?: number;
  scale?: number;
}

/** Starts Chromium now, ahead of the first figure; no reply. */
export interface StaticImageWarmUp {
  warm: true;
}

export type StaticImageReply = { png: Uint8Array; ms: number } | { error: string; unavailable: boolean };

export interface StaticImageWorkerData {
  port: MessagePort;
  signal: Int32Array;
  executablePath?: string;
}

/** Chromium is closed after this long without a figure (a later figure starts it again). */
const IDLE_MS = 30_000;
/** After a warm-up, how long Chromium waits for a first figure (a notebook trains before it draws). */
const WARM_IDLE_MS = 15 * 60_000;

/**
 * The worker's message handler. The bootstrap (./static-image-sync.ts) listens from the worker's
 * first line and hands messages that came before this module loaded to it: Deno's worker_threads
 * drop a message that arrives while no listener is attached (seen here: the first figure's request
 * lost while this module was still loading, its caller waiting until its timeout).
 */
export function staticImageHandler(data: StaticImageWorkerData): (req: StaticImageRequest | StaticImageWarmUp) => void {
  const { port, signal, executablePath } = data;
  let renderer: Promise<FigureRenderer> | undefined;
  let idle: NodeJS.Timeout | undefined;

  const closeRenderer = () => {
    const r = renderer;
    renderer = undefined;
    if (r) void r.then((x) => x.close()).catch(() => undefined);
  };

  const reply = (m: StaticImageReply) => {
    port.postMessage(m);
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  };

  return async (req) => {
    if (idle) clearTimeout(idle);
    if ('warm' in req) {
      renderer ??= FigureRenderer.open({ executablePath });
      // A failed start is reported to the first figure, which starts it again.
      renderer.catch(() => (renderer = undefined));
      idle = setTimeout(closeRenderer, WARM_IDLE_MS);
      idle.unref();
      return;
    }
    const t0 = performance.now();
    let r: FigureRenderer;
    try {
      renderer ??= FigureRenderer.open({ executablePath });
      r = await renderer;
    } catch (e) {
      // A browser that failed to start is not retried on every figure: the caller remembers why.
      renderer = undefined;
      const why = (e as Error).message.split('\n')[0]!;
      reply({ error: e instanceof UnavailableError ? why : `headless Chromium did not start: ${why}`, unavailable: true });
      return;
    }
    try {
      const png = await r.render(req.fig, 'png', { width: req.width, height: req.height, scale: req.scale });
      reply({ png: new Uint8Array(png.buffer, png.byteOffset, png.byteLength), ms: performance.now() - t0 });
    } catch (e) {
      // One figure plotly could not draw; the next may draw, in a fresh page.
      closeRenderer();
      reply({ error: `plotly could not draw it: ${(e as Error).message.split('\n')[0]!}`, unavailable: false });
    }
    idle = setTimeout(closeRenderer, IDLE_MS);
    idle.unref();
  };
}
