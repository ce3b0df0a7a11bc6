/**
 * The notebook kernel's own display, when the code runs in one: tslab's (the Jupyter kernel or the
 * headless runner) or Deno's (`deno jupyter`, in Jupyter or the headless runner's `--kernel deno`).
 *
 * tslab's executor sets `globalThis.__tslab__` and hooks `require('tslab')` to the kernel's tslab
 * instance, the one whose display is wired to the notebook; this asks that instance (importing the
 * tslab package directly would get an unwired copy). Deno's kernel offers `Deno.jupyter.broadcast`,
 * which sends a Jupyter message (display_data, update_display_data) as the output of the running
 * cell; the same display and display-id semantics are built on it.
 */

/** The subset of tslab's Display this library uses. */
export interface TslabDisplay {
  html(s: string): void;
  markdown(s: string): void;
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
  const send = (mime: string, s: string, displayId?: string, update = false) => {
    const content = { data: { [mime]: s }, metadata: {}, transient: displayId ? { display_id: displayId } : {} };
    // Called directly: a promise made here and dropped makes Deno's REPL fail the cell ("Promise
    // was collected", deno 2.9.6), and this version's broadcast returns nothing anyway.
    try {
      const r = j.broadcast(update ? 'update_display_data' : 'display_data', content);
      if (r && typeof r.catch === 'function') r.catch((e: unknown) => console.error(`display: ${String(e)}`));
    } catch (e) {
      console.error(`display: ${String(e)}`);
    }
  };
  const display: TslabDisplay = { html: (s) => send('text/html', s), markdown: (s) => send('text/markdown', s) };
  return {
    display,
    newDisplay() {
      const id = `angle-${process.pid}-${++denoDisplays}`;
      let shown = false;
      const show = (mime: string, s: string) => {
        send(mime, s, id, shown);
        shown = true;
      };
      return { html: (s) => show('text/html', s), markdown: (s) => show('text/markdown', s) };
    },
  };
}

/** The kernel's display module under tslab or Deno's kernel, else undefined. */
export function tslabModule(): TslabModule | undefined {
  const deno = denoJupyter();
  if (deno) return denoModule(deno);
  const hook = (globalThis as { __tslab__?: { require?: (id: string) => unknown } }).__tslab__;
  if (typeof hook?.require !== 'function') return undefined;
  try {
    const m = hook.require('tslab') as Partial<TslabModule>;
    return m.display && typeof m.newDisplay === 'function' ? (m as TslabModule) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the code runs in a notebook kernel (tslab's or Deno's) whose display reaches the notebook. */
export function runningUnderTslab(): boolean {
  return tslabModule() !== undefined;
}
