/**
 * The standard normal distribution function Φ and its inverse, to float64 accuracy, as
 * `scipy.special.ndtr` / `ndtri` (the BCa interval needs both: z0 = Φ⁻¹(share of resamples below
 * the estimate), adjusted levels Φ(z0 + (z0 + z)/(1 − a(z0 + z)))).
 *
 * Φ(z) = ½(1 + erf(z/√2)). erf for |x| < 2 from the series with all-positive terms
 *   erf(x) = (2/√π) e^{−x²} Σ_k x (2x²)^k / (1·3·…·(2k+1))          (Abramowitz & Stegun 7.1.6)
 * (no cancellation, so full precision), erfc for |x| ≥ 2 from Laplace's continued fraction
 *   erfc(x) = (e^{−x²}/√π) · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))  (A&S 7.1.14)
 * evaluated with the modified Lentz method, which keeps tail values (Φ(−8) ≈ 6e−16) relatively exact.
 * Φ⁻¹ starts from Acklam's rational approximation (relative error 1.2e−9) and takes Halley steps on
 * Φ(x) − p, which converge cubically to the float64 answer. Checked against scipy in
 * test/statistics.test.ts.
 */

const TWO_OVER_SQRT_PI = 1.1283791670955126;
const ONE_OVER_SQRT_PI = 0.5641895835477563;
const SQRT2 = Math.SQRT2;
const SQRT_2PI = 2.5066282746310002;

/** erf(x) for |x| < 2 (series with positive terms). */
function erfSeries(x: number): number {
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let k = 1; k < 200; k++) {
    term *= (2 * x2) / (2 * k + 1);
    sum += term;
    if (Math.abs(term) <= 1e-17 * Math.abs(sum)) break;
  }
  return TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
}

/** erfc(x) for x >= 2 (continued fraction, modified Lentz). */
function erfcContinuedFraction(x: number): number {
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let k = 1; k < 5000; k++) {
    const a = k / 2;
    d = x + a * d;
    d = Math.abs(d) < tiny ? tiny : d;
    d = 1 / d;
    c = x + a / c;
    c = Math.abs(c) < tiny ? tiny : c;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return (Math.exp(-x * x) * ONE_OVER_SQRT_PI) / f;
}

/** Φ(z): the standard normal distribution function (scipy.special.ndtr). */
export function ndtr(z: number): number {
  if (Number.isNaN(z)) return Number.NaN;
  if (z === Number.POSITIVE_INFINITY) return 1;
  if (z === Number.NEGATIVE_INFINITY) return 0;
  const x = z / SQRT2;
  if (x <= -2) return 0.5 * erfcContinuedFraction(-x);
  if (x >= 2) return 1 - 0.5 * erfcContinuedFraction(x);
  return 0.5 + 0.5 * erfSeries(x);
}

/** Acklam's rational approximation of Φ⁻¹(p) for 0 < p <= 0.5 (starting point only). */
function acklamLowerHalf(p: number): number {
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  if (p < 0.02425) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/** Φ⁻¹(p): the standard normal quantile (scipy.special.ndtri); ±Infinity at 0 and 1, NaN outside [0, 1]. */
export function ndtri(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return Number.NaN;
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  if (p === 0.5) return 0;
  // Work in the lower half, where p is exact; for p > 1/2, 1 − p is exact too (Sterbenz).
  if (p > 0.5) return -ndtri(1 - p);
  // Residual Φ(x) − p. Near the centre, p − ½ is exact (Sterbenz) and ½·erf(x/√2) − (p − ½) avoids
  // the rounding of ½ + ½·erf; in the tail Φ itself is accurate enough relative to p.
  const central = p >= 0.25;
  const q = p - 0.5;
  let x = acklamLowerHalf(p);
  for (let step = 0; step < 3; step++) {
    const e = central ? 0.5 * erfSeries(x / SQRT2) - q : ndtr(x) - p;
    const u = e * SQRT_2PI * Math.exp((x * x) / 2);
    const next = x - u / (1 + (x * u) / 2);
    if (next === x) break;
    x = next;
  }
  return x;
}
