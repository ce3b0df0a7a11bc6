/**
 * Run-time configuration that comes from the environment. lib/ never bakes in a path: the
 * data root, the default model and the backend come from these variables (or from arguments,
 * which always win).
 *
 * | variable           | meaning                                                            |
 * |--------------------|--------------------------------------------------------------------|
 * | ANGLE_DATA_DIR     | local data root laid out like princeton-nlp/datasets-for-simcse + GLUE (see lib/data) |
 * | ANGLE_MODEL        | default model: a Hub id or a local model directory                 |
 * | ANGLE_LLM_MODEL    | default decoder LM (PromptEOL, AnglE-LLaMA, LLM supervision): Hub id or directory |
 * | ANGLE_BACKEND      | tfjs backend: cpu (default), wasm, cuda, tensorflow, or auto (cuda when it loads, else wasm, else cpu; lib/backend/auto.ts) |
 * | ANGLE_GOLDEN_DIR   | a golden reference directory (parity command and tests)            |
 * | ANGLE_RESULTS_DIR  | where runs write results (default: ./results)                      |
 * | ANGLE_PRESET       | the notebook preset the runner selected (smoke, paper)             |
 * | ANGLE_SHARED_DIR   | a folder of reference material (data/, golden/, models/) as on this project's machines |
 * | HF_HOME, HF_ENDPOINT, HF_HUB_OFFLINE, HF_TOKEN | as in huggingface_hub (see lib/hub) |
 *
 * The shared folder: the project's own machines keep reference data, golden outputs and tokenizers
 * in a folder `shared/` beside the repository (no Hub there). Commands and tests find it the same
 * way — a flag, else ANGLE_SHARED_DIR, else `../shared` beside the repository if it exists — and say
 * which they used (`locateSharedDir`); the data root and the golden sets default to its data/ and
 * golden/ after their own flag and variable. A user's machine has no such folder: then data comes
 * from the Hugging Face Hub and there are no golden sets.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from './util/package-root.js';

export interface EnvConfig {
  dataDir?: string;
  model?: string;
  llmModel?: string;
  backend?: string;
  goldenDir?: string;
  resultsDir: string;
  preset?: string;
  sharedDir?: string;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

export function envConfig(env: NodeJS.ProcessEnv = process.env): EnvConfig {
  return {
    dataDir: nonEmpty(env.ANGLE_DATA_DIR),
    model: nonEmpty(env.ANGLE_MODEL),
    llmModel: nonEmpty(env.ANGLE_LLM_MODEL),
    backend: nonEmpty(env.ANGLE_BACKEND),
    goldenDir: nonEmpty(env.ANGLE_GOLDEN_DIR),
    resultsDir: nonEmpty(env.ANGLE_RESULTS_DIR) ?? 'results',
    preset: nonEmpty(env.ANGLE_PRESET),
    sharedDir: nonEmpty(env.ANGLE_SHARED_DIR),
  };
}

/**
 * Where runs are recorded: `given` (a flag or an option), else ANGLE_RESULTS_DIR, else `results`;
 * absolute, a relative path taken from the working directory. The one place this rule is written:
 * the run store, the results reader, run cards, summaries and commands all call it. A preset's
 * results/<preset> arrives as ANGLE_RESULTS_DIR (lib/experiments/presets.ts presetVariables).
 */
export function resolveResultsDir(given?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(nonEmpty(given) ?? envConfig(env).resultsDir);
}

/** A folder found by the flag/variable/default rule, and which of them gave it. */
export interface Located {
  path: string;
  /** How it was found, for the command's first line: "--data", "ANGLE_DATA_DIR", "../shared beside the repository". */
  from: string;
}

function isDirectory(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}

/** The shared reference folder: `flag`, else ANGLE_SHARED_DIR, else ../shared beside the repository (if it exists). */
export function locateSharedDir(flag?: string, env: NodeJS.ProcessEnv = process.env, flagName = '--shared'): Located | undefined {
  const given = nonEmpty(flag);
  if (given) return { path: resolve(given), from: flagName };
  const v = envConfig(env).sharedDir;
  if (v) return { path: resolve(v), from: 'ANGLE_SHARED_DIR' };
  const beside = resolve(packageRoot(), '..', 'shared');
  return isDirectory(beside) ? { path: beside, from: '../shared beside the repository' } : undefined;
}

/** The data root: `flag`, else ANGLE_DATA_DIR, else the shared folder's data/. */
export function locateDataDir(flag?: string, env: NodeJS.ProcessEnv = process.env, flagName = '--data'): Located | undefined {
  const given = nonEmpty(flag);
  if (given) return { path: resolve(given), from: flagName };
  const v = envConfig(env).dataDir;
  if (v) return { path: resolve(v), from: 'ANGLE_DATA_DIR' };
  const shared = locateSharedDir(undefined, env);
  return shared && isDirectory(join(shared.path, 'data')) ? { path: join(shared.path, 'data'), from: `${shared.from} (its data/)` } : undefined;
}

/** The golden reference: `flag`, else ANGLE_GOLDEN_DIR, else the shared folder's golden/ (a folder of sets). */
export function locateGoldenDir(flag?: string, env: NodeJS.ProcessEnv = process.env, flagName = '--golden'): Located | undefined {
  const given = nonEmpty(flag);
  if (given) return { path: resolve(given), from: flagName };
  const v = envConfig(env).goldenDir;
  if (v) return { path: resolve(v), from: 'ANGLE_GOLDEN_DIR' };
  const shared = locateSharedDir(undefined, env);
  return shared && isDirectory(join(shared.path, 'golden')) ? { path: join(shared.path, 'golden'), from: `${shared.from} (its golden/)` } : undefined;
}
