/**
 * Scaled dot-product attention for decoders: a causal mask combined with a padding mask, and
 * grouped-query attention (Ainslie et al. 2023), where H query heads share Hkv = H / rep key/value
 * heads — query head h reads key/value head ⌊h / rep⌋, as HF's `repeat_kv` and llama2.c's
 * `h / kv_mul` pair them.
 *
 *   scores = q kᵀ · scale + mask,   probs = softmax(scores),   out = probs v
 *
 * Instead of copying each key/value head rep times (HF's repeat_kv), the rep query heads of a
 * group are stacked along the time axis, [B, Hkv, rep·T, D], and multiplied with their group's
 * keys in one batched matmul: the same numbers without the copies. A composite of tfjs ops that a
 * backend could replace with one fused attention kernel.
 */
import * as tf from '@tensorflow/tfjs-core';
import { backendCapabilities } from '../backend/capabilities.js';

/** Added to the scores of keys a query may not see; exp() of it underflows to exactly 0 in float32. */
export const MASK_NEGATIVE = -1e9;

/**
 * The additive mask [batch, 1, queryLen, keyLen] of a causal decoder step. The keys are the
 * `keyLen` tokens so far (a KV cache's past tokens, then this step's `queryLen` tokens); query t
 * sits at key index keyLen − queryLen + t and may see key s when s is not after it and
 * keyMask[b, s] = 1 (not padding).
 */
export function causalPaddingMask(keyMask: Int32Array, batch: number, queryLen: number, keyLen: number): tf.Tensor4D {
  if (keyMask.length !== batch * keyLen) throw new Error(`attention mask has ${keyMask.length} entries, expected batch ${batch} × keys ${keyLen}`);
  if (queryLen > keyLen) throw new Error(`attention: ${queryLen} queries but only ${keyLen} keys`);
  const past = keyLen - queryLen;
  const m = new Float32Array(batch * queryLen * keyLen);
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < queryLen; t++) {
      const row = (b * queryLen + t) * keyLen;
      for (let s = 0; s < keyLen; s++) {
        if (s > past + t || keyMask[b * keyLen + s] === 0) m[row + s] = MASK_NEGATIVE;
      }
    }
  }
  return tf.tensor4d(m, [batch, 1, queryLen, keyLen]);
}

export interface AttentionOptions {
  /** Multiplies q kᵀ; default 1/√headDim. */
  scale?: number;
  /** Applied to the attention probabilities (training dropout); default none. */
  dropout?: (probs: tf.Tensor) => tf.Tensor;
}

/**
 * softmax(q kᵀ · scale + mask) v with q [B, H, T, D], k and v [B, Hkv, S, D] (H a multiple of Hkv)
 * and an additive mask broadcastable to [B, 1, T, S]. Returns [B, H, T, D].
 */
export function groupedQueryAttention(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask: tf.Tensor, opts: AttentionOptions = {}): tf.Tensor {
  const [b, h, t, d] = q.shape;
  const [kb, hkv, s, kd] = k.shape;
  if (q.rank !== 4 || k.rank !== 4 || v.rank !== 4 || kb !== b || kd !== d || v.shape.some((x, i) => x !== k.shape[i])) {
    throw new Error(`attention: q ${JSON.stringify(q.shape)}, k ${JSON.stringify(k.shape)}, v ${JSON.stringify(v.shape)} are not [B, H, T, D], [B, Hkv, S, D], [B, Hkv, S, D]`);
  }
  if (h % hkv !== 0) throw new Error(`attention: ${h} query heads are not a multiple of ${hkv} key/value heads`);
  const rep = h / hkv;
  const scale = opts.scale ?? 1 / Math.sqrt(d);
  return tf.tidy(() => {
    const qg = tf.reshape(q, [b, hkv, rep * t, d]);
    const transposeFree = backendCapabilities().matMulTransposeIsFree;
    const raw = transposeFree ? tf.matMul(qg, k, false, true) : tf.matMul(qg, tf.transpose(k, [0, 1, 3, 2]));
    const scores = tf.add(tf.mul(tf.reshape(raw, [b, hkv, rep, t, s]), scale), tf.reshape(mask, [mask.shape[0], 1, 1, t, s]));
    let probs = tf.softmax(scores, -1);
    if (opts.dropout) probs = opts.dropout(probs);
    const out = tf.matMul(tf.reshape(probs, [b, hkv, rep * t, s]), v);
    return tf.reshape(out, [b, h, t, d]);
  });
}
