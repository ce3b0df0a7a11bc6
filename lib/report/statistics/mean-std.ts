/**
 * Mean ± sample standard deviation of one configuration's metric over several seeds, and its
 * display "82.37 ± 0.21 (n=3)".
 *
 * mean = Σx/n; std = √(Σ(x − mean)²/(n − 1)) (numpy `std(ddof=1)`), two passes so that values with a
 * large common offset keep their spread. One value has no sample std: std is NaN and the display
 * says "(n=1)" without a ± part.
 */
import { checkFinite, failInput, type SourceOption } from './validate.js';

export interface MeanStd {
  mean: number;
  /** Sample standard deviation (n − 1); NaN when n = 1. */
  std: number;
  n: number;
}

export function meanStd(values: ArrayLike<number>, options: SourceOption = {}): MeanStd {
  checkFinite('meanStd', 'values', values, options.source);
  const n = values.length;
  if (n < 1) failInput('meanStd', 'needs at least one value, got none', options.source);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i];
  const mean = sum / n;
  if (n === 1) return { mean, std: Number.NaN, n };
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (values[i] - mean) ** 2;
  return { mean, std: Math.sqrt(ss / (n - 1)), n };
}

export interface FormatOptions {
  /** Digits after the decimal point (default 2). */
  digits?: number;
  /** Multiply before printing, e.g. 100 to print a Spearman of 0.8237 as 82.37 (default 1). */
  scale?: number;
}

function checkFormat(fn: string, digits: number, scale: number): void {
  if (!Number.isInteger(digits) || digits < 0 || digits > 20) failInput(fn, `digits must be an integer in [0, 20], got ${digits}`);
  if (!Number.isFinite(scale) || scale <= 0) failInput(fn, `scale must be a positive number, got ${scale}`);
}

/** "82.37 ± 0.21 (n=3)"; "82.37 (n=1)" for a single value. */
export function formatMeanStd(stats: MeanStd, options: FormatOptions = {}): string {
  const { digits = 2, scale = 1 } = options;
  checkFormat('formatMeanStd', digits, scale);
  const mean = (stats.mean * scale).toFixed(digits);
  if (stats.n < 2 || Number.isNaN(stats.std)) return `${mean} (n=${stats.n})`;
  return `${mean} ± ${(stats.std * scale).toFixed(digits)} (n=${stats.n})`;
}

/** "82.37 [81.90, 82.81] (95% BCa CI)": an estimate with its confidence interval. */
export function formatWithInterval(
  estimate: number,
  ci: { low: number; high: number; level: number; method?: string },
  options: FormatOptions = {},
): string {
  const { digits = 2, scale = 1 } = options;
  checkFormat('formatWithInterval', digits, scale);
  const f = (v: number): string => (v * scale).toFixed(digits);
  const method = ci.method === 'bca' ? 'BCa ' : ci.method === 'percentile' ? 'percentile ' : '';
  const level = Number((ci.level * 100).toPrecision(6));
  return `${f(estimate)} [${f(ci.low)}, ${f(ci.high)}] (${level}% ${method}CI)`;
}
