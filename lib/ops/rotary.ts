/**
 * Rotary position embeddings (Su et al. 2021, "RoFormer") in Hugging Face's half-rotation layout,
 * as `LlamaRotaryEmbedding` + `apply_rotary_pos_emb` compute them. For a head vector x of size D
 * at position p, with inverse frequencies f_j = 1 / θ^(2j/D), j = 0..D/2−1:
 *
 *   out[j]       = x[j] · cos(p f_j) − x[j + D/2] · sin(p f_j)
 *   out[j + D/2] = x[j + D/2] · cos(p f_j) + x[j] · sin(p f_j)
 *
 * i.e. out = x · cos + rotate_half(x) · sin with cos, sin = [cos(p f); cos(p f)], [sin(p f); sin(p f)]
 * and rotate_half(x) = [−x2; x1]. (llama2.c and Meta's checkpoints rotate interleaved pairs
 * (2j, 2j+1) instead; the llama2.c reader permutes the query/key weights into this layout.)
 *
 * Positions are given explicitly per token, so a left-padded batch can number each row's real
 * tokens from 0 and a KV-cache step can continue where the prompt ended. The tables are computed
 * on the host in float32 the way both references do (θ^(2j/D) and p·f rounded to float32, then
 * cos/sin), so the angles are the references' angles bit for bit. A composite of tfjs ops that a
 * backend could fuse.
 */
import * as tf from '@tensorflow/tfjs-core';

/**
 * f_j = 1 / θ^(2j/D) in float32, j = 0..D/2−1. `linearScale` > 1 is HF's `rope_scaling`
 * {type: 'linear', factor}: the frequencies (equivalently the positions) divided by the factor.
 */
export function rotaryInverseFrequencies(headDim: number, theta: number, linearScale = 1): Float32Array {
  if (!Number.isInteger(headDim) || headDim <= 0 || headDim % 2 !== 0) throw new Error(`rotary: head dimension must be a positive even integer, got ${headDim}`);
  if (!(theta > 0)) throw new Error(`rotary: theta must be > 0, got ${theta}`);
  const f = new Float32Array(headDim / 2);
  for (let j = 0; j < headDim / 2; j++) {
    const inv = Math.fround(1 / Math.fround(Math.pow(theta, Math.fround((2 * j) / headDim))));
    f[j] = linearScale === 1 ? inv : Math.fround(inv / linearScale);
  }
  return f;
}

export interface RotaryTables {
  /** [batch, 1, seqLen, headDim]: broadcasts over heads. */
  cos: tf.Tensor4D;
  sin: tf.Tensor4D;
}

/** cos and sin of p·f_j for every token's position, duplicated over the two halves. */
export function rotaryTables(positions: Int32Array, batch: number, seqLen: number, invFreq: Float32Array): RotaryTables {
  if (positions.length !== batch * seqLen) throw new Error(`rotary: ${positions.length} positions for a [${batch}, ${seqLen}] batch`);
  const half = invFreq.length;
  const d = 2 * half;
  const cos = new Float32Array(batch * seqLen * d);
  const sin = new Float32Array(batch * seqLen * d);
  for (let t = 0; t < positions.length; t++) {
    const p = positions[t];
    for (let j = 0; j < half; j++) {
      const angle = Math.fround(p * invFreq[j]);
      const c = Math.cos(angle);
      const s = Math.sin(angle);
      cos[t * d + j] = c;
      cos[t * d + half + j] = c;
      sin[t * d + j] = s;
      sin[t * d + half + j] = s;
    }
  }
  return { cos: tf.tensor4d(cos, [batch, 1, seqLen, d]), sin: tf.tensor4d(sin, [batch, 1, seqLen, d]) };
}

/** [−x2; x1] over the last axis. */
function rotateHalf(x: tf.Tensor): tf.Tensor {
  const d = x.shape[x.shape.length - 1];
  const [x1, x2] = tf.split(x, [d / 2, d / 2], -1);
  return tf.concat([tf.neg(x2), x1], -1);
}

/** x · cos + rotate_half(x) · sin for x [batch, heads, seqLen, headDim]. */
export function applyRotary(x: tf.Tensor, tables: RotaryTables): tf.Tensor {
  const [b, , t, d] = x.shape;
  const [cb, , ct, cd] = tables.cos.shape;
  if (x.rank !== 4 || b !== cb || t !== ct || d !== cd) {
    throw new Error(`rotary: x ${JSON.stringify(x.shape)} does not fit tables ${JSON.stringify(tables.cos.shape)} ([batch, heads, seq, headDim] vs [batch, 1, seq, headDim])`);
  }
  return tf.tidy(() => tf.add(tf.mul(x, tables.cos), tf.mul(rotateHalf(x), tables.sin)));
}
