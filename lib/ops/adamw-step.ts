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

/** One parameter of a multi-tensor AdamW step. */
export interface AdamWMultiEntry {
  param: tf.Variable;
  grad: tf.Tensor;
  m: tf.Variable;
  v: tf.Variable;
}

/** Whether the active backend updates many parameters in one launch (cuda; elsewhere one kernel per parameter). */
export function hasMultiTensorAdamW(): boolean {
  return hasFusedKernel(FUSED_KERNELS.adamWMulti);
}

/**
 * AdamW of every entry at once, in place (the variables' buffers are overwritten: the addresses a
 * captured step graph reads stay valid), on backends with AngleAdamWMulti. `hyper` holds 4 floats per
 * entry — lr, weight decay, 1 − β1^t, 1 − β2^t — and is uploaded from that very array, so a step
 * graph can declare it a feed (lib/backend/step-graph.ts). The arithmetic is AngleAdamW's: the same
 * numbers as one fusedAdamWUpdate per parameter.
 */
export function fusedAdamWMultiUpdate(entries: readonly AdamWMultiEntry[], hyper: Float32Array, beta1: number, beta2: number, eps: number): void {
  if (!hasMultiTensorAdamW()) throw new Error(`fusedAdamWMultiUpdate: backend '${tf.getBackend()}' has no ${FUSED_KERNELS.adamWMulti} kernel`);
  if (hyper.length !== 4 * entries.length) throw new Error(`fusedAdamWMultiUpdate: ${hyper.length} hyper-parameters for ${entries.length} parameters (expected 4 each)`);
  if (entries.length === 0) return;
  const inputs: Record<string, tf.Tensor> = {};
  entries.forEach((e, i) => {
    for (const [k, t] of [['grad', e.grad], ['m', e.m], ['v', e.v]] as const) {
      if (!tf.util.arraysEqual(t.shape, e.param.shape) || t.dtype !== 'float32') throw new Error(`fusedAdamWMultiUpdate: entry ${i}: ${k} is ${t.dtype} [${t.shape}], param float32 [${e.param.shape}]`);
    }
    inputs[`p${i}`] = e.param;
    inputs[`g${i}`] = e.grad;
    inputs[`m${i}`] = e.m;
    inputs[`v${i}`] = e.v;
  });
  tf.tidy(() => {
    inputs.hyper = tf.tensor1d(hyper, 'float32');
    runKernel(FUSED_KERNELS.adamWMulti, inputs, { count: entries.length, beta1, beta2, eps });
  });
}
