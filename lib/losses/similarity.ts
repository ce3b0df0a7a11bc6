/**
 * Cosine similarity building blocks, differentiable everywhere.
 *
 * Normalisation follows PyTorch's `F.normalize(x, p=2, eps=1e-12)` (AnglE's code): x / max(‖x‖, eps),
 * written as x · rsqrt(max(‖x‖², eps²)) so that a zero row has a zero (not NaN) gradient; a
 * zero row has cosine 0 with everything.
 */
import { tf } from '../backend/index.js';

export const NORMALIZE_EPS = 1e-12;

/** Rows of `x` scaled to unit L2 norm (zero rows stay zero). */
export function l2Normalize(x: tf.Tensor2D, eps = NORMALIZE_EPS): tf.Tensor2D {
  return tf.tidy(() => {
    const sq = tf.sum(tf.square(x), 1, true);
    return tf.mul(x, tf.rsqrt(tf.maximum(sq, tf.scalar(eps * eps)))) as tf.Tensor2D;
  });
}

/** cos(a_k, b_k) for each row k: shape [n]. */
export function rowCosine(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor1D {
  return tf.tidy(() => tf.sum(tf.mul(l2Normalize(a), l2Normalize(b)), 1) as tf.Tensor1D);
}

/** cos(a_i, b_j) for all i, j: shape [rows of a, rows of b]. */
export function cosineMatrix(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => tf.matMul(l2Normalize(a), l2Normalize(b), false, true));
}
