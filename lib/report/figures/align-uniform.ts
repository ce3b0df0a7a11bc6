/**
 * The alignment–uniformity plot of Wang & Isola (2020) as SimCSE (Figure 2) and SimACE (Figures 3
 * and 6) draw it: ℓ_uniform on x, ℓ_align on y, lower is better on both, so better models sit
 * towards the bottom left. Models are points, labelled, optionally coloured by a score (SimACE
 * Figure 3 colours by the average Spearman on 7 STS tasks); a model's path during training is a
 * line through its checkpoints, from a hollow marker (first) to a filled one (last).
 *
 * Input: `alignUniformOnSet` / `alignUniformStsb` results (lib/eval/geometry.ts) with a name, or
 * any `{ alignment, uniformity }`.
 */
import { emptyFigure, colorAt, requireFinite, type Figure, type Trace } from './figure.js';

export interface AlignUniformPoint {
  name: string;
  alignment: number;
  uniformity: number;
  /** A value to colour the point by (e.g. average STS Spearman × 100). */
  score?: number;
}

export interface AlignUniformPath {
  name: string;
  points: readonly { step: number; alignment: number; uniformity: number }[];
}

export interface AlignUniformOptions {
  title?: string;
  /** Paths during training, drawn as lines through their checkpoints. */
  paths?: readonly AlignUniformPath[];
  /** The colour bar's title when points carry scores; default 'avg. STS ρ × 100'. */
  scoreLabel?: string;
}

export function alignUniformFigure(points: readonly AlignUniformPoint[], opts: AlignUniformOptions = {}): Figure {
  const title = opts.title ?? 'Alignment and uniformity (lower is better on both)';
  const paths = (opts.paths ?? []).filter((p) => p.points.length > 0);
  if (points.length === 0 && paths.length === 0) return emptyFigure(title, 'no models or training paths given');
  const data: Trace[] = [];
  paths.forEach((path, i) => {
    const color = colorAt(i + 1);
    const x = path.points.map((p, j) => requireFinite(p.uniformity, `path '${path.name}': points[${j}].uniformity`));
    const y = path.points.map((p, j) => requireFinite(p.alignment, `path '${path.name}': points[${j}].alignment`));
    const last = path.points.length - 1;
    data.push({
      type: 'scatter',
      mode: 'lines+markers',
      name: path.name,
      x,
      y,
      text: path.points.map((p) => `step ${p.step}`),
      line: { color, width: 1.5 },
      marker: {
        color,
        size: path.points.map((_, j) => (j === 0 || j === last ? 10 : 6)),
        symbol: path.points.map((_, j) => (j === 0 ? 'circle-open' : 'circle')),
      },
      hovertemplate: `${path.name}, %{text}<br>ℓ_uniform %{x:.3f}<br>ℓ_align %{y:.3f}<extra></extra>`,
    });
  });
  if (points.length > 0) {
    const scored = points.every((p) => p.score !== undefined);
    const x = points.map((p) => requireFinite(p.uniformity, `point '${p.name}': uniformity`));
    const y = points.map((p) => requireFinite(p.alignment, `point '${p.name}': alignment`));
    const scores = scored ? points.map((p) => requireFinite(p.score, `point '${p.name}': score`)) : [];
    data.push({
      type: 'scatter',
      mode: 'markers+text',
      name: 'models',
      x,
      y,
      text: points.map((p) => p.name),
      textposition: 'top center',
      marker: scored
        ? { size: 12, color: scores, colorscale: 'Viridis', showscale: true, colorbar: { title: { text: opts.scoreLabel ?? 'avg. STS ρ × 100' } } }
        : { size: 12, color: colorAt(0) },
      ...(scored ? { customdata: scores } : {}),
      hovertemplate: `%{text}<br>ℓ_uniform %{x:.3f}<br>ℓ_align %{y:.3f}${scored ? '<br>score %{customdata:.2f}' : ''}<extra></extra>`,
      showlegend: paths.length > 0,
    });
  }
  return {
    data,
    layout: {
      title: { text: title },
      xaxis: { title: { text: 'ℓ_uniform' }, zeroline: false },
      yaxis: { title: { text: 'ℓ_align' }, zeroline: false },
      hovermode: 'closest',
      // Below the plot: the colour bar takes the right-hand side.
      legend: { orientation: 'h', y: -0.18 },
      margin: { t: 60, r: 20, b: 70, l: 70 },
    },
  };
}
