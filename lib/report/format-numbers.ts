/**
 * How the report layer writes numbers in text: a signed difference ("+0.26", "-1.05"), a hash
 * prefix, a duration ("30 min 29 s"), a paper number as printed with its unit and markers.
 */
import type { PaperNumber } from '../paper/types.js';

/** "+0.26" / "-1.05" / "0.00": differences always carry their sign. */
export function signed(v: number, digits = 2): string {
  const s = v.toFixed(digits);
  return /^-?0(\.0*)?$/.test(s) ? s.replace('-', '') : v > 0 ? `+${s}` : s;
}

/** The first `n` hex digits of a sha256, enough to tell files apart in a table. */
export function hashPrefix(sha256: string | undefined, n = 12): string {
  return sha256 ? sha256.slice(0, n) : '—';
}

/** "45.2 s", "30 min 29 s", "2 h 05 min". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const s = Math.round(seconds);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** A paper number as printed: "86.26", "74.89 †", "12.9%". */
export function paperText(c: PaperNumber): string {
  return c.printed + (c.unit ?? '') + (c.markers.length ? ` ${c.markers.join('')}` : '');
}
