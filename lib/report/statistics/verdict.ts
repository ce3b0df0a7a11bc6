/**
 * Is a difference between two runs (ours vs ours, e.g. Table 4's "w/o ibn" vs "all") resolved by the
 * test set, or within its noise? From the difference and its evidence: a confidence interval
 * (resolved when it excludes 0) and/or a two-sided p-value (resolved when p < 1 − level).
 *
 * When both are given and disagree (a borderline case: the bootstrap interval and the p-value are
 * different procedures), the verdict is the conservative "within noise" and the reason says why.
 * An interval computed at another level than the one asked for cannot decide; that is an error.
 */
import { failInput } from './validate.js';

export type DifferenceVerdict = 'resolved' | 'within noise';

export interface DifferenceEvidence {
  /** e.g. spearmanA − spearmanB. */
  difference: number;
  ci?: { low: number; high: number; level: number };
  pValue?: number;
}

export interface VerdictResult {
  verdict: DifferenceVerdict;
  level: number;
  /** One line a notebook can print, e.g. "resolved at 95%: Δ = +0.0123, 95% CI [0.0041, 0.0201] excludes 0; p = 0.003 < 0.05". */
  reason: string;
}

function fmt(v: number): string {
  return Math.abs(v) >= 1e-3 || v === 0 ? v.toFixed(4) : v.toPrecision(2);
}

export function differenceVerdict(evidence: DifferenceEvidence, options: { level?: number } = {}): VerdictResult {
  const fn = 'differenceVerdict';
  const { level = 0.95 } = options;
  if (!(level > 0 && level < 1)) failInput(fn, `level must be strictly between 0 and 1 (e.g. 0.95), got ${level}`);
  const { difference, ci, pValue } = evidence;
  if (!Number.isFinite(difference)) failInput(fn, `difference must be a finite number, got ${difference}`);
  if (ci === undefined && pValue === undefined) failInput(fn, 'needs a confidence interval (ci) or a p-value (pValue), got neither');
  const alpha = 1 - level;
  const percent = `${Number((level * 100).toPrecision(6))}%`;
  const parts: string[] = [];
  const votes: boolean[] = [];
  if (ci !== undefined) {
    if (!Number.isFinite(ci.low) || !Number.isFinite(ci.high) || ci.low > ci.high) {
      failInput(fn, `ci must have finite low <= high, got [${ci.low}, ${ci.high}]`);
    }
    if (Math.abs(ci.level - level) > 1e-12) {
      failInput(fn, `the interval is a ${ci.level * 100}% interval; it cannot decide at level ${level}`);
    }
    const excludes = ci.low > 0 || ci.high < 0;
    votes.push(excludes);
    parts.push(`${percent} CI [${fmt(ci.low)}, ${fmt(ci.high)}] ${excludes ? 'excludes' : 'contains'} 0`);
  }
  if (pValue !== undefined) {
    if (!(pValue >= 0 && pValue <= 1)) failInput(fn, `pValue must be in [0, 1], got ${pValue}`);
    const significant = pValue < alpha;
    votes.push(significant);
    parts.push(`p = ${fmt(pValue)} ${significant ? '<' : '>='} ${fmt(alpha)}`);
  }
  const resolved = votes.every((v) => v);
  const disagree = !resolved && votes.some((v) => v);
  const head = resolved ? `resolved at ${percent}` : disagree ? `within noise at ${percent} (borderline: the interval and the p-value disagree)` : `within noise at ${percent}`;
  const sign = difference > 0 ? '+' : '';
  return { verdict: resolved ? 'resolved' : 'within noise', level, reason: `${head}: Δ = ${sign}${fmt(difference)}, ${parts.join('; ')}` };
}
