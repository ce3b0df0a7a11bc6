/**
 * Cosine InfoNCE, the core of SimCSE and of AnglE's contrastive objectives: anchor i against the
 * candidates [positives; negatives] with logits scale · cos(anchor_i, candidate_j) and target j = i.
 *
 *   L = −(1/N) Σ_i log( e^{s·cos(h_i, h_i⁺)} / (Σ_j e^{s·cos(h_i, h_j⁺)} + Σ_j e^{s·cos(h_i, h_j⁻)}) )
 *
 * `scale` is a multiplier: AnglE's tau 20, SimCSE's 1 / temperature (1 / 0.05 = 20).
 */
import { tf } from '../backend/index.js';
import { InputError } from '../util/errors.js';
import { diagonalCrossEntropy } from './cross-entropy.js';
import { cosineMatrix } from './similarity.js';
import { assertEmbeddings } from './validate.js';

/** Validates anchors/positives/negatives shapes for an InfoNCE objective named `objective`. */
export function checkContrastiveInputs(
  objective: string,
  anchors: tf.Tensor2D,
  positives: tf.Tensor2D,
  negatives?: tf.Tensor2D,
): void {
  assertEmbeddings(anchors, objective);
  assertEmbeddings(positives, objective);
  if (negatives !== undefined) assertEmbeddings(negatives, objective);
  const [n, d] = anchors.shape;
  if (positives.shape[0] !== n || positives.shape[1] !== d) {
    throw new InputError(
      `${objective}: positives must match the anchors' shape [${n}, ${d}], got [${positives.shape.join(', ')}]`,
    );
  }
  if (negatives !== undefined && negatives.shape[1] !== d) {
    throw new InputError(`${objective}: negatives must have dimension ${d}, got [${negatives.shape.join(', ')}]`);
  }
}

/** InfoNCE with cosine logits scaled by `scale`; no input validation (callers validate). */
export function cosineInfoNce(
  anchors: tf.Tensor2D,
  positives: tf.Tensor2D,
  negatives: tf.Tensor2D | undefined,
  scale: number,
): tf.Scalar {
  return tf.tidy(() => {
    const candidates = negatives ? (tf.concat([positives, negatives], 0) as tf.Tensor2D) : positives;
    const logits = tf.mul(cosineMatrix(anchors, candidates), tf.scalar(scale)) as tf.Tensor2D;
    return diagonalCrossEntropy(logits);
  });
}
