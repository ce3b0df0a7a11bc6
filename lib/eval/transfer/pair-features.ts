/**
 * SentEval's MRPC pair features (senteval/mrpc.py): for the embeddings A (sentence 1) and B
 * (sentence 2) of the same rows, `np.c_[np.abs(A - B), A * B]`: 2·d columns per row, columns
 * 0..d-1 = |A − B| and d..2d-1 = A ⊙ B, in float64 (bit for bit what numpy computes: one
 * subtraction then abs, one product).
 */
import type { Matrix } from './matrix.js';

export function pairFeatures(a: Matrix, b: Matrix): Matrix {
  if (a.rows !== b.rows || a.cols !== b.cols) throw new RangeError(`pairFeatures: A is ${a.rows} × ${a.cols}, B is ${b.rows} × ${b.cols}`);
  const d = a.cols;
  const out = new Float64Array(a.rows * 2 * d);
  for (let i = 0; i < a.rows; i++) {
    const o = i * 2 * d;
    for (let k = 0; k < d; k++) {
      const u = a.data[i * d + k];
      const v = b.data[i * d + k];
      out[o + k] = Math.abs(u - v);
      out[o + d + k] = u * v;
    }
  }
  return { data: out, rows: a.rows, cols: 2 * d };
}
