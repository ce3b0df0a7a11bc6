/**
 * Small float helpers shared by the evaluators: embedding each distinct sentence once, cosine
 * of index pairs, L2 normalisation. Plain typed-array loops: the math here is O(n·d) and the
 * encoder dominates.
 */
import type { EncodeOptions, Embeddings, SentenceEncoder } from '../embed/types.js';

/** Distinct texts in first-seen order, and for every input its row among them. */
export function dedupe(texts: readonly string[]): { unique: string[]; index: Uint32Array } {
  const pos = new Map<string, number>();
  const unique: string[] = [];
  const index = new Uint32Array(texts.length);
  for (let i = 0; i < texts.length; i++) {
    let p = pos.get(texts[i]);
    if (p === undefined) {
      p = unique.length;
      pos.set(texts[i], p);
      unique.push(texts[i]);
    }
    index[i] = p;
  }
  return { unique, index };
}

/** Checks that an encoder returned one `dim`-wide row per text. */
export function checkEmbeddings(e: Embeddings, n: number, who = 'encoder'): void {
  if (e.rows !== n || e.data.length !== e.rows * e.dim || !(e.dim > 0)) {
    throw new Error(`${who} returned ${e.rows} rows x ${e.dim} dims (${e.data.length} values) for ${n} texts: expected ${n} rows`);
  }
}

/** Embeds the distinct texts once; `index[i]` is the row of `texts[i]`. */
export async function embedUnique(
  encoder: SentenceEncoder,
  texts: readonly string[],
  opts?: EncodeOptions,
): Promise<{ emb: Embeddings; index: Uint32Array; unique: string[] }> {
  const { unique, index } = dedupe(texts);
  const emb = unique.length > 0 ? await encoder.encode(unique, opts) : { data: new Float32Array(0), rows: 0, dim: 0 };
  if (unique.length > 0) checkEmbeddings(emb, unique.length);
  return { emb, index, unique };
}

/**
 * Cosine between rows ia[k] and ib[k], accumulated in float64. As SentEval: non-finite entries
 * count as 0 (`np.nan_to_num`) and an undefined cosine (a zero vector) is 0.
 */
export function pairCosines(e: Embeddings, ia: ArrayLike<number>, ib: ArrayLike<number>): Float64Array {
  const { data, dim } = e;
  const n = ia.length;
  const out = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const oa = ia[k] * dim;
    const ob = ib[k] * dim;
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let j = 0; j < dim; j++) {
      let a = data[oa + j];
      let b = data[ob + j];
      if (!Number.isFinite(a)) a = Number.isNaN(a) ? 0 : Math.sign(a) * 3.4028234663852886e38;
      if (!Number.isFinite(b)) b = Number.isNaN(b) ? 0 : Math.sign(b) * 3.4028234663852886e38;
      dot += a * b;
      na += a * a;
      nb += b * b;
    }
    const c = dot / (Math.sqrt(na) * Math.sqrt(nb));
    out[k] = Number.isFinite(c) ? c : 0;
  }
  return out;
}

/**
 * Row-wise L2 normalisation with faiss `normalize_L2`'s float32 arithmetic: squared norm
 * accumulated in float32, inv = 1 / sqrt(norm²) in float32, each entry x·inv rounded to
 * float32; a zero row stays zero. The reference retrieval numbers come from faiss, and for
 * nearly parallel embeddings (a random model's `cls`) ranks hinge on these last bits: with
 * float64 norms the golden Flickr30k other-4 recall came out 69/4000 hits, with faiss's float32
 * arithmetic 71/4000, the golden value.
 */
export function normalizeRows(e: Embeddings): Embeddings {
  const { data, rows, dim } = e;
  const f = Math.fround;
  const out = new Float32Array(data.length);
  for (let i = 0; i < rows; i++) {
    const o = i * dim;
    let s = 0;
    for (let j = 0; j < dim; j++) s = f(s + f(data[o + j] * data[o + j]));
    const inv = s > 0 ? f(1 / f(Math.sqrt(s))) : 0;
    for (let j = 0; j < dim; j++) out[o + j] = data[o + j] * inv;
  }
  return { data: out, rows, dim };
}

/** Copies rows `idx` of `e` into a new matrix. */
export function gatherRows(e: Embeddings, idx: ArrayLike<number>): Embeddings {
  const out = new Float32Array(idx.length * e.dim);
  for (let k = 0; k < idx.length; k++) out.set(e.data.subarray(idx[k] * e.dim, (idx[k] + 1) * e.dim), k * e.dim);
  return { data: out, rows: idx.length, dim: e.dim };
}

/**
 * Wraps an encoder so that each distinct text is embedded at most once over the wrapper's life
 * (e.g. STS-B test sentences shared by the STS suite and alignment/uniformity).
 */
export function cachingEncoder(encoder: SentenceEncoder): SentenceEncoder & { size(): number } {
  const cache = new Map<string, Float32Array>();
  let dim = 0;
  return {
    size: () => cache.size,
    async encode(texts: string[], opts?: EncodeOptions): Promise<Embeddings> {
      const missing = dedupe(texts.filter((t) => !cache.has(t))).unique;
      if (missing.length > 0) {
        const e = await encoder.encode(missing, opts);
        checkEmbeddings(e, missing.length);
        dim = e.dim;
        for (let i = 0; i < missing.length; i++) cache.set(missing[i], e.data.slice(i * e.dim, (i + 1) * e.dim));
      }
      const out = new Float32Array(texts.length * dim);
      for (let i = 0; i < texts.length; i++) out.set(cache.get(texts[i])!, i * dim);
      return { data: out, rows: texts.length, dim };
    },
  };
}

/**
 * Cosine as SentEval computes it on float32 embeddings (`np.dot(u, v) / (norm(u) * norm(v))`,
 * every operation rounded to float32; sequential accumulation, where BLAS may use another
 * order). Rounding to float32 creates ties when cosines crowd near 1, which moves Spearman;
 * the golden check uses this to measure how reproducible a reference number is.
 */
export function pairCosinesF32(e: Embeddings, ia: ArrayLike<number>, ib: ArrayLike<number>): Float64Array {
  const f = Math.fround;
  const { data, dim } = e;
  const out = new Float64Array(ia.length);
  for (let k = 0; k < ia.length; k++) {
    const oa = ia[k] * dim;
    const ob = ib[k] * dim;
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let j = 0; j < dim; j++) {
      const a = data[oa + j];
      const b = data[ob + j];
      dot = f(dot + f(a * b));
      na = f(na + f(a * a));
      nb = f(nb + f(b * b));
    }
    const c = f(dot / f(f(Math.sqrt(na)) * f(Math.sqrt(nb))));
    out[k] = Number.isFinite(c) ? c : 0;
  }
  return out;
}
