/**
 * Figure specs (lib/report/figures/) and the notebook display's HTML and throttling
 * (lib/notebook/figures.ts), without a browser: traces carry exactly the input numbers (the STS-B
 * run record in results/, read here independently), error bars come from the given std or CI,
 * empty inputs give figures that say "no data", bad input names what is wrong. The drawing itself
 * is tested in a real browser by test/browser.test.ts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { cosineDensityByGold } from '../lib/eval/geometry.js';
import { figureHtml, liveFigure, plotlyLibraryHtml, showFigure, FIGURE_CLASS, LIBRARY_CLASS } from '../lib/notebook/figures.js';
import {
  alignUniformFigure,
  cosineDensityFigure,
  figureSummary,
  isEmptyFigure,
  plotlyLibrary,
  tableBarsFigure,
  trainingCurvesFigure,
  trainingRunFromRecord,
  type Figure,
} from '../lib/report/figures/index.js';
import type { RunRecord } from '../lib/report/run-record.js';
import { InputError } from '../lib/util/errors.js';
import { packageRoot } from '../lib/util/package-root.js';

const RECORD_DIR = join(packageRoot(), 'results', 'train-stsb');
const RECORD_FILE = join(RECORD_DIR, readdirSync(RECORD_DIR).filter((f) => f.endsWith('.json')).sort()[0]!);
const record = JSON.parse(readFileSync(RECORD_FILE, 'utf8')) as RunRecord;
const details = record.details as { log: { step: number; loss: number; lr: number }[]; evals: { step: number; metrics: Record<string, number> }[] };

/** A figure survives JSON unchanged (no functions, no undefined values, no typed arrays). */
function assertSerialisable(fig: Figure): void {
  assert.deepEqual(JSON.parse(JSON.stringify(fig)), fig);
}

function assertEmpty(fig: Figure, reason: RegExp): void {
  assert.ok(isEmptyFigure(fig), JSON.stringify(fig));
  assert.equal(fig.data.length, 0);
  assert.match(fig.layout.title.text, /\(no data\)$/);
  assert.match(fig.layout.annotations![0]!.text, reason);
  assertSerialisable(fig);
}

