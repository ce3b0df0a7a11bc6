/**
 * softmax(q kᵀ · scale + mask) v as one fused kernel where the backend has AngleAttention (cuda:
 * native/src/attention.cu, flash-style, tile for tile ./flash-attention-reference.ts), keeping only
 * q, k, v, out and two numbers per query row for backward — no [T, S] scores, probabilities or
 * dropout mask. Elsewhere plain grouped-query attention (./attention.ts) with fusedDropout on the
 * probabilities.
 *
 * Shapes as groupedQueryAttention: q [B, H, T, D], k and v [B, Hkv, S, D] (H a multiple of Hkv), an
 * optional additive mask [mB, 1, mT, S] with mB ∈ {1, B}, mT ∈ {1, T} (padding: mT = 1; causal:
 * mT = T). D ≤ 128 for the kernel.
 *
 * Dropout: element (b, h, t, s) of the [B, H, T, S] probabilities is dropped by the rule of the
 * cuda backend's dropout kernel under `seed`, so on cuda the fused kernel and the fallback (plain
 * attention then fusedDropout(probs, rate, seed)) drop the same elements. On a backend without
 * AngleDropout, fusedDropout is tf.dropout: another realisation of the same distribution.
 */
import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS, hasFusedKernel } from '../backend/fused-kernels.js';
import { groupedQueryAttention } from './attention.js';
import { fusedDropout } from './dropout.js';
import { ATTENTION_TILES } from './flash-attention-reference.js';
import { customGrad, runKernel } from './kernel-call.js';

export interface FusedAttentionOptions {
  /** Multiplies q kᵀ; default 1/√D. */
  scale?: number;
  /** Dropout of the probabilities; rate in [0, 1). */
  dropout?: { rate: number; seed: number };
}

function check(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask: tf.Tensor | undefined): void {
  const [b, h, t, d] = q.shape;
  const [kb, hkv, s, kd] = k.shape;
  if (q.rank !== 4 || k.rank !== 4 || v.rank !== 4 || kb !== b || kd !== d || v.shape.some((x, i) => x !== k.shape[i])) {
    throw new Error(`fusedAttention: q ${JSON.stringify(q.shape)}, k ${JSON.stringify(k.shape)}, v ${JSON.stringify(v.shape)} are not [B, H, T, D], [B, Hkv, S, D], [B, Hkv, S, D]`);
  }
  if (h % hkv !== 0) throw new Error(`fusedAttention: ${h} query heads are not a multiple of ${hkv} key/value heads`);
  if (mask) {
    const ms = mask.shape;
    if (mask.rank !== 4 || (ms[0] !== 1 && ms[0] !== b) || ms[1] !== 1 || (ms[2] !== 1 && ms[2] !== t) || ms[3] !== s) {
      throw new Error(`fusedAttention: mask ${JSON.stringify(ms)} is not [1 or ${b}, 1, 1 or ${t}, ${s}]`);
    }
    if (mask.dtype !== 'float32') throw new Error(`fusedAttention: the mask is additive and must be float32, got ${mask.dtype}`);
  }
}

/** Whether attention on these shapes runs as the backend's fused kernel. */
export function usesFusedAttentionKernel(headDim: number): boolean {
  return headDim <= ATTENTION_TILES.MAX_HEAD_DIM && hasFusedKernel(FUSED_KERNELS.attention) && hasFusedKernel(FUSED_KERNELS.attentionGrad);
}

/** Attention as one kernel where the backend has it (see the top of the file). Returns [B, H, T, D]. */
export function fusedAttention(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask?: tf.Tensor, opts: FusedAttentionOptions = {}): tf.Tensor {
  check(q, k, v, mask);
  const [T, D] = [q.shape[2] as number, q.shape[3] as number];
  const S = k.shape[2] as number;
  const scale = opts.scale ?? 1 / Math.sqrt(D);
  const rate = opts.dropout?.rate ?? 0;
  if (!(rate >= 0 && rate < 1)) throw new Error(`fusedAttention: dropout rate ${rate} outside [0, 1)`);
  const seed = opts.dropout?.seed ?? 0;
  if (!usesFusedAttentionKernel(D)) {
    return tf.tidy(() => {
      const full = mask ? tf.broadcastTo(mask, [mask.shape[0] as number, 1, T, S]) : tf.zeros([1, 1, T, S]);
      return groupedQueryAttention(q, k, v, full, { scale, dropout: rate > 0 ? (p) => fusedDropout(p, rate, seed) : undefined });
    });
  }
  const attrs = { scale, rate, seed };
  const withMask = (inputs: Record<string, tf.Tensor>) => (mask ? { ...inputs, mask } : inputs);
  const op = customGrad((qi: tf.Tensor, ki: tf.Tensor, vi: tf.Tensor, save: tf.GradSaveFunc) => {
    const [out, m, l] = runKernel(FUSED_KERNELS.attention, withMask({ q: qi, k: ki, v: vi }), attrs) as tf.Tensor[];
    // The mask is saved too: the caller may free it before backward runs.
    save(mask ? [qi, ki, vi, out, m, l, mask] : [qi, ki, vi, out, m, l]);
    return {
      value: out,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [qs, ks, vs, outs, ms, ls, masks] = saved;
        const inputs: Record<string, tf.Tensor> = { q: qs, k: ks, v: vs, out: outs, dy: dy as tf.Tensor, m: ms, l: ls };
        if (masks) inputs.mask = masks;
        return runKernel(FUSED_KERNELS.attentionGrad, inputs, attrs) as tf.Tensor[];
      },
    };
  });
  return op(q, k, v);
}
