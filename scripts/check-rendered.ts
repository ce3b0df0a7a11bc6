/**
 * The real-browser check of executed notebooks: each notebook is converted to HTML with nbconvert
 * (as a reader would share it), opened from a local file in headless Chromium, and checked:
 *
 * - every figure drawn: each figure container the notebook's outputs hold (lib/notebook/figures.ts,
 *   `div.angle-figure`) is on the page and has plotly's `svg.main-svg` inside;
 * - no script errors: no uncaught exception and no console error, except the nbconvert template's
 *   own assets (require.js, MathJax) that a machine without network or without Debian's
 *   libjs-requirejs / libjs-mathjax cannot load, which are listed, not failed;
 * - tables present: at least as many <table>s in the output areas as the outputs hold;
 * - every figure shown without JavaScript, as GitHub's notebook viewer and other front ends that run
 *   no scripts show it: each figure output's MIME bundle carries its static `image/png`, and the
 *   same page opened with JavaScript off shows each figure's static image (loaded, not empty).
 *
 * A full-page screenshot of each notebook goes to <screenshots>/<name>.png (default: beside the
 * notebook, so results/notebooks/<name>.png for `npm run notebooks` output).
 *
 *   npx tsx scripts/check-rendered.ts [notebook.ipynb ...] [--screenshots <dir>] [--html-dir <dir>] [--timeout <s>]
 *
 * Exit status: 0 all passed; 1 a notebook failed; 2 usage error; 3 Chromium, playwright-core or
 * nbconvert is missing (one line says which and how to install it; tests skip on 3).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Browser, ConsoleMessage } from 'playwright-core';
import { chromiumUnavailableReason, launchChromium } from '../lib/report/figures/chromium.js';
import { FIGURE_CLASS, STATIC_IMAGE_CLASS } from '../lib/notebook/figures.js';
import { packageRoot } from '../lib/util/package-root.js';
import { executedNotebooksDir, KERNEL_NAMES, type KernelName } from './notebooks/kernels.js';

const USAGE = `usage: npx tsx scripts/check-rendered.ts [notebook.ipynb ...] [options]
  notebooks              executed notebooks (default: results/notebooks/*.ipynb)
  --screenshots <dir>    where <name>.png goes (default: beside each notebook)
  --html-dir <dir>       keep nbconvert's HTML here (default: a temporary folder, removed after)
  --timeout <s>          how long a page may take to draw its figures (default: 120)
  --kernel tslab|deno    which kernel's executed notebooks to check when none are named
                         (results/notebooks, or results/notebooks-deno; default: tslab)`;

/** How long loading one page may take; --timeout bounds the drawing after it. */
const LOAD_TIMEOUT_MS = 300_000;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
const EXIT_UNAVAILABLE = 3;

class UsageError extends Error {}

/** What a notebook's outputs hold, counted from the .ipynb. */
interface Expected {
  figures: number;
  tables: number;
  /** Titles of the figures whose output has no image/png beside its HTML, with the reason it gives. */
  withoutImage: string[];
}

function joinText(v: unknown): string {
  return Array.isArray(v) ? v.join('') : typeof v === 'string' ? v : '';
}

function expectedFromNotebook(file: string): Expected {
  let nb: { cells?: { cell_type?: string; outputs?: { data?: Record<string, unknown> }[] }[] };
  try {
    nb = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`${file}: not a readable notebook (${(e as Error).message})`);
  }
  if (!Array.isArray(nb.cells)) throw new UsageError(`${file}: not a notebook (no "cells" array)`);
  const figureMarker = new RegExp(`<div class="${FIGURE_CLASS}"`, 'g');
  let figures = 0;
  let tables = 0;
  const withoutImage: string[] = [];
  for (const cell of nb.cells) {
    for (const o of cell.outputs ?? []) {
      const html = joinText(o.data?.['text/html']);
      const here = html.match(figureMarker)?.length ?? 0;
      figures += here;
      if (here > 0 && joinText(o.data?.['image/png']) === '') {
        const title = /data-figure-title="([^"]*)"/.exec(html)?.[1] ?? '(untitled)';
        const why = /no static image of this figure[^:]*: ([^<]*)</.exec(html)?.[1];
        withoutImage.push(`"${title}"${why ? ` (${why})` : ''}`);
      }
      tables += html.match(/<table[\s>]/gi)?.length ?? 0;
      // A Markdown table's delimiter row: | --- | ---: |
      tables += joinText(o.data?.['text/markdown']).match(/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/gm)?.length ?? 0;
    }
  }
  return { figures, tables, withoutImage };
}

/** Why nbconvert cannot be used, or undefined when it can. */
function nbconvertUnavailableReason(): string | undefined {
  const r = spawnSync('jupyter-nbconvert', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    return 'jupyter-nbconvert not found; install it with `apt-get install --no-install-recommends jupyter-nbconvert` (Debian) or `pip install nbconvert`';
  }
  return undefined;
}

