/**
 * The pairwise ranking objective shared by CoSENT (cosine) and the angle objective:
 *
 *   L = log(1 + Σ_{(i, j): y_i < y_j} exp(s_i − s_j))
 *
 * i.e. every pair of examples whose gold order is i below j is penalised when i's score is not
 * below j's. Computed as logsumexp over [0] ∪ {s_i − s_j} with the non-ordered entries pushed to
 * −1e12 (as AnglE's code does), so it is stable for large scaled scores.
 *
 * Ties (y_i = y_j) contribute nothing; when all labels are equal (or there is a single pair) no
 * ordered pair exists and L = log(1 + 0) = 0 with a zero gradient.
 */
import { tf } from '../backend/index.js';

const MASKED = 1e12;

/** `scores` [n] (already scaled by tau); `labels` one per score. */
export function pairwiseRankingLoss(scores: tf.Tensor1D, labels: Float64Array): tf.Scalar {
  const n = labels.length;
  if (scores.shape[0] !== n) throw new Error(`pairwiseRankingLoss: ${scores.shape[0]} scores for ${n} labels`);
  const penalty = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) penalty[i * n + j] = labels[i] < labels[j] ? 0 : MASKED;
  return tf.tidy(() => {
    const diff = tf.sub(tf.reshape(scores, [n, 1]), tf.reshape(scores, [1, n]));
    const masked = tf.reshape(tf.sub(diff, tf.tensor2d(penalty, [n, n])), [n * n]);
    return tf.logSumExp(tf.concat([tf.zeros([1]), masked])) as tf.Scalar;
  });
}
