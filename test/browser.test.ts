/**
 * The report layer in a real browser (headless Chromium, nbconvert): the fixture notebook
 * test/fixtures/figures-notebook/figures.ipynb (a table and six figures, one of them a live
 * training display replayed from the STS-B run record) runs through the headless runner; its
 * executed .ipynb holds plotly.js once and the live figure's final state; scripts/check-rendered.ts
 * then converts it to HTML and finds every figure drawn, the table present, no script errors and
 * a screenshot written — and fails, naming why, on a copy whose plotly.js output was removed and
 * one output throws. render-static.ts writes SVG and PNG files of a figure.
 *
 * Needs /usr/bin/chromium (or CHROMIUM_PATH) and jupyter-nbconvert; skipped, saying which is
 * missing, without them. Needs dist/ built from the current lib/ (`npm run build`; npm test does).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { figureHtml, plotlyLibraryHtml, FIGURE_CLASS, LIBRARY_CLASS, STATIC_IMAGE_CLASS } from '../lib/notebook/figures.js';
import { chromiumUnavailableReason, launchChromium } from '../lib/report/figures/chromium.js';
import { renderFigureFiles } from '../lib/report/figures/render-static.js';
import { tableBarsFigure } from '../lib/report/figures/table-bars.js';
import { InputError, UnavailableError } from '../lib/util/errors.js';
import { packageRoot } from '../lib/util/package-root.js';
import { figuresDrawn, pageErrors, renderOutputsLikeJupyterLab } from './helpers/figure-page.js';

const ROOT = packageRoot();
const FIXTURE_DIR = 'test/fixtures/figures-notebook';
/** The STS-B run record the fixture notebook reads (the first .json in results/train-stsb, as it picks it). */
const RECORD_FILE = join(ROOT, 'results/train-stsb', readdirSync(join(ROOT, 'results/train-stsb')).filter((f) => f.endsWith('.json')).sort()[0]!);
/** The fixture notebook's figures: training curves, bars, density, alignment/uniformity, empty, live. */
const FIXTURE_FIGURES = 6;

function nbconvertUnavailableReason(): string | undefined {
  const r = spawnSync('jupyter-nbconvert', ['--version'], { encoding: 'utf8' });
  return r.error || r.status !== 0 ? 'jupyter-nbconvert not found (apt-get install --no-install-recommends jupyter-nbconvert)' : undefined;
}

const chromiumMissing = chromiumUnavailableReason();
const browserMissing = chromiumMissing ?? nbconvertUnavailableReason();
if (browserMissing) console.log(`# browser tests skipped: ${browserMissing}`);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[]): Promise<Run> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE'));
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** The fixture imports dist/: it must exist and be newer than the lib/ files it comes from. */
function distStaleReason(): string | undefined {
  const pairs = [
    ['lib/notebook/figures.ts', 'dist/notebook/figures.js'],
    ['lib/notebook/display.ts', 'dist/notebook/display.js'],
    ['lib/notebook/tslab.ts', 'dist/notebook/tslab.js'],
    ['lib/index.ts', 'dist/index.js'],
    ['lib/report/index.ts', 'dist/report/index.js'],
    ['lib/notebook/index.ts', 'dist/notebook/index.js'],
    ['lib/eval/geometry.ts', 'dist/eval/geometry.js'],
    ...['figure', 'training-curves', 'table-bars', 'cosine-density', 'align-uniform', 'plotly-library', 'static-image-sync', 'static-image-worker', 'render-static', 'index'].map((f) => [
      `lib/report/figures/${f}.ts`,
      `dist/report/figures/${f}.js`,
    ]),
  ];
  for (const [src, out] of pairs) {
    const built = statSync(join(ROOT, out!), { throwIfNoEntry: false });
    if (!built) return `${out} is missing`;
    if (built.mtimeMs < statSync(join(ROOT, src!)).mtimeMs) return `${out} is older than ${src}`;
  }
  return undefined;
}

interface Output {
  output_type: string;
  metadata?: Record<string, unknown>;
  data?: Record<string, string | string[]>;
  text?: string | string[];
}
interface Cell {
  id?: string;
  cell_type: string;
  outputs?: Output[];
}

const text = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join('') : (v ?? ''));

