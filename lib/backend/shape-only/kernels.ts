/**
 * The kernels of the shape-only backend: for each tfjs kernel the models, losses, gradients and
 * the optimiser dispatch, the shape and dtype of its outputs (the same rules as
 * tfjs-backend-cpu and this project's cuda kernels, lib/backend/cuda/kernels/), and whether an
 * output is a new buffer or an input's buffer under another shape (Reshape, Identity,
 * ExpandDims, Cast to a dtype that needs no conversion, an identity Transpose). No values are
 * computed.
 *
 * Where the mirrored backend allocates a scratch buffer inside a kernel, the kernel here counts
 * it too (allocated and freed before the kernel returns), so the backend's peak includes it:
 * for `cuda`, a reduction over axes that are not one block transposes its input first, a
 * softmax over another axis than the last transposes there and back, a batched matmul whose
 * operands broadcast over batch copies them, and operands of another dtype are cast first; for
 * `cpu`, a softmax materialises x − max and exp(x − max).
 */
import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS } from '../fused-kernels.js';
import { planReduction } from '../cuda/shapes.js';
import type { ShapeOnlyBackend } from './backend.js';

type Info = tf.TensorInfo;

interface Args {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}

export interface ShapeOnlyKernel {
  kernelName: string;
  kernelFunc: (args: Args) => Info | Info[];
}

function be(a: Args): ShapeOnlyBackend {
  return a.backend as ShapeOnlyBackend;
}

function input(a: Args, name: string): Info {
  const t = a.inputs[name];
  if (!t) throw new Error(`shape-only backend: missing input '${name}'`);
  return t;
}

function attr<T>(a: Args, name: string): T {
  return (a.attrs ?? {})[name] as unknown as T;
}

/** The inputs given as a list ('0', '1', ... : AddN, Concat, Pack), in order. */
function listInputs(a: Args): Info[] {
  return Object.keys(a.inputs)
    .sort((p, q) => Number(p) - Number(q))
    .map((k) => a.inputs[k]!);
}

function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

function out(a: Args, shape: number[], dtype: tf.DataType): Info {
  return be(a).makeTensorInfo(shape, dtype);
}

function mirrorsCuda(a: Args): boolean {
  return be(a).mirrors === 'cuda';
}

/** A cast the cuda kernels make of an operand of another dtype before computing. */
function castScratch(a: Args, t: Info, dtype: tf.DataType): void {
  if (mirrorsCuda(a) && t.dtype !== dtype) be(a).scratch(t.shape, dtype);
}

// ---- elementwise ---------------------------------------------------------------------------------

const UNARY_KEEPS_INT = new Set<string>([tf.Abs, tf.Neg, tf.Square, tf.Sign, tf.Relu, tf.Relu6, tf.Floor, tf.Ceil, tf.Round, tf.ClipByValue]);
const UNARY_GIVES_BOOL = new Set<string>([tf.IsNan, tf.IsInf, tf.IsFinite, tf.LogicalNot]);
const UNARIES = [
  tf.Abs, tf.Acos, tf.Acosh, tf.Asin, tf.Asinh, tf.Atan, tf.Atanh, tf.Ceil, tf.Cos, tf.Cosh, tf.Elu, tf.Erf, tf.Exp, tf.Expm1,
  tf.Floor, tf.IsFinite, tf.IsInf, tf.IsNan, tf.Log, tf.Log1p, tf.LogicalNot, tf.Neg, tf.Reciprocal, tf.Relu, tf.Relu6, tf.Round,
  tf.Rsqrt, tf.Selu, tf.Sigmoid, tf.Sign, tf.Sin, tf.Sinh, tf.Softplus, tf.Sqrt, tf.Square, tf.Tan, tf.Tanh, tf.Step, tf.LeakyRelu,
  tf.ClipByValue,
];

function unaryDtype(kernel: string, x: tf.DataType): tf.DataType {
  if (UNARY_GIVES_BOOL.has(kernel)) return 'bool';
  if (x !== 'float32' && UNARY_KEEPS_INT.has(kernel)) return x === 'bool' ? 'int32' : x;
  return 'float32';
}

