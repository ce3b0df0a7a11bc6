/**
 * Elementwise kernels: unary math, binary arithmetic and comparisons with broadcasting, select,
 * cast, and the creation kernels (Fill, ZerosLike, OnesLike, Range).
 */
import * as tf from '@tensorflow/tfjs-core';
import { dtCode } from '../backend.js';
import { BINARY, UNARY } from '../op-codes.js';
import { sizeOf, broadcastStrides, mergeDims } from '../shapes.js';
import { attr, binaryInPlace, binaryOp, castTo, copyOf, cudaOf, fillWith, input, unaryOp, type CudaKernel, type Info, type KernelArgs } from './core.js';

/** Unary ops whose result keeps an int32 input's dtype; the rest produce float32 (or bool). */
const KEEPS_INT = new Set<number>([UNARY.ABS, UNARY.NEG, UNARY.SQUARE, UNARY.SIGN, UNARY.RELU, UNARY.RELU6, UNARY.FLOOR, UNARY.CEIL, UNARY.ROUND, UNARY.CLIP]);
const GIVES_BOOL = new Set<number>([UNARY.ISNAN, UNARY.ISINF, UNARY.ISFINITE, UNARY.LOGICAL_NOT]);

function unaryKernel(kernelName: string, op: number, params: (a: KernelArgs) => [number, number] = () => [0, 0]): CudaKernel {
  return {
    kernelName,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      const out: tf.DataType = GIVES_BOOL.has(op) ? 'bool' : x.dtype !== 'float32' && KEEPS_INT.has(op) ? (x.dtype === 'bool' ? 'int32' : x.dtype) : 'float32';
      const [alpha, beta] = params(a);
      return unaryOp(cudaOf(a), x, op, out, alpha, beta);
    },
  };
}

const COMPARISONS = new Set<number>([BINARY.EQ, BINARY.NE, BINARY.LT, BINARY.LE, BINARY.GT, BINARY.GE, BINARY.AND, BINARY.OR]);

function binaryKernel(kernelName: string, op: number, names: [string, string] = ['a', 'b']): CudaKernel {
  return {
    kernelName,
    kernelFunc: (a) => {
      const x = input(a, names[0]);
      const y = input(a, names[1]);
      let out: tf.DataType;
      if (COMPARISONS.has(op)) out = 'bool';
      else if (op === BINARY.DIV || op === BINARY.ATAN2) out = 'float32';
      else if (op === BINARY.FLOORDIV) out = 'int32';
      else out = tf.upcastType(x.dtype, y.dtype) === 'bool' ? 'int32' : tf.upcastType(x.dtype, y.dtype);
      return binaryOp(cudaOf(a), x, y, op, out);
    },
  };
}

const unaries: CudaKernel[] = [
  unaryKernel(tf.Abs, UNARY.ABS),
  unaryKernel(tf.Acos, UNARY.ACOS),
  unaryKernel(tf.Acosh, UNARY.ACOSH),
  unaryKernel(tf.Asin, UNARY.ASIN),
  unaryKernel(tf.Asinh, UNARY.ASINH),
  unaryKernel(tf.Atan, UNARY.ATAN),
  unaryKernel(tf.Atanh, UNARY.ATANH),
  unaryKernel(tf.Ceil, UNARY.CEIL),
  unaryKernel(tf.Cos, UNARY.COS),
  unaryKernel(tf.Cosh, UNARY.COSH),
  unaryKernel(tf.Elu, UNARY.ELU),
  unaryKernel(tf.Erf, UNARY.ERF),
  unaryKernel(tf.Exp, UNARY.EXP),
  unaryKernel(tf.Expm1, UNARY.EXPM1),
  unaryKernel(tf.Floor, UNARY.FLOOR),
  unaryKernel(tf.IsFinite, UNARY.ISFINITE),
  unaryKernel(tf.IsInf, UNARY.ISINF),
  unaryKernel(tf.IsNan, UNARY.ISNAN),
  unaryKernel(tf.Log, UNARY.LOG),
  unaryKernel(tf.Log1p, UNARY.LOG1P),
  unaryKernel(tf.LogicalNot, UNARY.LOGICAL_NOT),
  unaryKernel(tf.Neg, UNARY.NEG),
  unaryKernel(tf.Reciprocal, UNARY.RECIPROCAL),
  unaryKernel(tf.Relu, UNARY.RELU),
  unaryKernel(tf.Relu6, UNARY.RELU6),
  unaryKernel(tf.Round, UNARY.ROUND),
  unaryKernel(tf.Rsqrt, UNARY.RSQRT),
  unaryKernel(tf.Selu, UNARY.SELU),
  unaryKernel(tf.Sigmoid, UNARY.SIGMOID),
  unaryKernel(tf.Sign, UNARY.SIGN),
  unaryKernel(tf.Sin, UNARY.SIN),
  unaryKernel(tf.Sinh, UNARY.SINH),
  unaryKernel(tf.Softplus, UNARY.SOFTPLUS),
  unaryKernel(tf.Sqrt, UNARY.SQRT),
  unaryKernel(tf.Square, UNARY.SQUARE),
  unaryKernel(tf.Tan, UNARY.TAN),
  unaryKernel(tf.Tanh, UNARY.TANH),
  unaryKernel(tf.Step, UNARY.STEP, (a) => [attr<number>(a, 'alpha') ?? 0, 0]),
  unaryKernel(tf.LeakyRelu, UNARY.LEAKYRELU, (a) => [attr<number>(a, 'alpha'), 0]),
  unaryKernel(tf.ClipByValue, UNARY.CLIP, (a) => [attr<number>(a, 'clipValueMin'), attr<number>(a, 'clipValueMax')]),
];

