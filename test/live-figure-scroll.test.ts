/**
 * The script every live figure output carries (lib/notebook/figures.ts `liveFigure`): in the
 * classic Notebook it takes the output area holding the figure out of the 24em scrolling box
 * Notebook 6 puts long outputs in, unless the reader chose scrolling, and it does nothing on pages
 * without the classic Notebook. Run here on a stand-in for the page: `Jupyter.notebook.get_cells()`
 * and OutputArea objects with the fields and methods Notebook 6.4 has (scroll_state, scrolled,
 * element, unscroll_area). The real page was checked in Chromium (docs/jupyter.md, Figures).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { liveFigure, LIVE_FIGURE_CLASS } from '../lib/notebook/figures.js';
import { tableBarsFigure } from '../lib/report/figures/table-bars.js';

const g = globalThis as unknown as Record<string | symbol, unknown>;

/** The HTML outputs a live figure sends under a stand-in tslab. */
function liveOutputs(): string[] {
  const outputs: string[] = [];
  const display = { html: (s: string) => void outputs.push(s), markdown: () => {} };
  g.__tslab__ = { require: (id: string) => (id === 'tslab' ? { display, newDisplay: () => display } : undefined) };
  delete g[Symbol.for('angle-notebooks.plotly-library-sent')];
  const live = liveFigure({ library: 'never' });
  live.update(tableBarsFigure([{ label: 'a', ours: 1 }], { title: 'curves' }));
  live.close();
  return outputs;
}

interface FakeOutputArea {
  scroll_state: 'auto' | boolean;
  scrolled: boolean;
  element: Array<{ contains(e: unknown): boolean }>;
  unscrolled: number;
  unscroll_area(): void;
}

function outputArea(holds: unknown, scroll_state: 'auto' | boolean, scrolled: boolean): FakeOutputArea {
  const oa: FakeOutputArea = {
    scroll_state,
    scrolled,
    element: [{ contains: (e) => e === holds }],
    unscrolled: 0,
    unscroll_area() {
      this.scrolled = false;
      this.unscrolled++;
    },
  };
  return oa;
}

/** Runs the <script> of `html` with `window` and `document` as given. */
function runScript(html: string, window: Record<string, unknown>, document: { getElementById(id: string): unknown }): void {
  const scripts = [...html.matchAll(/<script type="text\/javascript">\n([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  const own = scripts.find((s) => s.includes('get_cells'));
  assert.ok(own, 'the output carries the unscroll script');
  new Function('window', 'document', own!)(window, document);
}

describe('live figure outputs in the classic Notebook', () => {
  afterEach(() => {
    delete g.__tslab__;
  });

  test('every live output (placeholder and updates) is wrapped and carries the script', () => {
    const outputs = liveOutputs();
    assert.equal(outputs.length, 2);
    for (const html of outputs) assert.match(html, new RegExp(`^<div class="${LIVE_FIGURE_CLASS}" id="${LIVE_FIGURE_CLASS}-[0-9a-f]{12}">`));
  });

  test("unscrolls the output area that holds the figure and keeps it unscrolled; other cells and the reader's choice are left alone", () => {
    const [, html] = liveOutputs();
    const id = new RegExp(`id="(${LIVE_FIGURE_CLASS}-[0-9a-f]{12})"`).exec(html!)![1];
    const el = { id };
    const holding = outputArea(el, 'auto', true);
    const other = outputArea({}, 'auto', true);
    const chosen = outputArea(el, true, true);
    const cells = [{ output_area: other }, { output_area: holding }, { output_area: chosen }, { output_area: undefined }];
    const window = { Jupyter: { notebook: { get_cells: () => cells } } };
    runScript(html!, window, { getElementById: (x) => (x === id ? el : null) });
    assert.equal(holding.scroll_state, false);
    assert.equal(holding.scrolled, false);
    assert.equal(holding.unscrolled, 1);
    assert.deepEqual([other.scroll_state, other.scrolled, other.unscrolled], ['auto', true, 0]);
    assert.deepEqual([chosen.scroll_state, chosen.scrolled, chosen.unscrolled], [true, true, 0]);
  });

  test('pages without the classic Notebook (nbconvert HTML, JupyterLab) are left alone', () => {
    const [, html] = liveOutputs();
    assert.doesNotThrow(() => runScript(html!, {}, { getElementById: () => ({}) }));
    assert.doesNotThrow(() => runScript(html!, { Jupyter: {} }, { getElementById: () => ({}) }));
  });
});