describe('training curves', () => {
  test('from the STS-B run record: loss, dev Spearman × 100 and lr, exactly the logged numbers', () => {
    const fig = trainingCurvesFigure(trainingRunFromRecord(record));
    assertSerialisable(fig);
    assert.equal(fig.data.length, 3);
    const [loss, dev, lr] = fig.data;
    // Whatever run results/train-stsb holds (its record is replaced when the schema changes): every logged step, every dev evaluation.
    assert.ok(details.log.length >= 2 && details.evals.length >= 1, 'the committed record has step and eval logs');
    assert.deepEqual(loss!.x, details.log.map((s) => s.step));
    assert.deepEqual(loss!.y, details.log.map((s) => s.loss));
    assert.deepEqual(lr!.y, details.log.map((s) => s.lr));
    assert.deepEqual(dev!.x, details.evals.map((e) => e.step));
    assert.deepEqual(dev!.y, details.evals.map((e) => e.metrics.spearman! * 100));
    // The record's own summary agrees: best dev Spearman (× 100) is the highest point.
    assert.equal(Math.max(...(dev!.y as number[])), record.metrics.best_dev_spearman);
    assert.deepEqual([loss!.yaxis, dev!.yaxis, lr!.yaxis], ['y', 'y2', 'y3']);
    assert.deepEqual([loss!.xaxis, dev!.xaxis, lr!.xaxis], ['x', 'x2', 'x3']);
    // Panels stacked without overlap, sharing the bottom panel's step axis.
    const domains = ['yaxis', 'yaxis2', 'yaxis3'].map((k) => (fig.layout[k] as { domain: [number, number] }).domain);
    assert.ok(domains[0]![0] > domains[1]![1] && domains[1]![0] > domains[2]![1], JSON.stringify(domains));
    assert.equal((fig.layout.xaxis as { matches?: string }).matches, 'x3');
    assert.equal((fig.layout.xaxis2 as { matches?: string }).matches, 'x3');
    assert.equal(fig.layout.title.text, `Training curves: ${record.runId}`);
  });

  test('several runs overlaid: one colour per run in every panel, one legend entry per run', () => {
    const a = trainingRunFromRecord(record, { name: 'a' });
    const b = { ...a, name: 'b', steps: a.steps.slice(0, 10), evals: [] };
    const fig = trainingCurvesFigure([a, b]);
    assert.equal(fig.data.length, 6);
    const colours = fig.data.map((t) => (t.line as { color: string }).color);
    assert.deepEqual(new Set(colours.slice(0, 3)).size, 1);
    assert.deepEqual(new Set(colours.slice(3)).size, 1);
    assert.notEqual(colours[0], colours[3]);
    assert.deepEqual(fig.data.map((t) => t.showlegend), [true, false, false, true, false, false]);
    assert.deepEqual(fig.data[4]!.x, []);
    assert.equal(fig.layout.annotations, undefined); // run a has evals
  });

  test('another metric and scale; no matching evaluations is said in the dev panel', () => {
    const run = { name: 'r', steps: [{ step: 0, loss: 2, lr: 1e-5 }], evals: [{ step: 1, metrics: { accuracy: 0.5 } }] };
    const acc = trainingCurvesFigure(run, { metric: 'accuracy', metricScale: 1 });
    assert.deepEqual(acc.data[1]!.y, [0.5]);
    assert.equal((acc.layout.yaxis2 as { title: { text: string } }).title.text, 'dev accuracy');
    const none = trainingCurvesFigure(run);
    assert.match(none.layout.annotations![0]!.text, /no dev evaluations with metric 'spearman'/);
  });

  test('no runs, or runs without logs: an empty figure that says so', () => {
    assertEmpty(trainingCurvesFigure([]), /no runs given/);
    assertEmpty(trainingCurvesFigure({ name: 'fresh', steps: [], evals: [] }), /no step or eval logs yet/);
    const recordWithoutLogs = { ...record, details: undefined };
    assertEmpty(trainingCurvesFigure(trainingRunFromRecord(recordWithoutLogs)), /no step or eval logs/);
  });

  test('a record whose log is not the trainer\'s: InputError naming the record and the entry', () => {
    const bad = { ...record, details: { log: [{ step: 0, loss: 'high', lr: 1 }] } };
    assert.throws(
      () => trainingRunFromRecord(bad, { file: 'results/x/run.json' }),
      (e: Error) => e instanceof InputError && /^results\/x\/run\.json: details\.log\[0\]\.loss: expected a number, got "high"/.test(e.message),
    );
    assert.throws(() => trainingRunFromRecord({ ...record, details: { evals: {} } }), /run record train-stsb\/.*: details\.evals: expected an array/);
    assert.throws(() => trainingCurvesFigure({ name: 'n', steps: [{ step: 0, loss: NaN, lr: 1 }], evals: [] }), /n: steps\[0\]\.loss: expected a finite number/);
  });
});

