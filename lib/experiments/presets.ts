/**
 * Presets: where the model and data come from, and how big a run is. `smoke` is minutes on a CPU
 * without the Hub (the tiny random golden BERT, the data copies of a shared folder, a few hundred
 * training pairs, a few dozen steps); `paper` is the papers' setting (bert-base-uncased and the data
 * from the Hugging Face Hub, the recipes' full size, on a GPU host).
 *
 * The notebook runner and `npm run train` apply a preset's variables before they start (explicit
 * environment variables and flags always win; the runner records the preset in ANGLE_PRESET);
 * notebooks read the effect through notebookSettings(), and a recipe is shrunk to the preset's
 * scale by `scaleRecipe` (./recipes.ts). docs/jupyter.md repeats the table.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError, UnknownNameError } from '../util/errors.js';
import { packageRoot } from '../util/package-root.js';
import type { SimpleTable } from '../util/table.js';

/** The model the papers fine-tune (AnglE-BERT, SimCSE): the default when nothing else is chosen. */
export const PAPER_MODEL = 'google-bert/bert-base-uncased';

/** The decoder the papers' LLM results use (AnglE-LLaMA, PromptEOL's LLaMA rows): the Hub's LLaMA-2-7B. */
export const PAPER_LLM_MODEL = 'NousResearch/Llama-2-7b-hf';

