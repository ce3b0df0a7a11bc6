/**
 * PromptEOL Figure 3: per model, the distribution of the STS-B dev Spearman correlations that the
 * candidate in-context demonstrations give, against the model without a demonstration (a red
 * dashed line); the demonstrations below that line — the ones that hurt — are shaded blue and
 * their share is printed, as in the paper.
 *
 * Input: plain panels (a name, the baseline, one value per candidate, optionally a hover label per
 * candidate), what lib/experiments/icl-demonstration-search.ts produces. Each panel draws the
 * values' Gaussian KDE (Scott's rule, as seaborn's kdeplot; lib/eval/geometry.ts) split at the
 * baseline, and every candidate as a tick on the axis (hover: its demonstration and value); with
 * fewer than two distinct values there is no density, only the ticks and the line.
 */
import { gaussianKde } from '../../eval/geometry.js';
import { InputError } from '../../util/errors.js';
import { emptyFigure, requireFinite, withAlpha, type Annotation, type Figure, type Trace } from './figure.js';

export interface IclDistributionPanel {
  /** The model, e.g. "OPT 2.7B". */
  name: string;
  /** Spearman without a demonstration (ρ × 100). */
  baseline: number;
  /** Spearman with each candidate (ρ × 100). */
  values: readonly number[];
  /** Hover text per value (the demonstration); same length as `values`. */
  labels?: readonly string[];
}

export interface IclDemonstrationsFigureOptions {
  title?: string;
  /** Panels per row (default 4, as the paper's two rows of four). */
  columns?: number;
}

const BELOW = '#1f77b4';
const ABOVE = '#9e9e9e';
const BASELINE = '#d62728';

function check(p: IclDistributionPanel): void {
  requireFinite(p.baseline, `panel '${p.name}': baseline`);
  p.values.forEach((v, i) => requireFinite(v, `panel '${p.name}': value ${i}`));
  if (p.labels && p.labels.length !== p.values.length) throw new InputError(`panel '${p.name}': ${p.labels.length} labels for ${p.values.length} values`);
}

export function iclDemonstrationsFigure(panels: readonly IclDistributionPanel[], o: IclDemonstrationsFigureOptions = {}): Figure {
  const title = o.title ?? 'Spearman on STS-B dev per in-context demonstration (PromptEOL Figure 3)';
  const shown = panels.filter((p) => p.values.length > 0);
  if (shown.length === 0) return emptyFigure(title, panels.length === 0 ? 'no searches given' : 'no candidate was evaluated');
  shown.forEach(check);
  const names = new Set<string>();
  for (const p of shown) {
    if (names.has(p.name)) throw new InputError(`panel '${p.name}' appears twice (panels are named by model)`);
    names.add(p.name);
  }
  const cols = Math.max(1, Math.min(o.columns ?? 4, shown.length));
  const rows = Math.ceil(shown.length / cols);
  const gapX = 0.06;
  const gapY = 0.16;
  const w = (1 - gapX * (cols - 1)) / cols;
  const h = (1 - gapY * (rows - 1)) / rows;
  const data: Trace[] = [];
  const annotations: Annotation[] = [];
  const layout: Record<string, unknown> = {};
  shown.forEach((p, k) => {
    const n = k === 0 ? '' : String(k + 1);
    const xa = `x${n}`;
    const ya = `y${n}`;
    const r = Math.floor(k / cols);
    const c = k % cols;
    const x0 = c * (w + gapX);
    const y1 = 1 - r * (h + gapY);
    const lo0 = Math.min(p.baseline, ...p.values);
    const hi0 = Math.max(p.baseline, ...p.values);
    const pad = Math.max((hi0 - lo0) * 0.25, 0.5);
    const [lo, hi] = [lo0 - pad, hi0 + pad];
    const kde = new Set(p.values).size >= 2 ? gaussianKde(p.values, lo, hi) : undefined;
    const top = kde ? Math.max(...kde.y) : 1;
    if (kde) {
      // The density split at the baseline: the part below filled blue, the rest grey.
      for (const [part, keep, color] of [
        ['below', (x: number) => x <= p.baseline, BELOW],
        ['above', (x: number) => x >= p.baseline, ABOVE],
      ] as const) {
        const xs: number[] = [];
        const ys: number[] = [];
        kde.x.forEach((x, i) => {
          if (keep(x)) {
            xs.push(x);
            ys.push(kde.y[i]!);
          }
        });
        if (xs.length === 0) continue;
        data.push({ type: 'scatter', mode: 'lines', name: part === 'below' ? 'below no demonstration' : 'at or above', legendgroup: part, showlegend: k === 0, x: xs, y: ys, fill: 'tozeroy', fillcolor: withAlpha(color, part === 'below' ? 0.45 : 0.3), line: { color, width: 1.5 }, xaxis: xa, yaxis: ya, hoverinfo: 'skip' });
      }
    }
    data.push({
      type: 'scatter',
      mode: 'markers',
      name: 'demonstrations',
      legendgroup: 'ticks',
      showlegend: k === 0,
      x: [...p.values],
      y: p.values.map(() => 0),
      marker: { symbol: 'line-ns-open', size: 12, color: p.values.map((v) => (v < p.baseline ? BELOW : '#555555')) },
      text: p.values.map((v, i) => `${p.labels?.[i] ?? `candidate ${i + 1}`}: ${v.toFixed(2)}`),
      hovertemplate: '%{text}<extra></extra>',
      xaxis: xa,
      yaxis: ya,
    });
    data.push({ type: 'scatter', mode: 'lines', name: 'no demonstration', legendgroup: 'baseline', showlegend: k === 0, x: [p.baseline, p.baseline], y: [0, top * 1.05], line: { color: BASELINE, dash: 'dash', width: 2 }, xaxis: xa, yaxis: ya, hovertemplate: `no demonstration: ${p.baseline.toFixed(2)}<extra></extra>` });
    const below = p.values.filter((v) => v < p.baseline).length / p.values.length;
    annotations.push({ text: `${p.name}<br>${(100 * below).toFixed(0)}% below (${p.values.length})`, xref: `${xa} domain`, yref: `${ya} domain`, x: 0.02, y: 0.98, xanchor: 'left', yanchor: 'top', showarrow: false, font: { size: 11 } });
    layout[`xaxis${n}`] = { domain: [x0, x0 + w], anchor: ya, range: [lo, hi], title: { text: r === rows - 1 ? 'Spearman ρ × 100' : '' } };
    layout[`yaxis${n}`] = { domain: [y1 - h, y1], anchor: xa, rangemode: 'tozero', showticklabels: Boolean(kde), title: { text: c === 0 && kde ? 'density' : '' } };
  });
  return {
    data,
    layout: { title: { text: title }, height: 260 * rows + 80, margin: { t: 60, r: 20, b: 60, l: 60 }, legend: { orientation: 'h', y: -0.12 }, hovermode: 'closest', annotations, ...layout },
  };
}
