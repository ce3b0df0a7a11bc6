/**
 * A figure's output is one MIME bundle (lib/notebook/figures.ts, tslab.ts): where the kernel's
 * display takes bundles — tslab's `lastWriteDisplayData` hook, Deno's `Deno.jupyter.broadcast` —
 * showFigure sends text/html, text/plain and, when headless Chromium can draw it, image/png. Here
 * without Chromium (CHROMIUM_PATH names a missing file) and with ANGLE_STATIC_FIGURES=off: the
 * figure says why it has no static image, in its HTML, and the bundle has no image/png; a display
 * without bundles (tslab's public display alone) gets the HTML. The bundle with the PNG itself is
 * checked by test/browser.test.ts (the headless runner's kernel) and test/jupyter-live.test.ts (the
 * real tslab kernel in Jupyter). No browser starts here.
 */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { FIGURE_CLASS, STATIC_IMAGE_CLASS, liveFigure, showFigure } from '../lib/notebook/figures.js';
import { tableBarsFigure } from '../lib/report/figures/table-bars.js';

type Bundle = Record<string, string>;
const g = globalThis as unknown as { __tslab__?: unknown; Deno?: unknown };
const saved = { CHROMIUM_PATH: process.env.CHROMIUM_PATH, ANGLE_STATIC_FIGURES: process.env.ANGLE_STATIC_FIGURES };

afterEach(() => {
  delete g.__tslab__;
  delete g.Deno;
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** A tslab kernel as the library sees it: `require('tslab')` and the jupyter module's hook. */
function fakeTslab(): { sent: { data: Bundle; displayId?: string; update: boolean }[]; htmlOnly: string[] } {
  const sent: { data: Bundle; displayId?: string; update: boolean }[] = [];
  const htmlOnly: string[] = [];
  const display = { html: (s: string) => htmlOnly.push(s), markdown: (s: string) => htmlOnly.push(s) };
  const tslab = { display, newDisplay: () => display };
  const jupyter = {
    lastWriteDisplayData: (c: { data: Bundle; transient: { display_id?: string } }, update: boolean) => sent.push({ data: c.data, displayId: c.transient.display_id, update }),
  };
  g.__tslab__ = { require: (id: string) => (id === 'tslab' ? tslab : id === 'tslab/dist/jupyter' ? jupyter : undefined) };
  return { sent, htmlOnly };
}

const bars = (title: string) => tableBarsFigure([{ label: 'STS-B', ours: 80, paper: 85 }], { title });

test('without Chromium: one bundle of text/html and text/plain, and the figure says why it has no static image', () => {
  process.env.CHROMIUM_PATH = '/nonexistent/chromium';
  const k = fakeTslab();
  showFigure(bars('no browser'), { library: 'never' });
  assert.deepEqual(k.htmlOnly, []);
  assert.equal(k.sent.length, 1);
  const { data, update } = k.sent[0]!;
  assert.equal(update, false);
  assert.deepEqual(Object.keys(data).sort(), ['text/html', 'text/plain']);
  assert.match(data['text/html']!, new RegExp(`<div class="${FIGURE_CLASS}" id=`));
  assert.doesNotMatch(data['text/html']!, new RegExp(STATIC_IMAGE_CLASS + '"'));
  assert.match(data['text/html']!, /no static image of this figure for viewers without JavaScript \(GitHub's\): CHROMIUM_PATH=\/nonexistent\/chromium does not exist; install it/);
  assert.match(data['text/plain']!, /no browser/);
});

test('a live figure: HTML while it updates, the final state as a bundle under the same display id', () => {
  process.env.ANGLE_STATIC_FIGURES = 'off';
  const k = fakeTslab();
  const live = liveFigure({ library: 'never', intervalMs: 0 });
  live.update(bars('step 1'));
  live.update(bars('step 2'));
  live.close();
  const ids = new Set(k.sent.map((s) => s.displayId));
  assert.equal(ids.size, 1, 'one display id throughout');
  assert.deepEqual(k.sent.map((s) => s.update), [false, true, true, true]);
  assert.deepEqual(Object.keys(k.sent.at(-1)!.data).sort(), ['text/html', 'text/plain']);
  assert.match(k.sent.at(-1)!.data['text/html']!, /step 2.*no static image of this figure for viewers without JavaScript \(GitHub's\): ANGLE_STATIC_FIGURES=off turns them off/s);
  assert.deepEqual(Object.keys(k.sent[1]!.data), ['text/html'], 'updates are HTML alone');
});

test("Deno's kernel: the bundle goes out through Deno.jupyter.broadcast", () => {
  process.env.ANGLE_STATIC_FIGURES = 'off';
  const broadcast: [string, { data: Bundle }][] = [];
  g.Deno = { jupyter: { broadcast: (type: string, content: { data: Bundle }) => void broadcast.push([type, content]) } };
  showFigure(bars('in deno'), { library: 'never' });
  assert.equal(broadcast.length, 1);
  assert.equal(broadcast[0]![0], 'display_data');
  assert.deepEqual(Object.keys(broadcast[0]![1].data).sort(), ['text/html', 'text/plain']);
});

test("a display without bundles (tslab's public display alone) gets the figure's HTML", () => {
  const htmlOnly: string[] = [];
  const display = { html: (s: string) => htmlOnly.push(s), markdown: (s: string) => htmlOnly.push(s) };
  g.__tslab__ = { require: (id: string) => (id === 'tslab' ? { display, newDisplay: () => display } : undefined) };
  showFigure(bars('html only'), { library: 'never' });
  assert.equal(htmlOnly.length, 1);
  assert.match(htmlOnly[0]!, /data-figure-title="html only"/);
  assert.doesNotMatch(htmlOnly[0]!, /no static image/);
});
