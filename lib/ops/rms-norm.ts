/**
 * Root-mean-square normalisation over the last axis (Zhang & Sennrich 2019), as HF's
 * `LlamaRMSNorm` and llama2.c's `rmsnorm` compute it:
 *
 *   y = x / sqrt(mean(x², last axis) + eps) · weight
 *
 * (no mean subtraction, no bias; eps inside the square root). A composite of tfjs ops; a backend
 * that wants one kernel forward and one backward can add it under a fused-kernel name the way
 * ./layer-norm.ts does, without changing the callers.
 */
import * as tf from '@tensorflow/tfjs-core';

/** RMSNorm over the last axis: x · rsqrt(mean(x²) + eps) · weight. */
export function rmsNorm(x: tf.Tensor, weight: tf.Tensor, eps: number): tf.Tensor {
  const c = x.shape[x.shape.length - 1];
  if (weight.size !== c) throw new Error(`rmsNorm: weight ${JSON.stringify(weight.shape)} must have the last dimension of x ${JSON.stringify(x.shape)}`);
  return tf.tidy(() => {
    const meanSquare = tf.mean(tf.square(x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight);
  });
}
