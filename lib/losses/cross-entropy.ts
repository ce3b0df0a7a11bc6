/**
 * Softmax cross-entropy over the rows of a logit matrix, as the contrastive objectives use it.
 * Targets are plain numbers (not differentiated), so they are given as JS arrays.
 */
import { tf } from '../backend/index.js';

/**
 * Per-row cross-entropy −Σ_j t_ij · log softmax(logits_i)_j with a dense target matrix `targets`
 * (row-major, rows × cols). A row whose targets are all zero contributes 0 (AnglE's
 * `categorical_crossentropy_loss`). Shape [rows].
 */
export function softTargetCrossEntropy(logits: tf.Tensor2D, targets: Float32Array | tf.Tensor2D): tf.Tensor1D {
  const [rows, cols] = logits.shape;
  // A tensor of targets is one built on the device (in-batch negatives' step-graph path): same values, no host upload.
  const size = targets instanceof tf.Tensor ? targets.size : targets.length;
  if (size !== rows * cols || (targets instanceof tf.Tensor && targets.rank !== 2)) {
    throw new Error(`softTargetCrossEntropy: ${size} targets for a ${rows}x${cols} logit matrix`);
  }
  return tf.tidy(() => tf.neg(tf.sum(tf.mul(tf.logSoftmax(logits), targets instanceof tf.Tensor ? targets : tf.tensor2d(targets, [rows, cols])), 1)) as tf.Tensor1D);
}

/**
 * Mean over rows of −log softmax(logits_i)_i: cross-entropy with target class i for row i
 * (PyTorch `CrossEntropyLoss()(logits, arange(rows))`). `logits` may have more columns than rows
 * (extra negatives after the first `rows` columns).
 */
export function diagonalCrossEntropy(logits: tf.Tensor2D): tf.Scalar {
  const [rows, cols] = logits.shape;
  if (cols < rows) throw new Error(`diagonalCrossEntropy: ${rows}x${cols} logits have fewer columns than rows`);
  const eye = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) eye[i * cols + i] = 1;
  return tf.tidy(() => tf.mean(softTargetCrossEntropy(logits, eye)) as tf.Scalar);
}

/** The row-major `rows × cols` matrix with ones on the diagonal. */
export function eyeMask(rows: number, cols = rows): Float32Array {
  const m = new Float32Array(rows * cols);
  for (let i = 0; i < Math.min(rows, cols); i++) m[i * cols + i] = 1;
  return m;
}
