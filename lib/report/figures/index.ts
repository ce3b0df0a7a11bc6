/** Plotly figure specs built from our data (plain `{ data, layout }`), and their static files. */
export {
  COLORS,
  emptyFigure,
  isEmptyFigure,
  figureSummary,
  figureTitle,
  type Annotation,
  type ErrorBars,
  type Figure,
  type Layout,
  type Trace,
} from './figure.js';
export { trainingCurvesFigure, trainingRunFromRecord, type TrainingCurvesOptions, type TrainingRun } from './training-curves.js';
export { tableBarsFigure, type BarRow, type TableBarsOptions } from './table-bars.js';
export { cosineDensityFigure, type CosineDensityOptions, type DensitySeries } from './cosine-density.js';
export { alignUniformFigure, type AlignUniformOptions, type AlignUniformPath, type AlignUniformPoint } from './align-uniform.js';
export { iclDemonstrationsFigure, type IclDemonstrationsFigureOptions, type IclDistributionPanel } from './icl-demonstrations.js';
export { layerWidthHeatmapFigure, layerWidthCurvesFigure, type LayerWidthPoint } from './layer-width.js';
export { plotlyLibrary, plotlyLibrarySource, type PlotlyLibrary } from './plotly-library.js';
export { CHROMIUM_ARGS, chromiumUnavailableReason, findChromium, launchChromium } from './chromium.js';
export { FigureRenderer, renderFigureFiles, type StaticFormat, type StaticRenderOptions } from './render-static.js';
