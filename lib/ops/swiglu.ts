/**
 * The gated feed-forward activation of LLaMA (Shazeer 2020, "GLU variants"): SwiGLU
 *
 *   swiglu(gate, up) = silu(gate) · up,   silu(x) = x · sigmoid(x)
 *
 * where gate = x W_gate^T and up = x W_up^T (HF `LlamaMLP`: down_proj(act_fn(gate_proj(x)) *
 * up_proj(x)); llama2.c: w2(silu(w1 x) * w3 x)). tfjs ops that a backend could fuse into one
 * elementwise kernel; under a gradient tape one op that keeps only its two inputs (below).
 */
import * as tf from '@tensorflow/tfjs-core';
import { customGrad } from './kernel-call.js';

/** silu(x) = x · sigmoid(x) (HF's `silu` / `swish`). */
export function silu(x: tf.Tensor): tf.Tensor {
  return tf.tidy(() => tf.mul(x, tf.sigmoid(x)));
}

/**
 * silu(gate) · up, elementwise; gate and up have the same shape.
 *
 * One recorded op that keeps gate and up only and recomputes sigmoid(gate) and silu(gate) in the
 * backward pass: the composite would keep four tensors of the feed-forward width (gate,
 * sigmoid(gate), silu(gate), up), the largest activations of a LLaMA layer. The gradients are the
 * composite's, op for op and in its order, so they are the same numbers bit for bit:
 *
 *   d_silu = dy · up,   d_up = dy · silu(gate),
 *   d_gate = d_silu · s + (d_silu · gate) · (s · (1 − s)),   s = sigmoid(gate)
 */
export function swiglu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  if (gate.shape.length !== up.shape.length || gate.shape.some((d, i) => d !== up.shape[i])) {
    throw new Error(`swiglu: gate ${JSON.stringify(gate.shape)} and up ${JSON.stringify(up.shape)} must have the same shape`);
  }
  if (!tf.engine().isTapeOn()) return tf.tidy(() => tf.mul(silu(gate), up));
  const op = customGrad((g: tf.Tensor, u: tf.Tensor, save: tf.GradSaveFunc) => {
    save([g, u]);
    return {
      value: tf.mul(silu(g), u),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [gs, us] = saved;
        const d = dy as tf.Tensor;
        const s = tf.sigmoid(gs);
        const dSilu = tf.mul(d, us);
        // Nested scopes free each feed-forward-wide temporary as soon as it is used (the same ops).
        const dGate = tf.tidy(() => {
          const viaSigmoid = tf.tidy(() => tf.mul(tf.mul(dSilu, gs), tf.tidy(() => tf.mul(s, tf.sub(tf.scalar(1), s)))));
          return tf.add(tf.mul(dSilu, s), viaSigmoid);
        });
        dSilu.dispose();
        const dUp = tf.tidy(() => tf.mul(d, tf.mul(gs, s)));
        s.dispose();
        return [dGate, dUp];
      },
    };
  });
  return op(gate, up);
}
