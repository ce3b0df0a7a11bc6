/**
 * 4-bit NormalFloat (NF4) weights as QLoRA defines them (Dettmers et al. 2023, "QLoRA: Efficient
 * Finetuning of Quantized LLMs", §3; bitsandbytes' `quantize_4bit(quant_type='nf4')`):
 *
 *   - blocks of 64 consecutive values of the flattened weight, each with its absmax c = max|w|;
 *   - each value becomes the index of the nearest of the 16 NF4 levels q_k (quantiles of N(0, 1)
 *     scaled to [−1, 1], with an exact 0) to w / c — bitsandbytes multiplies by the float32
 *     reciprocal 1/c and decides by the float32 midpoints between levels, with ties going to the
 *     lower level; so does this;
 *   - dequantisation: w' = q_k · c (float32).
 *
 * Double quantisation (QLoRA's "DQ", bitsandbytes' compress_statistics=True): the float32 absmax
 * values themselves are stored in 8 bits: their mean is subtracted (kept as one float32), the
 * rest quantised in blocks of 256 with bitsandbytes' signed dynamic 8-bit map and one float32
 * absmax per block (quantize_blockwise: scaled by the float32 reciprocal, then the nearest map
 * value; the mean is taken in float64 here), so a value costs 4 + 8/64 + 32/(64·256) bits instead
 * of 4 + 32/64.
 *
 * Storage in tfjs tensors (no 4- or 8-bit dtype): codes packed 8 per int32 in bitsandbytes' byte
 * layout (element 2j in the high nibble of byte j, 2j + 1 in the low one; bytes little-endian in
 * the int32, so on a little-endian host the buffer is bitsandbytes' packed uint8 array); the
 * 8-bit absmax codes packed 4 per int32 (byte k = block 4i + k).
 */
import * as tf from '@tensorflow/tfjs-core';

/** bitsandbytes' NF4 levels (csrc/kernels.cu `nf4_data`, functional.py `get_4bit_type('nf4')`). */
export const NF4_LEVELS: readonly number[] = Object.freeze([
  -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
  0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023,
  1.0,
]);

/** NF4 block size (values per absmax). */
export const NF4_BLOCK = 64;
/** Double quantisation block size (absmax values per second-level absmax). */
export const NF4_DQ_BLOCK = 256;

const LEVELS32 = Float32Array.from(NF4_LEVELS);
/** float32 midpoints between consecutive levels: x above mids[k] is nearer level k + 1 (ties stay). */
const MIDS32 = Float32Array.from(NF4_LEVELS.slice(1), (v, k) => Math.fround((NF4_LEVELS[k] + v) / 2));

/** The NF4 code (0..15) of a value already divided by its block's absmax. */
export function nf4Code(x: number): number {
  // The number of midpoints below x, by bisection (4 comparisons; NaN compares false: code 0).
  let lo = 0;
  let hi = 15;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (x > MIDS32[mid]) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * bitsandbytes' `create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8)`: for exponent
 * i = 0..6, the 2^i midpoints of linspace(0.1, 1, 2^i + 1) scaled by 10^(i − 6), with their
 * negatives, plus 0 and 1, sorted (256 values). Computed in float32 as torch does.
 */
export function dynamicMap8(): Float32Array {
  const data: number[] = [];
  for (let i = 0; i < 7; i++) {
    const steps = 2 ** i + 1;
    const bounds = linspace32(0.1, 1, steps);
    const scale = 10 ** (-6 + i);
    for (let k = 0; k + 1 < steps; k++) {
      const mean = Math.fround(Math.fround(bounds[k] + bounds[k + 1]) / 2);
      data.push(Math.fround(scale * mean), Math.fround(-scale * mean));
    }
  }
  data.push(0, 1);
  return Float32Array.from(data.sort((a, b) => a - b));
}

/** torch.linspace in float32: start + i·step for the first half, end − (steps − 1 − i)·step for the rest. */
function linspace32(start: number, end: number, steps: number): Float32Array {
  const out = new Float32Array(steps);
  if (steps === 1) {
    out[0] = start;
    return out;
  }
  const s = Math.fround(start);
  const e = Math.fround(end);
  const step = Math.fround((e - s) / (steps - 1));
  const half = Math.floor(steps / 2);
  for (let i = 0; i < steps; i++) out[i] = i < half ? Math.fround(s + Math.fround(step * i)) : Math.fround(e - Math.fround(step * (steps - i - 1)));
  return out;
}

/** The index of the value of sorted `code` nearest to x (ties to the lower one). */
function nearestIndex(code: Float32Array, x: number): number {
  let lo = 0;
  let hi = code.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (code[mid] <= x) lo = mid;
    else hi = mid;
  }
  return Math.abs(x - code[lo]) <= Math.abs(code[hi] - x) ? lo : hi;
}

