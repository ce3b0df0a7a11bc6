/**
 * The masked-language-model auxiliary loss of angle_emb 0.6.1 (`AngleTrainer.compute_mlm_loss`,
 * angle.py:384-389): F.cross_entropy(logits.transpose(1, 2), labels, ignore_index = pad_token_id),
 *
 *   L = mean over positions (b, t) with labels[b, t] ≠ pad of −log softmax(logits[b, t])[labels[b, t]]
 *
 * pad_token_id defaults to 0 there (`fit` never sets it). 0.6.1 ships no collator that produces the
 * labels, so it is reachable only with one of the caller's own.
 */
import { tf } from '../backend/index.js';
import { InputError } from '../util/errors.js';

export const MLM_OBJECTIVE = 'masked-LM';

/** logits [B, T, V]; labels B·T token ids (row-major); positions labelled `padTokenId` are ignored. */
export function maskedLmLoss(logits: tf.Tensor3D, labels: ArrayLike<number>, padTokenId = 0): tf.Scalar {
  const [B, T, V] = logits.shape;
  if (labels.length !== B * T) throw new InputError(`${MLM_OBJECTIVE}: ${labels.length} labels for logits [${B}, ${T}, ${V}]`);
  const keep = new Float32Array(B * T);
  const ids = new Int32Array(B * T);
  let count = 0;
  for (let i = 0; i < B * T; i++) {
    const y = labels[i];
    if (y === padTokenId) continue;
    if (!Number.isInteger(y) || y < 0 || y >= V) throw new InputError(`${MLM_OBJECTIVE}: label ${y} at position ${i} is not a token id in 0..${V - 1}`);
    keep[i] = 1;
    ids[i] = y;
    count++;
  }
  if (count === 0) throw new InputError(`${MLM_OBJECTIVE}: every label is the pad id ${padTokenId}; the mean is undefined (PyTorch returns NaN)`);
  return tf.tidy(() => {
    const logp = tf.logSoftmax(tf.reshape(logits, [B * T, V]));
    const picked = tf.sum(tf.mul(logp, tf.oneHot(tf.tensor1d(ids, 'int32'), V)), 1);
    return tf.div(tf.neg(tf.sum(tf.mul(picked, tf.tensor1d(keep)))), count) as tf.Scalar;
  });
}
