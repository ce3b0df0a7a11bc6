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
  return tf.tidy(() => rankingLossWithPenalty(scores, tf.tensor2d(penalty, [n, n])));
}

/**
 * The dense rank of each label among `labels` (0 for the smallest; equal labels share a rank):
 * ranks[i] < ranks[j] exactly when labels[i] < labels[j], which is all the ranking objective reads
 * of its labels. Compared as integers on the device, ranks give the comparisons the host makes in
 * float64 (float32 labels could tie where the float64 ones do not).
 */
export function labelRanks(labels: Float64Array): Int32Array {
  const distinct = [...new Set(labels)].sort((a, b) => a - b);
  const rank = new Map(distinct.map((v, i) => [v, i]));
  return Int32Array.from(labels, (y) => rank.get(y)!);
}

/**
 * pairwiseRankingLoss with its mask built on the device from `ranks` (int32 [n], labelRanks of the
 * labels): the same values bit for bit (the mask is 0 or float32(1e12) either way), and no host data
 * that depends on the labels but the ranks themselves, which a step graph can feed
 * (lib/train/step-graphs.ts).
 */
export function pairwiseRankingLossByRank(scores: tf.Tensor1D, ranks: tf.Tensor1D): tf.Scalar {
  const n = ranks.shape[0];
  if (scores.shape[0] !== n) throw new Error(`pairwiseRankingLossByRank: ${scores.shape[0]} scores for ${n} ranks`);
  return tf.tidy(() => {
    const unordered = tf.greaterEqual(tf.reshape(ranks, [n, 1]), tf.reshape(ranks, [1, n]));
    return rankingLossWithPenalty(scores, tf.mul(tf.cast(unordered, 'float32'), tf.scalar(MASKED)) as tf.Tensor2D);
  });
}

/** log(1 + Σ exp(s_i − s_j − penalty_ij)) over every (i, j): the penalty is 0 for ordered pairs, 1e12 for the rest. */
function rankingLossWithPenalty(scores: tf.Tensor1D, penalty: tf.Tensor2D): tf.Scalar {
  const n = scores.shape[0];
  const diff = tf.sub(tf.reshape(scores, [n, 1]), tf.reshape(scores, [1, n]));
  const masked = tf.reshape(tf.sub(diff, penalty), [n * n]);
  return tf.logSumExp(tf.concat([tf.zeros([1]), masked])) as tf.Scalar;
}