describe('table bars', () => {
  const rows = [
    { label: 'STS-B', ours: 80, std: 0.5, n: 3, paper: 81 },
    { label: 'SICK-R', ours: 75, ci: [74, 76.5] as const, paper: 74.2 },
    { label: 'STS12', paper: 70 },
    { label: 'STS13', ours: 60 },
  ];

  test('ours beside the paper, error bars from std (symmetric) and CI (up to hi, down to lo)', () => {
    const fig = tableBarsFigure(rows, { title: 'Table 2' });
    assertSerialisable(fig);
    const [ours, paper] = fig.data;
    assert.deepEqual(ours!.x, ['STS-B', 'SICK-R', 'STS12', 'STS13']);
    assert.deepEqual(ours!.y, [80, 75, null, 60]);
    assert.deepEqual(paper!.y, [81, 74.2, 70, null]);
    assert.deepEqual(ours!.error_y!.array, [0.5, 1.5, null, null]);
    assert.deepEqual(ours!.error_y!.arrayminus, [0.5, 1, null, null]);
    assert.equal(ours!.error_y!.symmetric, false);
    assert.equal(ours!.error_y!.visible, true);
    assert.equal(paper!.error_y, undefined);
    assert.equal(fig.layout.barmode, 'group');
    assert.equal(fig.layout.title.text, 'Table 2');
    // Hover text: the spread, n and Δ to the paper.
    assert.deepEqual(ours!.text, ['80.00 ± 0.50 (std), n = 3<br>Δ vs paper -1.00', '75.00 [74.00, 76.50] (CI)<br>Δ vs paper +0.80', 'not measured', '60.00']);
  });

  test('no uncertainty anywhere: error bars hidden; a range zooms the value axis', () => {
    const fig = tableBarsFigure([{ label: 'a', ours: 1, paper: 2 }], { range: [0.5, 2.5] });
    assert.equal(fig.data[0]!.error_y!.visible, false);
    assert.deepEqual((fig.layout.yaxis as { range: number[] }).range, [0.5, 2.5]);
  });

  test('empty tables: an empty figure that says so', () => {
    assertEmpty(tableBarsFigure([]), /no rows given/);
    assertEmpty(tableBarsFigure([{ label: 'a' }, { label: 'b' }], { title: 'T' }), /no row has our value or the paper/);
  });

  test('bad rows: InputError naming the row', () => {
    const cases: [object, RegExp][] = [
      [{ label: 'a', ours: 1, std: 0.1, ci: [0, 2] }, /bar row 'a': give std or ci, not both/],
      [{ label: 'a', ours: 3, ci: [0, 2] }, /bar row 'a': ci \[0, 2\] does not contain ours = 3/],
      [{ label: 'a', ours: 1, std: -1 }, /bar row 'a': std must be >= 0/],
      [{ label: 'a', std: 1, paper: 2 }, /bar row 'a': has an error bar but no value 'ours'/],
      [{ label: 'a', ours: NaN }, /bar row 'a': ours: expected a finite number, got NaN/],
    ];
    for (const [row, message] of cases) {
      assert.throws(() => tableBarsFigure([row as never]), (e: Error) => e instanceof InputError && message.test(e.message), message.source);
    }
    assert.throws(() => tableBarsFigure([{ label: 'a', ours: 1 }, { label: 'a', ours: 2 }]), /the label 'a' appears twice/);
  });
});

describe('cosine density (AnglE Figure 5)', () => {
  // 60 pairs; gold 0..5 evenly, cosine rising with gold, so every bucket is populated.
  const gold = Array.from({ length: 60 }, (_, i) => (5 * i) / 59);
  const cosines = gold.map((g, i) => -0.5 + g / 5 + 0.1 * Math.sin(i));
  const density = cosineDensityByGold(cosines, gold);

  test('one ridge per bucket and one for all pairs, on a common scale, beside the gold density', () => {
    const fig = cosineDensityFigure(density);
    assertSerialisable(fig);
    const ridges = fig.data.filter((t) => t.yaxis === 'y');
    assert.equal(ridges.length, density.buckets.length + 1);
    // Each ridge is its KDE lifted to its baseline k and closed back along the baseline.
    const curves = [...density.buckets.map((b) => b.kde!), density.all.kde!];
    const peak = Math.max(...curves.flatMap((c) => c.y));
    ridges.forEach((r, k) => {
      const c = curves[k]!;
      assert.deepEqual(r.x, [...c.x, c.x.at(-1), c.x[0]]);
      const y = r.y as number[];
      assert.equal(y.length, c.y.length + 2);
      c.y.forEach((v, j) => assert.ok(Math.abs(y[j]! - (k + (0.9 * v) / peak)) < 1e-12));
      assert.deepEqual(y.slice(-2), [k, k]);
    });
    // The tallest ridge is exactly ridgeHeight (0.9) above its baseline.
    assert.ok(Math.abs(Math.max(...ridges.map((r, k) => Math.max(...(r.y as number[])) - k)) - 0.9) < 1e-12);
    const ticks = (fig.layout.yaxis as { ticktext: string[] }).ticktext;
    assert.deepEqual(ticks, [...density.buckets.map((b) => `gold ${b.label} (n = ${b.n})`), 'all pairs (n = 60)']);
    const goldLine = fig.data.find((t) => t.name === 'gold scores')!;
    assert.deepEqual(goldLine.y, density.gold.kde!.y);
    const goldBars = fig.data.find((t) => t.type === 'bar')!;
    assert.deepEqual(goldBars.y, density.gold.histogram.density);
  });

  test('several models overlaid; an empty bucket gets no ridge; different buckets are refused', () => {
    const few = cosineDensityByGold([0.1, 0.2, 0.9], [0.5, 0.7, 4.5]); // gold buckets 1-2, 2-3, 3-4 empty
    const fig = cosineDensityFigure([
      { name: 'A', density },
      { name: 'B', density: cosineDensityByGold(cosines.map((c) => c * 0.5), gold) },
    ]);
    assert.equal(fig.data.filter((t) => t.yaxis === 'y').length, 2 * (density.buckets.length + 1));
    assert.deepEqual(fig.data.filter((t) => t.showlegend && t.yaxis === 'y').map((t) => t.name), ['A', 'B']);
    const sparse = cosineDensityFigure([{ name: 'few', density: few }]);
    // Populated: 0-1 (2 pairs, a KDE), 4-5 (1 pair: its histogram density), all pairs.
    assert.equal(sparse.data.filter((t) => t.yaxis === 'y').length, 3);
    const other = cosineDensityByGold(cosines, gold, { goldEdges: [0, 2.5, 5] });
    assert.throws(() => cosineDensityFigure([{ name: 'A', density }, { name: 'C', density: other }]), /'C': its gold buckets differ from 'A'/);
  });

  test('nothing to draw: an empty figure', () => {
    assertEmpty(cosineDensityFigure([]), /no models given/);
  });
});