const COMPARISONS = new Set<string>([tf.Equal, tf.NotEqual, tf.Less, tf.LessEqual, tf.Greater, tf.GreaterEqual, tf.LogicalAnd, tf.LogicalOr]);
const BINARIES: Array<[string, [string, string]]> = [
  [tf.Add, ['a', 'b']], [tf.Sub, ['a', 'b']], [tf.Multiply, ['a', 'b']], [tf.RealDiv, ['a', 'b']], [tf.FloorDiv, ['a', 'b']],
  [tf.Mod, ['a', 'b']], [tf.Pow, ['a', 'b']], [tf.Maximum, ['a', 'b']], [tf.Minimum, ['a', 'b']], [tf.SquaredDifference, ['a', 'b']],
  [tf.Atan2, ['a', 'b']], [tf.Equal, ['a', 'b']], [tf.NotEqual, ['a', 'b']], [tf.Less, ['a', 'b']], [tf.LessEqual, ['a', 'b']],
  [tf.Greater, ['a', 'b']], [tf.GreaterEqual, ['a', 'b']], [tf.LogicalAnd, ['a', 'b']], [tf.LogicalOr, ['a', 'b']],
  [tf.Prelu, ['x', 'alpha']], [tf.EluGrad, ['dy', 'y']],
];

function binaryDtype(kernel: string, x: tf.DataType, y: tf.DataType): tf.DataType {
  if (COMPARISONS.has(kernel)) return 'bool';
  if (kernel === tf.RealDiv || kernel === tf.Atan2) return 'float32';
  if (kernel === tf.FloorDiv) return 'int32';
  const up = tf.upcastType(x, y);
  return up === 'bool' ? 'int32' : up;
}

function binaryKernel(kernelName: string, [an, bn]: [string, string]): ShapeOnlyKernel {
  return {
    kernelName,
    kernelFunc: (a) => {
      const x = input(a, an);
      const y = input(a, bn);
      const shape = tf.backend_util.assertAndGetBroadcastShape(x.shape, y.shape);
      if (x.dtype !== y.dtype && (x.dtype === 'float32' || y.dtype === 'float32')) {
        castScratch(a, x, 'float32');
        castScratch(a, y, 'float32');
      }
      return out(a, shape, binaryDtype(kernelName, x.dtype, y.dtype));
    },
  };
}

/** Whether casting `from` to `to` keeps the buffer (tfjs-backend-cpu: no encoding loss; cuda: same dtype). */
function castShares(a: Args, from: tf.DataType, to: tf.DataType): boolean {
  if (mirrorsCuda(a)) return from === to;
  return !tf.util.hasEncodingLoss(from, to);
}

const elementwise: ShapeOnlyKernel[] = [
  ...UNARIES.map((k) => ({ kernelName: k, kernelFunc: (a: Args) => out(a, input(a, 'x').shape, unaryDtype(k, input(a, 'x').dtype)) })),
  ...BINARIES.map(([k, names]) => binaryKernel(k, names)),
  {
    kernelName: tf.AddN,
    kernelFunc: (a) => {
      const xs = listInputs(a);
      if (xs.length === 0) throw new Error('shape-only backend: AddN of no tensors');
      return out(a, xs[0].shape, xs[0].dtype);
    },
  },
  {
    kernelName: tf.Select,
    kernelFunc: (a) => {
      const c = input(a, 'condition');
      const t = input(a, 't');
      const e = input(a, 'e');
      let shape = tf.backend_util.assertAndGetBroadcastShape(t.shape, e.shape);
      const cShape = c.shape.length === 1 && shape.length > 1 && c.shape[0] === shape[0] ? [c.shape[0], ...new Array(shape.length - 1).fill(1)] : c.shape;
      shape = tf.backend_util.assertAndGetBroadcastShape(cShape, shape);
      return out(a, shape, t.dtype);
    },
  },
  {
    kernelName: tf.Cast,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const dtype = attr<tf.DataType>(a, 'dtype');
      return castShares(a, x.dtype, dtype) ? be(a).share(x, x.shape, dtype) : out(a, x.shape, dtype);
    },
  },
  { kernelName: tf.Fill, kernelFunc: (a) => out(a, attr<number[]>(a, 'shape').slice(), attr<tf.DataType>(a, 'dtype') ?? 'float32') },
  { kernelName: tf.ZerosLike, kernelFunc: (a) => out(a, input(a, 'x').shape, input(a, 'x').dtype) },
  { kernelName: tf.OnesLike, kernelFunc: (a) => out(a, input(a, 'x').shape, input(a, 'x').dtype) },
  {
    kernelName: tf.Range,
    kernelFunc: (a) => {
      const start = attr<number>(a, 'start');
      const stop = attr<number>(a, 'stop');
      const step = attr<number>(a, 'step');
      const dtype = attr<'float32' | 'int32'>(a, 'dtype');
      if (start === stop || (start < stop && step < 0) || (stop < start && step > 1)) return out(a, [0], dtype);
      return out(a, [Math.abs(Math.ceil((stop - start) / step))], dtype);
    },
  },
  {
    kernelName: tf.LinSpace,
    kernelFunc: (a) => out(a, [attr<number>(a, 'num')], 'float32'),
  },
];

