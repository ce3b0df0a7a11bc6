/**
 * Layer normalisation over the last axis (PyTorch's LayerNorm: biased variance, eps inside the
 * square root). One kernel forward and one backward where the backend has AngleLayerNorm (cuda);
 * elsewhere the composite below, written exactly as the BERT code always wrote it, so cpu and
 * wasm results do not change by a bit.
 */
import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS, hasFusedKernel } from '../backend/fused-kernels.js';
import { fusedDropoutAdd } from './dropout.js';
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

/**
 * LayerNorm(dropout(a) + b): a sublayer's output dropped out, the residual connection and the
 * LayerNorm after it, one kernel forward where the backend has AngleAddLayerNorm (cuda: the
 * dropout kernel's mask under `seed`, the add and the LayerNorm rounded as the separate kernels
 * round, so the numbers are theirs); else fusedLayerNorm(fusedDropoutAdd(a, b)) — or of tf.add(a, b)
 * without dropout — exactly. Backward is LayerNorm's on the sum (which the kernel also writes):
 * b gets it as is, a through the same dropout mask.
 */
export function fusedAddLayerNorm(a: tf.Tensor, b: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, eps: number, dropout?: { rate: number; seed: number }): tf.Tensor {
  const rate = dropout?.rate ?? 0;
  if (!(rate >= 0 && rate < 1)) throw new Error(`fusedAddLayerNorm: dropout rate ${rate} outside [0, 1)`);
  const fused = hasFusedKernel(FUSED_KERNELS.addLayerNorm) && hasFusedKernel(FUSED_KERNELS.layerNorm) && (rate === 0 || hasFusedKernel(FUSED_KERNELS.dropout));
  if (!fused || !tf.util.arraysEqual(a.shape, b.shape) || a.dtype !== 'float32' || b.dtype !== 'float32') {
    return fusedLayerNorm(rate > 0 ? fusedDropoutAdd(a, b, rate, dropout!.seed) : tf.add(a, b), gamma, beta, eps);
  }
  const c = a.shape[a.shape.length - 1];
  if (gamma.size !== c || beta.size !== c) {
    throw new Error(`fusedAddLayerNorm: gamma ${gamma.shape} and beta ${beta.shape} must have the last dimension of a ${a.shape}`);
  }
  // The seed as fusedDropout passes it to the dropout kernel.
  const seed = rate > 0 ? Math.abs(Math.trunc(dropout!.seed)) % 2 ** 52 : 0;
  const f = customGrad((ai: tf.Tensor, bi: tf.Tensor, g: tf.Tensor, bt: tf.Tensor, save: tf.GradSaveFunc) => {
    const [y, mean, rstd, u] = runKernel(FUSED_KERNELS.addLayerNorm, { a: ai, b: bi, gamma: g, beta: bt }, { epsilon: eps, rate, seed }) as tf.Tensor[];
    save([u, g, mean, rstd]);
    return {
      value: y,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [su, sg, sm, sr] = saved;
        const [du, dgamma, dbeta] = runKernel(FUSED_KERNELS.layerNormGrad, { dy: dy as tf.Tensor, x: su, gamma: sg, mean: sm, rstd: sr }, {}) as tf.Tensor[];
        const da = rate > 0 ? (runKernel(FUSED_KERNELS.dropout, { x: du }, { rate, seed }) as tf.Tensor) : tf.clone(du);
        return [da, du, dgamma, dbeta];
      },
    };
  });
  return f(a, b, gamma, beta);
}
