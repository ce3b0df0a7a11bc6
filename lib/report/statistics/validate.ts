/**
 * Input checks shared by the statistics functions. Every message names the function, the argument
 * and, for an array, the first offending position, so that a bad results file is found at once;
 * `source` (the run record or file the numbers came from, when the caller knows it) becomes the
 * InputError's file.
 */
import { InputError } from '../../util/errors.js';

/** Where the numbers came from, for error messages (e.g. `results/stsb/run-3.json`). */
export interface SourceOption {
  source?: string;
}

function fail(fn: string, message: string, source?: string): never {
  throw new InputError(`${fn}: ${message}`, { file: source });
}

/** Every entry of `values` is a finite number. */
export function checkFinite(fn: string, name: string, values: ArrayLike<number>, source?: string): void {
  if (values === null || typeof values !== 'object' || typeof values.length !== 'number') {
    fail(fn, `${name} must be an array of numbers, got ${values === null ? 'null' : typeof values}`, source);
  }
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      fail(fn, `${name}[${i}] is ${typeof v === 'number' ? String(v) : typeof v}; expected a finite number`, source);
    }
  }
}

/**
 * Columns that describe the same test pairs: all finite, all the same length, at least `minPairs`
 * long. Returns that length.
 */
export function checkPairedColumns(
  fn: string,
  columns: Readonly<Record<string, ArrayLike<number>>>,
  source?: string,
  minPairs = 3,
): number {
  const names = Object.keys(columns);
  for (const name of names) checkFinite(fn, name, columns[name], source);
  const n = columns[names[0]].length;
  for (const name of names.slice(1)) {
    if (columns[name].length !== n) {
      const lengths = names.map((k) => `${k} ${columns[k].length}`).join(', ');
      fail(fn, `the columns must describe the same test pairs, but their lengths differ (${lengths})`, source);
    }
  }
  if (n < minPairs) fail(fn, `needs at least ${minPairs} pairs, got ${n}`, source);
  return n;
}

/** A confidence level strictly between 0 and 1 (0.95, not 95). */
export function checkLevel(fn: string, level: number, source?: string): void {
  if (typeof level !== 'number' || !(level > 0 && level < 1)) {
    fail(fn, `level must be a number strictly between 0 and 1 (e.g. 0.95), got ${level}`, source);
  }
}

/** A whole number of at least `min`. */
export function checkCount(fn: string, name: string, value: number, min: number, source?: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    fail(fn, `${name} must be an integer >= ${min}, got ${value}`, source);
  }
}

/** A seed for SeededRng: an integer in [0, 2^32). */
export function checkSeed(fn: string, seed: number, source?: string): void {
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    fail(fn, `seed must be an integer in [0, 2^32), got ${seed}`, source);
  }
}

/** A correlation that is defined: a constant column has none. */
export function checkDefined(fn: string, what: string, value: number, source?: string): void {
  if (Number.isNaN(value)) {
    fail(fn, `${what} is undefined (a column is constant: every score, or every gold value, is the same)`, source);
  }
}

export { fail as failInput };
