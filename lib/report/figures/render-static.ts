/**
 * Static files of a figure, SVG and PNG, for READMEs and results/: the figure is drawn by
 * plotly.js itself (from node_modules) in headless Chromium and exported with `Plotly.toImage`,
 * so a file looks exactly like the figure in a notebook.
 *
 * Why a browser: plotly lays text out with the browser's font metrics and needs a DOM; without one
 * (jsdom is not a dependency, and plotly's own Kaleido exporter is a Python package) there is no
 * faithful SVG. Debian's `chromium` package is enough; lib/report/figures/chromium.ts finds it and
 * says how to install it when it is missing.
 *
 *   const r = await FigureRenderer.open();
 *   await r.writeFiles(fig, 'results/train-stsb/curves');   // curves.svg, curves.png
 *   await r.close();
 */
import { extname } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { InputError } from '../../util/errors.js';
import { launchChromium } from './chromium.js';
import type { Figure } from './figure.js';
import { plotlyLibrary } from './plotly-library.js';

export type StaticFormat = 'svg' | 'png';

export interface StaticRenderOptions {
  /** Pixels; default the layout's width, else 900. */
  width?: number;
  /** Pixels; default the layout's height, else 500. */
  height?: number;
  /** PNG pixel density; default 2 (sharp in READMEs). SVG ignores it. */
  scale?: number;
}

/** A headless Chromium page with plotly.js loaded, reused for every figure it draws. */
export class FigureRenderer {
  private constructor(
    private readonly browser: Browser,
    private readonly page: Page,
  ) {}

  static async open(opts: { executablePath?: string } = {}): Promise<FigureRenderer> {
    const browser = await launchChromium(opts);
    try {
      const page = await browser.newPage();
      await page.setContent('<!doctype html><html><body><div id="figure"></div></body></html>');
      await page.addScriptTag({ path: plotlyLibrary().path });
      return new FigureRenderer(browser, page);
    } catch (e) {
      await browser.close();
      throw e;
    }
  }

  /** The figure as SVG text or PNG bytes. */
  async render(fig: Figure, format: 'svg', opts?: StaticRenderOptions): Promise<string>;
  async render(fig: Figure, format: 'png', opts?: StaticRenderOptions): Promise<Buffer>;
  async render(fig: Figure, format: StaticFormat, opts: StaticRenderOptions = {}): Promise<string | Buffer> {
    const width = opts.width ?? (typeof fig.layout.width === 'number' ? fig.layout.width : 900);
    const height = opts.height ?? (typeof fig.layout.height === 'number' ? fig.layout.height : 500);
    const scale = format === 'png' ? (opts.scale ?? 2) : 1;
    const url = await this.page.evaluate(
      async ({ fig, format, width, height, scale }) => {
        const w = globalThis as unknown as {
          document: { getElementById(id: string): unknown };
          Plotly: {
            newPlot(gd: unknown, data: unknown, layout: unknown, config: unknown): Promise<unknown>;
            toImage(gd: unknown, o: unknown): Promise<string>;
            purge(gd: unknown): void;
          };
        };
        const gd = w.document.getElementById('figure');
        w.Plotly.purge(gd);
        await w.Plotly.newPlot(gd, fig.data, { ...fig.layout, width, height }, { staticPlot: true });
        return w.Plotly.toImage(gd, { format, width, height, scale });
      },
      { fig: JSON.parse(JSON.stringify(fig)) as Figure, format, width, height, scale },
    );
    if (format === 'svg') {
      const prefix = 'data:image/svg+xml,';
      if (!url.startsWith(prefix)) throw new Error(`Plotly.toImage returned ${url.slice(0, 40)}... for svg`);
      return decodeURIComponent(url.slice(prefix.length));
    }
    const prefix = 'data:image/png;base64,';
    if (!url.startsWith(prefix)) throw new Error(`Plotly.toImage returned ${url.slice(0, 40)}... for png`);
    return Buffer.from(url.slice(prefix.length), 'base64');
  }

  /**
   * Writes `<base>.svg` and `<base>.png` (or the formats asked for), atomically; returns the paths.
   * `base` must not end in .svg or .png: the extension is added per format.
   */
  async writeFiles(fig: Figure, base: string, opts: StaticRenderOptions & { formats?: readonly StaticFormat[] } = {}): Promise<string[]> {
    if (['.svg', '.png'].includes(extname(base).toLowerCase())) {
      throw new InputError(`figure files: give the path without an extension (got ${base}); .svg and .png are added per format`);
    }
    const written: string[] = [];
    for (const format of opts.formats ?? (['svg', 'png'] as const)) {
      const path = `${base}.${format}`;
      const body = format === 'svg' ? await this.render(fig, 'svg', opts) : await this.render(fig, 'png', opts);
      await writeFileAtomic(path, body);
      written.push(path);
    }
    return written;
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}

/** One figure to files, starting and stopping Chromium for it (use FigureRenderer for several). */
export async function renderFigureFiles(
  fig: Figure,
  base: string,
  opts: StaticRenderOptions & { formats?: readonly StaticFormat[]; executablePath?: string } = {},
): Promise<string[]> {
  const renderer = await FigureRenderer.open({ executablePath: opts.executablePath });
  try {
    return await renderer.writeFiles(fig, base, opts);
  } finally {
    await renderer.close();
  }
}
