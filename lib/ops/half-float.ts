/**
 * 16-bit floats for frozen weights: IEEE 754 binary16 ('fp16', the format of LLaMA-2's Hub
 * checkpoints) and bfloat16 ('bf16', the upper half of a float32). tfjs has no 16-bit dtype, so
 * two values are packed into one int32 (element 2i in the low 16 bits, 2i + 1 in the high ones:
 * on a little-endian host the buffer reads as the checkpoint's own Uint16 array) and decoded by a
 * gather from a 65,536-entry float32 table of every bit pattern — exact, one op.
 *
 * Converting a checkpoint's 16-bit values to float32 (as lib/models/safetensors.ts does on load)
 * and back with `encodeHalf` gives the checkpoint's bits again: nothing is lost.
 */
import * as tf from '@tensorflow/tfjs-core';

export type HalfFormat = 'fp16' | 'bf16';

const scratch = new DataView(new ArrayBuffer(4));

/** The float32 value of the fp16 bit pattern `h` (subnormals, infinities and NaN included). */
export function fp16ToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m === 0 ? sign * Infinity : NaN;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** The float32 value of the bf16 bit pattern `h`. */
export function bf16ToFloat(h: number): number {
  scratch.setUint32(0, (h & 0xffff) << 16);
  return scratch.getFloat32(0);
}

/** The fp16 bit pattern nearest to `x` (round half to even, overflow to infinity), as numpy's float16 cast. */
export function floatToFp16(x: number): number {
  scratch.setFloat32(0, x);
  const bits = scratch.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const e = (bits >>> 23) & 0xff;
  let m = bits & 0x7fffff;
  if (e === 0xff) return sign | 0x7c00 | (m ? 0x200 : 0);
  let exp = e - 127 + 15;
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    m |= 0x800000;
    const shift = 14 - exp;
    const half = 1 << (shift - 1);
    let r = m >> shift;
    const rest = m & ((1 << shift) - 1);
    if (rest > half || (rest === half && (r & 1))) r++;
    return sign | r;
  }
  let r = m >> 13;
  const rest = m & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (r & 1))) {
    r++;
    if (r === 0x400) {
      r = 0;
      exp++;
      if (exp >= 31) return sign | 0x7c00;
    }
  }
  return sign | (exp << 10) | r;
}

/** The bf16 bit pattern nearest to `x` (round half to even; NaN stays NaN), as PyTorch's bfloat16 cast. */
export function floatToBf16(x: number): number {
  scratch.setFloat32(0, x);
  const bits = scratch.getUint32(0);
  if ((bits & 0x7f800000) === 0x7f800000 && bits & 0x7fffff) return (bits >>> 16) | 0x40;
  const rounded = bits + 0x7fff + ((bits >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

const tables = new Map<HalfFormat, Float32Array>();

/** The float32 value of every 16-bit pattern of `format`. */
export function halfTable(format: HalfFormat): Float32Array {
  let t = tables.get(format);
  if (!t) {
    t = new Float32Array(65536);
    const decode = format === 'fp16' ? fp16ToFloat : bf16ToFloat;
    for (let h = 0; h < 65536; h++) t[h] = decode(h);
    tables.set(format, t);
  }
  return t;
}

/** Float32 values as 16-bit patterns packed two per int32 (an odd count is padded with 0). */
export function encodeHalf(values: ArrayLike<number>, format: HalfFormat): Int32Array {
  const encode = format === 'fp16' ? floatToFp16 : floatToBf16;
  const out = new Int32Array(Math.ceil(values.length / 2));
  for (let i = 0; i < values.length; i += 2) {
    const lo = encode(values[i]);
    const hi = i + 1 < values.length ? encode(values[i + 1]) : 0;
    out[i >> 1] = (hi << 16) | lo;
  }
  return out;
}

/**
 * The `n` float32 values packed in `packed` (int32, two 16-bit patterns each), as tfjs ops: the
 * low and high halves by integer division, then one gather from the format's table.
 */
export function decodeHalf(packed: tf.Tensor, n: number, format: HalfFormat): tf.Tensor1D {
  return tf.tidy(() => {
    const table = tf.tensor1d(halfTable(format), 'float32');
    // int32 scalars: a plain number would make tfjs compute in float32.
    const base = tf.scalar(65536, 'int32');
    const lo = tf.mod(packed, base);
    const hi = tf.mod(tf.floorDiv(packed, base), base);
    const pairs = tf.stack([tf.gather(table, lo), tf.gather(table, hi)], 1);
    const flat = tf.reshape(pairs, [-1]) as tf.Tensor1D;
    return flat.shape[0] === n ? flat : (tf.slice(flat, [0], [n]) as tf.Tensor1D);
  });
}
