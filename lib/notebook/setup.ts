/**
 * The first cell of every notebook, once: the run's settings (./settings.ts: preset, model, decoder,
 * data, backend, results) shown as a table, and the backend started (`auto`, the paper preset's,
 * says which one it chose and why), and errors about the researcher's input printed as one line
 * (./readable-errors.ts), and plotly.js for the notebook's figures (./figures.ts). The paper preset on a CPU backend gets one line on stderr
 * saying that training BERT-base there is infeasible and what to do (./paper-backend-warning.ts).
 *
 *   import * as angle from "../dist/index.js";
 *   const { settings, backend } = await angle.notebook.setup();
 */
import { initBackend, type BackendInfo } from '../backend/index.js';
import { showTable } from './display.js';
import { showPlotlyLibrary } from './figures.js';
import { paperBackendWarning } from './paper-backend-warning.js';
import { readableErrors } from './readable-errors.js';
import { notebookSettings, settingsTable, type NotebookSettings } from './settings.js';

export interface NotebookSetup {
  settings: NotebookSettings;
  backend: BackendInfo;
}

/** Reads the settings, shows them, starts their backend. */
export async function setup(env: NodeJS.ProcessEnv = process.env): Promise<NotebookSetup> {
  // From here on a bad setting in any cell prints as one line, not a stack trace.
  readableErrors();
  const settings = notebookSettings(env);
  showTable(settingsTable(settings));
  // plotly.js for every figure of the notebook, in this cell's output: one copy per saved
  // notebook, replaced whenever setup runs again; and headless Chromium started in the background
  // for the figures' static images (./figures.ts).
  showPlotlyLibrary();
  const backend = await initBackend(settings.backend);
  const warning = paperBackendWarning(settings.preset, backend);
  if (warning) console.warn(warning);
  return { settings, backend };
}
