/**
 * Sentence-BERT's regression objective for graded labels (sentence-transformers
 * `CosineSimilarityLoss`, Reimers & Gurevych 2019): on a zigzag pair batch (./batch.ts),
 *
 *   L = (1/P) Σ_k (cos(u_k, v_k) − y_k / scale)²
 *
 * the mean squared error between the pair's cosine and its label brought to [0, 1] (`scale`: the
 * label range, 5 for STS-B's 0..5, as sentence-transformers' STS-B example normalises). A label
 * outside [0, scale] is an error (the regression target would leave the cosine's range).
 */
import { tf } from '../backend/index.js';
import { pairCount, splitPairs } from './batch.js';
import { rowCosine } from './similarity.js';
import { assertEmbeddings, checkLabels, checkPositive } from './validate.js';
import { InputError } from '../util/errors.js';
import { defineLoss, withoutParameters } from './registry.js';

export const SBERT_COSINE_OBJECTIVE = 'SBERT cosine-similarity regression';

export interface SbertCosineOptions {
  /** The label range: labels are divided by it (default 5, STS-B). */
  scale?: number;
}

export function sbertCosineLoss(emb: tf.Tensor2D, labels: ArrayLike<number>, opts: SbertCosineOptions = {}): tf.Scalar {
  const scale = checkPositive(opts.scale ?? 5, 'scale', SBERT_COSINE_OBJECTIVE);
  assertEmbeddings(emb, SBERT_COSINE_OBJECTIVE);
  const pairs = pairCount(emb.shape[0], SBERT_COSINE_OBJECTIVE);
  const y = checkLabels(labels, pairs, SBERT_COSINE_OBJECTIVE);
  const bad = y.findIndex((v) => v < 0 || v > scale);
  if (bad >= 0) throw new InputError(`${SBERT_COSINE_OBJECTIVE}: pair ${bad} has label ${y[bad]}, outside [0, ${scale}] (set the scale to the label range)`);
  return tf.tidy(() => {
    const { first, second } = splitPairs(emb, SBERT_COSINE_OBJECTIVE);
    const target = tf.tensor1d(Float32Array.from(y, (v) => v / scale));
    return tf.mean(tf.squaredDifference(rowCosine(first, second), target)) as tf.Scalar;
  });
}

/** Registration of objective `sbert-cosine`: SBERT's cosine regression on graded pairs. */
export const SBERT_COSINE_LOSS = defineLoss({
  name: 'sbert-cosine',
  summary: 'Sentence-BERT cosine-similarity regression (graded pair labels / scale)',
  options: { scale: true } satisfies Record<keyof SbertCosineOptions, true>,
  kinds: ['pairs'],
  bind: (config: { scale?: number }) => withoutParameters((emb, b) => ({ total: sbertCosineLoss(emb, b.labels, { scale: config.scale }), terms: {} })),
});
