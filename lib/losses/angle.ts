/**
 * AnglE's angle objective on a zigzag pair batch (see ./batch.ts).
 *
 * Each embedding is split into halves [re; im] (so the dimension must be even) and read as a
 * vector of complex numbers. For pair k with u = a + bi (row 2k) and w = c + di (row 2k+1):
 *
 *   re = (a·c + b·d) / Σ(c² + d²),   im = (b·c − a·d) / Σ(c² + d²)      (element-wise, sums over dims)
 *   re, im  ←  re, im divided by (‖(a, b)‖ / ‖(c, d)‖)
 *   score_k = tau · |pool(concat(re, im))|
 *   L = log(1 + Σ_{y_i < y_j} exp(score_i − score_j))
 *
 * `pool` is 'sum' (AnglE's default, the paper's Δθ) or 'mean' (the sum divided by the full
 * embedding dimension D, as `torch.mean` over the concatenated [re, im]). The paper uses tau = 1;
 * AnglE's later `AngleLoss` default is 20. Edge cases: odd D -> error (no equal halves; PyTorch's
 * chunk would give unequal halves and fail); a zero embedding row -> error (division by zero);
 * all labels equal or a single pair -> 0.
 *
 * Golden-checked against `angle_emb/loss.py::angle_loss` (v0.6.1): cases `angle_tau*_*`.
 */
import { tf } from '../backend/index.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import { pairCount, splitPairs } from './batch.js';
import { pairwiseRankingLoss, pairwiseRankingLossByRank } from './ranking.js';
import { assertEmbeddings, checkLabels, checkPositive, readScalar } from './validate.js';
import { capturingStep } from '../backend/step-graph.js';

export const ANGLE_OBJECTIVE = 'angle';

export type AnglePooling = 'sum' | 'mean';

export interface AngleLossOptions {
  /** Scale applied to the scores (paper: 1.0; AnglE's later code default: 20). */
  tau?: number;
  /** How the complex quotient's components are reduced: 'sum' (default, as AnglE) or 'mean'. */
  pooling?: AnglePooling;
}

function checkPooling(p: string): AnglePooling {
  if (p !== 'sum' && p !== 'mean') {
    throw new UnknownNameError(`${ANGLE_OBJECTIVE} pooling`, String(p), ['sum', 'mean']);
  }
  return p;
}

/** The pair scores tau · |pool(u / w)| (normalised complex quotient), shape [pairs]. */
export function anglePairScores(emb: tf.Tensor2D, tau = 1, pooling: AnglePooling = 'sum'): tf.Tensor1D {
  const dim = emb.shape[1];
  if (dim % 2 !== 0) {
    throw new InputError(
      `${ANGLE_OBJECTIVE}: embedding dimension ${dim} is odd; the angle objective splits each embedding into equal real and imaginary halves`,
    );
  }
  const half = dim / 2;
  return tf.tidy(() => {
    const { first, second } = splitPairs(emb, ANGLE_OBJECTIVE);
    const p = first.shape[0];
    const a = tf.slice(first, [0, 0], [p, half]);
    const b = tf.slice(first, [0, half], [p, half]);
    const c = tf.slice(second, [0, 0], [p, half]);
    const d = tf.slice(second, [0, half], [p, half]);
    const z = tf.sum(tf.add(tf.square(c), tf.square(d)), 1, true);
    let re = tf.div(tf.add(tf.mul(a, c), tf.mul(b, d)), z);
    let im = tf.div(tf.sub(tf.mul(b, c), tf.mul(a, d)), z);
    const dz = tf.sqrt(tf.sum(tf.add(tf.square(a), tf.square(b)), 1, true));
    const dw = tf.sqrt(z);
    const ratio = tf.div(dz, dw);
    re = tf.div(re, ratio);
    im = tf.div(im, ratio);
    let pooled = tf.add(tf.sum(re, 1), tf.sum(im, 1));
    if (pooling === 'mean') pooled = tf.div(pooled, tf.scalar(dim));
    return tf.mul(tf.abs(pooled), tf.scalar(tau)) as tf.Tensor1D;
  });
}

function assertNoZeroRows(emb: tf.Tensor2D): void {
  // Nothing has run while a step graph is recorded; a zero row makes the loss read after the launch NaN.
  if (capturingStep()) return;
  const minSq = readScalar(tf.tidy(() => tf.min(tf.sum(tf.square(emb), 1))));
  if (minSq > 0) return;
  const sq = tf.tidy(() => tf.sum(tf.square(emb), 1));
  const norms = sq.dataSync();
  sq.dispose();
  const r = norms.findIndex((v) => !(v > 0));
  throw new InputError(
    `${ANGLE_OBJECTIVE}: embeddings row ${r} is all zeros; the complex division of the angle objective is undefined for it`,
  );
}

/** Angle loss of a zigzag batch `emb` [2P, D] (D even) with one label per pair. */
export function angleLoss(emb: tf.Tensor2D, labels: ArrayLike<number>, opts: AngleLossOptions = {}): tf.Scalar {
  const tau = checkPositive(opts.tau ?? 1, 'tau', ANGLE_OBJECTIVE);
  const pooling = checkPooling(opts.pooling ?? 'sum');
  assertEmbeddings(emb, ANGLE_OBJECTIVE);
  const pairs = pairCount(emb.shape[0], ANGLE_OBJECTIVE);
  const y = checkLabels(labels, pairs, ANGLE_OBJECTIVE);
  if (emb.shape[1] % 2 !== 0) {
    throw new InputError(
      `${ANGLE_OBJECTIVE}: embedding dimension ${emb.shape[1]} is odd; the angle objective splits each embedding into equal real and imaginary halves`,
    );
  }
  assertNoZeroRows(emb);
  return tf.tidy(() => pairwiseRankingLoss(anglePairScores(emb, tau, pooling), y));
}

/**
 * angleLoss with the pair order given as labelRanks of the labels on the device (int32 [pairs]):
 * the same value and gradient bit for bit, and nothing uploaded that depends on the labels but the
 * ranks (the AnglE objective's step-graph path, ./angle-loss.ts).
 */
export function angleLossByRank(emb: tf.Tensor2D, ranks: tf.Tensor1D, opts: AngleLossOptions = {}): tf.Scalar {
  const tau = checkPositive(opts.tau ?? 1, 'tau', ANGLE_OBJECTIVE);
  const pooling = checkPooling(opts.pooling ?? 'sum');
  assertEmbeddings(emb, ANGLE_OBJECTIVE);
  const pairs = pairCount(emb.shape[0], ANGLE_OBJECTIVE);
  if (ranks.shape[0] !== pairs) throw new InputError(`${ANGLE_OBJECTIVE}: got ${ranks.shape[0]} label ranks for ${pairs} pairs (expected one per pair)`);
  if (emb.shape[1] % 2 !== 0) {
    throw new InputError(
      `${ANGLE_OBJECTIVE}: embedding dimension ${emb.shape[1]} is odd; the angle objective splits each embedding into equal real and imaginary halves`,
    );
  }
  assertNoZeroRows(emb);
  return tf.tidy(() => pairwiseRankingLossByRank(anglePairScores(emb, tau, pooling), ranks));
}
