/**
 * Frozen weights kept in fewer bits and the linear layer over them: the base of LoRA / QLoRA
 * training, where only adapters train.
 *
 *   'fp16' / 'bf16': the checkpoint's own 16-bit values (./half-float.ts), 2 bytes a value
 *   'nf4':           QLoRA's 4-bit NormalFloat (./nf4.ts), 0.5625 bytes a value, 0.516 with
 *                    double quantisation
 *
 * `frozenLinear(x, w)` = x Wᵀ with W [out, in] decoded to float32 on the fly: in the forward pass
 * and again in the backward pass (dx = dy W), inside one recorded op that saves nothing — the
 * float32 W exists only while its matmul runs, one layer at a time, and a frozen weight gets no
 * gradient. Computation stays float32, as in QLoRA with a float32 compute dtype.
 */
import * as tf from '@tensorflow/tfjs-core';
import { backendCapabilities } from '../backend/capabilities.js';
import { customGrad } from './kernel-call.js';
import { decodeHalf, encodeHalf, type HalfFormat } from './half-float.js';
import { dequantizeNf4, nf4Bytes, quantizeNf4, NF4_BLOCK, NF4_DQ_BLOCK, type Nf4Tensors } from './nf4.js';
import { UnknownNameError } from '../util/errors.js';

export const BASE_STORAGES = ['fp32', 'fp16', 'bf16', 'nf4'] as const;
/** How a frozen base weight is stored: float32, a 16-bit format, or NF4 (optionally double-quantised). */
export type BaseStorage = (typeof BASE_STORAGES)[number];

/** A frozen [out, in] weight in 16 or 4 bits. */
export interface FrozenWeight {
  format: Exclude<BaseStorage, 'fp32'>;
  shape: [number, number];
  /** fp16/bf16: the values packed two per int32. */
  half?: tf.Tensor1D;
  /** nf4: codes and absmax (or their double quantisation). */
  nf4?: Nf4Tensors;
}

export function parseBaseStorage(name: string): BaseStorage {
  if ((BASE_STORAGES as readonly string[]).includes(name)) return name as BaseStorage;
  throw new UnknownNameError('base storage', name, BASE_STORAGES);
}

/**
 * A frozen weight from float32 values (row-major [out, in]); `values` undefined makes one with
 * zero codes (the shape-only backend, which keeps no values, only needs the tensors' sizes).
 */
export function makeFrozenWeight(values: ArrayLike<number> | undefined, shape: [number, number], format: Exclude<BaseStorage, 'fp32'>, opts: { doubleQuant?: boolean } = {}): FrozenWeight {
  const n = shape[0] * shape[1];
  if (values && values.length !== n) throw new Error(`makeFrozenWeight: ${values.length} values for a [${shape}] weight`);
  // The temporaries of quantisation are host arrays; the tensors are kept, so a caller's tidy leaves them.
  const w = ((): FrozenWeight => {
    if (format === 'fp16' || format === 'bf16') {
      const packed = values ? tf.tensor1d(encodeHalf(values, format as HalfFormat), 'int32') : tf.zeros([Math.ceil(n / 2)], 'int32');
      return { format, shape, half: packed as tf.Tensor1D };
    }
    const blocks = Math.ceil(n / NF4_BLOCK);
    if (!values) {
      const codes = tf.zeros([Math.ceil(n / 8)], 'int32') as tf.Tensor1D;
      const nf4: Nf4Tensors = opts.doubleQuant
        ? { n, codes, dq: { codes: tf.zeros([Math.ceil(blocks / 4)], 'int32') as tf.Tensor1D, absmax: tf.zeros([Math.ceil(blocks / NF4_DQ_BLOCK)]) as tf.Tensor1D, offset: 0 } }
        : { n, codes, absmax: tf.zeros([blocks]) as tf.Tensor1D };
      return { format, shape, nf4 };
    }
    const q = quantizeNf4(values, opts.doubleQuant ?? false);
    const codes = tf.tensor1d(q.codes, 'int32');
    const nf4: Nf4Tensors = q.dq
      ? { n, codes, dq: { codes: tf.tensor1d(q.dq.codes, 'int32'), absmax: tf.tensor1d(q.dq.absmax, 'float32'), offset: q.dq.offset } }
      : { n, codes, absmax: tf.tensor1d(q.absmax!, 'float32') };
    return { format, shape, nf4 };
  })();
  for (const t of frozenTensors(w)) tf.keep(t);
  return w;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * A 16-bit frozen weight from the checkpoint's own bit patterns (little-endian, as safetensors and
 * torch.save store them), packed as `makeFrozenWeight` packs them, without a float32 copy: an F16
 * tensor stored as 'fp16' or a BF16 one as 'bf16' gives the bits `makeFrozenWeight` gives from
 * the same values read as float32 (both formats survive float32 and back).
 */
