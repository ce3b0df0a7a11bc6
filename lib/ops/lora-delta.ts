/**
 * The LoRA update of a linear layer (Hu et al. 2021; PEFT's LoraLayer), as one recorded op:
 *
 *   delta = scaling · (dropout(x) Aᵀ) Bᵀ,   A [r, in], B [out, r]
 *
 * The composite of tfjs ops would keep, per adapted layer, dropout(x) [n, in] (for A's gradient)
 * and, on backends without a fused dropout, the dropout mask as well; an attention block with
 * adapters on q, k and v keeps three such copies of one input. This op keeps x itself (shared
 * with whatever else keeps it) and the rank-r intermediate, and draws the dropout mask again from
 * its seed in the backward pass (./dropout.ts: the same seed gives the same mask). The gradients
 * are the composite's, op for op:
 *
 *   d = dy · scaling,  dB = dᵀ low,  dlow = d B,  dA = dlowᵀ dropout(x),  dx = dropout(dlow A)
 *
 * where dropout(·) in dx applies the same mask (the dropout is linear in its input).
 */
import * as tf from '@tensorflow/tfjs-core';
import { fusedDropout } from './dropout.js';
import { customGrad } from './kernel-call.js';

export interface LoraDropout {
  rate: number;
  seed: number;
}

/** scaling · (dropout(x) Aᵀ) Bᵀ for x [n, in] (see the top of the file). */
export function loraDelta(x: tf.Tensor, a: tf.Tensor, b: tf.Tensor, scaling: number, dropout?: LoraDropout): tf.Tensor {
  if (x.rank !== 2 || a.rank !== 2 || b.rank !== 2 || x.shape[1] !== a.shape[1] || b.shape[1] !== a.shape[0]) {
    throw new Error(`loraDelta: x ${JSON.stringify(x.shape)}, A ${JSON.stringify(a.shape)}, B ${JSON.stringify(b.shape)} are not [n, in], [r, in], [out, r]`);
  }
  const drop = (t: tf.Tensor) => (dropout && dropout.rate > 0 ? fusedDropout(t, dropout.rate, dropout.seed) : t);
  const forward = (xi: tf.Tensor, ai: tf.Tensor, bi: tf.Tensor) => {
    const low = tf.matMul(drop(xi), ai, false, true);
    return { low, value: tf.mul(tf.matMul(low, bi, false, true), scaling) };
  };
  if (!tf.engine().isTapeOn()) return tf.tidy(() => forward(x, a, b).value);
  const op = customGrad((xi: tf.Tensor, ai: tf.Tensor, bi: tf.Tensor, save: tf.GradSaveFunc) => {
    const { low, value } = forward(xi, ai, bi);
    save([xi, ai, bi, low]);
    return {
      value,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [xs, as, bs, lows] = saved;
        const d = tf.mul(dy as tf.Tensor, scaling);
        const dB = tf.matMul(d, lows, true, false);
        const dLow = tf.matMul(d, bs, false, false);
        const dA = tf.matMul(dLow, drop(xs), true, false);
        const dx = drop(tf.matMul(dLow, as, false, false));
        return [dx, dA, dB];
      },
    };
  });
  return op(x, a, b);
}
