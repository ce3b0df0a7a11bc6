/**
 * Distillation towards a target embedding: angle_emb 0.6.1 `AngleTrainer.compute_distillation_loss`
 * (angle.py:360-382), used for teacher alignment and for Espresso's compression targets.
 *
 *   L = w_mse · mean((x − t)²)                                       (if w_mse > 0)
 *     + T · (1/B) Σ_rows Σ_last softmax(t/T) · (log softmax(t/T) − log softmax(x/T))   (if T > 0)
 *
 * x: the student's vectors [B, D] (or [B, T, D]: the sum runs over every row of every position, the
 * divisor stays B = x.shape[0], as KLDivLoss(reduction='batchmean') does); t: the target, same shape.
 * The KL term is multiplied by T, not T² (the library's code). The target is a constant: the library
 * computes it under no_grad; pass a tensor that does not depend on the trained variables (a teacher's
 * output, a compression target computed off the tape), so no gradient reaches it.
 */
import { tf } from '../backend/index.js';
import { InputError } from '../util/errors.js';

export const DISTILLATION_OBJECTIVE = 'distillation';

export interface DistillationOptions {
  /** Weight of the mean squared error (library default 1.0). */
  mseWeight?: number;
  /** KL temperature T; 0 leaves the KL term out (library default 1.0). */
  klTemperature?: number;
}

export function distillationLoss(x: tf.Tensor, target: tf.Tensor, opts: DistillationOptions = {}): tf.Scalar {
  const mse = opts.mseWeight ?? 1;
  const T = opts.klTemperature ?? 1;
  for (const [k, v] of [['mseWeight', mse], ['klTemperature', T]] as const) {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new InputError(`${DISTILLATION_OBJECTIVE}: ${k} must be a finite number, got ${v}`);
  }
  if (x.shape.join(',') !== target.shape.join(',')) throw new InputError(`${DISTILLATION_OBJECTIVE}: student [${x.shape}] and target [${target.shape}] differ in shape`);
  if (x.rank < 2) throw new InputError(`${DISTILLATION_OBJECTIVE}: expected [batch, ..., dim] vectors, got shape [${x.shape}]`);
  return tf.tidy(() => {
    const t = target;
    let total: tf.Scalar = tf.scalar(0);
    if (mse > 0) total = tf.add(total, tf.mul(tf.mean(tf.square(tf.sub(x, t))), mse));
    if (T > 0) {
      const logQ = tf.logSoftmax(tf.div(x, T));
      const logP = tf.logSoftmax(tf.div(t, T));
      const kl = tf.div(tf.sum(tf.mul(tf.exp(logP), tf.sub(logP, logQ))), x.shape[0]);
      total = tf.add(total, tf.mul(kl, T));
    }
    return total;
  });
}