/** An NF4-quantised tensor on the host. */
export interface Nf4Host {
  /** Number of values (the weight's size). */
  n: number;
  /** Codes, 8 per int32 (bitsandbytes' byte layout, see the top of the file). */
  codes: Int32Array;
  /** Per-block absmax (float32), when not double-quantised. */
  absmax?: Float32Array;
  /** Double quantisation: 8-bit absmax codes (4 per int32), their per-256 absmax and the mean that was subtracted. */
  dq?: { codes: Int32Array; absmax: Float32Array; offset: number };
}

/** Where in its int32 element i's nibble lives (bits from the least significant). */
function nibbleShift(i: number): number {
  const byte = (i >> 1) & 3;
  return byte * 8 + (i & 1 ? 0 : 4);
}

/** Quantises `values` to NF4 (blocks of 64), optionally with double quantisation. */
export function quantizeNf4(values: ArrayLike<number>, doubleQuant = false): Nf4Host {
  const n = values.length;
  const blocks = Math.ceil(n / NF4_BLOCK);
  const codes = new Int32Array(Math.ceil(n / 8));
  const absmax = new Float32Array(blocks);
  for (let b = 0; b < blocks; b++) {
    const end = Math.min(n, (b + 1) * NF4_BLOCK);
    let m = 0;
    for (let i = b * NF4_BLOCK; i < end; i++) m = Math.max(m, Math.abs(Math.fround(values[i])));
    absmax[b] = m;
    // bitsandbytes multiplies by the float32 reciprocal (an all-zero block stays at code 7, 0.0).
    const inv = m > 0 ? Math.fround(1 / m) : 0;
    for (let i = b * NF4_BLOCK; i < end; i++) codes[i >> 3] |= nf4Code(Math.fround(Math.fround(values[i]) * inv)) << nibbleShift(i);
  }
  if (!doubleQuant) return { n, codes, absmax };
  let sum = 0;
  for (const v of absmax) sum += v;
  const offset = Math.fround(sum / blocks);
  const map = dynamicMap8();
  const groups = Math.ceil(blocks / NF4_DQ_BLOCK);
  const absmax2 = new Float32Array(groups);
  const qcodes = new Int32Array(Math.ceil(blocks / 4));
  for (let g = 0; g < groups; g++) {
    const end = Math.min(blocks, (g + 1) * NF4_DQ_BLOCK);
    let m = 0;
    for (let b = g * NF4_DQ_BLOCK; b < end; b++) m = Math.max(m, Math.abs(Math.fround(absmax[b] - offset)));
    absmax2[g] = m;
    const inv = m > 0 ? Math.fround(1 / m) : 0;
    for (let b = g * NF4_DQ_BLOCK; b < end; b++) {
      const x = Math.fround(Math.fround(absmax[b] - offset) * inv);
      qcodes[b >> 2] |= nearestIndex(map, x) << ((b & 3) * 8);
    }
  }
  return { n, codes, dq: { codes: qcodes, absmax: absmax2, offset } };
}

/** The per-block absmax values of a quantised tensor (dequantising them when double-quantised). */
export function nf4AbsmaxHost(q: Nf4Host): Float32Array {
  if (q.absmax) return q.absmax;
  const blocks = Math.ceil(q.n / NF4_BLOCK);
  const map = dynamicMap8();
  const out = new Float32Array(blocks);
  for (let b = 0; b < blocks; b++) {
    const code = (q.dq!.codes[b >> 2] >>> ((b & 3) * 8)) & 0xff;
    out[b] = Math.fround(Math.fround(map[code] * q.dq!.absmax[Math.floor(b / NF4_DQ_BLOCK)]) + q.dq!.offset);
  }
  return out;
}

