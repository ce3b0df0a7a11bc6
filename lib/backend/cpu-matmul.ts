/**
 * BatchMatMul for tfjs-backend-cpu, bit for bit the stock kernel's numbers, two to three times
 * faster: the stock kernel is most of a CPU training step (58% of the golden BERT replay's time,
 * profiled 2026-11-28), because its inner loop recomputes strided addresses for both operands.
 *
 * The stock kernel's arithmetic, which this one keeps exactly: the shared dimension is cut into
 * blocks of `backend.blockSize` (48); within a block the products a·b (float32 × float32, exact in
 * float64) are summed in float64 in increasing k, starting from 0; each block's sum is added to the
 * float32 output element (`out += sum`, i.e. fround(out + sum)) in increasing block order. The order
 * in which output elements are computed does not matter, so this kernel first lays both operands out
 * with k contiguous (A as M×K rows, B as N×K rows, a copy only where the stored layout differs), then
 * computes two rows × four columns of the output at a time, sharing each load.
 *
 * Batch broadcasting is the stock kernel's: output batch bi reads A's batch bi mod batchA and B's bi
 * mod batchB. Dtypes other than float32 (and complex) go to the stock kernel.
 */

/** C[b] (M×N) = A[b mod batchA] · B[b mod batchB], A and B as stored (see the transpose flags). */
export function blockedBatchMatMul(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  dims: { batchA: number; batchB: number; M: number; N: number; K: number; transposeA: boolean; transposeB: boolean },
  blockSize: number,
): Float32Array {
  const { batchA, batchB, M, N, K, transposeA, transposeB } = dims;
  const batch = Math.max(batchA, batchB);
  const out = new Float32Array(batch * M * N);
  if (M === 0 || N === 0 || K === 0) return out;
  // A as M×K rows and B as N×K rows for each stored batch, packed once (B's batches are often one
  // weight matrix shared by every output batch).
  const aRows = packRows(a, batchA, M, K, transposeA);
  const bRows = packRows(b, batchB, N, K, !transposeB);
  for (let bi = 0; bi < batch; bi++) {
    const ao = (bi % batchA) * M * K;
    const bo = (bi % batchB) * N * K;
    matMulRows(aRows, ao, bRows, bo, out, bi * M * N, M, N, K, blockSize);
  }
  return out;
}

/**
 * Each of `batch` stored matrices as rows×K with k contiguous. `transposed` says the stored matrix is
 * K×rows (so it is transposed here); otherwise the input is returned as is (a Float32Array view).
 */
function packRows(x: ArrayLike<number>, batch: number, rows: number, K: number, transposed: boolean): Float32Array {
  if (!transposed) return x instanceof Float32Array ? x : Float32Array.from(x);
  const out = new Float32Array(batch * rows * K);
  for (let bt = 0; bt < batch; bt++) {
    const o = bt * rows * K;
    for (let k = 0; k < K; k++) {
      const src = o + k * rows;
      for (let r = 0; r < rows; r++) out[o + r * K + k] = x[src + r];
    }
  }
  return out;
}

/** out[oo + i·N + j] = Σ_k A[ao + i·K + k] · B[bo + j·K + k], with the stock kernel's rounding. */
function matMulRows(A: Float32Array, ao: number, B: Float32Array, bo: number, out: Float32Array, oo: number, M: number, N: number, K: number, bs: number): void {
  let i = 0;
  for (; i + 1 < M; i += 2) {
    const a0 = ao + i * K;
    const a1 = a0 + K;
    let j = 0;
    for (; j + 3 < N; j += 4) {
      const b0 = bo + j * K;
      const b1 = b0 + K;
      const b2 = b1 + K;
      const b3 = b2 + K;
      let c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      for (let k0 = 0; k0 < K; k0 += bs) {
        const kEnd = k0 + bs < K ? k0 + bs : K;
        let s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
        for (let k = k0; k < kEnd; k++) {
          const x0 = A[a0 + k];
          const x1 = A[a1 + k];
          const y0 = B[b0 + k];
          const y1 = B[b1 + k];
          const y2 = B[b2 + k];
          const y3 = B[b3 + k];
          s00 += x0 * y0;
          s01 += x0 * y1;
          s02 += x0 * y2;
          s03 += x0 * y3;
          s10 += x1 * y0;
          s11 += x1 * y1;
          s12 += x1 * y2;
          s13 += x1 * y3;
        }
        c00 = Math.fround(c00 + s00);
        c01 = Math.fround(c01 + s01);
        c02 = Math.fround(c02 + s02);
        c03 = Math.fround(c03 + s03);
        c10 = Math.fround(c10 + s10);
        c11 = Math.fround(c11 + s11);
        c12 = Math.fround(c12 + s12);
        c13 = Math.fround(c13 + s13);
      }
      const r0 = oo + i * N + j;
      const r1 = r0 + N;
      out[r0] = c00;
      out[r0 + 1] = c01;
      out[r0 + 2] = c02;
      out[r0 + 3] = c03;
      out[r1] = c10;
      out[r1 + 1] = c11;
      out[r1 + 2] = c12;
      out[r1 + 3] = c13;
    }
    for (; j < N; j++) {
      out[oo + i * N + j] = dotBlocked(A, a0, B, bo + j * K, K, bs);
      out[oo + (i + 1) * N + j] = dotBlocked(A, a1, B, bo + j * K, K, bs);
    }
  }
  for (; i < M; i++) for (let j = 0; j < N; j++) out[oo + i * N + j] = dotBlocked(A, ao + i * K, B, bo + j * K, K, bs);
}

/** One output element: float64 sums per block of bs, each added to a float32 accumulator. */
function dotBlocked(A: Float32Array, a: number, B: Float32Array, b: number, K: number, bs: number): number {
  let c = 0;
  for (let k0 = 0; k0 < K; k0 += bs) {
    const kEnd = k0 + bs < K ? k0 + bs : K;
    let s = 0;
    for (let k = k0; k < kEnd; k++) s += A[a + k] * B[b + k];
    c = Math.fround(c + s);
  }
  return c;
}
