/**
 * Showing things in a notebook: through tslab's display when the code runs in the tslab kernel or
 * the headless notebook runner, else as plain text on stdout.
 */
import { tableToHtml, tableToMarkdown, tableToText, type SimpleTable, type TableFormat } from '../util/table.js';

export { tableToHtml, tableToMarkdown, tableToText, type SimpleTable, type TableFormat, type TableValue } from '../util/table.js';

/** The subset of tslab's `display` this module uses. */
interface TslabDisplay {
  html(s: string): void;
  markdown(s: string): void;
}

/**
 * tslab's display when running under tslab, else undefined. tslab's executor (kernel and headless
 * runner alike) sets `globalThis.__tslab__` and hooks its `require('tslab')` to the kernel's own
 * tslab instance, the one whose display is wired to the notebook; this asks that instance.
 */
function tslabDisplay(): TslabDisplay | undefined {
  const hook = (globalThis as { __tslab__?: { require?: (id: string) => unknown } }).__tslab__;
  if (typeof hook?.require !== 'function') return undefined;
  try {
    return (hook.require('tslab') as { display?: TslabDisplay }).display;
  } catch {
    return undefined;
  }
}

export function runningUnderTslab(): boolean {
  return tslabDisplay() !== undefined;
}

/**
 * Shows `t`: under tslab as HTML (or markdown with `format: 'markdown'`), else as plain text on
 * stdout, so the same notebook code reads well in Jupyter, in the runner's .ipynb and in a terminal.
 */
export function showTable(t: SimpleTable, opts: TableFormat & { format?: 'html' | 'markdown' } = {}): void {
  const display = tslabDisplay();
  if (!display) {
    console.log(tableToText(t, opts));
  } else if (opts.format === 'markdown') {
    display.markdown(tableToMarkdown(t, opts));
  } else {
    display.html(tableToHtml(t, opts));
  }
}
