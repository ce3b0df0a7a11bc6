/**
 * The notebook kernel's own display, when the code runs in one: tslab's (the Jupyter kernel or the
 * headless runner) or Deno's (`deno jupyter`, in Jupyter or the headless runner's `--kernel deno`).
 *
 * tslab's executor sets `globalThis.__tslab__` and hooks `require('tslab')` to the kernel's tslab
 * instance, the one whose display is wired to the notebook; this asks that instance (importing the
 * tslab package directly would get an unwired copy). Deno's kernel offers `Deno.jupyter.broadcast`,
 * which sends a Jupyter message (display_data, update_display_data) as the output of the running
 * cell; the same display and display-id semantics are built on it.
 *
 * A MIME bundle (several representations of one output, e.g. a figure's interactive HTML beside its
 * static PNG, of which each front end shows the one it renders best) needs more than tslab's
 * public display, which sends one MIME type per output. tslab's public display writes through one
 * module-level hook of its `jupyter` module, `lastWriteDisplayData(content, update)`, which the
 * kernel (and the headless runner, scripts/notebooks/kernel.ts) sets for the running cell; `bundle`
 * writes through the same hook, found beside the kernel's tslab module. Where it is not found (a
 * different tslab layout), `bundle` is absent and callers send their HTML alone.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** An output's representations, by MIME type (binary ones base64-encoded, as Jupyter wants them). */
export type MimeBundle = Record<string, string>;

/** The subset of tslab's Display this library uses. */
export interface TslabDisplay {
  html(s: string): void;
  markdown(s: string): void;
  /** Sends one output with several representations; absent where the kernel's hook is not found. */
  bundle?(data: MimeBundle): void;
}

export interface TslabModule {
  display: TslabDisplay;
  /** A display that writes one output and replaces it on every later call (a display id). */
  newDisplay(): TslabDisplay;
}

/** The part of Deno's `Deno.jupyter` namespace used here (Deno 2). */
interface DenoJupyter {
  /** A promise in some Deno versions, nothing in others. */
  broadcast(msgType: string, content: Record<string, unknown>): Promise<void> | void;
}

function denoJupyter(): DenoJupyter | undefined {
  const j = (globalThis as { Deno?: { jupyter?: Partial<DenoJupyter> } }).Deno?.jupyter;
  return typeof j?.broadcast === 'function' ? (j as DenoJupyter) : undefined;
}

let denoDisplays = 0;

/** A TslabModule over Deno's kernel: display_data messages, and display ids for newDisplay. */
function denoModule(j: DenoJupyter): TslabModule {
  const send = (data: MimeBundle, displayId?: string, update = false) => {
    const content = { data, metadata: {}, transient: displayId ? { display_id: displayId } : {} };
    // Called directly: a promise made here and dropped makes Deno's REPL fail the cell ("Promise
    // was collected", deno 2.9.6), and this version's broadcast returns nothing anyway.
    try {
      const r = j.broadcast(update ? 'update_display_data' : 'display_data', content);
      if (r && typeof r.catch === 'function') r.catch((e: unknown) => console.error(`display: ${String(e)}`));
    } catch (e) {
      console.error(`display: ${String(e)}`);
    }
  };
  return displaysOver(send, () => `angle-${process.pid}-${++denoDisplays}`);
}

/** A display and display ids over one function that sends display_data / update_display_data. */
function displaysOver(send: (data: MimeBundle, displayId?: string, update?: boolean) => void, newId: () => string): TslabModule {
  const display: TslabDisplay = {
    html: (s) => send({ 'text/html': s }),
    markdown: (s) => send({ 'text/markdown': s }),
    bundle: (data) => send(data),
  };
  return {
    display,
    newDisplay() {
      const id = newId();
      let shown = false;
      const show = (data: MimeBundle) => {
        send(data, id, shown);
        shown = true;
      };
      return { html: (s) => show({ 'text/html': s }), markdown: (s) => show({ 'text/markdown': s }), bundle: show };
    },
  };
}

/** tslab's `jupyter` module, the one whose hook the kernel sets (see the file comment). */
interface TslabJupyter {
  lastWriteDisplayData: ((content: { data: MimeBundle; metadata: Record<string, unknown>; transient: { display_id?: string } }, update: boolean) => void) | null;
}

/**
 * The kernel's tslab `jupyter` module: the sibling of the module `require('tslab')` gave the
 * cell (found in Node's module cache, so the very instance the kernel wired), else what the
 * cell's own require finds.
 */
function tslabJupyter(tslab: unknown, hookRequire: (id: string) => unknown): TslabJupyter | undefined {
  const isHook = (m: unknown): m is TslabJupyter => typeof m === 'object' && m !== null && 'lastWriteDisplayData' in m;
  try {
    const cache = createRequire(import.meta.url).cache;
    for (const [file, mod] of Object.entries(cache)) {
      if (mod?.exports !== tslab) continue;
      const sibling = cache[join(dirname(file), 'jupyter.js')]?.exports;
      if (isHook(sibling)) return sibling;
    }
  } catch {
    /* no CommonJS module cache (not Node) */
  }
  try {
    const m = hookRequire('tslab/dist/jupyter');
    return isHook(m) ? m : undefined;
  } catch {
    return undefined;
  }
}

let tslabDisplays = 0;

/** The kernel's tslab module with `bundle` added over its jupyter hook, when that is found. */
function tslabWithBundles(tslab: TslabModule, hookRequire: (id: string) => unknown): TslabModule {
  const jupyter = tslabJupyter(tslab, hookRequire);
  if (!jupyter) return tslab;
  return displaysOver(
    (data, displayId, update = false) => {
      const write = jupyter.lastWriteDisplayData;
      if (!write) throw new Error('display: the tslab kernel is not ready (no cell is running)');
      write({ data, metadata: {}, transient: displayId ? { display_id: displayId } : {} }, update);
    },
    () => `angle-${process.pid}-${++tslabDisplays}`,
  );
}

/** The kernel's display module under tslab or Deno's kernel, else undefined. */
export function tslabModule(): TslabModule | undefined {
  const deno = denoJupyter();
  if (deno) return denoModule(deno);
  const hook = (globalThis as { __tslab__?: { require?: (id: string) => unknown } }).__tslab__;
  if (typeof hook?.require !== 'function') return undefined;
  try {
    const m = hook.require('tslab') as Partial<TslabModule>;
    return m.display && typeof m.newDisplay === 'function' ? tslabWithBundles(m as TslabModule, hook.require) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the code runs in a notebook kernel (tslab's or Deno's) whose display reaches the notebook. */
export function runningUnderTslab(): boolean {
  return tslabModule() !== undefined;
}
