/**
 * Reductions (Sum, Mean, Max, Min, Prod, Any, All, ArgMax, ArgMin), Softmax, TopK and Cumsum.
 * A reduction over one block of axes runs directly as [outer, r, inner]; any other set of axes
 * is transposed to the end first.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CudaBackend } from '../backend.js';
import { dtCode } from '../backend.js';
import { REDUCE } from '../op-codes.js';
import { planReduction, sizeOf } from '../shapes.js';
import { attr, castTo, cudaOf, input, reshapeTo, transposeImpl, type CudaKernel, type Info } from './core.js';

function outDtype(op: number, x: tf.DataType): tf.DataType {
  if (op === REDUCE.ANY || op === REDUCE.ALL) return 'bool';
  if (op === REDUCE.ARGMAX || op === REDUCE.ARGMIN) return 'int32';
  if (op === REDUCE.MEAN) return 'float32';
  // tfjs-backend-cpu: Max/Min of bools stay bool, other reductions of bools count in int32.
  if (x === 'bool') return op === REDUCE.MAX || op === REDUCE.MIN ? 'bool' : 'int32';
  return x;
}

export function reduceImpl(b: CudaBackend, x: Info, axisAttr: number | number[] | undefined, keepDims: boolean, op: number): Info {
  const axes = tf.util.parseAxisParam(axisAttr ?? x.shape.map((_, k) => k), x.shape);
  const [outShapeNoKeep] = tf.backend_util.computeOutAndReduceShapes(x.shape, axes);
  const outShape = keepDims ? tf.backend_util.expandShapeToKeepDim(outShapeNoKeep, axes) : outShapeNoKeep;
  const dtype = outDtype(op, x.dtype);
  // Integer means and float-valued reductions of bools compute in float / int as tfjs does.
  let src = x;
  if (op === REDUCE.MEAN && x.dtype !== 'float32') src = castTo(b, x, 'float32');
  const out = b.makeTensorInfo(outShape, dtype);
  const plan = planReduction(src.shape, axes);
  if (sizeOf(outShape) > 0) {
    if (plan.kind === 'direct') {
      if (plan.r === 1 && op !== REDUCE.ARGMAX && op !== REDUCE.ARGMIN) {
        // Nothing to reduce: the values themselves (cast for Any/All, copied otherwise).
        b.addon.cast(dtCode(src.dtype), dtCode(dtype), b.ptr(src), b.ptr(out), sizeOf(outShape), dtype === 'bool');
      } else {
        b.addon.reduce(op, dtCode(src.dtype), b.ptr(src), b.ptr(out), plan.outer, plan.r, plan.inner);
      }
    } else {
      const t = transposeImpl(b, src, plan.perm);
      b.addon.reduce(op, dtCode(src.dtype), b.ptr(t), b.ptr(out), plan.outer, plan.r, 1);
      b.disposeIntermediateTensorInfo(t);
    }
  }
  if (src !== x) b.disposeIntermediateTensorInfo(src);
  return out;
}

function reduceKernel(kernelName: string, op: number): CudaKernel {
  // tfjs names Max's axes `reductionIndices` (MaxAttrs); every other reduction calls them `axis`.
  const axisAttr = kernelName === tf.Max ? 'reductionIndices' : 'axis';
  return {
    kernelName,
    kernelFunc: (a) => reduceImpl(cudaOf(a), input(a, 'x'), attr<number | number[]>(a, axisAttr), attr<boolean>(a, 'keepDims') ?? false, op),
  };
}

function argKernel(kernelName: string, op: number): CudaKernel {
  return {
    kernelName,
    kernelFunc: (a) => reduceImpl(cudaOf(a), input(a, 'x'), [attr<number>(a, 'axis')], false, op),
  };
}

/** Moves `axis` last (when it is not), applies `f` to the [rows, cols] view, moves it back. */
function alongLastAxis(b: CudaBackend, x: Info, axis: number, f: (src: Info, out: Info, rows: number, cols: number) => void): Info {
  const rank = x.shape.length;
  const ax = axis < 0 ? axis + rank : axis;
  const cols = x.shape[ax] ?? 1;
  if (ax === rank - 1 || rank === 0) {
    const out = b.makeTensorInfo(x.shape, x.dtype);
    if (sizeOf(x.shape) > 0) f(x, out, sizeOf(x.shape) / cols, cols);
    return out;
  }
  const perm = [...Array(rank).keys()].filter((k) => k !== ax).concat([ax]);
  const t = transposeImpl(b, x, perm);
  const tOut = b.makeTensorInfo(t.shape, x.dtype);
  if (sizeOf(x.shape) > 0) f(t, tOut, sizeOf(x.shape) / cols, cols);
  const inverse = perm.map((_, i) => perm.indexOf(i));
  const out = transposeImpl(b, tOut, inverse);
  b.disposeIntermediateTensorInfo(t);
  b.disposeIntermediateTensorInfo(tOut);
  return out;
}

