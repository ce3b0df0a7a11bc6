/**
 * Learning-rate schedules: the factor applied to the base learning rate at each optimiser step.
 *
 * Steps count from 0, and `learningRate(s)` is the rate the update of step s uses. Warmup has two
 * conventions in the wild:
 * - `warmupStart: 'one-step'` (default): step s < W uses (s + 1) / W, so the first update already
 *   moves the weights and the base rate is reached at the last warmup step. This is the schedule of
 *   the golden PyTorch runs (`train.json`: W = 1 gives the full rate at step 0, then linear decay
 *   (T - s) / (T - W) to 0 at T).
 * - `warmupStart: 'zero'`: s / W, as HF transformers' `get_*_schedule_with_warmup`; step 0 has rate 0.
 * After warmup: `constant` keeps 1, `linear` decays (T - s) / (T - W), `cosine` follows
 * ½(1 + cos(π · (s - W) / (T - W))); all three reach their end value at s = T (never below 0).
 */
import { InputError, UnknownNameError } from '../util/errors.js';

export const SCHEDULE_NAMES = ['constant', 'linear', 'cosine'] as const;
export type ScheduleName = (typeof SCHEDULE_NAMES)[number];

export interface ScheduleConfig {
  name: ScheduleName;
  /** Base (peak) learning rate. */
  lr: number;
  /** Optimiser steps of warmup (0 = none). */
  warmupSteps: number;
  /** Total optimiser steps of the run (decay ends here). */
  totalSteps: number;
  warmupStart?: 'one-step' | 'zero';
}

/** Warmup steps from a fraction of the run, floored as the reference scripts do (0.1 x 16 -> 1). */
export function warmupStepsFromFraction(fraction: number, totalSteps: number): number {
  if (!(fraction >= 0 && fraction <= 1)) throw new InputError(`warmup fraction must be in [0, 1], got ${fraction}`);
  return Math.floor(fraction * totalSteps);
}

export function checkSchedule(c: ScheduleConfig): void {
  if (!(SCHEDULE_NAMES as readonly string[]).includes(c.name)) {
    throw new UnknownNameError('learning-rate schedule', String(c.name), SCHEDULE_NAMES);
  }
  if (!(Number.isFinite(c.lr) && c.lr >= 0)) throw new InputError(`learning rate must be a finite number >= 0, got ${c.lr}`);
  if (!Number.isInteger(c.totalSteps) || c.totalSteps < 1) throw new InputError(`totalSteps must be a positive integer, got ${c.totalSteps}`);
  // A warmup longer than the run is allowed, as HF's get_*_schedule_with_warmup allow it: every step
  // is then a warmup step (a short trial run, e.g. `npm run train -- --max-steps 3`, of a recipe with
  // warmup 100).
  if (!Number.isInteger(c.warmupSteps) || c.warmupSteps < 0) {
    throw new InputError(`warmupSteps must be an integer >= 0, got ${c.warmupSteps}`);
  }
}

/** The multiplier of the base rate at step `step`. */
export function scheduleFactor(c: ScheduleConfig, step: number): number {
  const W = c.warmupSteps;
  const T = c.totalSteps;
  if (step < W) return (c.warmupStart === 'zero' ? step : step + 1) / W;
  if (c.name === 'constant') return 1;
  const span = Math.max(1, T - W);
  const progress = Math.min(1, (step - W) / span);
  if (c.name === 'linear') return Math.max(0, (T - step) / span);
  return Math.max(0, 0.5 * (1 + Math.cos(Math.PI * progress)));
}

/** The learning rate the update of step `step` (0-based) uses. */
export function learningRate(c: ScheduleConfig, step: number): number {
  return c.lr * scheduleFactor(c, step);
}
