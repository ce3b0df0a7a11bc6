/**
 * Plotly figures in notebooks, without network.
 *
 * Under tslab (the Jupyter kernel or the headless runner) a figure is a `text/html` output: a
 * container div and a small script that draws the figure's JSON with `window.Plotly`. plotly.js
 * itself (node_modules/plotly.js-dist-min, about 4.8 MB) is inlined as its own invisible output
 * by the notebook's setup cell (./setup.ts calls `showPlotlyLibrary` every time it runs), so a
 * saved notebook holds exactly one copy, before every figure, however often its cells ran: Run All
 * again re-runs setup and replaces that output with a new copy, and re-running a figure's cell
 * leaves it alone. (It used to travel with the first figure the kernel ever drew; a second Run All
 * replaced that output with one without it, and the saved notebook's figures stayed blank.) Code
 * that shows figures without setup() gets the library with its first figure, once per kernel.
 * Outside tslab a figure prints as one line of text (`figureSummary`).
 *
 * Where the HTML is drawn, and why it is built this way:
 * - JupyterLab / Notebook 7 run the <script>s of a text/html output only when the output is trusted
 *   (@jupyterlab/rendermime renderHTML: trusted → scripts re-inserted and run; untrusted → scripts
 *   sanitised away, with a "Run" button in recent versions). Outputs made in the session are
 *   trusted; a notebook opened from disk is trusted once signed (`jupyter trust x.ipynb`, or
 *   File ▸ Trust Notebook). Untrusted, a figure shows its note instead of the plot.
 * - nbconvert --to html keeps text/html outputs as they are, so the page runs them in document
 *   order: the library first, then the figures.
 * - Outputs can run out of order (cells run out of order; "Run" pressed on one output): a figure
 *   that finds no `window.Plotly` queues itself on `window.__angleFigureQueue`, which the library
 *   output drains when it runs. If the setup cell's output was cleared and the page reloaded, the
 *   figures say so in their note; the fix is running the setup cell again.
 * - A static image goes with every figure, for front ends that run no JavaScript (GitHub's notebook
 *   viewer, nbconvert's HTML opened with scripts off, PDF export): the output is a MIME bundle of
 *   `text/html` (the interactive figure), `image/png` (the same figure drawn by plotly in headless
 *   Chromium, lib/report/figures/static-image-sync.ts: Chromium starts once per kernel, in the
 *   background from the setup cell, and each figure then costs one draw and export) and `text/plain` (its one-line summary). Front ends that
 *   render HTML pick `text/html` (Jupyter, JupyterLab, VS Code, nbconvert); the HTML itself holds
 *   the same PNG as an <img> inside the plot's box, which the drawing script replaces by the
 *   interactive plot, so a page without scripts (nbconvert's HTML, GitHub's sanitised HTML) still
 *   shows the figure. Without Chromium the figure says so in a line under it ("no static image:
 *   why") and the bundle has no PNG. `ANGLE_STATIC_FIGURES=off` turns the images off. Live figures
 *   send HTML while they update and the image with their final state (`close()`). Static SVG/PNG
 *   files come from lib/report/figures/render-static.ts.
 *
 * `liveFigure` keeps one output (a tslab display id) and replaces it as a run trains, at most
 * once per interval; `close()` sends the final state, so an executed notebook ends with it.
 *
 * A live figure keeps its cell's output unscrolled. The classic Notebook (6.x) turns an output
 * area taller than 100 lines (OutputArea.auto_scroll_threshold × 1.3 × font size, about 1,820 px)
 * into a 24em scrolling box (class `output_scroll`, 336 px), which a cell training several runs —
 * one 480 px figure each — always passes: the curves then sit collapsed in that box. tslab sends
 * an update as `update_display_data`, which Notebook 6 renders by replacing the output's element
 * (OutputArea.update_display_data), so the box stays. Each live output therefore carries a small
 * script that finds the Notebook cell holding it (`Jupyter.notebook.get_cells()`, the
 * OutputArea whose element contains it) and, unless the reader chose scrolling (a click on the
 * output prompt sets `scroll_state` to true), sets `scroll_state = false` and unscrolls it; a
 * click still toggles scrolling. Notebook saves that as the cell's `metadata.scrolled`, which the
 * notebooks' git filter drops. Pages without the classic Notebook's `Jupyter.notebook` (nbconvert's
 * HTML, JupyterLab) are left alone.
 */
import { randomBytes } from 'node:crypto';
import type { EvalLog, StepLog } from '../train/checkpoint.js';
import { figureSummary, type Figure } from '../report/figures/figure.js';
import { plotlyLibrary, plotlyLibrarySource } from '../report/figures/plotly-library.js';
import { staticFigureImage, warmStaticFigureImages, type StaticFigureImage } from '../report/figures/static-image-sync.js';
import { trainingCurvesFigure, type TrainingCurvesOptions, type TrainingRun } from '../report/figures/training-curves.js';
import { escapeHtml } from '../util/table.js';
import { tslabModule, type MimeBundle, type TslabDisplay } from './tslab.js';