export const reduceKernels: CudaKernel[] = [
  reduceKernel(tf.Sum, REDUCE.SUM),
  reduceKernel(tf.Mean, REDUCE.MEAN),
  reduceKernel(tf.Max, REDUCE.MAX),
  reduceKernel(tf.Min, REDUCE.MIN),
  reduceKernel(tf.Prod, REDUCE.PROD),
  reduceKernel(tf.Any, REDUCE.ANY),
  reduceKernel(tf.All, REDUCE.ALL),
  argKernel(tf.ArgMax, REDUCE.ARGMAX),
  argKernel(tf.ArgMin, REDUCE.ARGMIN),
  {
    kernelName: tf.Softmax,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const logits = input(a, 'logits');
      const dim = attr<number>(a, 'dim') ?? -1;
      return alongLastAxis(b, logits, dim, (src, out, rows, cols) => b.addon.softmax(b.ptr(src), b.ptr(out), rows, cols, false));
    },
  },
  {
    kernelName: tf.Cumsum,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const rank = x.shape.length;
      const axis = attr<number>(a, 'axis') < 0 ? attr<number>(a, 'axis') + rank : attr<number>(a, 'axis');
      const src = x.dtype === 'bool' ? castTo(b, x, 'int32') : x;
      const out = b.makeTensorInfo(x.shape, src.dtype);
      const outer = sizeOf(x.shape.slice(0, axis));
      const r = x.shape[axis];
      const inner = sizeOf(x.shape.slice(axis + 1));
      b.addon.cumsum(dtCode(src.dtype), b.ptr(src), b.ptr(out), outer, r, inner, attr<boolean>(a, 'exclusive') ?? false, attr<boolean>(a, 'reverse') ?? false);
      if (src !== x) b.disposeIntermediateTensorInfo(src);
      return out;
    },
  },
  {
    kernelName: tf.TopK,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const k = attr<number>(a, 'k');
      const cols = x.shape[x.shape.length - 1];
      if (k > cols) throw new Error(`cuda backend: TopK: k (${k}) must be <= the last dimension (${cols})`);
      const outShape = [...x.shape.slice(0, -1), k];
      const src = x.dtype === 'bool' ? castTo(b, x, 'int32') : x;
      // Values keep x's dtype as on cpu (bools are stored as int32, so the bytes are the same).
      const values = b.makeTensorInfo(outShape, x.dtype);
      const indices = b.makeTensorInfo(outShape, 'int32');
      const rows = cols > 0 ? sizeOf(x.shape) / cols : 0;
      b.addon.topk(dtCode(src.dtype), b.ptr(src), b.ptr(values), b.ptr(indices), rows, cols, k);
      if (src !== x) b.disposeIntermediateTensorInfo(src);
      return [values, indices];
    },
  },
];

export { reshapeTo };
