/**
 * Where tests find the shared reference material: only through environment variables
 * (.ci/run sets them from ../shared). A test that needs one skips with a printed reason when it
 * is unset, so a clone without ../shared still runs the rest.
 */
import { existsSync } from 'node:fs';

export const GOLDEN_DIR = process.env.ANGLE_GOLDEN_DIR;
export const DATA_DIR = process.env.ANGLE_DATA_DIR;

export function goldenOrSkip(t: { skip: (msg: string) => void }): string | undefined {
  if (GOLDEN_DIR && existsSync(GOLDEN_DIR)) return GOLDEN_DIR;
  t.skip('ANGLE_GOLDEN_DIR is not set to a golden set (e.g. ../shared/golden/bert-tiny-seed1234)');
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