/** Set on globalThis once the library went out in this kernel (one process per kernel). */
const LIBRARY_SENT = Symbol.for('angle-notebooks.plotly-library-sent');

/** The CSS class of a figure's container; scripts/check-rendered.ts counts these. */
export const FIGURE_CLASS = 'angle-figure';
/** The CSS class of the (hidden) element that marks the output carrying plotly.js. */
export const LIBRARY_CLASS = 'angle-plotly-library';

export interface FigureDisplayOptions {
  /** Plot height in pixels; default the layout's height, else 480. */
  height?: number;
  /**
   * plotly.js: 'auto' (default) leaves it to the setup cell's output, else inlines it before the
   * kernel's first figure; 'always' inlines it with this figure too; 'never' leaves it to another output.
   */
  library?: 'auto' | 'always' | 'never';
  /** A static PNG beside the interactive figure (see the file comment); default true. */
  staticImage?: boolean;
}

/** The CSS class of the static image inside a figure's plot box (removed once plotly draws). */
export const STATIC_IMAGE_CLASS = `${FIGURE_CLASS}-static`;

/** JSON safe inside a <script> element: no `</script>`, `<!--` or line separators can appear. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * plotly.js as an HTML output: a hidden marker and the bundle in a <script>, evaluated with
 * `module`/`define` shadowed so it always sets `window.Plotly` (also on pages with require.js,
 * such as nbconvert's), skipped when the page already has plotly, then draws queued figures.
 */
export function plotlyLibraryHtml(): string {
  const { version } = plotlyLibrary();
  // The HTML tokenizer ends a script at `</script` and changes state at `<!--`, even inside a JS
  // string; both only occur inside string or regex literals, where the escaped forms are equal.
  const bundle = plotlyLibrarySource().replace(/<\/script/gi, '<\\/script').replace(/<!--/g, '<\\!--');
  return (
    `<div class="${LIBRARY_CLASS}" data-plotly-version="${escapeHtml(version)}" style="display:none"></div>\n` +
    `<script type="text/javascript">\n` +
    `/* plotly.js ${version}, inlined from node_modules/plotly.js-dist-min so that figures draw without network */\n` +
    `if (!window.Plotly) {\n(function (module, exports, define) {\n${bundle}\n}).call(window);\n}\n` +
    `(function () {\n  var queued = window.__angleFigureQueue || [];\n  window.__angleFigureQueue = [];\n` +
    `  queued.forEach(function (draw) { draw(window.Plotly); });\n})();\n` +
    `</script>\n`
  );
}

/** The height a figure is shown at: the option, else the layout's, else 480 px. */
function figureHeight(fig: Figure, opts: Pick<FigureDisplayOptions, 'height'>): number {
  return opts.height ?? (typeof fig.layout.height === 'number' ? fig.layout.height : 480);
}

/**
 * The HTML of one figure: a container, a note shown until plotly draws, and the drawing script.
 * With `image` (its static PNG, or why there is none): the PNG sits in the plot's box until plotly
 * draws there, and the reason for a missing one is a line under the figure.
 */
