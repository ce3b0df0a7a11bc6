/**
 * Fused operations for the training hot path: layer normalisation, erf-GELU and the AdamW update.
 *
 * Each is one custom tfjs kernel (registered under the names below by backends that have it:
 * today only `cuda`, see ./cuda/kernels/fused.ts) with its gradient given by `tf.customGrad`. On a
 * backend without the kernel the function computes the same thing with ordinary tfjs ops, written
 * exactly as lib/models/bert.ts always wrote them, so cpu and wasm results do not change by a bit.
 *
 * | function            | kernel (forward / gradient)                | composite fallback                           |
 * |---------------------|--------------------------------------------|----------------------------------------------|
 * | fusedLayerNorm      | AngleLayerNorm / AngleLayerNormGrad        | moments, sub, rsqrt, mul, add                 |
 * | fusedGelu           | AngleGelu / AngleGeluGrad                  | x/2 · (1 + erf(x/√2))                         |
 * | fusedAdamWUpdate    | AngleAdamW (no gradient: an optimiser step) | PyTorch AdamW in mul/add/sub/div/sqrt/square |
 * | fusedDropout        | AngleDropout (its own gradient, same seed)  | tf.dropout                                   |
 *
 * Dropout is here because tf.dropout draws its mask in JavaScript (a loop over every element and
 * an upload per call); on the device the mask is a pure function of (seed, element index), so the
 * gradient regenerates it instead of storing it.
 */
import * as tf from '@tensorflow/tfjs-core';

export const FUSED_KERNELS = {
  layerNorm: 'AngleLayerNorm',
  layerNormGrad: 'AngleLayerNormGrad',
  gelu: 'AngleGelu',
  geluGrad: 'AngleGeluGrad',
  adamW: 'AngleAdamW',
  dropout: 'AngleDropout',
} as const;

/** Whether the active backend has its own kernel called `name`. */
export function hasFusedKernel(name: string): boolean {
  return tf.getKernel(name, tf.getBackend()) !== undefined;
}

type Attrs = Record<string, number | boolean | string | number[]>;

/** tf.customGrad with the argument list written out (its declared type lumps inputs and save). */
function customGrad(f: (...args: never[]) => { value: tf.Tensor; gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => tf.Tensor[] }) {
  return tf.customGrad(f as unknown as Parameters<typeof tf.customGrad>[0]);
}

function run(name: string, inputs: Record<string, tf.Tensor>, attrs: Attrs): tf.Tensor | tf.Tensor[] {
  return tf.engine().runKernel(name, inputs as unknown as tf.NamedTensorMap, attrs as unknown as tf.NamedAttrMap) as tf.Tensor | tf.Tensor[];
}

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
    const [y, mean, rstd] = run(FUSED_KERNELS.layerNorm, { x: xi, gamma: g, beta: b }, { epsilon: eps }) as tf.Tensor[];
    save([xi, g, mean, rstd]);
    return {
      value: y,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [sx, sg, sm, sr] = saved;
        return run(FUSED_KERNELS.layerNormGrad, { dy: dy as tf.Tensor, x: sx, gamma: sg, mean: sm, rstd: sr }, {}) as tf.Tensor[];
      },
    };
  });
  return f(x, gamma, beta);
}

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
      value: run(FUSED_KERNELS.gelu, { x: xi }, {}) as tf.Tensor,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => [run(FUSED_KERNELS.geluGrad, { dy: dy as tf.Tensor, x: saved[0] }, {}) as tf.Tensor],
    };
  });
  return f(x);
}

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
  const [param, m, v] = run(
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

/** Dropout with a seed; tf.dropout exactly where the backend has no AngleDropout kernel. */
export function fusedDropout(x: tf.Tensor, rate: number, seed: number): tf.Tensor {
  if (!hasFusedKernel(FUSED_KERNELS.dropout)) return tf.dropout(x, rate, undefined, seed);
  if (!(rate >= 0 && rate < 1)) throw new Error(`fusedDropout: rate ${rate} outside [0, 1)`);
  const s = Math.abs(Math.trunc(seed)) % 2 ** 52;
  const f = customGrad((xi: tf.Tensor) => ({
    value: run(FUSED_KERNELS.dropout, { x: xi }, { rate, seed: s }) as tf.Tensor,
    // y = x · mask / keep is linear in x with the same mask: dx = dropout(dy) with the same seed.
    gradFunc: (dy: tf.Tensor | tf.Tensor[]) => [run(FUSED_KERNELS.dropout, { x: dy as tf.Tensor }, { rate, seed: s }) as tf.Tensor],
  }));
  return f(x);
}
