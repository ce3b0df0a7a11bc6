/**
 * The tslab kernel's own display, when the code runs under tslab (the Jupyter kernel or the
 * headless runner). tslab's executor sets `globalThis.__tslab__` and hooks `require('tslab')` to the
 * kernel's tslab instance, the one whose display is wired to the notebook; this asks that instance
 * (importing the tslab package directly would get an unwired copy).
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

/** tslab's module under tslab, else undefined. */
export function tslabModule(): TslabModule | undefined {
  const hook = (globalThis as { __tslab__?: { require?: (id: string) => unknown } }).__tslab__;
  if (typeof hook?.require !== 'function') return undefined;
  try {
    const m = hook.require('tslab') as Partial<TslabModule>;
    return m.display && typeof m.newDisplay === 'function' ? (m as TslabModule) : undefined;
  } catch {
    return undefined;
  }
}

export function runningUnderTslab(): boolean {
  return tslabModule() !== undefined;
}