export function figureHtml(fig: Figure, opts: Pick<FigureDisplayOptions, 'height'> & { image?: StaticFigureImage } = {}): string {
  const id = `${FIGURE_CLASS}-${randomBytes(6).toString('hex')}`;
  const height = figureHeight(fig, opts);
  const title = fig.layout.title.text;
  const spec = { data: fig.data, layout: { ...fig.layout, height }, config: { responsive: true, displaylogo: false } };
  const image = opts.image;
  const staticImg =
    image && 'png' in image
      ? `<img class="${STATIC_IMAGE_CLASS}" alt="${escapeHtml(title)}" width="${image.width}" height="${image.height}" style="max-width:100%;height:auto" ` +
        `src="data:image/png;base64,${image.png.toString('base64')}">`
      : '';
  const note = staticImg
    ? `A static image of figure “${escapeHtml(title)}”; plotly.js, which the output of this notebook's setup cell loads, draws the interactive one here. ` +
      `If it stays static: trust the notebook (JupyterLab: File ▸ Trust Notebook), or run the setup cell again.`
    : `Figure “${escapeHtml(title)}” is drawn by plotly.js, which the output of this notebook's setup cell loads. ` +
      `If it does not appear: trust the notebook (JupyterLab: File ▸ Trust Notebook), or run the setup cell again.`;
  const noImage =
    image && 'unavailable' in image
      ? `<div class="${FIGURE_CLASS}-no-static" style="font:12px sans-serif;color:#999;padding:2px 0">no static image of this figure for viewers without JavaScript (GitHub's): ${escapeHtml(image.unavailable)}</div>`
      : '';
  return (
    `<div class="${FIGURE_CLASS}" id="${id}" data-figure-title="${escapeHtml(title)}">` +
    `<div class="${FIGURE_CLASS}-plot" style="width:100%;height:${height}px">${staticImg}</div>` +
    `<div class="${FIGURE_CLASS}-note" style="font:13px sans-serif;color:#777;padding:4px 0">${note}</div>${noImage}</div>\n` +
    `<script type="text/javascript">\n(function () {\n` +
    `  var spec = ${scriptJson(spec)};\n` +
    // JupyterLab re-inserts the script to run it and nbconvert's page runs it in place: either way
    // it follows its container; the id is the fallback where currentScript is unavailable.
    `  var s = document.currentScript, id = ${scriptJson(id)};\n` +
    `  var root = s && s.previousElementSibling && s.previousElementSibling.id === id ? s.previousElementSibling : document.getElementById(id);\n` +
    `  if (!root) return;\n` +
    `  function draw(Plotly) {\n` +
    `    var note = root.querySelector('.${FIGURE_CLASS}-note'), plot = root.querySelector('.${FIGURE_CLASS}-plot');\n` +
    `    var still = plot.querySelector('.${STATIC_IMAGE_CLASS}');\n` +
    `    if (still) plot.removeChild(still);\n` +
    `    Plotly.newPlot(plot, spec.data, spec.layout, spec.config).then(\n` +
    `      function () { if (note && note.parentNode) note.parentNode.removeChild(note); },\n` +
    `      function (e) { if (note) note.textContent = 'plotly.js could not draw this figure: ' + e; console.error(e); });\n` +
    `  }\n` +
    `  if (window.Plotly) draw(window.Plotly); else (window.__angleFigureQueue = window.__angleFigureQueue || []).push(draw);\n` +
    `})();\n</script>\n`
  );
}

function sendLibrary(display: TslabDisplay, mode: FigureDisplayOptions['library'] = 'auto'): void {
  const g = globalThis as unknown as Record<symbol, boolean | undefined>;
  if (mode === 'never' || (mode === 'auto' && g[LIBRARY_SENT])) return;
  display.html(plotlyLibraryHtml());
  g[LIBRARY_SENT] = true;
}

/**
 * Under tslab, outputs plotly.js (hidden) now, whether or not it went out before in this kernel:
 * the setup cell's output carries it (see the file comment). Where figures will carry static images,
 * starts the browser that draws them in the background. Outside tslab, nothing.
 */
export function showPlotlyLibrary(): void {
  const tslab = tslabModule();
  if (!tslab) return;
  sendLibrary(tslab.display, 'always');
  if (tslab.display.bundle) warmStaticFigureImages();
}

/**
 * Sends a figure through `display`: a MIME bundle with its static image where the display takes
 * bundles (see the file comment), else its HTML alone.
 */
function sendFigure(display: TslabDisplay, fig: Figure, opts: FigureDisplayOptions): void {
  if (!display.bundle || opts.staticImage === false) {
    display.html(figureHtml(fig, opts));
    return;
  }
  const image = staticFigureImage(fig, { height: figureHeight(fig, opts) });
  const data: MimeBundle = { 'text/html': figureHtml(fig, { ...opts, image }), 'text/plain': figureSummary(fig) };
  if ('png' in image) data['image/png'] = image.png.toString('base64');
  display.bundle(data);
}

/** Shows a figure: under tslab drawn by plotly.js with its static image (see above), else one line of text on stdout. */
export function showFigure(fig: Figure, opts: FigureDisplayOptions = {}): void {
  const tslab = tslabModule();
  if (!tslab) {
    console.log(figureSummary(fig));
    return;
  }
  sendLibrary(tslab.display, opts.library);
  sendFigure(tslab.display, fig, opts);
}

export interface LiveFigure {
  /**
   * Replaces the output with this figure, at most once per interval: a later call within the
   * interval is kept and sent when the interval has passed (the last one wins). A function is
   * called only when its figure is sent, so building the figure costs nothing between sends.
   */
  update(fig: Figure | (() => Figure)): void;
  /** Sends the pending figure now, if any. */
  flush(): void;
  /** Sends `fig` (or the pending figure) now and stops; outside tslab, prints its one line. */
  close(fig?: Figure | (() => Figure)): void;
  /** Updates asked for and outputs sent so far. */
  readonly stats: { requested: number; sent: number };
}

/** The class of the element that marks a live figure's output (see the file comment). */
export const LIVE_FIGURE_CLASS = 'angle-live-figure';

/**
 * `html` wrapped so that the classic Notebook shows the cell's outputs in full instead of in a
 * scrolling box (see the file comment).
 */