describe('the figures notebook in a browser', { skip: browserMissing }, () => {
  let tmp: string;
  let executed: string;
  let cells: Cell[];

  before(async () => {
    const stale = distStaleReason();
    assert.equal(stale, undefined, `the fixture notebook imports dist/, but ${stale}: run npm run build`);
    tmp = await mkdtemp(join(tmpdir(), 'browser-test-'));
    const r = await run(['scripts/notebooks/cli.ts', '--dir', FIXTURE_DIR, '--out', tmp, '--preset', 'paper', 'figures']);
    assert.equal(r.code, 0, `runner failed:\n${r.stdout}\n${r.stderr}`);
    executed = join(tmp, 'figures.ipynb');
    cells = (JSON.parse(readFileSync(executed, 'utf8')) as { cells: Cell[] }).cells;
  });

  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('the executed notebook: plotly.js once, before the first figure; the live figure ends in its final state', () => {
    const html = cells.flatMap((c) => (c.outputs ?? []).map((o) => text(o.data?.['text/html'])));
    const library = html.filter((h) => h.includes(`class="${LIBRARY_CLASS}"`));
    assert.equal(library.length, 1);
    const figures = html.filter((h) => h.includes(`<div class="${FIGURE_CLASS}"`));
    assert.equal(figures.length, FIXTURE_FIGURES);
    assert.ok(html.indexOf(library[0]!) < html.indexOf(figures[0]!));
    // Each figure's output is a MIME bundle with its static image (for GitHub's viewer and other
    // front ends without JavaScript): a PNG of the figure's size, also inside the HTML's plot box.
    const figureOutputs = cells.flatMap((c) => c.outputs ?? []).filter((o) => text(o.data?.['text/html']).includes(`<div class="${FIGURE_CLASS}"`));
    assert.equal(figureOutputs.length, FIXTURE_FIGURES);
    for (const o of figureOutputs) {
      const png = Buffer.from(text(o.data!['image/png']), 'base64');
      assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png is a PNG');
      assert.equal(png.readUInt32BE(16), 900);
      assert.ok(png.length > 5000, `a PNG of ${png.length} bytes is too small to hold a figure`);
      assert.ok(text(o.data!['text/html']).includes(`<img class="${STATIC_IMAGE_CLASS}"`));
      assert.notEqual(text(o.data!['text/plain']), '');
    }
    // The live cell: one display output (replaced in place), holding the whole replayed run.
    const live = cells.find((c) => c.id === 'c8')!;
    const displays = live.outputs!.filter((o) => o.output_type === 'display_data');
    assert.equal(displays.length, 1);
    const spec = JSON.parse(/var spec = (.*);\n/.exec(text(displays[0]!.data!['text/html']))![1]!);
    const [loss, dev, lr] = spec.data as { x: number[]; y: number[] }[];
    const record = JSON.parse(readFileSync(RECORD_FILE, 'utf8')) as {
      details: { log: { step: number; loss: number }[]; evals: { step: number; metrics: { spearman: number } }[] };
    };
    assert.deepEqual(loss!.x, record.details.log.map((s) => s.step));
    assert.deepEqual(loss!.y, record.details.log.map((s) => s.loss));
    assert.deepEqual(dev!.x, record.details.evals.map((e) => e.step));
    assert.equal(lr!.x.length, record.details.log.length);
    // Throttled: far fewer outputs sent than updates asked for.
    const printed = live.outputs!.filter((o) => o.output_type === 'stream').map((o) => text(o.text)).join('');
    const m = /live: (\d+) of (\d+) updates sent/.exec(printed);
    assert.ok(m, printed);
    assert.equal(Number(m[2]), record.details.log.length + record.details.evals.length);
    assert.ok(Number(m[1]) >= 2 && Number(m[1]) < Number(m[2]) / 10, printed);
  });

  test('check-rendered: every figure drawn, the table present, no script errors, a screenshot', async () => {
    const shots = join(tmp, 'shots');
    const r = await run(['scripts/check-rendered.ts', executed, '--screenshots', shots]);
    if (r.code === 3) return void console.log(`# skipped: ${r.stdout.trim()}`);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, new RegExp(`figures\\.ipynb: ok in [\\d.]+ s: ${FIXTURE_FIGURES}/${FIXTURE_FIGURES} figures drawn, 1/1 tables, 0 script errors, ${FIXTURE_FIGURES}/${FIXTURE_FIGURES} figures shown without JavaScript`));
    const png = readFileSync(join(shots, 'figures.png'));
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    // Full page: the viewport's width, and far taller than one screen (six figures).
    assert.equal(png.readUInt32BE(16), 1280);
    assert.ok(png.readUInt32BE(20) > 3000, `height ${png.readUInt32BE(20)}`);
  });

  test('check-rendered fails, saying why, when plotly.js is missing and an output throws', async () => {
    const nb = JSON.parse(readFileSync(executed, 'utf8')) as { cells: Cell[] };
    for (const c of nb.cells) {
      if (c.outputs) c.outputs = c.outputs.filter((o) => !text(o.data?.['text/html']).includes(`class="${LIBRARY_CLASS}"`));
    }
    // One figure without its static image: in neither the bundle nor the HTML.
    const bars = nb.cells.flatMap((c) => c.outputs ?? []).find((o) => /data-figure-title="Bars with error bars/.test(text(o.data?.['text/html'])))!;
    delete bars.data!['image/png'];
    bars.data!['text/html'] = text(bars.data!['text/html']).replace(new RegExp(`<img class="${STATIC_IMAGE_CLASS}"[^>]*>`), '');
    nb.cells.find((c) => c.id === 'c2')!.outputs!.push({
      output_type: 'display_data',
      data: { 'text/html': '<script>throw new Error("boom from a broken output")</script>' },
      metadata: {},
    });
    const dir = join(tmp, 'broken');
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'broken.ipynb');
    writeFileSync(file, JSON.stringify(nb));
    const r = await run(['scripts/check-rendered.ts', file, '--timeout', '5']);
    if (r.code === 3) return void console.log(`# skipped: ${r.stdout.trim()}`);
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /broken\.ipynb: FAILED in [\d.]+ s: not drawn: "Training curves: .*" .*\(plotly\.js never loaded on the page\); uncaught Error: boom from a broken output/);
    assert.match(r.stdout, /0\/6 figures drawn/);
    assert.match(r.stdout, /no image\/png beside the figure's HTML: "Bars with error bars[^"]*"; not shown without JavaScript: "Bars with error bars[^"]*"/);
    assert.match(r.stdout, /5\/6 figures shown without JavaScript/);
    assert.ok(existsSync(join(dir, 'broken.png')), 'the screenshot is written also when the check fails');
  });
});

