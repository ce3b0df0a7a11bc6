/**
 * The gated feed-forward activation of LLaMA (Shazeer 2020, "GLU variants"): SwiGLU
 *
 *   swiglu(gate, up) = silu(gate) · up,   silu(x) = x · sigmoid(x)
 *
 * where gate = x W_gate^T and up = x W_up^T (HF `LlamaMLP`: down_proj(act_fn(gate_proj(x)) *
 * up_proj(x)); llama2.c: w2(silu(w1 x) * w3 x)). A composite of tfjs ops that a backend could fuse
 * into one elementwise kernel.
 */
import * as tf from '@tensorflow/tfjs-core';

/** silu(x) = x · sigmoid(x) (HF's `silu` / `swish`). */
export function silu(x: tf.Tensor): tf.Tensor {
  return tf.tidy(() => tf.mul(x, tf.sigmoid(x)));
}

/** silu(gate) · up, elementwise; gate and up have the same shape. */
export function swiglu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  if (gate.shape.length !== up.shape.length || gate.shape.some((d, i) => d !== up.shape[i])) {
    throw new Error(`swiglu: gate ${JSON.stringify(gate.shape)} and up ${JSON.stringify(up.shape)} must have the same shape`);
  }
  return tf.tidy(() => tf.mul(silu(gate), up));
}
