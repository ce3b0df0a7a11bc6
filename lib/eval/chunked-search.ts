/**
 * Exact inner-product top-k search on the active tfjs backend (the GPU on a GPU host), in bounded
 * memory: the corpus is visited in chunks of `chunkRows` rows and the queries in blocks of
 * `queryRows`; each (query block, chunk) pair is one `tf.matMul(Q, Cᵀ)` followed by `tf.topk` on
 * the device, and only the per-chunk top k′ (k′ = k, or k + 1 with an excluded row) comes back to
 * the host, where it is merged into each query's running top k.
 *
 * Order (the existing evaluator's, ./retrieval.ts, and faiss IndexFlatIP's up to its unspecified
 * tie order): higher score first, equal scores by lower corpus index. Scores are float32 dot
 * products, as faiss's; on this project's cuda backend the search switches its matmuls from TF32
 * (that backend's default, ~1e-3 relative) to exact fp32 for its duration, since TF32 rounding would
 * reorder near-equal scores (`exactMatmul: false` keeps TF32). `tf.topk` puts the lower index
 * first among equal values (tfjs-core's contract; cpu, wasm and this project's cuda kernel keep it),
 * and every later chunk holds higher indices than the entries already kept, so the merge is exact:
 * the result equals one unchunked search, score for score. NaN or infinite embeddings are an
 * error naming the row.
 *
 * Memory bound (bytes of tensors tfjs holds at any moment, `tf.memory().numBytes`; float32 and
 * int32 are 4 bytes): with d the dimension, q = min(queryRows, #queries), c = min(chunkRows,
 * #corpus rows), k′ = min(k + 1 if excluding else k, c),
 *
 *     device ≤ 4 · (c·d + q·d + q·c + 2·q·k′)
 *
 * — one corpus chunk, one query block, their score block, the top-k′ values and indices — whatever
 * the corpus size (`chunkedSearchMemoryBound` computes it; test/chunked-search.test.ts checks the
 * peak against it). The defaults (1024 queries × 32768 rows) give 4·(32768·768 + 1024·768 +
 * 1024·32768 + 2·1024·11) B ≈ 227 MiB at d = 768, k′ = 11, for a corpus of any size. Host memory besides the caller's matrices: the result,
 * #queries · k · 12 bytes (int32 index + float64 score), and one downloaded block, q·k′·8 bytes.
 * A corpus too big to hold on the host can be given as a `CorpusChunks` source that produces
 * each chunk when asked (e.g. reads it from disk); each chunk is asked for exactly once.
 */
import { tf } from '../backend/index.js';
import type { Embeddings } from '../embed/types.js';
import { InputError } from '../util/errors.js';
import type { TopK } from './retrieval.js';
import { insertTopK, ranksBefore } from './top-k.js';

/** A corpus produced chunk by chunk: rows [start, end) on request (each range asked for once, in order). */
export interface CorpusChunks {
  rows: number;
  dim: number;
  chunk(start: number, end: number): Embeddings | Promise<Embeddings>;
}

export interface ChunkedSearchOptions {
  /** Corpus rows per chunk (default 32768). */
  chunkRows?: number;
  /** Query rows per block (default 1024). */
  queryRows?: number;
  /** Per query, one corpus index to leave out (-1: none), e.g. the query itself. */
  exclude?: ArrayLike<number>;
  /** On the cuda backend, exact fp32 matmuls instead of TF32 during the search (default true). */
  exactMatmul?: boolean;
  /** Called after each chunk (progress; tests read tf.memory() here). */
  onChunk?: (info: { chunk: number; chunks: number; rowsDone: number }) => void;
}

export const DEFAULT_CHUNK_ROWS = 32768;
export const DEFAULT_QUERY_ROWS = 1024;

/** The device-memory bound of the file comment, in bytes, for a search of this shape. */
export function chunkedSearchMemoryBound(s: {
  queries: number;
  corpusRows: number;
  dim: number;
  k: number;
  exclude?: boolean;
  chunkRows?: number;
  queryRows?: number;
}): number {
  const c = Math.max(1, Math.min(s.chunkRows ?? DEFAULT_CHUNK_ROWS, s.corpusRows));
  const q = Math.max(1, Math.min(s.queryRows ?? DEFAULT_QUERY_ROWS, s.queries));
  const kk = Math.min(s.k + (s.exclude ? 1 : 0), c);
  return 4 * (c * s.dim + q * s.dim + q * c + 2 * q * kk);
}

function positiveInt(v: number, what: string): void {
  if (!Number.isInteger(v) || v < 1) throw new InputError(`chunked search: ${what} must be a positive integer, got ${v}`);
}

/** Throws naming the first non-finite value of `e` (rows counted from `offset`). */
function checkFinite(e: Embeddings, what: string, offset = 0): void {
  const { data, dim } = e;
  for (let i = 0; i < data.length; i++) {
    if (!Number.isFinite(data[i])) {
      throw new InputError(`chunked search: ${what} row ${offset + Math.floor(i / dim)} has ${data[i]} at dimension ${i % dim} (expected finite embeddings)`);
    }
  }
}

