/**
 * GELU(x + bias), the bias add of a linear layer and its erf-GELU activation, as one kernel forward
 * and one backward where the backend has AngleBiasGelu (cuda: native/src/fused.cu, the add rounded
 * on its own and then the GELU kernel's arithmetic, so the numbers are those of the two kernels);
 * elsewhere fusedGelu(tf.add(x, bias)) exactly. The bias gradient is the input gradient summed over
 * rows, as tfjs's Add gradient reduces a broadcast operand.
 *
 * x [rows, cols] (any rank; the last dimension is the bias's), bias [cols].
 */
import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS, hasFusedKernel } from '../backend/fused-kernels.js';
import { fusedGelu } from './gelu.js';
import { customGrad, runKernel } from './kernel-call.js';

/** Whether the active backend computes GELU(x + bias) as one kernel. */
export function hasBiasGeluKernel(): boolean {
  return hasFusedKernel(FUSED_KERNELS.biasGelu) && hasFusedKernel(FUSED_KERNELS.biasGeluGrad);
}

export function fusedBiasGelu(x: tf.Tensor, bias: tf.Tensor): tf.Tensor {
  const cols = x.shape[x.shape.length - 1];
  if (bias.rank !== 1 || bias.shape[0] !== cols) throw new Error(`fusedBiasGelu: bias [${bias.shape}] does not match the last dimension of x [${x.shape}]`);
  if (!hasBiasGeluKernel() || x.dtype !== 'float32' || bias.dtype !== 'float32') return fusedGelu(tf.add(x, bias));
  const f = customGrad((xi: tf.Tensor, bi: tf.Tensor, save: tf.GradSaveFunc) => {
    save([xi, bi]);
    return {
      value: runKernel(FUSED_KERNELS.biasGelu, { x: xi, bias: bi }, {}) as tf.Tensor,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const du = runKernel(FUSED_KERNELS.biasGeluGrad, { dy: dy as tf.Tensor, x: saved[0], bias: saved[1] }, {}) as tf.Tensor;
        const rowAxes = Array.from({ length: du.rank - 1 }, (_, i) => i);
        return [du, tf.sum(du, rowAxes)];
      },
    };
  });
  return f(x, bias);
}
