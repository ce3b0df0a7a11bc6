/**
 * Page checks shared by the tests that look at figures in headless Chromium (browser,
 * figures-rerun, jupyter-live): what a page's scripts reported as errors, figure outputs rendered
 * the way JupyterLab renders trusted HTML, and "every figure drawn" — plotly's SVG in each figure
 * container (lib/notebook/figures.ts) and the note shown until then removed.
 */
import type { Page } from 'playwright-core';
import { FIGURE_CLASS } from '../../lib/notebook/figures.js';

/** Collects the page's uncaught exceptions and console errors, as they happen. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`uncaught ${e.name}: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    // Where it came from, when the page says: a failed load names the resource.
    const url = m.location().url;
    errors.push(`console error: ${m.text()}${url && !m.text().includes(url) ? ` (${url})` : ''}`);
  });
  return errors;
}

/**
 * Appends each HTML output to the page as @jupyterlab/rendermime's renderHTML does for a trusted
 * output: innerHTML, then each script replaced by a fresh copy so that the browser runs it.
 */
export async function renderOutputsLikeJupyterLab(page: Page, outputs: readonly string[]): Promise<void> {
  await page.evaluate((outputs) => {
    interface El {
      innerHTML: string;
      textContent: string | null;
      attributes: ArrayLike<{ name: string; value: string }>;
      parentNode: { replaceChild(n: El, o: El): void } | null;
      appendChild(e: El): void;
      setAttribute(n: string, v: string): void;
      getElementsByTagName(t: string): ArrayLike<El>;
    }
    const doc = (globalThis as unknown as { document: { body: El; createElement(t: string): El } }).document;
    for (const html of outputs) {
      const host = doc.createElement('div');
      doc.body.appendChild(host);
      host.innerHTML = html;
      for (const script of Array.from(host.getElementsByTagName('script'))) {
        const clone = doc.createElement('script');
        for (const { name, value } of Array.from(script.attributes)) clone.setAttribute(name, value);
        clone.textContent = script.textContent;
        script.parentNode!.replaceChild(clone, script);
      }
    }
  }, outputs);
}

/**
 * Waits until the page holds `count` figure containers, every one drawn by plotly (its SVG there,
 * the note gone), and returns their titles in page order. Rejects with the page's state when that
 * does not happen within `timeoutMs`.
 */
export async function figuresDrawn(page: Page, count: number, timeoutMs = 120_000): Promise<string[]> {
  const sel = { figure: `div.${FIGURE_CLASS}`, note: `.${FIGURE_CLASS}-note`, count };
  try {
    const drawn = await page.waitForFunction(
      ({ figure, note, count }) => {
        const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ querySelector(s: string): unknown; getAttribute(n: string): string | null }> } }).document;
        const all = Array.from(doc.querySelectorAll(figure));
        return all.length === count && all.every((f) => f.querySelector('svg.main-svg') && !f.querySelector(note)) ? all.map((f) => f.getAttribute('data-figure-title') ?? '') : false;
      },
      sel,
      { timeout: timeoutMs, polling: 250 },
    );
    return (await drawn.jsonValue()) as string[];
  } catch (e) {
    const state = await page
      .evaluate(({ figure }) => {
        const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ querySelector(s: string): unknown; getAttribute(n: string): string | null }> } }).document;
        return Array.from(doc.querySelectorAll(figure)).map((f) => `${f.getAttribute('data-figure-title')}: ${f.querySelector('svg.main-svg') ? 'drawn' : 'not drawn'}`);
      }, sel)
      .catch(() => ['(page state unavailable)']);
    throw new Error(`expected ${count} figures drawn within ${timeoutMs / 1000} s; on the page: ${state.length === 0 ? 'none' : state.join('; ')} (${(e as Error).message.split('\n')[0]})`);
  }
}
