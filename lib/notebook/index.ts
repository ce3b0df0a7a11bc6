/**
 * What a notebook author calls: the run's settings (model, data, backend, preset), and showing
 * tables, figures (plotly, also live while a run trains) and data cards. The notebook runner's own machinery (reading and writing .ipynb files,
 * applying presets) lives in scripts/notebooks/, not here.
 *
 * Exported here (`angle.notebook` of lib/index.ts, the public face): what the notebooks and the docs
 * use, no more (test/public-surface.test.ts); the rest of the folder is internal, and lib/, scripts/
 * and tests import its files directly.
 */
export { setup } from './setup.js';
export { modelTable } from './model-table.js';
export { showTable } from './display.js';
export { showFigure, liveTrainingCurves } from './figures.js';
export { showDatasetCards } from './data-cards.js';