describe('alignment and uniformity', () => {
  test('uniformity on x, alignment on y, coloured by score; a path from first to last checkpoint', () => {
    const fig = alignUniformFigure(
      [
        { name: 'SimCSE', alignment: 0.25, uniformity: -2.4, score: 76.3 },
        { name: 'SimACE', alignment: 0.2, uniformity: -2.1, score: 77.0 },
      ],
      { paths: [{ name: 'SimACE training', points: [{ step: 0, alignment: 0.4, uniformity: -1.5 }, { step: 250, alignment: 0.22, uniformity: -2.0 }] }] },
    );
    assertSerialisable(fig);
    const [path, models] = fig.data;
    assert.deepEqual(models!.x, [-2.4, -2.1]);
    assert.deepEqual(models!.y, [0.25, 0.2]);
    assert.deepEqual(models!.text, ['SimCSE', 'SimACE']);
    assert.deepEqual((models!.marker as { color: number[] }).color, [76.3, 77.0]);
    assert.deepEqual(path!.x, [-1.5, -2.0]);
    assert.deepEqual(path!.text, ['step 0', 'step 250']);
    assert.deepEqual((path!.marker as { symbol: string[] }).symbol, ['circle-open', 'circle']);
    // Without scores for every point, one colour and no colour bar.
    const plain = alignUniformFigure([{ name: 'a', alignment: 1, uniformity: -1 }]);
    assert.equal(typeof (plain.data[0]!.marker as { color: unknown }).color, 'string');
    assertSerialisable(plain);
  });

  test('empty input: an empty figure; a non-finite value: InputError naming the point', () => {
    assertEmpty(alignUniformFigure([], { paths: [{ name: 'p', points: [] }] }), /no models or training paths/);
    assert.throws(() => alignUniformFigure([{ name: 'x', alignment: Infinity, uniformity: 0 }]), /point 'x': alignment: expected a finite number/);
  });
});

describe('summaries', () => {
  test('one line per figure', () => {
    assert.equal(
      figureSummary(tableBarsFigure([{ label: 'a', ours: 1, paper: 2 }], { title: 'T' })),
      'figure "T": 2 traces (ours: 1 point, paper: 1 point)',
    );
    assert.equal(figureSummary(tableBarsFigure([], { title: 'T' })), 'figure "T (no data)": no data: no rows given');
  });
});

