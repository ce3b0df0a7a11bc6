/**
 * The names of the fused kernels that lib/ops dispatches to, and the question "does the active
 * backend have this one?". This is the contract between the model math in lib/ops (above) and the
 * backends (here): a backend registers a kernel under one of these names (today cuda registers all
 * of them, cpu and wasm only AngleAdamW), and lib/ops uses it instead of its composite of ordinary
 * tfjs ops.
 */
import * as tf from '@tensorflow/tfjs-core';

export const FUSED_KERNELS = {
  layerNorm: 'AngleLayerNorm',
  layerNormGrad: 'AngleLayerNormGrad',
  /** LayerNorm(a + b) with a + b as a second output (lib/ops/layer-norm.ts fusedAddLayerNorm); cuda only. */
  addLayerNorm: 'AngleAddLayerNorm',
  gelu: 'AngleGelu',
  geluGrad: 'AngleGeluGrad',
  /** GELU(x + bias) and its gradient (lib/ops/bias-gelu.ts); cuda only. */
  biasGelu: 'AngleBiasGelu',
  biasGeluGrad: 'AngleBiasGeluGrad',
  adamW: 'AngleAdamW',
  /** AdamW of many parameters in place, one launch per 64 (lib/ops/adamw-step.ts fusedAdamWMultiUpdate); cuda only. */
  adamWMulti: 'AngleAdamWMulti',
  dropout: 'AngleDropout',
  /** dropout(x) + residual in one kernel (lib/ops/dropout.ts fusedDropoutAdd); cuda only. */
  dropoutAdd: 'AngleDropoutAdd',
  /** Fused attention (lib/ops/fused-attention.ts): outputs out, m, l; its gradient dq, dk, dv. */
  attention: 'AngleAttention',
  attentionGrad: 'AngleAttentionGrad',
} as const;

/** Whether the active backend has its own kernel called `name`. */
export function hasFusedKernel(name: string): boolean {
  return tf.getKernel(name, tf.getBackend()) !== undefined;
}