// ---- reductions ----------------------------------------------------------------------------------

function reduceDtype(kernel: string, x: tf.DataType): tf.DataType {
  if (kernel === tf.Any || kernel === tf.All) return 'bool';
  if (kernel === tf.ArgMax || kernel === tf.ArgMin) return 'int32';
  if (kernel === tf.Mean) return 'float32';
  if (x === 'bool') return kernel === tf.Max || kernel === tf.Min ? 'bool' : 'int32';
  return x;
}

function reduce(a: Args, kernel: string, axisAttr: number | number[] | undefined, keepDims: boolean): Info {
  const x = input(a, 'x');
  const axes = tf.util.parseAxisParam(axisAttr ?? x.shape.map((_, k) => k), x.shape);
  const [outShapeNoKeep] = tf.backend_util.computeOutAndReduceShapes(x.shape, axes);
  const shape = keepDims ? tf.backend_util.expandShapeToKeepDim(outShapeNoKeep, axes) : outShapeNoKeep;
  if (mirrorsCuda(a)) {
    const src = kernel === tf.Mean && x.dtype !== 'float32' ? 'float32' : x.dtype;
    if (src !== x.dtype) be(a).scratch(x.shape, src);
    if (sizeOf(shape) > 0 && planReduction(x.shape, axes).kind === 'transpose') be(a).scratch(x.shape, src);
  }
  return out(a, shape, reduceDtype(kernel, x.dtype));
}

const reductions: ShapeOnlyKernel[] = [
  ...[tf.Sum, tf.Mean, tf.Max, tf.Min, tf.Prod, tf.Any, tf.All].map((k) => ({
    kernelName: k,
    kernelFunc: (a: Args) => reduce(a, k, attr<number | number[]>(a, k === tf.Max ? 'reductionIndices' : 'axis'), attr<boolean>(a, 'keepDims') ?? false),
  })),
  ...[tf.ArgMax, tf.ArgMin].map((k) => ({ kernelName: k, kernelFunc: (a: Args) => reduce(a, k, [attr<number>(a, 'axis')], false) })),
  {
    kernelName: tf.Softmax,
    kernelFunc: (a) => {
      const x = input(a, 'logits');
      const rank = x.shape.length;
      const dim = attr<number>(a, 'dim') ?? -1;
      const lastAxis = dim === -1 || dim === rank - 1 || rank === 0;
      if (mirrorsCuda(a)) {
        // cuda: along another axis than the last, transposed there and back (two buffers live at once).
        if (!lastAxis) {
          be(a).scratch(x.shape, x.dtype);
          be(a).scratch(x.shape, x.dtype);
        }
      } else {
        // tfjs-backend-cpu: max, x − max, exp(x − max), their sum, then the division.
        be(a).scratch(x.shape, 'float32');
        be(a).scratch(x.shape, 'float32');
      }
      return out(a, x.shape, x.dtype);
    },
  },
  {
    kernelName: tf.Cumsum,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      return out(a, x.shape, x.dtype === 'bool' ? 'int32' : x.dtype);
    },
  },
  {
    kernelName: tf.TopK,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const k = attr<number>(a, 'k');
      const shape = [...x.shape.slice(0, -1), k];
      return [out(a, shape, x.dtype), out(a, shape, 'int32')];
    },
  },
];

// ---- layout --------------------------------------------------------------------------------------

function reshapeTo(a: Args, x: Info, shape: number[]): Info {
  const $shape = tf.util.inferFromImplicitShape(shape, sizeOf(x.shape));
  if (sizeOf($shape) !== sizeOf(x.shape)) throw new Error(`shape-only backend: cannot reshape [${x.shape}] to [${shape}]`);
  return be(a).share(x, $shape);
}

function splitShapes(x: Info, sizes: number[], axis: number): number[][] {
  return sizes.map((s) => {
    const shape = x.shape.slice();
    shape[axis] = s;
    return shape;
  });
}

