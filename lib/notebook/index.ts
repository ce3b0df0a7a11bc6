/**
 * What a notebook author calls: the run's settings (model, data, backend, preset), and showing
 * tables, figures (plotly, also live while a run trains) and data cards. The notebook runner's own machinery (reading and writing .ipynb files,
 * applying presets) lives in scripts/notebooks/, not here.
 */
export { notebookSettings, settingsTable, type NotebookSettings } from './settings.js';
export { setup, type NotebookSetup } from './setup.js';
export { modelTable } from './model-table.js';
export { showTable, runningUnderTslab } from './display.js';
export { showFigure, showPlotlyLibrary, liveFigure, liveTrainingCurves, type FigureDisplayOptions, type LiveFigure, type LiveTrainingCurves } from './figures.js';
export { showDatasetCards } from './data-cards.js';
export { tableToHtml, tableToMarkdown, tableToText, type SimpleTable, type TableValue, type TableFormat } from '../util/table.js';
