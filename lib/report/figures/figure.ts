/**
 * A plotly figure as plain data: `{ data, layout }`, what `Plotly.newPlot(div, data, layout)` takes.
 * JSON-serialisable and free of DOM types, so report/ builds figures anywhere (tests, the command
 * line) and the drawing happens elsewhere: in a notebook (lib/notebook/figures.ts) or in headless
 * Chromium for static files (render-static.ts).
 *
 * Only the attributes the builders here use are typed; the index signatures let a caller add any
 * other plotly attribute (https://plotly.com/javascript/reference/) without a cast.
 */
import { InputError } from '../../util/errors.js';

export interface ErrorBars {
  type: 'data';
  /** Length of the bar above each value (null: no bar for that point). */
  array: (number | null)[];
  /** Length below, when `symmetric` is false. */
  arrayminus?: (number | null)[];
  symmetric: boolean;
  visible: boolean;
  [attribute: string]: unknown;
}

export interface Trace {
  type: 'scatter' | 'bar';
  name?: string;
  x: (number | string | null)[];
  y: (number | string | null)[];
  mode?: 'lines' | 'markers' | 'lines+markers' | 'markers+text' | 'lines+markers+text';
  /** Axis ids ('x', 'x2', 'y3' ...) for figures with several panels. */
  xaxis?: string;
  yaxis?: string;
  error_y?: ErrorBars;
  legendgroup?: string;
  showlegend?: boolean;
  text?: string[];
  hovertemplate?: string;
  [attribute: string]: unknown;
}

export interface Layout {
  title: { text: string; [attribute: string]: unknown };
  annotations?: Annotation[];
  [attribute: string]: unknown;
}

export interface Annotation {
  text: string;
  xref: string;
  yref: string;
  x: number;
  y: number;
  showarrow: boolean;
  [attribute: string]: unknown;
}

export interface Figure {
  data: Trace[];
  layout: Layout;
}

/** plotly's default colour sequence (D3 category10), so overlaid runs match across panels. */
export const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'] as const;

export function colorAt(i: number): string {
  return COLORS[i % COLORS.length]!;
}

/** `#rrggbb` with an alpha, for fills. */
export function withAlpha(hex: string, alpha: number): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
}

/** The text an empty figure's annotation starts with; `isEmptyFigure` looks for it. */
const NO_DATA = 'no data';

/**
 * A figure with nothing to draw that says so: the title gets "(no data)" and the middle of the
 * plot area the reason. Builders return this instead of throwing when their input is empty, so a
 * notebook cell that runs before any result exists still shows something sensible.
 */
export function emptyFigure(title: string, reason: string): Figure {
  return {
    data: [],
    layout: {
      title: { text: `${title} (no data)` },
      xaxis: { visible: false },
      yaxis: { visible: false },
      annotations: [
        { text: `${NO_DATA}: ${reason}`, xref: 'paper', yref: 'paper', x: 0.5, y: 0.5, showarrow: false, font: { size: 14, color: '#777' } },
      ],
    },
  };
}

export function isEmptyFigure(fig: Figure): boolean {
  return fig.data.length === 0 && (fig.layout.annotations ?? []).some((a) => a.text.startsWith(`${NO_DATA}:`));
}

/** `figure.layout.title.text`, for summaries and file names. */
export function figureTitle(fig: Figure): string {
  return fig.layout.title.text;
}

/**
 * One line describing a figure in words, for terminals and logs where it cannot be drawn:
 * `figure "Training curves": 6 traces (loss: 180 points, dev spearman: 3 points, ...)`.
 */
export function figureSummary(fig: Figure): string {
  if (isEmptyFigure(fig)) {
    const reason = fig.layout.annotations!.find((a) => a.text.startsWith(`${NO_DATA}:`))!.text;
    return `figure "${figureTitle(fig)}": ${reason}`;
  }
  const parts = fig.data.map((t) => `${t.name ?? t.type}: ${t.x.length} point${t.x.length === 1 ? '' : 's'}`);
  const shown = parts.length > 6 ? [...parts.slice(0, 6), `${parts.length - 6} more`] : parts;
  return `figure "${figureTitle(fig)}": ${fig.data.length} trace${fig.data.length === 1 ? '' : 's'} (${shown.join(', ')})`;
}

/** Throws an InputError naming `what` unless `v` is a finite number. */
export function requireFinite(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new InputError(`${what}: expected a finite number, got ${typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? String(v))}`);
  }
  return v;
}