describe('notebook display', () => {
  const sentKey = Symbol.for('angle-notebooks.plotly-library-sent');
  const g = globalThis as unknown as { __tslab__?: unknown } & Record<symbol, unknown>;

  /** A stand-in for tslab's module as the executor's hooked require returns it: records outputs. */
  function fakeTslab(): { outputs: { display: number; html: string }[] } {
    const outputs: { display: number; html: string }[] = [];
    let displays = 0;
    const make = () => {
      const id = displays++;
      return { html: (s: string) => void outputs.push({ display: id, html: s }) };
    };
    const module = { display: make(), newDisplay: make };
    g.__tslab__ = { require: (id: string) => (id === 'tslab' ? module : undefined) };
    delete g[sentKey];
    return { outputs };
  }

  afterEach(() => {
    delete g.__tslab__;
    delete g[sentKey];
  });

  const fig = tableBarsFigure([{ label: 'a', ours: 1, paper: 2 }], { title: 'Title with </script><script>alert(1)</script> & "quotes"' });

  test('a figure is a container, a note and a script holding the spec as JSON, safely escaped', () => {
    const html = figureHtml(fig);
    assert.equal(html.match(new RegExp(`<div class="${FIGURE_CLASS}"`, 'g'))?.length, 1);
    // The only </script> is the one closing the drawing script.
    assert.equal(html.match(/<\/script/gi)?.length, 1);
    assert.ok(!html.includes('<script>alert'), html);
    const spec = JSON.parse(/var spec = (.*);\n/.exec(html)![1]!);
    assert.deepEqual(spec.data, fig.data);
    assert.deepEqual(spec.layout, { ...fig.layout, height: 480 });
    assert.match(html, /data-figure-title="Title with &lt;\/script&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;quotes&quot;"/);
  });

  test('plotly.js inlined whole from node_modules, in a script nothing in it can end early', () => {
    const html = plotlyLibraryHtml();
    const { path, version } = plotlyLibrary();
    assert.match(html, new RegExp(`class="${LIBRARY_CLASS}" data-plotly-version="${version.replace(/\./g, '\\.')}"`));
    assert.equal(html.match(/<\/script/gi)?.length, 1);
    assert.ok(!html.includes('<!--'));
    const bundle = readFileSync(path, 'utf8');
    assert.ok(html.length > bundle.length, `${html.length} vs ${bundle.length}`);
    assert.ok(html.includes(bundle.slice(0, 2000)) && html.includes(bundle.slice(-2000)));
  });

  test('outside tslab: one line of text', (t) => {
    const lines: string[] = [];
    t.mock.method(console, 'log', (s: string) => void lines.push(s));
    showFigure(fig);
    const live = liveFigure();
    live.update(tableBarsFigure([{ label: 'a', ours: 1 }], { title: 'first' }));
    live.update(() => tableBarsFigure([{ label: 'a', ours: 2 }], { title: 'last' }));
    live.close();
    assert.deepEqual(lines, [figureSummary(fig), 'figure "last": 2 traces (ours: 1 point, paper: 1 point)']);
    assert.deepEqual(live.stats, { requested: 2, sent: 0 });
  });

  test('under tslab: the library once per kernel, before the first figure; again only when asked', () => {
    const { outputs } = fakeTslab();
    showFigure(fig);
    showFigure(fig);
    showFigure(fig, { library: 'always' });
    const kinds = outputs.map((o) => (o.html.includes(LIBRARY_CLASS) ? 'library' : o.html.includes(FIGURE_CLASS) ? 'figure' : 'other'));
    assert.deepEqual(kinds, ['library', 'figure', 'figure', 'library', 'figure']);
  });

  test('a live figure: one display, updated at most once per interval, the last update wins, close sends the final state', async () => {
    const { outputs } = fakeTslab();
    const live = liveFigure({ intervalMs: 300 });
    const bars = (v: number) => tableBarsFigure([{ label: 'a', ours: v }], { title: `value ${v}` });
    let built = 0;
    for (let v = 1; v <= 10; v++) {
      live.update(() => {
        built++;
        return bars(v);
      });
    }
    // Sent at once: the first; 2..9 replaced by 10, which waits for the interval.
    assert.deepEqual(live.stats, { requested: 10, sent: 1 });
    await new Promise((r) => setTimeout(r, 600));
    assert.deepEqual(live.stats, { requested: 10, sent: 2 });
    assert.equal(built, 2); // figures are built only when sent
    // Once the interval has passed since the last send, 11 goes at once; 12 waits, and close() sends it.
    await new Promise((r) => setTimeout(r, 400));
    live.update(bars(11));
    live.update(bars(12));
    assert.deepEqual(live.stats, { requested: 12, sent: 3 });
    live.close();
    assert.deepEqual(live.stats, { requested: 12, sent: 4 });
    assert.throws(() => live.update(bars(13)), /after close/);
    const [library, placeholder, ...updates] = outputs;
    assert.ok(library!.html.includes(LIBRARY_CLASS));
    assert.match(placeholder!.html, /waiting for the first update/);
    assert.equal(new Set([placeholder!.display, ...updates.map((u) => u.display)]).size, 1);
    assert.notEqual(library!.display, placeholder!.display);
    assert.deepEqual(
      updates.map((u) => /data-figure-title="([^"]*)"/.exec(u.html)![1]),
      ['value 1', 'value 10', 'value 11', 'value 12'],
    );
  });
});
