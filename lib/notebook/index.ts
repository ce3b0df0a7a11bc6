/** Notebook helpers that are not model logic: settings, presets, tables, .ipynb files. */
export { notebookSettings, settingsTable, type NotebookSettings } from './settings.js';
export {
  NOTEBOOK_PRESETS,
  PRESET_NAMES,
  PAPER_MODEL,
  presetTable,
  presetVariables,
  type Preset,
  type PresetName,
} from './presets.js';
export {
  showTable,
  tableToHtml,
  tableToMarkdown,
  tableToText,
  runningUnderTslab,
  type SimpleTable,
  type TableValue,
  type TableFormat,
} from './display.js';
export { readNotebook, writeNotebook, type Notebook, type NotebookCell, type NotebookOutput } from './ipynb.js';
export { showDatasetCards } from './data-cards.js';
