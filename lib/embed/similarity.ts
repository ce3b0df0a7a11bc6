import type { Embeddings } from './types.js';

/** Cosine similarity between every row of `a` and every row of `b`, as [a.rows][b.rows]. */
export function cosineSimilarityMatrix(a: Embeddings, b: Embeddings = a): number[][] {
  if (a.dim !== b.dim) throw new RangeError(`embedding sizes differ: ${a.dim} vs ${b.dim}`);
  const norms = (e: Embeddings) =>
    Array.from({ length: e.rows }, (_, i) => {
      let s = 0;
      for (let k = 0; k < e.dim; k++) s += e.data[i * e.dim + k] ** 2;
      return Math.sqrt(s);
    });
  const na = norms(a);
  const nb = norms(b);
  return Array.from({ length: a.rows }, (_, i) =>
    Array.from({ length: b.rows }, (_, j) => {
      let dot = 0;
      for (let k = 0; k < a.dim; k++) dot += a.data[i * a.dim + k] * b.data[j * b.dim + k];
      const d = na[i] * nb[j];
      return d > 0 ? dot / d : 0;
    }),
  );
}
