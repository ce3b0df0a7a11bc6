/**
 * One line of the parity report: a named comparison against a reference output.
 * `npm run parity` prints one line per check and `parity: N passed, M failed`.
 */
export interface ParityCheck {
  /** Stable name, e.g. `forward/last_hidden_state` or `loss/cosine_tau20_sts/grad`. */
  name: string;
  ok: boolean;
  /** What was measured, e.g. `max |diff| 3.1e-7 (tol 1e-5)`. */
  detail: string;
}

/** Largest absolute difference between two equally long numeric arrays. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length mismatch: ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Number.POSITIVE_INFINITY : d;
  }
  return m;
}

/**
 * Relative error used for float32-vs-float64 checks: max|a-b| / max(max|b|, floor).
 * Normalising by the reference's scale (not element-wise) keeps near-zero entries from
 * producing meaningless huge ratios.
 */
export function maxRelDiff(a: ArrayLike<number>, b: ArrayLike<number>, floor = 1e-12): number {
  let scale = floor;
  for (let i = 0; i < b.length; i++) scale = Math.max(scale, Math.abs(b[i]));
  return maxAbsDiff(a, b) / scale;
}

export function check(name: string, value: number, tol: number, what = 'max |diff|'): ParityCheck {
  const ok = Number.isFinite(value) && value <= tol;
  return { name, ok, detail: `${what} ${value.toExponential(2)} (tol ${tol.toExponential(0)})` };
}
