/**
 * Which test pairs each bootstrap resample takes, and which pairs each random permutation swaps:
 * drawn from the project's seeded generator (lib/train/rng.ts, xoshiro128**), or injected by the
 * caller (a test that must see exactly the draws an independent implementation saw, e.g. an index
 * matrix drawn by numpy and given to scipy.stats.bootstrap).
 *
 * Draw order is part of the result's identity: resample b's indices are the b-th block of n
 * `nextInt(n)` draws; a permutation's swaps are the bits of ⌈n/32⌉ `nextUint32` draws, lowest bit
 * first.
 */
import { SeededRng } from '../../train/rng.js';
import { failInput } from './validate.js';

/** A sequence of resamples (or permutations) filled one at a time into a reusable row. */
export interface ResamplingPlan {
  readonly count: number;
  /** Fill `row` (length n) with resample `b`'s content; called for b = 0, 1, … in order. */
  fill(b: number, row: Uint32Array | Uint8Array): void;
}

/** Bootstrap resamples of [0, n) with replacement from `SeededRng(seed)`. */
export function seededResamples(n: number, count: number, seed: number): ResamplingPlan {
  const rng = new SeededRng(seed);
  return {
    count,
    fill(_b, row) {
      for (let k = 0; k < n; k++) row[k] = rng.nextInt(n);
    },
  };
}

/** Resamples given as rows of pair indices (each row n integers in [0, n)), checked up front. */
export function injectedResamples(fn: string, n: number, rows: readonly ArrayLike<number>[], source?: string): ResamplingPlan {
  if (!Array.isArray(rows) || rows.length < 1) failInput(fn, 'resampleIndices must be a non-empty array of index rows', source);
  rows.forEach((row, b) => {
    if (row === null || typeof row !== 'object' || row.length !== n) {
      failInput(fn, `resampleIndices[${b}] must hold ${n} pair indices (one per test pair), got ${row?.length ?? typeof row}`, source);
    }
    for (let k = 0; k < n; k++) {
      const i = row[k];
      if (!Number.isInteger(i) || i < 0 || i >= n) failInput(fn, `resampleIndices[${b}][${k}] is ${i}; expected an integer in [0, ${n})`, source);
    }
  });
  return {
    count: rows.length,
    fill(b, row) {
      const src = rows[b];
      for (let k = 0; k < n; k++) row[k] = src[k];
    },
  };
}

/** Random swap patterns: each pair swapped independently with probability ½, from `SeededRng(seed)`. */
export function seededSwaps(n: number, count: number, seed: number): ResamplingPlan {
  const rng = new SeededRng(seed);
  return {
    count,
    fill(_b, row) {
      for (let k = 0; k < n; k += 32) {
        const bits = rng.nextUint32();
        const m = Math.min(32, n - k);
        for (let j = 0; j < m; j++) row[k + j] = (bits >>> j) & 1;
      }
    },
  };
}

/** Swap patterns given as rows of n flags (0/1 or false/true), checked up front. */
export function injectedSwaps(fn: string, n: number, rows: readonly ArrayLike<number | boolean>[], source?: string): ResamplingPlan {
  if (!Array.isArray(rows) || rows.length < 1) failInput(fn, 'swaps must be a non-empty array of swap rows', source);
  rows.forEach((row, b) => {
    if (row === null || typeof row !== 'object' || row.length !== n) {
      failInput(fn, `swaps[${b}] must hold ${n} flags (one per test pair), got ${row?.length ?? typeof row}`, source);
    }
    for (let k = 0; k < n; k++) {
      const f = row[k];
      if (f !== 0 && f !== 1 && f !== true && f !== false) failInput(fn, `swaps[${b}][${k}] is ${String(f)}; expected 0, 1, true or false`, source);
    }
  });
  return {
    count: rows.length,
    fill(b, row) {
      const src = rows[b];
      for (let k = 0; k < n; k++) row[k] = src[k] ? 1 : 0;
    },
  };
}
