/**
 * The numpy reductions SentEval's numbers go through, reproduced in their floating-point order,
 * so a score on a rounding boundary rounds the way SentEval's did:
 *
 * - `numpyMean(a)`: `np.mean` of a 1-D float64 array = pairwise sum / n. numpy's pairwise sum
 *   (`pairwise_sum_DOUBLE`): n < 8: left to right from 0; n ≤ 128: eight running sums r[j] over
 *   a[j], a[j+8], …, combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the remaining n mod 8
 *   added left to right; larger n: split at n/2 rounded down to a multiple of 8, recursively.
 * - `numpySum(a)`: `a.sum()` of a contiguous 1-D float64 array: the reduction runs over blocks of
 *   numpy's buffer size (8192 elements), each block summed pairwise as above and added to the
 *   running total in order (checked against numpy 1.24 for n up to 30,000).
 * - `numpyRound2(x)`: `round(x, 2)` on a numpy float64 = rint(x · 100) / 100, ties to even on the
 *   scaled double (not Python's decimal-exact rounding of a float).
 * - `firstArgmax(a)`: `np.argmax`: the first index of the maximum (ties go to the smaller index).
 */

function pairwiseSum(a: ArrayLike<number>, start: number, n: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[start + i];
    return res;
  }
  if (n <= 128) {
    const r = [0, 0, 0, 0, 0, 0, 0, 0];
    for (let j = 0; j < 8; j++) r[j] = a[start + j];
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[start + i + j];
    let res = r[0] + r[1] + (r[2] + r[3]) + (r[4] + r[5] + (r[6] + r[7]));
    for (; i < n; i++) res += a[start + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, start, n2) + pairwiseSum(a, start + n2, n - n2);
}

const NUMPY_BUFSIZE = 8192;

/** `a.sum()` of a contiguous float64 vector, in numpy's order (pairwise within 8192-element blocks). */
export function numpySum(a: ArrayLike<number>, n = a.length): number {
  let total = 0;
  for (let s = 0; s < n; s += NUMPY_BUFSIZE) total = total + pairwiseSum(a, s, Math.min(NUMPY_BUFSIZE, n - s));
  return total;
}

/** `np.mean` of a float64 vector (numpy's sum, then one division). */
export function numpyMean(a: ArrayLike<number>): number {
  if (a.length === 0) return NaN;
  return numpySum(a) / a.length;
}

/** Round half to even (C `rint` in the default rounding mode). */
export function rint(x: number): number {
  if (!Number.isFinite(x)) return x;
  const f = Math.floor(x);
  const d = x - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

/** numpy's `round(x, 2)` for a float64: rint(x * 100) / 100. */
export function numpyRound2(x: number): number {
  return rint(x * 100) / 100;
}

/** `np.argmax`: index of the first maximum. */
export function firstArgmax(a: ArrayLike<number>): number {
  if (a.length === 0) throw new RangeError('argmax of an empty sequence');
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i] > a[best]) best = i;
  return best;
}
