/**
 * What a notebook runs with: the environment (see lib/config.ts) with the notebook defaults filled
 * in, so the first cell can show it and later cells need not repeat the fallbacks.
 */
import { isAbsolute, resolve } from 'node:path';
import { envConfig } from '../config.js';
import { packageRoot } from '../util/package-root.js';
import type { SimpleTable } from '../util/table.js';
import { PAPER_LLM_MODEL, PAPER_MODEL } from '../experiments/presets.js';

export interface NotebookSettings {
  /** The runner's preset (ANGLE_PRESET), or undefined when none was applied (plain Jupyter). */
  preset?: string;
  /** ANGLE_MODEL, else the papers' model (a Hub id). */
  model: string;
  /** ANGLE_LLM_MODEL, else the papers' decoder (LLaMA-2-7B from the Hub). */
  llmModel: string;
  /** ANGLE_DATA_DIR, or undefined: data then comes from the Hub. */
  dataDir?: string;
  /** ANGLE_BACKEND, else cpu (as initBackend chooses); `auto` (the paper preset's) is resolved when setup() starts it. */
  backend: string;
  /** ANGLE_GOLDEN_DIR, when set. */
  goldenDir?: string;
  /**
   * ANGLE_RESULTS_DIR (default results), absolute: a relative value is taken from the project
   * root, because the kernel's working directory is notebooks/, not the root.
   */
  resultsDir: string;
}

export function notebookSettings(env: NodeJS.ProcessEnv = process.env): NotebookSettings {
  const c = envConfig(env);
  return {
    preset: c.preset,
    model: c.model ?? PAPER_MODEL,
    llmModel: c.llmModel ?? PAPER_LLM_MODEL,
    dataDir: c.dataDir,
    backend: c.backend ?? 'cpu',
    goldenDir: c.goldenDir,
    resultsDir: isAbsolute(c.resultsDir) ? c.resultsDir : resolve(packageRoot(), c.resultsDir),
  };
}

/** The settings as a two-column table for showTable(). */
export function settingsTable(s: NotebookSettings = notebookSettings()): SimpleTable {
  return {
    columns: ['setting', 'value'],
    rows: [
      ['preset', s.preset ?? '(none)'],
      ['model', s.model],
      ['decoder LM', s.llmModel],
      ['data', s.dataDir ?? '(Hugging Face Hub)'],
      ['backend', s.backend],
      ['golden', s.goldenDir ?? '(none)'],
      ['results', s.resultsDir],
    ],
  };
}