describe('figure outputs rendered the way JupyterLab renders trusted HTML', { skip: chromiumMissing }, () => {
  test('scripts re-inserted after innerHTML find their container; figures before the library draw once it arrives', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const errors = pageErrors(page);
      await page.setContent('<!doctype html><html><body></body></html>');
      const a = figureHtml(tableBarsFigure([{ label: 'a', ours: 1, paper: 2 }], { title: 'first' }));
      const b = figureHtml(tableBarsFigure([{ label: 'b', ours: 3 }], { title: 'second' }));
      // Out of order (a cell run before the one carrying the library), and one output shown twice
      // (two views of a notebook): the same ids twice on the page.
      await renderOutputsLikeJupyterLab(page, [a, b, plotlyLibraryHtml(), a]);
      assert.deepEqual(await figuresDrawn(page, 3), ['first', 'second', 'first']);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });
});

describe('static figure files', () => {
  test('Chromium missing: an UnavailableError saying how to install it', async () => {
    await assert.rejects(
      launchChromium({ executablePath: '/nonexistent/chromium' }),
      (e: Error) => e instanceof UnavailableError && /\/nonexistent\/chromium does not exist; install it with `apt-get install chromium`/.test(e.message),
    );
  });

  test('SVG and PNG of a figure, drawn by plotly in headless Chromium', { skip: chromiumMissing }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'figure-files-'));
    try {
      const fig = tableBarsFigure([{ label: 'STS-B', ours: 80.5, std: 0.4, paper: 81.0 }], { title: 'A static figure' });
      await assert.rejects(renderFigureFiles(fig, join(dir, 'bars.svg')), InputError);
      const files = await renderFigureFiles(fig, join(dir, 'bars'), { width: 600, height: 400, scale: 2 });
      assert.deepEqual(files, [join(dir, 'bars.svg'), join(dir, 'bars.png')]);
      const svg = readFileSync(files[0]!, 'utf8');
      assert.match(svg, /^<svg class="main-svg" xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* width="600" height="400"/);
      assert.ok(svg.includes('A static figure') && svg.includes('STS-B'));
      const png = readFileSync(files[1]!);
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1200, 800]); // scale 2
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