/** Dequantises on the host: level[code] · absmax (float32), as bitsandbytes' dequantize_4bit. */
export function dequantizeNf4Host(q: Nf4Host): Float32Array {
  const absmax = nf4AbsmaxHost(q);
  const out = new Float32Array(q.n);
  for (let i = 0; i < q.n; i++) out[i] = Math.fround(LEVELS32[(q.codes[i >> 3] >>> nibbleShift(i)) & 15] * absmax[Math.floor(i / NF4_BLOCK)]);
  return out;
}

/** An NF4 tensor as tfjs tensors (what a frozen weight keeps on the device). */
export interface Nf4Tensors {
  n: number;
  codes: tf.Tensor1D;
  absmax?: tf.Tensor1D;
  dq?: { codes: tf.Tensor1D; absmax: tf.Tensor1D; offset: number };
}

/** Byte k (0..3, from the least significant) of every int32 of `packed`, as int32 values 0..255. */
function bytesOf(packed: tf.Tensor, k: number): tf.Tensor {
  // int32 scalars: a plain number would make tfjs compute in float32.
  return tf.mod(tf.floorDiv(packed, tf.scalar(2 ** (8 * k), 'int32')), tf.scalar(256, 'int32'));
}

/**
 * Dequantises on the device, as tfjs ops: the eight nibbles of each int32 by integer division,
 * a gather from the 16 levels, times each block's absmax (itself decoded first when
 * double-quantised). Returns the n float32 values.
 */
export function dequantizeNf4(q: Nf4Tensors): tf.Tensor1D {
  return tf.tidy(() => {
    const levels = tf.tensor1d(LEVELS32, 'float32');
    // Element 8i + 2m is the high nibble of byte m, 8i + 2m + 1 its low nibble.
    const nibbles: tf.Tensor[] = [];
    for (let m = 0; m < 4; m++) {
      const byte = bytesOf(q.codes, m);
      const sixteen = tf.scalar(16, 'int32');
      nibbles.push(tf.floorDiv(byte, sixteen), tf.mod(byte, sixteen));
    }
    const codes = tf.reshape(tf.stack(nibbles, 1), [-1]);
    const blocks = Math.ceil(q.n / NF4_BLOCK);
    let absmax: tf.Tensor;
    if (q.absmax) absmax = q.absmax;
    else {
      const dq = q.dq!;
      const map = tf.tensor1d(dynamicMap8(), 'float32');
      const bytes = tf.reshape(tf.stack([0, 1, 2, 3].map((k) => bytesOf(dq.codes, k)), 1), [-1]);
      const scaled = tf.reshape(tf.gather(map, tf.slice(bytes, [0], [blocks])), [-1, 1]);
      const groups = Math.ceil(blocks / NF4_DQ_BLOCK);
      const padded = groups * NF4_DQ_BLOCK === blocks ? scaled : tf.pad(scaled, [[0, groups * NF4_DQ_BLOCK - blocks], [0, 0]]);
      const perGroup = tf.mul(tf.reshape(padded, [groups, NF4_DQ_BLOCK]), tf.reshape(dq.absmax, [groups, 1]));
      absmax = tf.add(tf.slice(tf.reshape(perGroup, [-1]), [0], [blocks]), dq.offset);
    }
    const total = blocks * NF4_BLOCK;
    const values = tf.gather(levels, tf.slice(codes, [0], [Math.min(total, codes.shape[0] as number)]));
    const paddedValues = values.shape[0] === total ? values : tf.pad(values, [[0, total - (values.shape[0] as number)]]);
    const out = tf.reshape(tf.mul(tf.reshape(paddedValues, [blocks, NF4_BLOCK]), tf.reshape(absmax, [blocks, 1])), [-1]);
    return (total === q.n ? out : tf.slice(out, [0], [q.n])) as tf.Tensor1D;
  });
}

/** Bytes an NF4 tensor of n values takes in this layout (codes, absmax or its double quantisation). */
export function nf4Bytes(n: number, doubleQuant: boolean): number {
  const blocks = Math.ceil(n / NF4_BLOCK);
  const codes = 4 * Math.ceil(n / 8);
  return doubleQuant ? codes + 4 * Math.ceil(blocks / 4) + 4 * Math.ceil(blocks / NF4_DQ_BLOCK) : codes + 4 * blocks;
}
