/**
 * The call every causal decoder of the library answers (./llama/, ./opt/, both over
 * ./decoder/decoder-model.ts), which generation
 * (./llama/generate.ts) and the prompt encoders use: new tokens, the attention mask over the
 * cached tokens followed by them, an optional KV cache in and out, logits at every or the last
 * position. Positions are counted from the mask (`positionsFromMask`), so a left-padded row
 * computes what the same text computes alone.
 */
import { tf } from '../backend/index.js';
import type { ForwardOptions, ModelOutput } from './types.js';

/** Keys and values of the tokens seen so far, per layer: [batch, numKvHeads, length, headDim] (rotary applied where the model has it). */
export interface KvCache {
  keys: tf.Tensor4D[];
  values: tf.Tensor4D[];
  /** Tokens held (padding included). */
  length: number;
}

/** Frees a cache's tensors. */
export function disposeKvCache(cache: KvCache | undefined): void {
  if (!cache) return;
  tf.dispose([...cache.keys, ...cache.values]);
}

/** One decoder call: new tokens, and the mask over the cached tokens followed by them. */
export interface DecoderInput {
  /** [batch, seqLen] new token ids. */
  inputIds: Int32Array;
  batch: number;
  seqLen: number;
  /** [batch, cacheLength + seqLen]: 1 for real tokens, 0 for padding. */
  attentionMask: Int32Array;
  /** [batch, seqLen] positions (0 = a row's first real token); default `positionsFromMask`. */
  positions?: Int32Array;
}

export interface DecoderOptions extends ForwardOptions {
  /** Keys and values of earlier tokens (not disposed by the call). */
  cache?: KvCache;
  /** Return the cache extended by this call's tokens. */
  returnCache?: boolean;
  /** Logits at every position, at the last position only, or none (default). */
  logits?: 'all' | 'last' | 'none';
}

export interface DecoderOutput extends ModelOutput {
  /** [batch, seqLen, vocab] ('all') or [batch, vocab] ('last'). */
  logits?: tf.Tensor;
  cache?: KvCache;
}

/**
 * Positions of the last `queryLen` tokens of each row: the number of real tokens before them in
 * the row (cumsum(mask) − 1), and `padding` for padding: 1 by default (HF generate's numbering for
 * LLaMA); OPT's `cumsum(mask) * mask − 1` gives padding −1 instead, which only selects the
 * embedding row of a position whose outputs are never compared or used.
 */
export function positionsFromMask(mask: Int32Array, batch: number, keyLen: number, queryLen: number, padding = 1): Int32Array {
  if (mask.length !== batch * keyLen) throw new Error(`attention mask has ${mask.length} entries, expected ${batch} × ${keyLen}`);
  const out = new Int32Array(batch * queryLen);
  for (let b = 0; b < batch; b++) {
    let seen = 0;
    for (let s = 0; s < keyLen; s++) {
      const real = mask[b * keyLen + s] !== 0;
      if (real) seen++;
      const t = s - (keyLen - queryLen);
      if (t >= 0) out[b * queryLen + t] = real ? seen - 1 : padding;
    }
  }
  return out;
}
