/**
 * Model-free encoders: a hashing bag of words (a cheap lexical baseline, and a stand-in to time
 * the evaluators' own overhead or to smoke-test a pipeline) and a fixed lookup table (tests,
 * precomputed embeddings).
 */
import type { Embeddings, SentenceEncoder } from '../embed/types.js';

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Hashing bag of words: lower-cased word tokens hashed into `dim` buckets with a ±1 sign. Cheap
 * enough that an evaluation's time with it is the evaluator's own overhead.
 */
export function hashingBowEncoder(dim = 256): SentenceEncoder & { calls: number; texts: number } {
  const enc = {
    calls: 0,
    texts: 0,
    async encode(texts: string[]): Promise<Embeddings> {
      enc.calls++;
      enc.texts += texts.length;
      const data = new Float32Array(texts.length * dim);
      texts.forEach((t, i) => {
        for (const w of t.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
          const h = fnv1a(w);
          data[i * dim + (h % dim)] += h & 0x80000000 ? -1 : 1;
        }
        data[i * dim] += 0.01; // no all-zero rows
      });
      return { data, rows: texts.length, dim };
    },
  };
  return enc;
}

/** An encoder from a fixed table text -> vector; unknown texts are an error. */
export function tableEncoder(table: Record<string, ArrayLike<number>>): SentenceEncoder & { seen: string[][] } {
  const enc = {
    seen: [] as string[][],
    async encode(texts: string[]): Promise<Embeddings> {
      enc.seen.push([...texts]);
      const dim = Object.values(table)[0]?.length ?? 0;
      const data = new Float32Array(texts.length * dim);
      texts.forEach((t, i) => {
        const v = table[t];
        if (!v) throw new Error(`tableEncoder: no vector for '${t}'`);
        data.set(v, i * dim);
      });
      return { data, rows: texts.length, dim };
    },
  };
  return enc;
}
