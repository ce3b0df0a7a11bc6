/**
 * SentEval's bag-of-words baseline (examples/bow.py), exactly: a sentence's embedding is the mean
 * of the word vectors of its tokens, in float64.
 *
 * Reading the vector file (`get_wordvec`): UTF-8, line by line; `word, rest = line.split(' ', 1)`;
 * the vector is `np.fromstring(rest, sep=' ')` (float64, decimal strings correctly rounded, as
 * `Number()` parses them). bow.py skips no header, so a word2vec-style first line `4196 50`
 * becomes the word `4196` with the one-element vector [50]: we keep it the same way (a token
 * `4196` would then make SentEval fail in np.mean; we raise an error naming it instead). A word
 * seen twice keeps its last vector (dict assignment). bow.py keeps only words of the task's
 * dictionary; looking words up in the whole file gives the same embeddings.
 *
 * Embedding (`batcher`): an empty sentence becomes ['.']; the vectors of its tokens found in the
 * file (exact, case-sensitive; repeated tokens count each time) are added left to right and the
 * sum divided by their count (`np.mean(list, 0)`: this order reproduces SentEval's X bit for bit);
 * no token found: the zero vector of the file's dimension.
 */
import { readFileSync } from 'node:fs';
import type { Embeddings, SentenceEncoder } from '../../embed/types.js';
import { InputError } from '../../util/errors.js';
import { firstInvalidUtf8, lineOfOffset, pyFileLines } from '../../data/text.js';

export interface WordVectors {
  /** The vector length of (the majority of) the file's lines. */
  dim: number;
  vectors: Map<string, Float64Array>;
  /** Where each word was read, for errors. */
  lineOf: Map<string, number>;
  file: string;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Reads a GloVe/word2vec text file as bow.py's `get_wordvec` does (header line included as a word). */
export function readWordVectors(file: string): WordVectors {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    throw new InputError('missing word-vector file: expected lines "word v1 v2 ... vD" (e.g. glove.6B.50d.txt)', { file });
  }
  const bad = firstInvalidUtf8(buf);
  if (bad >= 0) throw new InputError(`byte ${bad} is not valid UTF-8 (bow.py opens the vector file as UTF-8)`, { file, line: lineOfOffset(buf, bad) });
  // a BOM stays part of the first word, as Python's utf-8 codec keeps it
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf);
  const vectors = new Map<string, Float64Array>();
  const lineOf = new Map<string, number>();
  const lengths = new Map<number, number>();
  pyFileLines(text).forEach((line, i) => {
    const sp = line.indexOf(' ');
    if (sp < 0) throw new InputError(`expected "word v1 v2 ... vD" (bow.py splits at the first space), found no space`, { file, line: i + 1 });
    const word = line.slice(0, sp);
    const fields = line
      .slice(sp + 1)
      .split(/[ \t\n\r\v\f]+/)
      .filter((f) => f.length > 0);
    const v = new Float64Array(fields.length);
    fields.forEach((f, k) => {
      if (!NUMBER.test(f)) throw new InputError(`expected a number in column ${k + 2} of word '${word}', found '${f}'`, { file, line: i + 1 });
      v[k] = Number(f);
    });
    vectors.set(word, v);
    lineOf.set(word, i + 1);
    lengths.set(v.length, (lengths.get(v.length) ?? 0) + 1);
  });
  if (vectors.size === 0) throw new InputError('empty word-vector file', { file });
  let dim = 0;
  let most = -1;
  for (const [len, count] of lengths) if (count > most) [dim, most] = [len, count];
  return { dim, vectors, lineOf, file };
}

/** Where a sentence came from, for error messages (task, split, row). */
export type RowName = (row: number) => string;

/**
 * bow.py's batcher over token lists: rows × dim float64, row r the mean vector of sentences[r].
 */
export function bowEmbed(wv: WordVectors, sentences: readonly (readonly string[])[], rowName: RowName = (r) => `sentence ${r}`): Float64Array {
  const d = wv.dim;
  const out = new Float64Array(sentences.length * d);
  const acc = new Float64Array(d);
  sentences.forEach((sent, r) => {
    const tokens = sent.length === 0 ? ['.'] : sent;
    acc.fill(0);
    let found = 0;
    for (const tok of tokens) {
      const v = wv.vectors.get(tok);
      if (v === undefined) continue;
      if (v.length !== d) {
        throw new InputError(
          `${rowName(r)}: token '${tok}' has a ${v.length}-element vector in the word-vector file (line ${wv.lineOf.get(tok)}), ` +
            `not ${d} (a header line read as a word, as bow.py reads it?); SentEval's np.mean would fail here too`,
          { file: wv.file, line: wv.lineOf.get(tok) },
        );
      }
      // the first vector is copied, not added to zeros: np.mean starts its sum from the first row
      if (found === 0) acc.set(v);
      else for (let k = 0; k < d; k++) acc[k] += v[k];
      found++;
    }
    const o = r * d;
    if (found > 0) for (let k = 0; k < d; k++) out[o + k] = acc[k] / found;
  });
  return out;
}

/** Python `s.split()` on a sentence we joined with single spaces (lib/data/transfer.ts): its tokens again. */
export function tokensOf(text: string): string[] {
  return text.split(' ').filter((t) => t.length > 0);
}

/**
 * The bag-of-words baseline as a SentenceEncoder (float32, as the interface carries): texts are
 * split at spaces into tokens. For SentEval's exact float64 X use `bowEmbed`.
 */
export function bowEncoder(wv: WordVectors): SentenceEncoder {
  return {
    async encode(texts: string[]): Promise<Embeddings> {
      const x = bowEmbed(
        wv,
        texts.map((t) => tokensOf(t)),
        (r) => `text ${r} ('${texts[r].slice(0, 60)}')`,
      );
      return { data: Float32Array.from(x), rows: texts.length, dim: wv.dim };
    },
  };
}