function toHtml(notebook: string, outDir: string): string {
  const r = spawnSync('jupyter-nbconvert', ['--to', 'html', '--output-dir', outDir, notebook], { encoding: 'utf8' });
  if (r.status !== 0) {
    const said = (r.stderr || r.stdout).split('\n').map((l) => l.trim()).filter((l) => l !== '');
    throw new Error(`jupyter-nbconvert --to html failed (exit ${r.status}): ${said.slice(-8).join(' | ')}`);
  }
  const html = join(outDir, `${basename(notebook, '.ipynb')}.html`);
  if (!existsSync(html)) throw new Error(`jupyter-nbconvert wrote no ${html}`);
  return html;
}

/** The few DOM members the page functions use (the project compiles without the DOM library). */
interface BrowserElement {
  querySelector(selector: string): BrowserElement | null;
  querySelectorAll(selector: string): ArrayLike<BrowserElement>;
  getAttribute(name: string): string | null;
  src?: string;
  href?: string;
}
interface BrowserGlobals {
  document: BrowserElement & { head: BrowserElement };
  Plotly?: unknown;
}

interface PageReport {
  figuresOnPage: number;
  figuresDrawn: number;
  notDrawn: string[];
  tablesInOutputs: number;
  plotlyLoaded: boolean;
  errors: string[];
  missingTemplateAssets: string[];
}

