/**
 * A live Jupyter Notebook driven in headless Chromium, the way a researcher uses it (issue 38):
 * `npm run jupyter -- --kernel deno` (scripts/jupyter.ts) serves a small notebook written to a
 * temporary folder under build/; the page runs all cells, the parameter cell is edited, all cells
 * run again in the same kernel, the notebook is saved and reopened. Every figure must be drawn on
 * the live page and on the reopened one, with no script error, and the saved file must hold
 * plotly.js once and each figure's static image (image/png in its MIME bundle).
 *
 * The server is started with `--kernel deno` (new notebooks start in Deno's kernel), and both
 * this notebook and the committed notebooks/00-encode-and-compare.ipynb must still open in tslab,
 * the kernel their files name, without touching the committed file.
 *
 * Jupyter's own state goes to a temporary folder (JUPYTER_DATA_DIR & co.), the clone's git config is
 * left alone (--no-git-filter). Skips, saying why, without Chromium, the classic Notebook (Debian's
 * jupyter-notebook) or IPython, and needs dist/ built from the current lib/ (npm test builds it).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FIGURE_CLASS, LIBRARY_CLASS, STATIC_IMAGE_CLASS } from '../lib/notebook/figures.js';
import { chromiumUnavailableReason, launchChromium } from '../lib/report/figures/chromium.js';
import { packageRoot } from '../lib/util/package-root.js';
import { denoBinary } from '../scripts/notebooks/deno-binary.js';
import { SHARED_DIR } from './helpers/env.js';
import { isolatedJupyterEnv, jupyterUnavailable, startJupyterCommand } from './helpers/jupyter-command.js';
import { figuresDrawn, pageErrors } from './helpers/figure-page.js';

const ROOT = packageRoot();
const COMMITTED = 'notebooks/00-encode-and-compare.ipynb';

/** Why this machine cannot run the test, or undefined. */
function unavailable(env: NodeJS.ProcessEnv): string | undefined {
  const chromium = chromiumUnavailableReason(env);
  if (chromium) return chromium;
  if (!existsSync(denoBinary())) return `no deno binary (${denoBinary()}): npm ci installs the dev dependency \`deno\``;
  return jupyterUnavailable(env);
}

/** The notebook imports dist/: it must exist and be newer than the lib/ files the test exercises. */
function distStaleReason(): string | undefined {
  for (const f of ['notebook/figures', 'notebook/tslab', 'notebook/setup', 'report/figures/static-image-sync', 'report/figures/static-image-worker', 'report/figures/render-static', 'index']) {
    const built = statSync(join(ROOT, 'dist', `${f}.js`), { throwIfNoEntry: false });
    if (!built) return `dist/${f}.js is missing`;
    if (built.mtimeMs < statSync(join(ROOT, 'lib', `${f}.ts`)).mtimeMs) return `dist/${f}.js is older than lib/${f}.ts`;
  }
  return undefined;
}

const code = (id: string, source: string) => ({ cell_type: 'code', id, execution_count: null, metadata: {}, outputs: [], source });

