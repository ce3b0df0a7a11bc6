/**
 * Angles from cosines, for the angular objectives (SimACE, ArcCon).
 *
 * arccos has derivative −1/√(1 − x²), infinite at x = ±1, and float32 cosines of (nearly)
 * parallel vectors land on or slightly past ±1. So cosines are clipped to [−1 + eps, 1 − eps]
 * before arccos (default eps 1e-6, where |d arccos| ≤ 1/√(2e-6) ≈ 707): the gradient stays finite,
 * and where the clip is active (two views that are exactly parallel, e.g. dropout off) the
 * gradient through that angle is 0 (tfjs's clip gradient), which is a valid subgradient of the
 * non-smooth angle at 0.
 *
 * Margins carry an explicit unit: SimACE's and ArcCSE's m = 10 is in degrees (SimACE Table 7;
 * its §4.2 says "10 (radians)", which would put the positive's logit ~10/τ below every negative —
 * not a usable setting), so degrees is the default unit.
 */
import { tf } from '../backend/index.js';
import { InputError, UnknownNameError } from '../util/errors.js';

export type AngleUnit = 'degrees' | 'radians';

export const ARCCOS_CLIP_EPS = 1e-6;

/** `value` in `unit` converted to radians. */
export function toRadians(value: number, unit: AngleUnit, objective: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InputError(`${objective}: margin must be a finite number, got ${value}`);
  }
  if (unit === 'degrees') return (value * Math.PI) / 180;
  if (unit === 'radians') return value;
  throw new UnknownNameError(`${objective} margin unit`, String(unit), ['degrees', 'radians']);
}

/** arccos of `x` clipped to [−1 + eps, 1 − eps] (finite gradient everywhere). */
export function clippedAcos<T extends tf.Tensor>(x: T, eps = ARCCOS_CLIP_EPS): T {
  if (!(eps > 0 && eps < 1)) throw new InputError(`arccos clipping eps must be in (0, 1), got ${eps}`);
  return tf.tidy(() => tf.acos(tf.clipByValue(x, -1 + eps, 1 - eps)) as T);
}