const binaries: CudaKernel[] = [
  binaryKernel(tf.Add, BINARY.ADD),
  binaryKernel(tf.Sub, BINARY.SUB),
  binaryKernel(tf.Multiply, BINARY.MUL),
  binaryKernel(tf.RealDiv, BINARY.DIV),
  binaryKernel(tf.FloorDiv, BINARY.FLOORDIV), // int32 result whatever the inputs, as tfjs-backend-cpu
  binaryKernel(tf.Mod, BINARY.MOD),
  binaryKernel(tf.Pow, BINARY.POW),
  binaryKernel(tf.Maximum, BINARY.MAX),
  binaryKernel(tf.Minimum, BINARY.MIN),
  binaryKernel(tf.SquaredDifference, BINARY.SQDIFF),
  binaryKernel(tf.Atan2, BINARY.ATAN2),
  binaryKernel(tf.Equal, BINARY.EQ),
  binaryKernel(tf.NotEqual, BINARY.NE),
  binaryKernel(tf.Less, BINARY.LT),
  binaryKernel(tf.LessEqual, BINARY.LE),
  binaryKernel(tf.Greater, BINARY.GT),
  binaryKernel(tf.GreaterEqual, BINARY.GE),
  binaryKernel(tf.LogicalAnd, BINARY.AND),
  binaryKernel(tf.LogicalOr, BINARY.OR),
  binaryKernel(tf.Prelu, BINARY.PRELU, ['x', 'alpha']),
  binaryKernel(tf.EluGrad, BINARY.ELU_GRAD, ['dy', 'y']),
];

const others: CudaKernel[] = [
  {
    kernelName: tf.AddN,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const xs = Object.keys(a.inputs)
        .sort((p, q) => Number(p) - Number(q))
        .map((k) => a.inputs[k]!);
      if (xs.length === 0) throw new Error('cuda backend: AddN of no tensors');
      const acc = copyOf(b, xs[0]);
      for (let i = 1; i < xs.length; i++) binaryInPlace(b, acc, xs[i], BINARY.ADD);
      return acc;
    },
  },
  {
    kernelName: tf.Select,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const c = input(a, 'condition');
      const t = input(a, 't');
      const e = input(a, 'e');
      let shape = tf.backend_util.assertAndGetBroadcastShape(t.shape, e.shape);
      // tfjs also allows a rank-1 condition selecting whole rows of t and e.
      const cShape = c.shape.length === 1 && shape.length > 1 && c.shape[0] === shape[0] ? [c.shape[0], ...new Array(shape.length - 1).fill(1)] : c.shape;
      shape = tf.backend_util.assertAndGetBroadcastShape(cShape, shape);
      const out = b.makeTensorInfo(shape, t.dtype);
      if (sizeOf(shape) === 0) return out;
      const m = mergeDims(shape, [broadcastStrides(cShape, shape), broadcastStrides(t.shape, shape), broadcastStrides(e.shape, shape)]);
      b.addon.select(dtCode(t.dtype), b.ptr(c), b.ptr(t), b.ptr(e), b.ptr(out), m.shape, m.strides[0], m.strides[1], m.strides[2]);
      return out;
    },
  },
  {
    kernelName: tf.Cast,
    kernelFunc: (a) => castTo(cudaOf(a), input(a, 'x'), attr<tf.DataType>(a, 'dtype')),
  },
  {
    kernelName: tf.Fill,
    kernelFunc: (a) => {
      const dtype = attr<tf.DataType>(a, 'dtype') ?? 'float32';
      return fillWith(cudaOf(a), attr<number[]>(a, 'shape'), dtype, Number(attr<number>(a, 'value')));
    },
  },
  {
    kernelName: tf.ZerosLike,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      return fillWith(cudaOf(a), x.shape, x.dtype, 0);
    },
  },
  {
    kernelName: tf.OnesLike,
    kernelFunc: (a) => {
      const x = input(a, 'x');
      return fillWith(cudaOf(a), x.shape, x.dtype, 1);
    },
  },
  {
    kernelName: tf.Range,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const start = attr<number>(a, 'start');
      const stop = attr<number>(a, 'stop');
      let step = attr<number>(a, 'step');
      const dtype = attr<'float32' | 'int32'>(a, 'dtype');
      // tfjs-backend-cpu's rangeImpl rules, so that both backends agree on edge cases.
      if (start === stop || (start < stop && step < 0) || (stop < start && step > 1)) return b.makeTensorInfo([0], dtype);
      const n = Math.abs(Math.ceil((stop - start) / step));
      if (stop < start && step === 1) step = -1;
      const out = b.makeTensorInfo([n], dtype);
      b.addon.range(dtCode(dtype), b.ptr(out), n, start, step);
      return out;
    },
  },
];

export const elementwiseKernels: CudaKernel[] = [...unaries, ...binaries, ...others];
export type { Info };
