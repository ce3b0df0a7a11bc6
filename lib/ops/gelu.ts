/**
 * Erf-exact GELU, HF's `gelu`: x/2 · (1 + erf(x/√2)). One kernel each way where the backend has
 * AngleGelu (cuda), else the composite.
 */
import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS, hasFusedKernel } from '../backend/fused-kernels.js';
import { customGrad, runKernel } from './kernel-call.js';

/** Erf-exact GELU as tfjs ops (the pre-fusion bert.ts code). */
export function geluComposite(x: tf.Tensor): tf.Tensor {
  return tf.tidy(() => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2)))));
}

/** GELU(x) = x/2 · (1 + erf(x/√2)) (HF `gelu`). */
export function fusedGelu(x: tf.Tensor): tf.Tensor {
  if (!hasFusedKernel(FUSED_KERNELS.gelu)) return geluComposite(x);
  const f = customGrad((xi: tf.Tensor, save: tf.GradSaveFunc) => {
    save([xi]);
    return {
      value: runKernel(FUSED_KERNELS.gelu, { x: xi }, {}) as tf.Tensor,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => [runKernel(FUSED_KERNELS.geluGrad, { dy: dy as tf.Tensor, x: saved[0] }, {}) as tf.Tensor],
    };
  });
  return f(x);
}
