/**
 * The environment notebooks run with, one rule for every way of running them: the headless runner
 * (./cli.ts) gives it to each kernel process, `npm run jupyter` (../jupyter.ts) to the Jupyter
 * server, whose kernels inherit it.
 *
 * - Relative ANGLE_DATA_DIR, ANGLE_GOLDEN_DIR, ANGLE_RESULTS_DIR (and ANGLE_MODEL when it is a
 *   directory) are made absolute first: a kernel's working directory is its notebook's folder.
 * - The preset is `--preset`, else ANGLE_PRESET, else `smoke` when ANGLE_MODEL is unset, else none.
 * - A preset's variables (lib/experiments/presets.ts `presetVariables`) fill in what is unset; a
 *   variable the user set always wins. ANGLE_PRESET records the preset that applied.
 * - A preset that reads the shared folder finds it as every command does (lib/config.ts
 *   `locateSharedDir`: --shared, else ANGLE_SHARED_DIR, else ../shared beside the repository).
 *
 * Everything that can be wrong here is an argument problem (unknown preset, no shared folder), so
 * it throws UsageError and touches nothing.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { locateSharedDir, type Located } from '../../lib/config.js';
import { isPresetName, presetByName, presetVariables, PRESET_NAMES, type PresetName } from '../../lib/experiments/presets.js';
import { UnknownNameError } from '../../lib/util/errors.js';
import { UsageError } from '../cli/command.js';

/** The environment variables notebooks read (lib/config.ts), in the order a header shows them. */
export const NOTEBOOK_VARIABLES = ['ANGLE_PRESET', 'ANGLE_MODEL', 'ANGLE_LLM_MODEL', 'ANGLE_DATA_DIR', 'ANGLE_GOLDEN_DIR', 'ANGLE_BACKEND', 'ANGLE_RESULTS_DIR', 'ANGLE_SHARED_DIR'] as const;

export interface PresetChoice {
  /** `--preset`, when given. */
  preset?: string;
  /** `--shared`, when given. */
  shared?: string;
}

export interface NotebookEnvironment {
  /** The environment to start kernels (or the Jupyter server) with. */
  env: NodeJS.ProcessEnv;
  /** The preset that applied, if any. */
  preset?: PresetName;
  /** The shared folder the preset read, and how it was found. */
  shared?: Located;
}

/** The environment notebooks get from `base` (default process.env), the preset applied; see the file comment. */
export function notebookEnvironment(choice: PresetChoice, root: string, base: NodeJS.ProcessEnv = process.env): NotebookEnvironment {
  const env: NodeJS.ProcessEnv = { ...base };
  const set = (k: string) => (env[k] ?? '').trim() !== '';
  for (const k of ['ANGLE_DATA_DIR', 'ANGLE_GOLDEN_DIR', 'ANGLE_RESULTS_DIR']) if (set(k)) env[k] = resolve(env[k]!.trim());
  if (set('ANGLE_MODEL') && existsSync(env.ANGLE_MODEL!.trim())) env.ANGLE_MODEL = resolve(env.ANGLE_MODEL!.trim());

  const name = choice.preset ?? (set('ANGLE_PRESET') ? env.ANGLE_PRESET!.trim() : set('ANGLE_MODEL') ? undefined : 'smoke');
  if (name === undefined) return { env };
  if (!isPresetName(name)) throw new UsageError(new UnknownNameError('preset', name, PRESET_NAMES).message);
  let shared: Located | undefined;
  if (presetByName(name).needsShared) {
    shared = locateSharedDir(choice.shared, env);
    if (shared === undefined || !statSync(shared.path, { throwIfNoEntry: false })?.isDirectory()) {
      throw new UsageError(
        `the ${name} preset reads data and the golden model from a shared directory, ` +
          (shared === undefined ? `and none was found (ANGLE_SHARED_DIR, or ${resolve(root, '..', 'shared')})` : `and ${shared.path} (from ${shared.from}) is not a directory`) +
          `: pass --shared <dir> (holding data/ and golden/), or use --preset paper (model and data from the Hub), or set ANGLE_MODEL`,
      );
    }
  }
  let vars: Record<string, string>;
  try {
    vars = presetVariables(name, shared?.path);
  } catch (e) {
    // e.g. a shared folder without an encoder golden set: still a problem with what was given.
    throw new UsageError(`the ${name} preset: ${(e as Error).message}`);
  }
  for (const [k, v] of Object.entries(vars)) if (!set(k)) env[k] = v;
  env.ANGLE_PRESET = name;
  return { env, preset: name, shared };
}

/** `K=V` for each notebook variable `env` sets, for a header line. */
export function notebookVariablesLine(env: NodeJS.ProcessEnv): string {
  return NOTEBOOK_VARIABLES.filter((k) => env[k]).map((k) => `${k}=${env[k]}`).join(' ');
}
