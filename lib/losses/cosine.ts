/**
 * AnglE's cosine objective (CoSENT) on a zigzag pair batch (see ./batch.ts):
 *
 *   s_k = tau · cos(e_2k, e_2k+1),   L = log(1 + Σ_{y_i < y_j} exp(s_i − s_j))
 *
 * tau is a multiplier (AnglE's `cosine_tau`, default 20 = temperature 0.05). Labels are any
 * ordinal scores, one per pair (binary 0/1, STS 0..5, ...); only their order matters.
 * Defined edge cases: all labels equal, or a single pair, gives L = log(1 + 0) = 0 (no ordered
 * pair to penalise) with a zero gradient.
 *
 * Golden-checked against `angle_emb/loss.py::cosine_loss` (v0.6.1): cases `cosine_tau*_*`.
 */
import { tf } from '../backend/index.js';
import { pairCount, splitPairs } from './batch.js';
import { pairwiseRankingLoss, pairwiseRankingLossByRank } from './ranking.js';
import { rowCosine } from './similarity.js';
import { InputError } from '../util/errors.js';
import { assertEmbeddings, checkLabels, checkPositive } from './validate.js';

export const COSINE_OBJECTIVE = 'cosine (CoSENT)';

export interface CosineLossOptions {
  /** Scale applied to the cosines (AnglE: 20). */
  tau?: number;
}

/** The pair scores tau · cos(e_2k, e_2k+1), shape [pairs]. */
export function cosinePairScores(emb: tf.Tensor2D, tau = 20): tf.Tensor1D {
  return tf.tidy(() => {
    const { first, second } = splitPairs(emb, COSINE_OBJECTIVE);
    return tf.mul(rowCosine(first, second), tf.scalar(tau)) as tf.Tensor1D;
  });
}

/** CoSENT loss of a zigzag batch `emb` [2P, D] with one label per pair. */
export function cosineLoss(emb: tf.Tensor2D, labels: ArrayLike<number>, opts: CosineLossOptions = {}): tf.Scalar {
  const tau = checkPositive(opts.tau ?? 20, 'tau', COSINE_OBJECTIVE);
  assertEmbeddings(emb, COSINE_OBJECTIVE);
  const pairs = pairCount(emb.shape[0], COSINE_OBJECTIVE);
  const y = checkLabels(labels, pairs, COSINE_OBJECTIVE);
  return tf.tidy(() => pairwiseRankingLoss(cosinePairScores(emb, tau), y));
}

/** cosineLoss with the pair order given as labelRanks of the labels on the device (int32 [pairs]): the same value and gradient bit for bit. */
export function cosineLossByRank(emb: tf.Tensor2D, ranks: tf.Tensor1D, opts: CosineLossOptions = {}): tf.Scalar {
  const tau = checkPositive(opts.tau ?? 20, 'tau', COSINE_OBJECTIVE);
  assertEmbeddings(emb, COSINE_OBJECTIVE);
  const pairs = pairCount(emb.shape[0], COSINE_OBJECTIVE);
  if (ranks.shape[0] !== pairs) throw new InputError(`${COSINE_OBJECTIVE}: got ${ranks.shape[0]} label ranks for ${pairs} pairs (expected one per pair)`);
  return tf.tidy(() => pairwiseRankingLossByRank(cosinePairScores(emb, tau), ranks));
}