export function frozenWeightFromHalfBits(bits: Uint8Array, shape: [number, number], format: 'fp16' | 'bf16'): FrozenWeight {
  const n = shape[0] * shape[1];
  if (bits.byteLength !== 2 * n) throw new Error(`frozenWeightFromHalfBits: ${bits.byteLength} bytes for a [${shape}] weight (${2 * n} expected)`);
  // Two patterns per int32, the first in the low half: on a little-endian host that is the bytes as they are.
  const packed = new Int32Array(Math.ceil(n / 2));
  new Uint8Array(packed.buffer).set(bits);
  if (!LITTLE_ENDIAN) for (let i = 0; i < packed.length; i++) packed[i] = (bits[4 * i] | (bits[4 * i + 1] << 8)) | ((4 * i + 2 < bits.length ? bits[4 * i + 2] | (bits[4 * i + 3] << 8) : 0) << 16);
  return { format, shape, half: tf.keep(tf.tensor1d(packed, 'int32')) };
}

function frozenTensors(w: FrozenWeight): tf.Tensor1D[] {
  return [w.half, w.nf4?.codes, w.nf4?.absmax, w.nf4?.dq?.codes, w.nf4?.dq?.absmax].filter((t): t is tf.Tensor1D => t !== undefined);
}

/** The float32 [out, in] weight, decoded with tfjs ops. */
export function decodeFrozenWeight(w: FrozenWeight): tf.Tensor2D {
  return tf.tidy(() => {
    const n = w.shape[0] * w.shape[1];
    const flat = w.half ? decodeHalf(w.half, n, w.format as HalfFormat) : dequantizeNf4(w.nf4!);
    return tf.reshape(flat, w.shape) as tf.Tensor2D;
  });
}

/** Bytes the stored weight takes (what replaces 4 bytes a value). */
export function frozenWeightBytes(w: FrozenWeight): number {
  const n = w.shape[0] * w.shape[1];
  if (w.half) return 4 * Math.ceil(n / 2);
  return nf4Bytes(n, w.nf4!.dq !== undefined);
}

export function disposeFrozenWeight(w: FrozenWeight): void {
  tf.dispose(frozenTensors(w));
}

function timesWeight(x2: tf.Tensor, w: tf.Tensor2D): tf.Tensor {
  return backendCapabilities().matMulTransposeIsFree ? tf.matMul(x2, w, false, true) : tf.matMul(x2, tf.transpose(w));
}

/**
 * x2 Wᵀ for x2 [n, in] and a frozen W [out, in], decoding W in the forward pass and again in the
 * backward pass (dx = dy W); nothing is saved and W gets no gradient.
 */
export function frozenLinear(x2: tf.Tensor, w: FrozenWeight): tf.Tensor {
  if (x2.rank !== 2 || x2.shape[1] !== w.shape[1]) throw new Error(`frozenLinear: x ${JSON.stringify(x2.shape)} does not fit a [${w.shape}] weight ([n, ${w.shape[1]}] expected)`);
  const op = customGrad((xi: tf.Tensor) => ({
    value: timesWeight(xi, decodeFrozenWeight(w)),
    gradFunc: (dy: tf.Tensor | tf.Tensor[]) => [tf.matMul(dy as tf.Tensor, decodeFrozenWeight(w))],
  }));
  return op(x2);
}