function unscrolledOutputHtml(html: string): string {
  const id = `${LIVE_FIGURE_CLASS}-${randomBytes(6).toString('hex')}`;
  return (
    `<div class="${LIVE_FIGURE_CLASS}" id="${id}">${html}</div>\n` +
    `<script type="text/javascript">\n(function () {\n` +
    `  var el = document.getElementById(${scriptJson(id)}), J = window.Jupyter;\n` +
    `  if (!el || !J || !J.notebook || typeof J.notebook.get_cells !== 'function') return;\n` +
    `  J.notebook.get_cells().forEach(function (cell) {\n` +
    `    var oa = cell.output_area;\n` +
    `    if (!oa || !oa.element || !oa.element[0] || !oa.element[0].contains(el) || oa.scroll_state === true) return;\n` +
    `    oa.scroll_state = false;\n` +
    `    if (oa.scrolled && typeof oa.unscroll_area === 'function') oa.unscroll_area();\n` +
    `  });\n` +
    `})();\n</script>\n`
  );
}

/** A figure output updated in place (a tslab display id) while something runs, e.g. training. */
export function liveFigure(opts: FigureDisplayOptions & { intervalMs?: number } = {}): LiveFigure {
  const intervalMs = opts.intervalMs ?? 1000;
  const tslab = tslabModule();
  let handle: TslabDisplay | undefined;
  if (tslab) {
    sendLibrary(tslab.display, opts.library);
    handle = tslab.newDisplay();
    // Reserves the output's place in the cell until the first figure arrives.
    handle.html(unscrolledOutputHtml('<div style="font:13px sans-serif;color:#777">waiting for the first update…</div>'));
  }
  let pending: Figure | (() => Figure) | undefined;
  let last: Figure | undefined;
  let lastSent = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const stats = { requested: 0, sent: 0 };
  /** Sends the pending figure; `final` (from close) with its static image, where the display takes bundles. */
  const send = (final = false) => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending === undefined) return;
    last = typeof pending === 'function' ? pending() : pending;
    pending = undefined;
    lastSent = Date.now();
    if (!handle) return;
    if (final && handle.bundle && opts.staticImage !== false) {
      const image = staticFigureImage(last, { height: figureHeight(last, opts) });
      const data: MimeBundle = { 'text/html': unscrolledOutputHtml(figureHtml(last, { ...opts, image })), 'text/plain': figureSummary(last) };
      if ('png' in image) data['image/png'] = image.png.toString('base64');
      handle.bundle(data);
    } else {
      handle.html(unscrolledOutputHtml(figureHtml(last, opts)));
    }
    stats.sent++;
  };
  return {
    update(fig) {
      if (closed) throw new Error('liveFigure: update() after close()');
      stats.requested++;
      pending = fig;
      if (!handle) return;
      const wait = lastSent + intervalMs - Date.now();
      if (wait <= 0) send();
      else if (!timer) {
        timer = setTimeout(() => send(), wait);
        timer.unref();
      }
    },
    flush() {
      if (handle) send();
    },
    close(fig) {
      if (closed) return;
      if (fig !== undefined) pending = fig;
      // The final state goes out once more with its static image, even when it was sent already.
      else if (pending === undefined && last && handle?.bundle) pending = last;
      send(true);
      closed = true;
      if (!handle && last) console.log(figureSummary(last));
    },
    stats,
  };
}

export interface LiveTrainingCurves {
  /** Pass as the trainer's `onStep`. */
  onStep(log: StepLog): void;
  /** Pass as the trainer's `onEval`. */
  onEval(log: EvalLog): void;
  /** Sends the final curves. */
  close(): void;
  /** The logs received so far. */
  readonly run: TrainingRun;
  readonly stats: { requested: number; sent: number };
}

/**
 * Training curves that draw themselves while a run trains:
 *
 *   const curves = liveTrainingCurves('stsb, lr 2e-5');
 *   const trainer = new Trainer({ ...config, onStep: curves.onStep, onEval: curves.onEval });
 *   await trainer.run();
 *   curves.close();
 */
export function liveTrainingCurves(
  name: string,
  opts: TrainingCurvesOptions & FigureDisplayOptions & { intervalMs?: number } = {},
): LiveTrainingCurves {
  const steps: StepLog[] = [];
  const evals: EvalLog[] = [];
  const run: TrainingRun = { name, steps, evals };
  const live = liveFigure(opts);
  const figure = () => trainingCurvesFigure(run, opts);
  return {
    onStep: (log) => {
      steps.push(log);
      live.update(figure);
    },
    onEval: (log) => {
      evals.push(log);
      live.update(figure);
    },
    close: () => live.close(figure),
    run,
    stats: live.stats,
  };
}
