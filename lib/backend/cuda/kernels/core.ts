/**
 * The building blocks every cuda kernel registration uses: unary/binary launches with
 * broadcasting, casts, reshapes that share buffers, strided copies and transposes. Each returns
 * a new TensorInfo owned by the caller.
 */
import * as tf from '@tensorflow/tfjs-core';
import { CudaBackend, dtCode } from '../backend.js';
import { BINARY, DT, UNARY } from '../op-codes.js';
import { broadcastStrides, contiguousStrides, MAX_RANK, mergeDims, simplifyPermutation, sizeOf } from '../shapes.js';

export type Info = tf.TensorInfo;

export interface KernelArgs {
  inputs: tf.NamedTensorInfoMap;
  backend: tf.KernelBackend;
  attrs?: tf.NamedAttrMap;
}

export interface CudaKernel {
  kernelName: string;
  kernelFunc: (args: KernelArgs) => Info | Info[];
}

export function cudaOf(args: KernelArgs): CudaBackend {
  return args.backend as CudaBackend;
}

export function input(args: KernelArgs, name: string): Info {
  const t = args.inputs[name];
  if (!t) throw new Error(`cuda backend: missing input '${name}'`);
  return t;
}

export function attr<T>(args: KernelArgs, name: string): T {
  return (args.attrs ?? {})[name] as unknown as T;
}

function checkRank(rank: number, what: string): void {
  if (rank > MAX_RANK) throw new Error(`cuda backend: ${what} needs ${rank} dimensions after simplification; at most ${MAX_RANK} are supported`);
}

export function unaryOp(b: CudaBackend, x: Info, op: number, outDtype: tf.DataType, alpha = 0, beta = 0): Info {
  const out = b.makeTensorInfo(x.shape, outDtype);
  b.addon.unary(op, dtCode(x.dtype), dtCode(outDtype), b.ptr(x), b.ptr(out), sizeOf(x.shape), alpha, beta);
  return out;
}

/** y = a op b with numpy broadcasting; `inDtype` decides integer or float arithmetic. */
export function binaryOp(b: CudaBackend, a: Info, c: Info, op: number, outDtype: tf.DataType): Info {
  const shape = tf.backend_util.assertAndGetBroadcastShape(a.shape, c.shape);
  const out = b.makeTensorInfo(shape, outDtype);
  if (sizeOf(shape) === 0) return out;
  const m = mergeDims(shape, [broadcastStrides(a.shape, shape), broadcastStrides(c.shape, shape)]);
  checkRank(m.shape.length, 'a broadcast binary op');
  const inDt = a.dtype === 'float32' || c.dtype === 'float32' ? DT.float32 : DT.int32;
  if (a.dtype !== c.dtype && (a.dtype === 'float32' || c.dtype === 'float32')) {
    // Mixed float/int operands (tfjs ops normally upcast before dispatch): compute in float.
    const a2 = a.dtype === 'float32' ? a : castTo(b, a, 'float32');
    const c2 = c.dtype === 'float32' ? c : castTo(b, c, 'float32');
    b.addon.binary(op, DT.float32, dtCode(outDtype), b.ptr(a2), b.ptr(c2), m.shape, m.strides[0], m.strides[1], b.ptr(out));
    if (a2 !== a) b.disposeIntermediateTensorInfo(a2);
    if (c2 !== c) b.disposeIntermediateTensorInfo(c2);
    return out;
  }
  b.addon.binary(op, inDt, dtCode(outDtype), b.ptr(a), b.ptr(c), m.shape, m.strides[0], m.strides[1], b.ptr(out));
  return out;
}

/** a op= b in place on a buffer the caller owns (same shape, contiguous). */
export function binaryInPlace(b: CudaBackend, acc: Info, other: Info, op: number): void {
  const shape = acc.shape;
  const m = mergeDims(shape, [contiguousStrides(shape), broadcastStrides(other.shape, shape)]);
  checkRank(m.shape.length, 'an accumulation');
  b.addon.binary(op, dtCode(acc.dtype), dtCode(acc.dtype), b.ptr(acc), b.ptr(other), m.shape, m.strides[0], m.strides[1], b.ptr(acc));
}

export function castTo(b: CudaBackend, x: Info, dtype: tf.DataType): Info {
  if (x.dtype === dtype) return b.share(x);
  const out = b.makeTensorInfo(x.shape, dtype);
  const toBool = dtype === 'bool';
  b.addon.cast(dtCode(x.dtype), dtCode(dtype), b.ptr(x), b.ptr(out), sizeOf(x.shape), toBool);
  return out;
}

export function reshapeTo(b: CudaBackend, x: Info, shape: number[]): Info {
  const $shape = tf.util.inferFromImplicitShape(shape, sizeOf(x.shape));
  if (sizeOf($shape) !== sizeOf(x.shape)) throw new Error(`cuda backend: cannot reshape [${x.shape}] to [${shape}]`);
  return b.share(x, $shape);
}

/** A contiguous copy (new buffer) of x. */
export function copyOf(b: CudaBackend, x: Info): Info {
  const out = b.makeTensorInfo(x.shape, x.dtype);
  const n = sizeOf(x.shape);
  if (n > 0) b.addon.copy2d(b.ptr(out), n, 0, b.ptr(x), n, 0, n, 1);
  return out;
}

/** y over `outShape` reads x at `offset + Σ idx·strides` (strides in elements, may be 0 or negative). */
export function stridedCopy(b: CudaBackend, x: Info, outShape: number[], strides: number[], offset: number): Info {
  const out = b.makeTensorInfo(outShape, x.dtype);
  if (sizeOf(outShape) === 0) return out;
  const m = mergeDims(outShape, [strides]);
  checkRank(m.shape.length, 'a strided copy');
  b.addon.copyStrided(b.ptr(x), b.ptr(out), m.shape, m.strides[0], offset);
  return out;
}

export function transposeImpl(b: CudaBackend, x: Info, perm: number[]): Info {
  const outShape = perm.map((p) => x.shape[p]);
  const s = simplifyPermutation(x.shape, perm);
  const k = s.perm.length;
  if (s.perm.every((p, i) => p === i)) return b.share(x, outShape);
  const out = b.makeTensorInfo(outShape, x.dtype);
  if (k === 2 && s.perm[0] === 1) {
    b.addon.transposeBatched(b.ptr(x), b.ptr(out), 1, s.shape[0], s.shape[1]);
    return out;
  }
  if (k === 3 && s.perm[0] === 0 && s.perm[1] === 2 && s.perm[2] === 1) {
    b.addon.transposeBatched(b.ptr(x), b.ptr(out), s.shape[0], s.shape[1], s.shape[2]);
    return out;
  }
  checkRank(k, 'a transpose');
  const inStrides = contiguousStrides(s.shape);
  b.addon.copyStrided(b.ptr(x), b.ptr(out), s.perm.map((p) => s.shape[p]), s.perm.map((p) => inStrides[p]), 0);
  return out;
}

export function fillWith(b: CudaBackend, shape: number[], dtype: tf.DataType, value: number): Info {
  const out = b.makeTensorInfo(shape, dtype);
  b.addon.fill(dtCode(dtype), b.ptr(out), sizeOf(shape), value);
  return out;
}

export { BINARY, UNARY };
