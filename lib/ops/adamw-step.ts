/**
 * One AdamW step for one parameter (PyTorch's torch.optim.AdamW, decoupled weight decay): one
 * kernel where the backend has AngleAdamW (cuda; cpu and wasm register a JavaScript one), else the
 * composite of tfjs ops. No gradient: it is an optimiser step.
 */
import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS, hasFusedKernel } from '../backend/fused-kernels.js';
import { runKernel } from './kernel-call.js';

export interface AdamWInputs {
  param: tf.Tensor;
  grad: tf.Tensor;
  /** First moment (same shape as param). */
  m: tf.Tensor;
  /** Second moment (same shape as param). */
  v: tf.Tensor;
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 1-based step number, for the bias corrections. */
  step: number;
}

export interface AdamWOutputs {
  param: tf.Tensor;
  m: tf.Tensor;
  v: tf.Tensor;
}

function checkAdamW(a: AdamWInputs): void {
  const same = (t: tf.Tensor, n: string) => {
    if (!tf.util.arraysEqual(t.shape, a.param.shape)) throw new Error(`fusedAdamWUpdate: ${n} has shape ${t.shape}, param has ${a.param.shape}`);
    if (t.dtype !== 'float32') throw new Error(`fusedAdamWUpdate: ${n} is ${t.dtype}, expected float32`);
  };
  same(a.param, 'param');
  same(a.grad, 'grad');
  same(a.m, 'm');
  same(a.v, 'v');
  if (!(Number.isInteger(a.step) && a.step >= 1)) throw new Error(`fusedAdamWUpdate: step must be an integer >= 1, got ${a.step}`);
}

/**
 * PyTorch's AdamW step (decoupled weight decay) as tfjs ops:
 *   p ← p·(1 − lr·wd);  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
 *   p ← p − lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps)
 */
export function adamWComposite(a: AdamWInputs): AdamWOutputs {
  checkAdamW(a);
  return tf.tidy(() => {
    const m = tf.add(tf.mul(a.m, a.beta1), tf.mul(a.grad, 1 - a.beta1));
    const v = tf.add(tf.mul(a.v, a.beta2), tf.mul(tf.square(a.grad), 1 - a.beta2));
    const mHat = tf.div(m, 1 - Math.pow(a.beta1, a.step));
    const vHat = tf.div(v, 1 - Math.pow(a.beta2, a.step));
    const decayed = tf.mul(a.param, 1 - a.lr * a.weightDecay);
    const param = tf.sub(decayed, tf.mul(tf.div(mHat, tf.add(tf.sqrt(vHat), a.eps)), a.lr));
    return { param, m, v };
  }) as unknown as AdamWOutputs;
}

/**
 * One AdamW step for one parameter: returns new tensors for the parameter and both moments
 * (assign them to your variables; the inputs are left as they were). One kernel on backends with
 * `AngleAdamW`, the composite above elsewhere.
 */
export function fusedAdamWUpdate(a: AdamWInputs): AdamWOutputs {
  if (!hasFusedKernel(FUSED_KERNELS.adamW)) return adamWComposite(a);
  checkAdamW(a);
  const [param, m, v] = runKernel(
    FUSED_KERNELS.adamW,
    { param: a.param, grad: a.grad, m: a.m, v: a.v },
    {
      lr: a.lr,
      beta1: a.beta1,
      beta2: a.beta2,
      eps: a.eps,
      weightDecay: a.weightDecay,
      biasCorrection1: 1 - Math.pow(a.beta1, a.step),
      biasCorrection2: 1 - Math.pow(a.beta2, a.step),
    },
  ) as tf.Tensor[];
  return { param, m, v };
}