/** Runs `fn` with the cuda backend's matmuls in exact fp32 (other backends: as they are). */
async function withExactMatmul<T>(on: boolean, fn: () => Promise<T>): Promise<T> {
  if (!on || tf.getBackend() !== 'cuda') return fn();
  const { cudaBackend } = await import('../backend/cuda/index.js');
  const b = cudaBackend();
  if (!b) return fn();
  const before = b.matmulPrecision;
  b.matmulPrecision = 'fp32';
  try {
    return await fn();
  } finally {
    b.matmulPrecision = before;
  }
}

/** Exact top-k of every query row against every corpus row by inner product; see the file comment. */
export async function chunkedInnerProductSearch(
  queries: Embeddings,
  corpus: Embeddings | CorpusChunks,
  k: number,
  opts: ChunkedSearchOptions = {},
): Promise<TopK> {
  return withExactMatmul(opts.exactMatmul ?? true, () => search(queries, corpus, k, opts));
}

async function search(
  queries: Embeddings,
  corpus: Embeddings | CorpusChunks,
  k: number,
  opts: ChunkedSearchOptions = {},
): Promise<TopK> {
  positiveInt(k, 'k');
  const chunkRows = opts.chunkRows ?? DEFAULT_CHUNK_ROWS;
  const queryRows = opts.queryRows ?? DEFAULT_QUERY_ROWS;
  positiveInt(chunkRows, 'chunkRows');
  positiveInt(queryRows, 'queryRows');
  const nq = queries.rows;
  const nc = corpus.rows;
  const dim = corpus.dim;
  if (nq > 0 && nc > 0 && queries.dim !== dim) throw new InputError(`chunked search: queries have dimension ${queries.dim}, the corpus ${dim}`);
  if (queries.data.length !== nq * queries.dim) throw new InputError(`chunked search: queries hold ${queries.data.length} values for ${nq} rows of ${queries.dim}`);
  const exclude = opts.exclude;
  if (exclude && exclude.length !== nq) throw new InputError(`chunked search: exclude has ${exclude.length} entries for ${nq} queries`);
  checkFinite(queries, 'query');

  const indices = new Int32Array(nq * k).fill(-1);
  const scores = new Float64Array(nq * k).fill(Number.NEGATIVE_INFINITY);
  const chunks = Math.ceil(nc / chunkRows);
  const source = 'chunk' in corpus ? corpus : undefined;
  const matrix = source ? undefined : (corpus as Embeddings);
  if (matrix && matrix.data.length !== nc * dim) throw new InputError(`chunked search: the corpus holds ${matrix.data.length} values for ${nc} rows of ${dim}`);

  for (let ci = 0; ci < chunks; ci++) {
    const c0 = ci * chunkRows;
    const c1 = Math.min(nc, c0 + chunkRows);
    const cn = c1 - c0;
    let part: Embeddings;
    if (source) {
      part = await source.chunk(c0, c1);
      if (part.rows !== cn || part.dim !== dim || part.data.length !== cn * dim) {
        throw new InputError(`chunked search: the corpus source gave ${part.rows} rows of ${part.dim} (${part.data.length} values) for rows [${c0}, ${c1}) of dimension ${dim}`);
      }
    } else {
      part = { data: matrix!.data.subarray(c0 * dim, c1 * dim), rows: cn, dim };
    }
    checkFinite(part, 'corpus', c0);
    const kk = Math.min(k + (exclude ? 1 : 0), cn);
    const chunkT = tf.tensor2d(part.data, [cn, dim]);
    try {
      for (let q0 = 0; q0 < nq; q0 += queryRows) {
        const q1 = Math.min(nq, q0 + queryRows);
        const { values, idx } = tf.tidy(() => {
          const qT = tf.tensor2d(queries.data.subarray(q0 * dim, q1 * dim), [q1 - q0, dim]);
          const top = tf.topk(tf.matMul(qT, chunkT, false, true), kk, true);
          return { values: top.values, idx: top.indices };
        });
        let v: Float32Array;
        let ix: Int32Array;
        try {
          [v, ix] = (await Promise.all([values.data(), idx.data()])) as [Float32Array, Int32Array];
        } finally {
          values.dispose();
          idx.dispose();
        }
        for (let q = q0; q < q1; q++) {
          const ex = exclude ? exclude[q] : -1;
          const o = (q - q0) * kk;
          const base = q * k;
          // The chunk's list is sorted (score desc, index asc): once one entry fails to enter, the rest fail too.
          for (let r = 0; r < kk; r++) {
            const c = c0 + ix[o + r];
            if (c === ex) continue;
            const s = v[o + r];
            const last = base + k - 1;
            if (!ranksBefore(s, c, scores[last], indices[last])) break;
            insertTopK(scores, indices, base, k, s, c);
          }
        }
      }
    } finally {
      chunkT.dispose();
    }
    opts.onChunk?.({ chunk: ci, chunks, rowsDone: c1 });
  }
  return { k, rows: nq, indices, scores };
}
