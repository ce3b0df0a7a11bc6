/**
 * Figures of an Espresso-style layer × width grid (lib/experiments/espresso-grid.ts): a heat map of
 * ρ × 100 per layer and leading width, one panel per trained model side by side on one colour
 * scale, and curves of ρ over the width per layer with the bootstrap 95% intervals as error bars
 * (solid: the first model, dashed: the others), so Espresso and plain AnglE's truncated embeddings
 * read against each other.
 */
import { colorAt, emptyFigure, type Figure, type Trace } from './figure.js';

/** One grid cell, as the figures need it (ρ × 100 and its interval). */
export interface LayerWidthPoint {
  /** The run's row label (e.g. 'ESE', 'AnglE'). */
  row: string;
  /** hidden_states[layer]: 0 the embedding output, numLayers the whole model. */
  layer: number;
  dim: number;
  spearman: number;
  low: number;
  high: number;
}

function rowsOf(points: readonly LayerWidthPoint[]): string[] {
  return [...new Set(points.map((p) => p.row))];
}

const sorted = (xs: Iterable<number>) => [...new Set(xs)].sort((a, b) => a - b);

/** Heat maps of ρ × 100 (layers up, widths across), one panel per row, one shared colour scale. */
export function layerWidthHeatmapFigure(points: readonly LayerWidthPoint[], opts: { title: string }): Figure {
  if (points.length === 0) return emptyFigure(opts.title, 'no layer × width cells were measured');
  const rows = rowsOf(points);
  const widths = sorted(points.map((p) => p.dim));
  const layers = sorted(points.map((p) => p.layer));
  const zmin = Math.min(...points.map((p) => p.spearman));
  const zmax = Math.max(...points.map((p) => p.spearman));
  const gap = 0.06;
  const span = (1 - gap * (rows.length - 1)) / rows.length;
  const layout: Figure['layout'] = { title: { text: opts.title }, annotations: [] };
  const data = rows.map((row, i) => {
    const axis = i === 0 ? '' : String(i + 1);
    const z = layers.map((l) => widths.map((w) => points.find((p) => p.row === row && p.layer === l && p.dim === w)?.spearman ?? null));
    const text = z.map((line) => line.map((v) => (v === null ? '' : v.toFixed(1))));
    layout[`xaxis${axis}`] = { domain: [i * (span + gap), i * (span + gap) + span], type: 'category', title: { text: `${row}: width` } };
    layout[`yaxis${axis}`] = { anchor: `x${axis}`, type: 'category', title: { text: i === 0 ? 'layer (0 = embeddings)' : '' } };
    // plotly's heatmap trace; Trace types the scatter/bar attributes only, the rest pass through its index signature.
    return {
      type: 'heatmap',
      name: row,
      x: widths.map(String),
      y: layers.map(String),
      z,
      text,
      texttemplate: '%{text}',
      zmin,
      zmax,
      colorscale: 'Viridis',
      showscale: i === rows.length - 1,
      colorbar: { title: { text: 'ρ × 100' } },
      xaxis: `x${axis}`,
      yaxis: `y${axis}`,
      hovertemplate: `${row}<br>layer %{y}, width %{x}<br>ρ × 100 %{z:.2f}<extra></extra>`,
    } as unknown as Trace;
  });
  return { data, layout };
}

/** ρ × 100 over the leading width, one curve per row and layer, with the 95% intervals as error bars. */
export function layerWidthCurvesFigure(points: readonly LayerWidthPoint[], opts: { title: string }): Figure {
  if (points.length === 0) return emptyFigure(opts.title, 'no layer × width cells were measured');
  const rows = rowsOf(points);
  const layers = sorted(points.map((p) => p.layer));
  const data: Trace[] = [];
  rows.forEach((row, r) => {
    layers.forEach((layer, l) => {
      const mine = points.filter((p) => p.row === row && p.layer === layer).sort((a, b) => a.dim - b.dim);
      if (mine.length === 0) return;
      data.push({
        type: 'scatter',
        mode: 'lines+markers',
        name: `${row}, layer ${layer}`,
        legendgroup: row,
        x: mine.map((p) => p.dim),
        y: mine.map((p) => p.spearman),
        line: { color: colorAt(l), dash: r === 0 ? 'solid' : 'dash' },
        marker: { symbol: r === 0 ? 'circle' : 'square' },
        error_y: { type: 'data', symmetric: false, array: mine.map((p) => p.high - p.spearman), arrayminus: mine.map((p) => p.spearman - p.low), visible: true },
      });
    });
  });
  return {
    data,
    layout: {
      title: { text: opts.title },
      xaxis: { title: { text: 'leading width kept' }, type: 'log', tickvals: sorted(points.map((p) => p.dim)) },
      yaxis: { title: { text: "STS-B test Spearman's ρ × 100" } },
    },
  };
}
