/**
 * Binary pair tasks scored as STS (AnglE's MRPC / QQP / QNLI / GitHub Issues columns): Spearman
 * between the cosine of the two sentence embeddings and the 0/1 label.
 */
import type { EncodeOptions, SentenceEncoder } from '../embed/types.js';
import { loadBinaryTask } from '../data/pairs.js';
import type { BinaryTaskName } from '../data/registry.js';
import type { ScoredPair } from '../data/sts.js';
import { spearman } from './spearman.js';
import { embedUnique, pairCosines } from './vectors.js';

export interface BinaryStsResult {
  task?: BinaryTaskName;
  n: number;
  positives: number;
  spearman: number;
  percent: number;
  cosines: Float64Array;
  labels: Float64Array;
}

/** Spearman(cosine, label) over pairs whose `score` is the 0/1 label. */
export async function evaluateBinaryPairs(
  encoder: SentenceEncoder,
  pairs: readonly ScoredPair[],
  opts: { encode?: EncodeOptions; task?: BinaryTaskName } = {},
): Promise<BinaryStsResult> {
  const name = opts.task ?? 'binary pairs';
  if (pairs.length < 2) throw new RangeError(`${name}: evaluation set has ${pairs.length} pairs, needs at least 2`);
  const texts: string[] = [];
  const labels = new Float64Array(pairs.length);
  let positives = 0;
  pairs.forEach((p, k) => {
    if (p.score !== 0 && p.score !== 1) {
      throw new RangeError(`${name}: label ${p.score} at ${p.source.file}:${p.source.line} is not 0/1`);
    }
    texts.push(p.a, p.b);
    labels[k] = p.score;
    positives += p.score;
  });
  if (positives === 0 || positives === pairs.length) {
    throw new RangeError(`${name}: all ${pairs.length} labels are ${positives === 0 ? 0 : 1}; Spearman against a constant is undefined`);
  }
  const { emb, index } = await embedUnique(encoder, texts, opts.encode);
  const ia = new Uint32Array(pairs.length);
  const ib = new Uint32Array(pairs.length);
  for (let k = 0; k < pairs.length; k++) {
    ia[k] = index[2 * k];
    ib[k] = index[2 * k + 1];
  }
  const cosines = pairCosines(emb, ia, ib);
  const rho = spearman(cosines, labels);
  return { task: opts.task, n: pairs.length, positives, spearman: rho, percent: rho * 100, cosines, labels };
}

/** Loads a binary task's labelled evaluation split from the data root and scores it. */
export async function evaluateBinaryTask(
  encoder: SentenceEncoder,
  task: BinaryTaskName,
  opts: { dataDir?: string; encode?: EncodeOptions } = {},
): Promise<BinaryStsResult> {
  const set = loadBinaryTask(task, { dataDir: opts.dataDir });
  return evaluateBinaryPairs(encoder, set.pairs, { encode: opts.encode, task });
}