const layout: ShapeOnlyKernel[] = [
  { kernelName: tf.Reshape, kernelFunc: (a) => reshapeTo(a, input(a, 'x'), attr<number[]>(a, 'shape')) },
  { kernelName: tf.Identity, kernelFunc: (a) => be(a).share(input(a, 'x')) },
  {
    kernelName: tf.ExpandDims,
    kernelFunc: (a) => {
      const x = input(a, 'input');
      let dim = attr<number>(a, 'dim');
      if (dim < 0) dim = x.shape.length + dim + 1;
      const shape = x.shape.slice();
      shape.splice(dim, 0, 1);
      return be(a).share(x, shape);
    },
  },
  {
    kernelName: tf.Transpose,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const perm = attr<number[]>(a, 'perm');
      const shape = perm.map((p) => x.shape[p]);
      // An identity permutation keeps the buffer on cuda (after dropping size-1 axes, as
      // simplifyPermutation does) and on cpu (this project's override in ../cpu-kernels.ts).
      const kept = perm.filter((p) => x.shape[p] !== 1);
      const identity = mirrorsCuda(a) ? kept.every((p, i) => i === 0 || p > kept[i - 1]) : perm.every((p, i) => p === i);
      return identity ? be(a).share(x, shape) : out(a, shape, x.dtype);
    },
  },
  {
    kernelName: tf.Slice,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const [begin, size] = tf.slice_util.parseSliceParams(x as tf.Tensor, attr<number[]>(a, 'begin'), attr<number[]>(a, 'size'));
      tf.slice_util.assertParamsValid(x as tf.Tensor, begin, size);
      return out(a, size, x.dtype);
    },
  },
  {
    kernelName: tf.StridedSlice,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const info = tf.slice_util.sliceInfo(
        x.shape,
        attr<number[]>(a, 'begin'),
        attr<number[]>(a, 'end'),
        attr<number[]>(a, 'strides'),
        attr<number>(a, 'beginMask'),
        attr<number>(a, 'endMask'),
        attr<number>(a, 'ellipsisMask'),
        attr<number>(a, 'newAxisMask'),
        attr<number>(a, 'shrinkAxisMask'),
      );
      if (info.isIdentity) return reshapeTo(a, x, info.finalShape);
      return out(a, info.finalShape, x.dtype);
    },
  },
  {
    kernelName: tf.Concat,
    kernelFunc: (a) => {
      const xs = listInputs(a);
      const axis = tf.util.parseAxisParam(attr<number>(a, 'axis'), xs[0].shape)[0];
      const shape = tf.backend_util.computeOutShape(xs.map((t) => t.shape), axis);
      const nonEmpty = xs.filter((t) => sizeOf(t.shape) > 0);
      if (mirrorsCuda(a) && nonEmpty.length === 1 && sizeOf(shape) === sizeOf(nonEmpty[0].shape)) return reshapeTo(a, nonEmpty[0], shape);
      const dtype = xs.some((t) => t.dtype === 'float32') ? 'float32' : xs[0].dtype;
      for (const t of xs) castScratch(a, t, dtype);
      return out(a, shape, dtype);
    },
  },
  {
    kernelName: tf.Pack,
    kernelFunc: (a) => {
      const xs = listInputs(a);
      let axis = attr<number>(a, 'axis');
      if (axis < 0) axis += xs[0].shape.length + 1;
      const shape = xs[0].shape.slice();
      shape.splice(axis, 0, xs.length);
      return out(a, shape, xs[0].dtype);
    },
  },
  {
    kernelName: tf.Unpack,
    kernelFunc: (a) => {
      const x = input(a, 'value');
      let axis = attr<number>(a, 'axis');
      if (axis < 0) axis += x.shape.length;
      const shape = x.shape.filter((_, k) => k !== axis);
      return Array.from({ length: x.shape[axis] }, () => out(a, shape, x.dtype));
    },
  },
  {
    kernelName: tf.SplitV,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const axis = tf.util.parseAxisParam(attr<number>(a, 'axis'), x.shape)[0];
      const sizes = tf.backend_util.prepareSplitSize(x as tf.Tensor, attr<number[] | number>(a, 'numOrSizeSplits'), axis);
      return splitShapes(x, sizes, axis).map((s) => out(a, s, x.dtype));
    },
  },
  {
    kernelName: tf.PadV2,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const paddings = attr<Array<[number, number]>>(a, 'paddings');
      return out(a, x.shape.map((d, k) => paddings[k][0] + d + paddings[k][1]), x.dtype);
    },
  },
  {
    kernelName: tf.MirrorPad,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const paddings = attr<Array<[number, number]>>(a, 'paddings');
      return out(a, x.shape.map((d, k) => paddings[k][0] + d + paddings[k][1]), x.dtype);
    },
  },
  {
    kernelName: tf.Tile,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const reps = attr<number[]>(a, 'reps');
      return out(a, x.shape.map((d, k) => d * reps[k]), x.dtype);
    },
  },
  { kernelName: tf.Reverse, kernelFunc: (a) => out(a, input(a, 'x').shape, input(a, 'x').dtype) },
  {
    kernelName: tf.GatherV2,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const indices = input(a, 'indices');
      const axis = tf.util.parseAxisParam(attr<number>(a, 'axis'), x.shape)[0];
      const info = tf.backend_util.segment_util.collectGatherOpShapeInfo(x as tf.Tensor, indices as tf.Tensor, axis, attr<number>(a, 'batchDims') ?? 0);
      castScratch(a, indices, 'int32');
      return out(a, info.outputShape, x.dtype);
    },
  },
  {
    kernelName: tf.GatherNd,
    kernelFunc: (a) => {
      const params = input(a, 'params');
      const indices = input(a, 'indices');
      const [resultShape] = tf.backend_util.prepareAndValidate(params as tf.Tensor, indices as tf.Tensor);
      return out(a, resultShape, params.dtype);
    },
  },
  {
    kernelName: tf.ScatterNd,
    kernelFunc: (a) => {
      const updates = input(a, 'updates');
      return out(a, attr<number[]>(a, 'shape').slice(), updates.dtype === 'bool' ? 'int32' : updates.dtype);
    },
  },
  {
    kernelName: tf.UnsortedSegmentSum,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const seg = input(a, 'segmentIds');
      return out(a, [attr<number>(a, 'numSegments'), ...x.shape.slice(seg.shape.length)], x.dtype === 'bool' ? 'int32' : x.dtype);
    },
  },
  {
    kernelName: tf.OneHot,
    kernelFunc: (a) => {
      const indices = input(a, 'indices');
      const dtype = attr<tf.DataType>(a, 'dtype') ?? 'int32';
      const shape = [...indices.shape, attr<number>(a, 'depth')];
      if (mirrorsCuda(a) && dtype !== 'float32') be(a).scratch(shape, 'float32');
      return out(a, shape, dtype);
    },
  },
];

