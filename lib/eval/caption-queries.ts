/**
 * Flickr30k caption retrieval query by query (AnglE §4.5), for a bootstrap over queries and for
 * showing what a model retrieved. The definitions are ./retrieval.ts `captionRetrieval`'s (golden-
 * checked), computed with the chunked device search (./chunked-search.ts) so that a large corpus
 * runs on the GPU in bounded memory:
 *
 * - embeddings L2-normalised as faiss `normalize_L2` does (./vectors.ts normalizeRows);
 * - query = caption `perImage·i` (the first of image i); corpus = every caption, the query included,
 *   as the paper searches it; exact inner product, ties by lower index;
 * - strict hit of query i: its top `perImage` is exactly image i's `perImage` captions (itself among
 *   them); strict accuracy = the mean of the hits (AnglE 12.9%, SimCSE-sup 10.4%, SBERT 5.2%);
 * - recall@k of query i: the share of image i's other `perImage − 1` captions among the top k of the
 *   corpus without the query itself; recall@k = its mean over queries.
 *
 * One search of top-(max(perImage, kMax + 1)) with the query in the corpus gives both: its first
 * `perImage` entries are the strict list, and dropping the query (or the last entry when the query
 * is not in the list) gives the exact top-kMax without it.
 */
import type { EncodeOptions, Embeddings, SentenceEncoder } from '../embed/types.js';
import { loadFlickr30kCaptions, type CaptionSet } from '../data/flickr.js';
import type { LoadOptions } from '../data/sts.js';
import { InputError } from '../util/errors.js';
import { chunkedInnerProductSearch, chunkedSearchMemoryBound, type ChunkedSearchOptions } from './chunked-search.js';
import { dropFromTopK, sliceTopK } from './retrieval.js';
import { embedUnique, gatherRows, normalizeRows } from './vectors.js';

export interface CaptionQueries {
  images: number;
  captions: number;
  perImage: number;
  /** Per query (image), 1 when its top `perImage` is exactly its image's captions. */
  strict: Uint8Array;
  strictAccuracy: number;
  /** Per k: the per-query recall of the other captions among the top k (query excluded), and its mean. */
  recall: Record<number, { perQuery: Float64Array; mean: number }>;
  /** Per query, its top `perImage` with the query in the corpus (the list the strict rule judges): corpus indices and scores. */
  top: { indices: Int32Array; scores: Float64Array; k: number };
  /** The search's shape and its device-memory bound (bytes). */
  search: { k: number; chunkRows?: number; queryRows?: number; memoryBoundBytes: number; seconds: number };
}

/** Per-query caption retrieval from the embeddings of all captions (file order, `perImage` per image). */
export async function captionRetrievalQueries(
  emb: Embeddings,
  perImage = 5,
  opts: { ks?: readonly number[]; search?: Omit<ChunkedSearchOptions, 'exclude'> } = {},
): Promise<CaptionQueries> {
  if (!Number.isInteger(perImage) || perImage < 2) throw new InputError(`caption retrieval: captions per image must be an integer >= 2, got ${perImage}`);
  if (emb.rows === 0 || emb.rows % perImage !== 0) throw new InputError(`caption retrieval needs a positive multiple of ${perImage} captions, got ${emb.rows}`);
  const ks = [...new Set(opts.ks ?? [1, 5, 10])].sort((a, b) => a - b);
  for (const k of ks) if (!Number.isInteger(k) || k < 1) throw new InputError(`caption retrieval: recall@k needs positive integers, got ${k}`);
  const images = emb.rows / perImage;
  const corpus = normalizeRows(emb);
  const qIdx = Array.from({ length: images }, (_, i) => i * perImage);
  const queries = gatherRows(corpus, qIdx);
  const kMax = Math.max(perImage, ...ks);
  const kSearch = Math.max(perImage, kMax + 1);
  const t0 = performance.now();
  const top = await chunkedInnerProductSearch(queries, corpus, kSearch, opts.search);
  const seconds = (performance.now() - t0) / 1000;
  const withSelf = sliceTopK(top, perImage);
  const noSelf = dropFromTopK(top, qIdx, kMax);

  const strict = new Uint8Array(images);
  for (let i = 0; i < images; i++) {
    let all = true;
    for (let r = 0; r < perImage && all; r++) {
      const c = withSelf.indices[i * perImage + r];
      all = c >= i * perImage && c < (i + 1) * perImage;
    }
    strict[i] = all ? 1 : 0;
  }
  const recall: CaptionQueries['recall'] = {};
  for (const k of ks) {
    const perQuery = new Float64Array(images);
    for (let i = 0; i < images; i++) {
      let hit = 0;
      for (let r = 0; r < k; r++) {
        const c = noSelf.indices[i * kMax + r];
        if (c > i * perImage && c < (i + 1) * perImage) hit++;
      }
      perQuery[i] = hit / (perImage - 1);
    }
    recall[k] = { perQuery, mean: mean(perQuery) };
  }
  return {
    images,
    captions: emb.rows,
    perImage,
    strict,
    strictAccuracy: mean(strict),
    recall,
    top: { indices: withSelf.indices, scores: withSelf.scores, k: perImage },
    search: {
      k: kSearch,
      chunkRows: opts.search?.chunkRows,
      queryRows: opts.search?.queryRows,
      memoryBoundBytes: chunkedSearchMemoryBound({ queries: images, corpusRows: emb.rows, dim: emb.dim, k: kSearch, ...opts.search }),
      seconds,
    },
  };
}

function mean(a: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i];
  return a.length > 0 ? s / a.length : Number.NaN;
}

/** Embeds a Flickr30k split's captions (each distinct caption once) and scores every query. */
export async function evaluateFlickr30kQueries(
  encoder: SentenceEncoder,
  opts: LoadOptions & { split?: 'test' | 'dev'; ks?: readonly number[]; encode?: EncodeOptions; search?: Omit<ChunkedSearchOptions, 'exclude'> } = {},
): Promise<CaptionQueries & { set: CaptionSet; encodeSeconds: number }> {
  const { split, ks, encode, search, ...load } = opts;
  const set = loadFlickr30kCaptions(split ?? 'test', load);
  const t0 = performance.now();
  const { emb, index } = await embedUnique(encoder, set.captions, encode);
  const encodeSeconds = (performance.now() - t0) / 1000;
  const r = await captionRetrievalQueries(gatherRows(emb, index), set.captionsPerImage, { ks, search });
  return { ...r, set, encodeSeconds };
}
