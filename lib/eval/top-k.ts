/**
 * The running top-k of one query, kept sorted best first in a slice [base, base + k) of a score and
 * an index array (the layout of exact search's results: one slice per query). Ties break by the
 * smaller corpus index, as faiss's exact search does; an empty slot has index -1 and ranks last.
 * Shared by the typed-array search (./retrieval.ts) and the backend search (./chunked-search.ts).
 */

/** Whether candidate (s, c) ranks before the kept entry (ps, pc); an empty slot (pc < 0) ranks last. */
export function ranksBefore(s: number, c: number, ps: number, pc: number): boolean {
  return pc < 0 || s > ps || (s === ps && c < pc);
}

/** Inserts candidate (s, c) into the sorted slice [base, base + k) when it belongs there. */
export function insertTopK(scores: Float64Array, indices: Int32Array, base: number, k: number, s: number, c: number): void {
  let p = base + k - 1;
  if (!ranksBefore(s, c, scores[p], indices[p])) return;
  while (p > base && ranksBefore(s, c, scores[p - 1], indices[p - 1])) {
    scores[p] = scores[p - 1];
    indices[p] = indices[p - 1];
    p--;
  }
  scores[p] = s;
  indices[p] = c;
}