// ---- matmul --------------------------------------------------------------------------------------

const matmul: ShapeOnlyKernel[] = [
  {
    kernelName: tf.BatchMatMul,
    kernelFunc: (a) => {
      const x = input(a, 'a');
      const y = input(a, 'b');
      const transA = attr<boolean>(a, 'transposeA') ?? false;
      const transB = attr<boolean>(a, 'transposeB') ?? false;
      const ra = x.shape.length;
      const rb = y.shape.length;
      if (ra < 2 || rb < 2) throw new Error(`shape-only backend: BatchMatMul needs rank >= 2 operands, got [${x.shape}] and [${y.shape}]`);
      const M = transA ? x.shape[ra - 1] : x.shape[ra - 2];
      const K = transA ? x.shape[ra - 2] : x.shape[ra - 1];
      const K2 = transB ? y.shape[rb - 1] : y.shape[rb - 2];
      const N = transB ? y.shape[rb - 2] : y.shape[rb - 1];
      if (K !== K2) throw new Error(`shape-only backend: BatchMatMul inner dimensions differ: [${x.shape}]${transA ? 'ᵀ' : ''} x [${y.shape}]${transB ? 'ᵀ' : ''}`);
      const batchA = x.shape.slice(0, -2);
      const batchB = y.shape.slice(0, -2);
      const batchShape = tf.backend_util.assertAndGetBroadcastShape(batchA, batchB);
      if (mirrorsCuda(a)) {
        // An operand whose batch is neither 1 nor the full batch is materialised over it.
        const batch = sizeOf(batchShape);
        for (const [t, tb] of [[x, batchA], [y, batchB]] as const) {
          castScratch(a, t, 'float32');
          if (sizeOf(tb) !== 1 && sizeOf(tb) !== batch) be(a).scratch([...batchShape, ...t.shape.slice(-2)], 'float32');
        }
      }
      return out(a, [...batchShape, M, N], 'float32');
    },
  },
];

