/**
 * Issue 38: Run All, change a parameter, Run All again in the same kernel, save, reopen: every
 * plotly figure was blank, because plotly.js travelled only with the first figure the kernel ever
 * drew and the second run replaced that output. Now the setup cell's output carries plotly.js
 * (lib/notebook/setup.ts, figures.ts `showPlotlyLibrary`) each time it runs.
 *
 * The kernel here is this process under a recording tslab display (the transport tslab gives the
 * library: `display.html`, `newDisplay`); a "cell" keeps the outputs of its latest execution, as
 * Jupyter does. Two executions of a notebook (setup, a figure, live training curves, a figure)
 * run in one kernel, the second with an edited parameter; what the saved notebook holds is the
 * second execution's outputs, which must carry at most one copy of plotly.js and draw every figure
 * when rendered in headless Chromium the way JupyterLab renders trusted HTML (innerHTML, scripts
 * re-inserted). test/jupyter-live.test.ts drives the same sequence in a live Jupyter Notebook.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { chromiumUnavailableReason, launchChromium } from '../lib/report/figures/chromium.js';
import { tableBarsFigure } from '../lib/report/figures/table-bars.js';
import { FIGURE_CLASS, LIBRARY_CLASS, liveTrainingCurves, showFigure } from '../lib/notebook/figures.js';
import { setup } from '../lib/notebook/setup.js';
import { figuresDrawn, pageErrors, renderOutputsLikeJupyterLab } from './helpers/figure-page.js';

/** The cell whose execution is running, and each cell's outputs (the latest execution's). */
let running = '';
const cells = new Map<string, string[]>();
const display = (cell: () => string) => ({
  html: (s: string) => cells.get(cell())!.push(s),
  markdown: (s: string) => cells.get(cell())!.push(s),
});
const tslab = {
  display: display(() => running),
  newDisplay() {
    // A display id: one output of the cell it was made in, replaced by every later call.
    const cell = running;
    const at = cells.get(cell)!.push('') - 1;
    return { html: (s: string) => void (cells.get(cell)![at] = s), markdown: (s: string) => void (cells.get(cell)![at] = s) };
  },
};
(globalThis as { __tslab__?: unknown }).__tslab__ = { require: (id: string) => (id === 'tslab' ? tslab : undefined) };
after(() => delete (globalThis as { __tslab__?: unknown }).__tslab__);

async function execute(cell: string, body: () => unknown): Promise<void> {
  running = cell;
  cells.set(cell, []); // Jupyter clears a cell's outputs when it runs again
  await body();
}

/** One Run All of the notebook, with `scale` the edited parameter. */
async function runAll(scale: number): Promise<void> {
  await execute('setup', () => setup({ ANGLE_BACKEND: 'cpu' }));
  await execute('figure', () => showFigure(tableBarsFigure([{ label: 'STS-B', ours: 80 * scale, paper: 85 }], { title: `ours vs paper ×${scale}` })));
  await execute('training', () => {
    const curves = liveTrainingCurves(`run ×${scale}`, { intervalMs: 0 });
    for (let step = 1; step <= 3; step++) curves.onStep({ step, epoch: 0, lr: 1e-5, loss: 3 / step / scale, tokens: 100, seconds: step } as never);
    curves.close();
  });
  await execute('another figure', () => showFigure(tableBarsFigure([{ label: 'MRPC', ours: 70 * scale }], { title: `MRPC ×${scale}` })));
}

const skip = chromiumUnavailableReason();

test('the outputs of a second Run All in one kernel hold plotly.js once and draw every figure in Chromium', { skip: skip ?? false, timeout: 300_000 }, async () => {
  await runAll(1);
  await runAll(2);
  const saved = [...cells.values()].flat();
  const libraries = saved.filter((h) => h.includes(`class="${LIBRARY_CLASS}"`)).length;
  assert.equal(libraries, 1, `copies of plotly.js in the saved outputs: ${libraries}`);
  const figures = saved.join('').split(`<div class="${FIGURE_CLASS}" id=`).length - 1;
  assert.equal(figures, 3);

  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = pageErrors(page);
    await page.setContent('<!doctype html><html><body></body></html>');
    // Rendered as JupyterLab renders trusted outputs, in the notebook's order.
    await renderOutputsLikeJupyterLab(page, saved);
    // The second run's figures (the edited parameter), each drawn.
    assert.deepEqual(await figuresDrawn(page, 3), ['ours vs paper ×2', 'Training curves: run ×2', 'MRPC ×2']);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