export const PRESET_NAMES = ['smoke', 'paper', 'rehearsal'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** How big a run is: limits that shrink a recipe (undefined: the recipe's own size). */
export interface RunScale {
  /** Training examples used (the first N of the training set, in file order). */
  trainExamples?: number;
  /** Optimiser steps at most. */
  maxSteps?: number;
  /** Dev evaluation every N steps (with maxSteps, so the best-model path runs). */
  evalEvery?: number;
  /** Examples per batch at most (SimCSE's 512 would not fit the smoke run's few hundred pairs). */
  maxBatchSize?: number;
  /** Seeds per configuration where a table reports mean ± std. */
  seeds?: number;
}

export interface Preset {
  name: PresetName;
  /** What the preset is for, in a sentence. */
  purpose: string;
  /** Whether it reads a shared directory (data/ and golden/) instead of the Hub. */
  needsShared: boolean;
  /** The variables it sets, with their values described (paths to be filled in are written <like this>). */
  sets: Record<string, string>;
  scale: RunScale;
}

export const PRESETS: readonly Preset[] = [
  {
    name: 'smoke',
    purpose: 'minutes on a CPU without the Hub: the tiny random-initialised golden BERT and local data copies',
    needsShared: true,
    sets: {
      ANGLE_SHARED_DIR: '<shared>',
      ANGLE_DATA_DIR: '<shared>/data',
      ANGLE_GOLDEN_DIR: '<first directory under <shared>/golden with a model/ subdirectory>',
      ANGLE_MODEL: '<ANGLE_GOLDEN_DIR>/model',
      ANGLE_LLM_MODEL: '<shared>/models/llama2c-stories260K (the toy llama2.c model)',
      ANGLE_BACKEND: 'wasm',
      ANGLE_RESULTS_DIR: 'results/smoke (git-ignored: smoke numbers mean nothing)',
    },
    scale: { trainExamples: 256, maxSteps: 24, evalEvery: 12, maxBatchSize: 32, seeds: 1 },
  },
  {
    name: 'paper',
    purpose: "the papers' setting: bert-base-uncased, model and data from the Hugging Face Hub (a GPU host)",
    needsShared: false,
    sets: { ANGLE_MODEL: PAPER_MODEL, ANGLE_LLM_MODEL: PAPER_LLM_MODEL, ANGLE_BACKEND: 'auto (cuda when its addon loads, else wasm, else cpu)' },
    scale: { seeds: 3 },
  },
  {
    name: 'rehearsal',
    purpose:
      "the paper preset's runs at the papers' real shapes — real architectures with random weights, each recipe's batch, length and accumulation — one step each, projected onto one H100 (results/rehearsal/summary.json; lib/experiments/rehearsal/)",
    needsShared: true,
    sets: {
      ANGLE_SHARED_DIR: '<shared>',
      ANGLE_DATA_DIR: '<shared>/data',
      ANGLE_MODEL: PAPER_MODEL,
      ANGLE_LLM_MODEL: PAPER_LLM_MODEL,
      ANGLE_BACKEND: 'wasm',
      ANGLE_RESULTS_DIR: 'results/rehearsal (git-ignored runs; summary.json and summary.md are its output)',
    },
    scale: { seeds: 1 },
  },
];

export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}

export function presetByName(name: string): Preset {
  const p = PRESETS.find((q) => q.name === name);
  if (!p) throw new UnknownNameError('preset', name, PRESET_NAMES);
  return p;
}

/**
 * The first encoder golden set (by name) under `goldenRoot`: a directory with forward.json and a
 * model/ subdirectory (the tiny random BERT the smoke preset runs; decoder and transfer sets have
 * other files).
 */
export function findGoldenDir(goldenRoot: string): string {
  let names: string[];
  try {
    names = readdirSync(goldenRoot).sort();
  } catch {
    throw new InputError('expected a golden/ directory of reference runs', { file: goldenRoot });
  }
  for (const name of names) {
    const dir = join(goldenRoot, name);
    if (isDirectory(join(dir, 'model')) && existsSync(join(dir, 'forward.json'))) return dir;
  }
  throw new InputError('no directory here is an encoder golden set (forward.json and model/)', { file: goldenRoot });
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The variables preset `name` sets (paths absolute; ANGLE_PRESET is the runner's). `shared` is the
 * shared directory (data/, golden/); presets with `needsShared` throw an InputError without it.
 */
export function presetVariables(name: PresetName, shared?: string): Record<string, string> {
  switch (name) {
    case 'smoke': {
      if (shared === undefined) throw new InputError('the smoke preset needs a shared directory (data/ and golden/)');
      const root = resolve(shared);
      if (!isDirectory(root)) throw new InputError('expected the shared directory (data/ and golden/)', { file: root });
      const golden = findGoldenDir(join(root, 'golden'));
      // wasm: on the tiny model it trains ~8x and embeds ~20x faster than cpu with the same losses
      // (cpu stays the parity reference; `npm run parity` and the tests choose it explicitly).
      // Smoke runs write under results/smoke/ (git-ignored): their numbers exercise code, not the papers.
      return {
        ANGLE_SHARED_DIR: root,
        ANGLE_DATA_DIR: join(root, 'data'),
        ANGLE_GOLDEN_DIR: golden,
        ANGLE_MODEL: join(golden, 'model'),
        ANGLE_LLM_MODEL: join(root, 'models', 'llama2c-stories260K'),
        ANGLE_BACKEND: 'wasm',
        ANGLE_RESULTS_DIR: join(packageRoot(), 'results', 'smoke'),
      };
    }
    case 'rehearsal': {
      if (shared === undefined) throw new InputError("the rehearsal preset needs a shared directory (data/, and models/ for the random models' tokenizers)");
      const root = resolve(shared);
      if (!isDirectory(root)) throw new InputError('expected the shared directory (data/ and models/)', { file: root });
      // The paper's models by their Hub ids: the rehearsal builds them from their configs with
      // random weights where they cannot be loaded (lib/experiments/rehearsal/models.ts).
      return {
        ANGLE_SHARED_DIR: root,
        ANGLE_DATA_DIR: join(root, 'data'),
        ANGLE_MODEL: PAPER_MODEL,
        ANGLE_LLM_MODEL: PAPER_LLM_MODEL,
        ANGLE_BACKEND: 'wasm',
        ANGLE_RESULTS_DIR: join(packageRoot(), 'results', 'rehearsal'),
      };
    }
    case 'paper':
      // auto: cuda on a GPU host with the addon built; elsewhere the best CPU backend, and the
      // notebooks' setup() says in one line that training BERT-base there is infeasible
      // (lib/notebook/paper-backend-warning.ts).
      return { ANGLE_MODEL: PAPER_MODEL, ANGLE_LLM_MODEL: PAPER_LLM_MODEL, ANGLE_BACKEND: 'auto' };
  }
}

/** The preset table, for a notebook (showTable) or docs. */
export function presetTable(): SimpleTable {
  return {
    columns: ['preset', 'for', 'sets', 'run size'],
    rows: PRESETS.map((p) => [
      p.name,
      p.purpose,
      Object.entries(p.sets)
        .map(([k, v]) => `${k}=${v}`)
        .join(', '),
      Object.keys(p.scale).length ? Object.entries(p.scale).map(([k, v]) => `${k} ${v}`).join(', ') : "the recipe's",
    ]),
  };
}

/** The seeds a preset runs each configuration with: 42, 43, … as many as its scale says (default 1). */
export function seedsFor(preset: string | undefined): number[] {
  const n = preset && isPresetName(preset) ? (presetByName(preset).scale.seeds ?? 1) : 1;
  return Array.from({ length: n }, (_, i) => 42 + i);
}
