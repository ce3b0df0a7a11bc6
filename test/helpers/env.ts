/**
 * Where tests find the shared reference material — the same way the commands do (lib/config.ts):
 * a variable (ANGLE_SHARED_DIR, ANGLE_DATA_DIR, ANGLE_GOLDEN_DIR), else the folder `shared/` beside
 * the repository. Paths are absolute, so no test depends on the working directory. A test that needs
 * one of them skips with a printed reason when it is missing, so a clone without it runs the rest.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { locateDataDir, locateGoldenDir, locateSharedDir } from '../../lib/config.js';
import { findGoldenDir } from '../../lib/experiments/presets.js';

export const SHARED_DIR = locateSharedDir()?.path;
export const DATA_DIR = locateDataDir()?.path;

/** An encoder golden set (forward.json, model/): ANGLE_GOLDEN_DIR, else the first one under <shared>/golden. */
export const GOLDEN_DIR = ((): string | undefined => {
  const g = locateGoldenDir();
  if (!g) return undefined;
  if (existsSync(join(g.path, 'forward.json'))) return g.path;
  try {
    return findGoldenDir(g.path);
  } catch {
    return undefined;
  }
})();

/** The llama2.c decoder golden set: ANGLE_DECODER_GOLDEN_DIR, else <shared>/golden/llama2c-stories260K. */
export const DECODER_GOLDEN_DIR = process.env.ANGLE_DECODER_GOLDEN_DIR ?? (SHARED_DIR ? join(SHARED_DIR, 'golden', 'llama2c-stories260K') : undefined);

/** The SentEval transfer golden set: ANGLE_GOLDEN_TRANSFER_DIR, else <shared>/golden/senteval-transfer-glove50. */
export const TRANSFER_GOLDEN_DIR = process.env.ANGLE_GOLDEN_TRANSFER_DIR ?? (SHARED_DIR ? join(SHARED_DIR, 'golden', 'senteval-transfer-glove50') : undefined);

/** The papers' text files: ANGLE_PAPERS_DIR, else <shared>/papers. */
export const PAPERS_DIR = process.env.ANGLE_PAPERS_DIR ?? (SHARED_DIR ? join(SHARED_DIR, 'papers') : undefined);

export function goldenOrSkip(t: { skip: (msg: string) => void }): string | undefined {
  if (GOLDEN_DIR && existsSync(GOLDEN_DIR)) return GOLDEN_DIR;
  t.skip('no encoder golden set: set ANGLE_GOLDEN_DIR (e.g. ../shared/golden/bert-tiny-seed1234) or keep ../shared beside the repository');
  return undefined;
}

/** Element-wise |a - b| <= tol for nested number arrays of the same shape. */
export function assertClose(actual: unknown, expected: unknown, tol = 1e-6, path = ''): void {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) throw new Error(`${path || 'value'}: expected an array of ${expected.length}, got ${JSON.stringify(actual)}`);
    expected.forEach((e, i) => assertClose(actual[i], e, tol, `${path}[${i}]`));
    return;
  }
  if (typeof actual !== 'number' || typeof expected !== 'number' || !(Math.abs(actual - expected) <= tol)) {
    throw new Error(`${path || 'value'}: expected ${expected} ± ${tol}, got ${actual}`);
  }
}

/** The encoder golden set's model folder, and why a test that needs it skips (false when it is there). */
export const GOLDEN_MODEL_DIR = GOLDEN_DIR ? join(GOLDEN_DIR, 'model') : undefined;
export const NO_GOLDEN_MODEL: string | false = GOLDEN_MODEL_DIR && existsSync(GOLDEN_MODEL_DIR) ? false : 'no encoder golden set with model/ (ANGLE_GOLDEN_DIR)';
