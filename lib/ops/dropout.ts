/**
 * Dropout with a seed. On a backend with AngleDropout (cuda) the mask is a pure function of (seed,
 * element index), drawn on the device, and the gradient regenerates it instead of storing it;
 * elsewhere tf.dropout exactly (which draws its mask in JavaScript).
 */
import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS, hasFusedKernel } from '../backend/fused-kernels.js';
import { customGrad, runKernel } from './kernel-call.js';

/** Dropout with a seed; tf.dropout exactly where the backend has no AngleDropout kernel. */
export function fusedDropout(x: tf.Tensor, rate: number, seed: number): tf.Tensor {
  if (!hasFusedKernel(FUSED_KERNELS.dropout)) return tf.dropout(x, rate, undefined, seed);
  if (!(rate >= 0 && rate < 1)) throw new Error(`fusedDropout: rate ${rate} outside [0, 1)`);
  const s = Math.abs(Math.trunc(seed)) % 2 ** 52;
  const f = customGrad((xi: tf.Tensor) => ({
    value: runKernel(FUSED_KERNELS.dropout, { x: xi }, { rate, seed: s }) as tf.Tensor,
    // y = x · mask / keep is linear in x with the same mask: dx = dropout(dy) with the same seed.
    gradFunc: (dy: tf.Tensor | tf.Tensor[]) => [runKernel(FUSED_KERNELS.dropout, { x: dy as tf.Tensor }, { rate, seed: s }) as tf.Tensor],
  }));
  return f(x);
}

/**
 * dropout(x) + residual, the residual connection after a dropped-out sublayer: one kernel where the
 * backend has AngleDropoutAdd (cuda: the same mask as AngleDropout under `seed`, rounded as the two
 * kernels round, so the numbers are those of the two ops), else fusedDropout then tf.add exactly.
 * Gradients: dx = dropout(dy) with the same mask, dresidual = dy.
 */
export function fusedDropoutAdd(x: tf.Tensor, residual: tf.Tensor, rate: number, seed: number): tf.Tensor {
  if (!hasFusedKernel(FUSED_KERNELS.dropoutAdd) || !hasFusedKernel(FUSED_KERNELS.dropout) || !tf.util.arraysEqual(x.shape, residual.shape) || x.dtype !== 'float32' || residual.dtype !== 'float32') {
    return tf.add(fusedDropout(x, rate, seed), residual);
  }
  if (!(rate >= 0 && rate < 1)) throw new Error(`fusedDropoutAdd: rate ${rate} outside [0, 1)`);
  const s = Math.abs(Math.trunc(seed)) % 2 ** 52;
  const f = customGrad((xi: tf.Tensor, ri: tf.Tensor) => ({
    value: runKernel(FUSED_KERNELS.dropoutAdd, { x: xi, residual: ri }, { rate, seed: s }) as tf.Tensor,
    gradFunc: (dy: tf.Tensor | tf.Tensor[]) => [runKernel(FUSED_KERNELS.dropout, { x: dy as tf.Tensor }, { rate, seed: s }) as tf.Tensor, tf.clone(dy as tf.Tensor)],
  }));
  return f(x, residual);
}