// ---- this project's fused kernels (lib/backend/fused-kernels.ts) ---------------------------------

/** The fused kernels the cuda backend registers; the `cpu` mirror has only AdamW (../cpu-kernels.ts). */
export const FUSED_SHAPE_KERNELS: ShapeOnlyKernel[] = [
  {
    kernelName: FUSED_KERNELS.layerNorm,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const rows = sizeOf(x.shape) / x.shape[x.shape.length - 1];
      return [out(a, x.shape, 'float32'), out(a, [rows], 'float32'), out(a, [rows], 'float32')];
    },
  },
  {
    kernelName: FUSED_KERNELS.layerNormGrad,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const gamma = input(a, 'gamma');
      return [out(a, x.shape, 'float32'), out(a, gamma.shape, 'float32'), out(a, gamma.shape, 'float32')];
    },
  },
  { kernelName: FUSED_KERNELS.gelu, kernelFunc: (a) => out(a, input(a, 'x').shape, 'float32') },
  { kernelName: FUSED_KERNELS.geluGrad, kernelFunc: (a) => out(a, input(a, 'x').shape, 'float32') },
  {
    kernelName: FUSED_KERNELS.dropout,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      castScratch(a, x, 'float32');
      be(a).noteSeed(attr<number>(a, 'seed'));
      return out(a, x.shape, 'float32');
    },
  },
  {
    kernelName: FUSED_KERNELS.addLayerNorm,
    kernelFunc: (a) => {
      const x = input(a, 'a');
      const rows = sizeOf(x.shape) / x.shape[x.shape.length - 1];
      if ((attr<number>(a, 'rate') ?? 0) > 0) be(a).noteSeed(attr<number>(a, 'seed'));
      return [out(a, x.shape, 'float32'), out(a, [rows], 'float32'), out(a, [rows], 'float32'), out(a, x.shape, 'float32')];
    },
  },
  { kernelName: FUSED_KERNELS.biasGelu, kernelFunc: (a) => out(a, input(a, 'x').shape, 'float32') },
  { kernelName: FUSED_KERNELS.biasGeluGrad, kernelFunc: (a) => out(a, input(a, 'x').shape, 'float32') },
  {
    kernelName: FUSED_KERNELS.dropoutAdd,
    kernelFunc: (a) => {
      be(a).noteSeed(attr<number>(a, 'seed'));
      return out(a, input(a, 'x').shape, 'float32');
    },
  },
  {
    // In place (the parameters and moments are written where they are): no outputs, ⌈count / 64⌉ launches (native/src/fused.h).
    kernelName: FUSED_KERNELS.adamWMulti,
    kernelFunc: (a) => {
      const count = attr<number>(a, 'count');
      be(a).noteLaunches(Math.ceil(count / 64));
      return [];
    },
  },
  // Fused attention (lib/backend/cuda/kernels/attention.ts): out and two floats per query row;
  // backward one float per row of scratch, then dq, dk, dv.
  {
    kernelName: FUSED_KERNELS.attention,
    kernelFunc: (a) => {
      const q = input(a, 'q');
      if (attr<number>(a, 'rate') > 0) be(a).noteSeed(attr<number>(a, 'seed'));
      return [out(a, q.shape, 'float32'), out(a, q.shape.slice(0, 3), 'float32'), out(a, q.shape.slice(0, 3), 'float32')];
    },
  },
  {
    kernelName: FUSED_KERNELS.attentionGrad,
    kernelFunc: (a) => {
      const q = input(a, 'q');
      const k = input(a, 'k');
      if (attr<number>(a, 'rate') > 0) be(a).noteSeed(attr<number>(a, 'seed'));
      if (mirrorsCuda(a)) be(a).scratch(q.shape.slice(0, 3), 'float32');
      return [out(a, q.shape, 'float32'), out(a, k.shape, 'float32'), out(a, k.shape, 'float32')];
    },
  },
];

export const ADAMW_SHAPE_KERNEL: ShapeOnlyKernel = {
  kernelName: FUSED_KERNELS.adamW,
  kernelFunc: (a) => {
    const p = input(a, 'param');
    return [out(a, p.shape, 'float32'), out(a, p.shape, 'float32'), out(a, p.shape, 'float32')];
  },
};

/** Every kernel both mirrors register. */
export const SHAPE_ONLY_KERNELS: ShapeOnlyKernel[] = [...elementwise, ...reductions, ...layout, ...matmul, ADAMW_SHAPE_KERNEL];