/** A small notebook in the committed notebooks' form: setup, a parameter cell, two figures and live training curves. */
function liveNotebook(dir: string): object {
  const dist = relative(dir, join(ROOT, 'dist', 'index.js'));
  return {
    cells: [
      { cell_type: 'markdown', id: 'm0', metadata: {}, source: '# Live Jupyter test: figures across Run All, an edit, Run All, save, reopen' },
      code('c1', `import * as angle from ${JSON.stringify(dist)};\nawait angle.notebook.setup();`),
      code('params', 'const SCALE = 1;'),
      code('c3', 'angle.notebook.showFigure(angle.report.figures.tableBarsFigure([{ label: "STS-B", ours: 80 * SCALE, paper: 85 }], { title: `ours vs paper ×${SCALE}` }));'),
      code(
        'c4',
        'const curves = angle.notebook.liveTrainingCurves(`run ×${SCALE}`, { intervalMs: 0 });\n' +
          'for (let step = 1; step <= 3; step++) curves.onStep({ step, epoch: 0, lr: 1e-5, loss: 3 / step / SCALE, terms: {}, tokens: 100, seconds: step });\n' +
          'curves.close();',
      ),
      code('c5', 'angle.notebook.showFigure(angle.report.figures.tableBarsFigure([{ label: "MRPC", ours: 70 * SCALE }], { title: `MRPC ×${SCALE}` }));'),
    ],
    metadata: {
      kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' },
      language_info: { codemirror_mode: { mode: 'typescript', name: 'javascript', typescript: true }, file_extension: '.ts', mimetype: 'text/typescript', name: 'typescript', version: '3.7.2' },
    },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

/** The page's classic-Notebook globals this test uses (the project compiles without the DOM library). */
interface NotebookCell {
  cell_type: string;
  input_prompt_number?: number | string | null;
  output_area?: { outputs: { output_type: string; name?: string; text?: string; ename?: string; evalue?: string }[] };
  get_text(): string;
  set_text(s: string): void;
}
interface JupyterPage {
  Jupyter?: {
    notebook?: {
      kernel?: { name: string; is_connected(): boolean };
      metadata: { kernelspec?: { name: string } };
      dirty: boolean;
      get_cells(): NotebookCell[];
      execute_all_cells(): void;
      save_notebook(): Promise<unknown>;
    };
  };
}

/**
 * Errors of the Notebook page itself, not of the notebook: Debian's jupyter-notebook enables the
 * ipywidgets extension (/etc/jupyter/nbconfig) without shipping its script, so the page's own
 * request for nbextensions/widgets/... fails. Outputs never load anything from nbextensions/.
 */
const notebookPageOwn = (e: string) => /\/nbextensions\//.test(e);

/** Opens a notebook page and waits until its kernel is connected; returns the kernel's name. */
async function openNotebook(page: Page, base: string, token: string, path: string): Promise<string> {
  await page.goto(`${base}/notebooks/${path.split('/').map(encodeURIComponent).join('/')}?token=${token}`, { waitUntil: 'load', timeout: 120_000 });
  const name = await page.waitForFunction(
    () => {
      const nb = (globalThis as unknown as JupyterPage).Jupyter?.notebook;
      return nb?.kernel && nb.kernel.is_connected() ? nb.kernel.name : false;
    },
    undefined,
    { timeout: 120_000, polling: 250 },
  );
  return (await name.jsonValue()) as string;
}

/** Cell > Run All, then waits until no cell is running; returns each code cell's error or stderr text. */
async function runAll(page: Page): Promise<string[]> {
  await page.evaluate(() => (globalThis as unknown as JupyterPage).Jupyter!.notebook!.execute_all_cells());
  await page.waitForFunction(
    () => (globalThis as unknown as JupyterPage).Jupyter!.notebook!.get_cells().every((c) => c.cell_type !== 'code' || c.input_prompt_number !== '*'),
    undefined,
    { timeout: 180_000, polling: 250 },
  );
  return page.evaluate(() =>
    (globalThis as unknown as JupyterPage)
      .Jupyter!.notebook!.get_cells()
      .flatMap((c) => c.output_area?.outputs ?? [])
      .filter((o) => o.output_type === 'error' || (o.output_type === 'stream' && o.name === 'stderr'))
      .map((o) => (o.output_type === 'error' ? `${o.ename}: ${o.evalue}` : String(o.text))),
  );
}

interface SavedOutput {
  output_type: string;
  data?: Record<string, string | string[]>;
}
const joined = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join('') : (v ?? ''));

describe('a live Jupyter Notebook in Chromium', () => {
  let dir: string;
  let work: string;
  let env: NodeJS.ProcessEnv;
  let skip: string | undefined;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'angle-jupyter-live-'));
    env = isolatedJupyterEnv(dir);
    skip = unavailable(env) ?? (SHARED_DIR ? undefined : 'no shared folder: the smoke preset the notebook runs with needs it');
    // Inside the project: the server serves the project root, as `npm run jupyter` always does.
    await mkdir(join(ROOT, 'build'), { recursive: true });
    work = await mkdtemp(join(ROOT, 'build', 'jupyter-live-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  });

  test('run all, edit, run all, save, reopen: every figure drawn; notebooks open in tslab under --kernel deno', { timeout: 300_000 }, async (t) => {
    if (skip) return t.skip(skip);
    const stale = distStaleReason();
    assert.equal(stale, undefined, `the notebook imports dist/, but ${stale}: run npm run build`);
    const file = join(work, 'live.ipynb');
    writeFileSync(file, `${JSON.stringify(liveNotebook(work), null, 1)}\n`);
    const path = relative(ROOT, file);
    const committedBefore = readFileSync(join(ROOT, COMMITTED));

    const started = Date.now();
    const phases: string[] = [];
    const phase = (what: string) => phases.push(`${what} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // The cpu backend: the notebook trains nothing, and it starts at once.
    const jupyter = startJupyterCommand(['--preset', 'smoke', '--shared', SHARED_DIR!, '--kernel', 'deno', '--no-git-filter'], { ...env, ANGLE_BACKEND: 'cpu' });
    const { child, exited } = jupyter;
    let browser: Browser | undefined;
    try {
      const url = await jupyter.ready;
      const { stdout } = jupyter.output();
      assert.match(stdout, /jupyter: new notebooks start in Deno's kernel; the committed ones open in tslab/);
      const token = url.searchParams.get('token')!;
      phase('server ready');
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = pageErrors(page);

      // The notebook names tslab: it opens in tslab although new notebooks start in Deno's kernel.
      assert.equal(await openNotebook(page, url.origin, token, path), 'tslab');
      assert.deepEqual(await runAll(page), [], 'the first Run All reported errors');
      assert.deepEqual(await figuresDrawn(page, 3), ['ours vs paper ×1', 'Training curves: run ×1', 'MRPC ×1']);
      phase('first Run All drawn');

      // Edit the parameter cell, as a researcher does, and run everything again in the same kernel.
      await page.evaluate(() => {
        const cell = (globalThis as unknown as JupyterPage).Jupyter!.notebook!.get_cells().find((c) => c.get_text() === 'const SCALE = 1;');
        cell!.set_text('const SCALE = 2;');
      });
      assert.deepEqual(await runAll(page), [], 'the second Run All reported errors');
      assert.deepEqual(await figuresDrawn(page, 3), ['ours vs paper ×2', 'Training curves: run ×2', 'MRPC ×2']);
      phase('second Run All drawn');
      await page.evaluate(() => (globalThis as unknown as JupyterPage).Jupyter!.notebook!.save_notebook());

      // Reopen: the page is built from the saved file.
      assert.equal(await openNotebook(page, url.origin, token, path), 'tslab');
      assert.deepEqual(await figuresDrawn(page, 3), ['ours vs paper ×2', 'Training curves: run ×2', 'MRPC ×2']);
      assert.deepEqual(errors.filter((e) => !notebookPageOwn(e)), []);
      phase('reopened, every figure drawn');

      // The saved file: plotly.js once, and every figure's static image beside its HTML.
      const saved = JSON.parse(readFileSync(file, 'utf8')) as { cells: { source: string | string[]; outputs?: SavedOutput[] }[] };
      assert.match(joined(saved.cells[2]!.source), /const SCALE = 2;/);
      const outputs = saved.cells.flatMap((c) => c.outputs ?? []);
      assert.equal(outputs.filter((o) => joined(o.data?.['text/html']).includes(`class="${LIBRARY_CLASS}"`)).length, 1);
      const figures = outputs.filter((o) => joined(o.data?.['text/html']).includes(`<div class="${FIGURE_CLASS}"`));
      assert.equal(figures.length, 3);
      for (const o of figures) {
        assert.ok(Buffer.from(joined(o.data!['image/png']), 'base64').subarray(1, 4).toString() === 'PNG', 'image/png in the bundle');
        assert.ok(joined(o.data!['text/html']).includes(`<img class="${STATIC_IMAGE_CLASS}"`));
      }

      // A committed notebook opens in tslab too, and opening it leaves its file as it was.
      const other = await browser.newPage();
      const otherErrors = pageErrors(other);
      assert.equal(await openNotebook(other, url.origin, token, COMMITTED), 'tslab');
      assert.equal(await other.evaluate(() => (globalThis as unknown as JupyterPage).Jupyter!.notebook!.metadata.kernelspec?.name), 'tslab');
      await other.close();
      assert.deepEqual(otherErrors.filter((e) => !notebookPageOwn(e)), []);
      assert.ok(readFileSync(join(ROOT, COMMITTED)).equals(committedBefore), `${COMMITTED} changed on disk`);
      phase('the committed notebook opened in tslab');
      console.log(`# jupyter-live: ${phases.join(', ')}`);
    } finally {
      await browser?.close();
      child.kill('SIGTERM');
      await exited;
    }
  });
});