async function checkPage(browser: Browser, htmlFile: string, screenshot: string, timeoutMs: number): Promise<PageReport> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  const failedRequests = new Map<string, string>();
  const consoleErrors: ConsoleMessage[] = [];
  try {
    // This check runs offline: nothing leaves the machine, whatever the page asks for.
    await page.route(/^https?:/, (route) => route.abort('internetdisconnected'));
    page.on('requestfailed', (req) => failedRequests.set(req.url(), req.failure()?.errorText ?? 'failed'));
    page.on('pageerror', (e) => errors.push(`uncaught ${e.name}: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m);
    });
    // Loading parses the inlined plotly.js (4.8 MB): seconds on a busy machine, hence a generous limit.
    await page.goto(pathToFileURL(htmlFile).href, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
    const figureSelector = `div.${FIGURE_CLASS}`;
    await page
      .waitForFunction(
        (sel) => Array.from((globalThis as unknown as BrowserGlobals).document.querySelectorAll(sel)).every((d) => d.querySelector('svg.main-svg') !== null),
        figureSelector,
        { timeout: timeoutMs },
      )
      .catch(() => undefined); // reported below, figure by figure
    const state = await page.evaluate((sel) => {
      const { document, Plotly } = globalThis as unknown as BrowserGlobals;
      const figures = Array.from(document.querySelectorAll(sel));
      return {
        figuresOnPage: figures.length,
        notDrawn: figures.filter((d) => !d.querySelector('svg.main-svg')).map((d) => d.getAttribute('data-figure-title') ?? '(untitled)'),
        tablesInOutputs: document.querySelectorAll('.jp-OutputArea-output table, .output_area table').length,
        plotlyLoaded: typeof Plotly === 'object',
        headAssets: Array.from(document.head.querySelectorAll('script[src], link[href]')).map((e) => e.src || e.href || ''),
      };
    }, figureSelector);
    await page.screenshot({ path: screenshot, fullPage: true });
    const headAssets = new Set(state.headAssets);
    const missingTemplateAssets: string[] = [];
    for (const [url, why] of failedRequests) {
      if (headAssets.has(url)) missingTemplateAssets.push(url);
      else errors.push(`could not load ${url} (${why})`);
    }
    for (const m of consoleErrors) {
      const url = m.location().url;
      // A failed load is reported once, by requestfailed above.
      if (m.text().startsWith('Failed to load resource') && failedRequests.has(url)) continue;
      errors.push(`console error: ${m.text()}${url ? ` (${url}:${m.location().lineNumber})` : ''}`);
    }
    return { ...state, figuresDrawn: state.figuresOnPage - state.notDrawn.length, errors, missingTemplateAssets };
  } finally {
    await page.close();
  }
}

/**
 * The page as a reader without JavaScript sees it (GitHub's viewer, a mail client, scripts blocked):
 * the titles of the figures whose static image is missing or did not load.
 */
async function figuresWithoutScripts(browser: Browser, htmlFile: string): Promise<{ figures: number; notShown: string[] }> {
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.route(/^https?:/, (route) => route.abort('internetdisconnected'));
    await page.goto(pathToFileURL(htmlFile).href, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
    // Evaluated by the DevTools protocol, which runs even where the page's own scripts may not.
    return await page.evaluate(
      ({ figure, image }) => {
        interface Img {
          complete: boolean;
          naturalWidth: number;
        }
        const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ querySelector(s: string): Img | null; getAttribute(n: string): string | null }> } }).document;
        const all = Array.from(doc.querySelectorAll(figure));
        const notShown = all.filter((f) => {
          const img = f.querySelector(image);
          return !img || !img.complete || img.naturalWidth === 0;
        });
        return { figures: all.length, notShown: notShown.map((f) => f.getAttribute('data-figure-title') ?? '(untitled)') };
      },
      { figure: `div.${FIGURE_CLASS}`, image: `img.${STATIC_IMAGE_CLASS}` },
    );
  } finally {
    await context.close();
  }
}

function shown(p: string): string {
  const r = relative(process.cwd(), p);
  return r.startsWith('..') ? p : r;
}

async function main(argv: string[]): Promise<number> {
  let values: { screenshots?: string; 'html-dir'?: string; timeout?: string; kernel?: string; help?: boolean };
  let notebooks: string[];
  try {
    const parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { screenshots: { type: 'string' }, 'html-dir': { type: 'string' }, timeout: { type: 'string' }, kernel: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
    values = parsed.values;
    if (values.help) {
      console.log(USAGE);
      return 0;
    }
    notebooks = parsed.positionals.map((p) => resolve(p));
    const kernel = values.kernel ?? 'tslab';
    if (!(KERNEL_NAMES as readonly string[]).includes(kernel)) throw new UsageError(`--kernel expects one of ${KERNEL_NAMES.join(', ')}, got '${kernel}'`);
    if (notebooks.length === 0) {
      const dir = executedNotebooksDir(packageRoot(), kernel as KernelName);
      notebooks = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.ipynb')).sort().map((f) => join(dir, f)) : [];
      if (notebooks.length === 0) throw new UsageError(`no executed notebooks in ${shown(dir)}: run \`npm run notebooks\` first, or name notebooks`);
    }
    for (const nb of notebooks) if (!existsSync(nb)) throw new UsageError(`no such notebook: ${shown(nb)}`);
    const timeoutS = Number(values.timeout ?? 120);
    if (!(timeoutS > 0)) throw new UsageError(`--timeout expects seconds > 0, got ${values.timeout}`);
    values.timeout = String(timeoutS);
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`check-rendered: ${(e as Error).message}\n\n${USAGE}`);
      return EXIT_USAGE;
    }
    throw e;
  }
  const timeoutMs = Number(values.timeout) * 1000;

  const unavailable = chromiumUnavailableReason() ?? nbconvertUnavailableReason();
  if (unavailable) {
    console.log(`check-rendered: cannot check in a browser: ${unavailable}`);
    return EXIT_UNAVAILABLE;
  }
  let browser: Browser;
  try {
    browser = await launchChromium();
  } catch (e) {
    console.log(`check-rendered: cannot check in a browser: ${(e as Error).message}`);
    return EXIT_UNAVAILABLE;
  }
  const htmlDir = values['html-dir'] ? resolve(values['html-dir']) : mkdtempSync(join(tmpdir(), 'check-rendered-'));
  let failed = 0;
  try {
    for (const nb of notebooks) {
      const name = basename(nb, '.ipynb');
      const screenshot = join(values.screenshots ? resolve(values.screenshots) : resolve(nb, '..'), `${name}.png`);
      const started = Date.now();
      const problems: string[] = [];
      let summary = '';
      try {
        const expected = expectedFromNotebook(nb);
        const html = toHtml(nb, htmlDir);
        const r = await checkPage(browser, html, screenshot, timeoutMs);
        if (r.figuresOnPage !== expected.figures) problems.push(`${r.figuresOnPage} figure containers on the page, ${expected.figures} in the notebook's outputs`);
        if (r.notDrawn.length > 0) {
          problems.push(`not drawn: ${r.notDrawn.map((t) => `"${t}"`).join(', ')}${r.plotlyLoaded ? '' : ' (plotly.js never loaded on the page)'}`);
        }
        if (r.tablesInOutputs < expected.tables) problems.push(`${r.tablesInOutputs} tables in the output areas, ${expected.tables} in the notebook's outputs`);
        problems.push(...r.errors);
        const still = await figuresWithoutScripts(browser, html);
        if (expected.withoutImage.length > 0) problems.push(`no image/png beside the figure's HTML: ${expected.withoutImage.join(', ')}`);
        if (still.notShown.length > 0) problems.push(`not shown without JavaScript: ${still.notShown.map((t) => `"${t}"`).join(', ')}`);
        summary =
          `${r.figuresDrawn}/${expected.figures} figures drawn, ${r.tablesInOutputs}/${expected.tables} tables, ${r.errors.length} script errors, ` +
          `${still.figures - still.notShown.length}/${expected.figures} figures shown without JavaScript; ` +
          `screenshot ${shown(screenshot)}` +
          (r.missingTemplateAssets.length > 0
            ? ` (nbconvert template assets not available here: ${r.missingTemplateAssets.map((u) => basename(u.split('?')[0]!)).join(', ')})`
            : '');
      } catch (e) {
        problems.push((e as Error).message);
      }
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (problems.length === 0) {
        console.log(`${shown(nb)}: ok in ${seconds} s: ${summary}`);
      } else {
        failed++;
        console.log(`${shown(nb)}: FAILED in ${seconds} s: ${problems.join('; ')}${summary ? ` [${summary}]` : ''}`);
      }
    }
  } finally {
    await browser.close();
    if (!values['html-dir']) rmSync(htmlDir, { recursive: true, force: true });
  }
  return failed > 0 ? EXIT_FAILED : 0;
}

process.exitCode = await main(process.argv.slice(2));
