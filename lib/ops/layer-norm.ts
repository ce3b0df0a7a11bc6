/**
 * Layer normalisation over the last axis (PyTorch's LayerNorm: biased variance, eps inside the
 * square root). One kernel forward and one backward where the backend has AngleLayerNorm (cuda);
 * elsewhere the composite below, written exactly as the BERT code always wrote it, so cpu and
 * wasm results do not change by a bit.
 */
import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS, hasFusedKernel } from '../backend/fused-kernels.js';
import { customGrad, runKernel } from './kernel-call.js';

/** LayerNorm over the last axis as tfjs ops (the pre-fusion bert.ts code, bit for bit). */
export function layerNormComposite(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, eps: number): tf.Tensor {
  return tf.tidy(() => {
    const { mean, variance } = tf.moments(x, -1, true);
    const normed = tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps)));
    return tf.add(tf.mul(normed, gamma), beta);
  });
}

/** y = (x − mean) / sqrt(var + eps) · gamma + beta over the last axis (biased variance, as PyTorch). */
export function fusedLayerNorm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, eps: number): tf.Tensor {
  if (!hasFusedKernel(FUSED_KERNELS.layerNorm)) return layerNormComposite(x, gamma, beta, eps);
  const c = x.shape[x.shape.length - 1];
  if (gamma.size !== c || beta.size !== c) {
    throw new Error(`fusedLayerNorm: gamma ${gamma.shape} and beta ${beta.shape} must have the last dimension of x ${x.shape}`);
  }
  const f = customGrad((xi: tf.Tensor, g: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
    const [y, mean, rstd] = runKernel(FUSED_KERNELS.layerNorm, { x: xi, gamma: g, beta: b }, { epsilon: eps }) as tf.Tensor[];
    save([xi, g, mean, rstd]);
    return {
      value: y,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [sx, sg, sm, sr] = saved;
        return runKernel(FUSED_KERNELS.layerNormGrad, { dy: dy as tf.Tensor, x: sx, gamma: sg, mean: sm, rstd: sr }, {}) as tf.Tensor[];
      },
    };
  });
  return f(x, gamma, beta);
}
