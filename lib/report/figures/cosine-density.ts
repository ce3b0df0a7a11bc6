/**
 * AnglE Figure 5: (a) the density of predicted cosine similarity for the STS-B test pairs, one
 * ridge per gold-score bucket (gold 0–1 at the bottom, 4–5 at the top, all pairs above them), and
 * (b) the density of the gold scores themselves. A model whose ridges move right in step with the
 * gold buckets, and whose overall density resembles the gold one, uses the cosine's range well;
 * AnglE's text reads the 0–1 and 4–5 buckets as the cosine's saturation zones.
 *
 * Input: `cosineDensityByGold` / `cosineDensityForSet` results (lib/eval/geometry.ts), one per
 * model; the models are overlaid in each ridge, one colour each. Each ridge is the bucket's
 * Gaussian KDE (the histogram density when the bucket has too few points for a KDE), all scaled
 * by one factor so ridge heights compare across buckets and models.
 */
import type { CosineDensityResult, Histogram, Kde } from '../../eval/geometry.js';
import { InputError } from '../../util/errors.js';
import { colorAt, emptyFigure, withAlpha, type Figure, type Trace } from './figure.js';

export interface DensitySeries {
  /** The model's name, for the legend. */
  name: string;
  density: CosineDensityResult;
}

export interface CosineDensityOptions {
  title?: string;
  /** Height of the tallest ridge in units of the spacing between ridges; default 0.9 (no overlap). */
  ridgeHeight?: number;
  /** Figure height in pixels; default 520. */
  height?: number;
}

/** A density curve: the KDE when there is one, else the histogram density at bin centres. */
function curve(d: { histogram: Histogram; kde?: Kde }): { x: number[]; y: number[] } {
  return d.kde ? { x: d.kde.x, y: d.kde.y } : { x: d.histogram.centers, y: d.histogram.density };
}

function sameBuckets(a: CosineDensityResult, b: CosineDensityResult): boolean {
  return a.buckets.length === b.buckets.length && a.buckets.every((x, i) => x.lo === b.buckets[i]!.lo && x.hi === b.buckets[i]!.hi);
}

export function cosineDensityFigure(input: CosineDensityResult | readonly DensitySeries[], opts: CosineDensityOptions = {}): Figure {
  const series: readonly DensitySeries[] = Array.isArray(input) ? input : [{ name: 'model', density: input as CosineDensityResult }];
  const title = opts.title ?? 'Cosine similarity density per gold-score bucket (AnglE Figure 5)';
  const populated = series.filter((s) => s.density.buckets.some((b) => b.n > 0));
  if (populated.length === 0) return emptyFigure(title, series.length === 0 ? 'no models given' : 'no pairs in any gold bucket');
  const first = series[0]!.density;
  for (const s of series) {
    if (!sameBuckets(first, s.density)) {
      throw new InputError(`cosine density '${s.name}': its gold buckets differ from '${series[0]!.name}' (use the same goldEdges for every model)`);
    }
  }
  // Ridge k sits at y = k: bucket 0 (lowest gold) at the bottom, then the rest, "all pairs" on top.
  const ridges = [
    ...first.buckets.map((b, k) => ({ label: `gold ${b.label}`, pick: (d: CosineDensityResult) => d.buckets[k]!, n: (d: CosineDensityResult) => d.buckets[k]!.n })),
    { label: 'all pairs', pick: (d: CosineDensityResult) => d.all, n: (d: CosineDensityResult) => d.buckets.reduce((a, b) => a + b.n, 0) },
  ];
  let peak = 0;
  for (const s of series) for (const r of ridges) if (r.n(s.density) > 0) peak = Math.max(peak, ...curve(r.pick(s.density)).y);
  const scale = peak > 0 ? (opts.ridgeHeight ?? 0.9) / peak : 0;

  const data: Trace[] = [];
  series.forEach((s, i) => {
    const color = colorAt(i);
    let inLegend = false;
    ridges.forEach((r, k) => {
      if (r.n(s.density) === 0) return;
      const c = curve(r.pick(s.density));
      const showlegend = !inLegend;
      inLegend = true;
      // A closed outline down to the ridge's baseline, filled.
      data.push({
        type: 'scatter',
        mode: 'lines',
        name: s.name,
        legendgroup: s.name,
        showlegend,
        x: [...c.x, c.x[c.x.length - 1]!, c.x[0]!],
        y: [...c.y.map((v) => k + v * scale), k, k],
        fill: 'toself',
        fillcolor: withAlpha(color, 0.25),
        line: { color, width: 1.5 },
        xaxis: 'x',
        yaxis: 'y',
        text: [...c.y.map((v) => v.toFixed(3)), '', ''],
        hovertemplate: `${s.name}, ${r.label} (n = ${r.n(s.density)})<br>cosine %{x:.3f}<br>density %{text}<extra></extra>`,
      });
    });
  });
  const gold = first.gold;
  const gc = curve(gold);
  data.push({
    type: 'bar',
    name: 'gold scores (histogram)',
    x: gold.histogram.centers,
    y: gold.histogram.density,
    marker: { color: withAlpha('#555555', 0.3) },
    xaxis: 'x2',
    yaxis: 'y2',
    showlegend: false,
    hovertemplate: 'gold %{x:.2f}<br>density %{y:.3f}<extra></extra>',
  });
  data.push({
    type: 'scatter',
    mode: 'lines',
    name: 'gold scores',
    x: gc.x,
    y: gc.y,
    line: { color: '#333', width: 2 },
    xaxis: 'x2',
    yaxis: 'y2',
    showlegend: true,
    hovertemplate: 'gold %{x:.2f}<br>density %{y:.3f}<extra></extra>',
  });
  const goldLo = gold.histogram.edges[0]!;
  const goldHi = gold.histogram.edges[gold.histogram.edges.length - 1]!;
  return {
    data,
    layout: {
      title: { text: title },
      height: opts.height ?? 520,
      bargap: 0,
      margin: { t: 60, r: 20, b: 50, l: 150 },
      legend: { orientation: 'h', y: -0.14 },
      hovermode: 'closest',
      xaxis: { domain: [0, 0.62], anchor: 'y', title: { text: '(a) cosine similarity' }, range: [first.all.histogram.edges[0], first.all.histogram.edges.at(-1)] },
      yaxis: {
        domain: [0, 1],
        anchor: 'x',
        tickmode: 'array',
        tickvals: ridges.map((_, k) => k),
        ticktext: ridges.map((r) => `${r.label} (n = ${r.n(first)})`),
        range: [-0.1, ridges.length],
        zeroline: false,
      },
      xaxis2: { domain: [0.72, 1], anchor: 'y2', title: { text: '(b) gold score' }, range: [goldLo, goldHi] },
      yaxis2: { domain: [0, 1], anchor: 'x2', title: { text: 'density' }, rangemode: 'tozero' },
    },
  };
}
