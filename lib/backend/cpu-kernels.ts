/**
 * Kernels this project replaces in tfjs-backend-cpu because the stock ones cannot train BERT.
 *
 * UnsortedSegmentSum is the gradient of `gather`, i.e. of every embedding lookup. tfjs-backend-cpu
 * builds it as one equal/cast/multiply/sum pass over the whole input per segment, O(segments x
 * rows x width): for BERT's 30522-row vocabulary and a batch of 64 x 32 tokens that is ~4e12
 * operations per step (a training step did not finish in 5 minutes). The replacement is the direct
 * scatter-add, O(rows x width), summing in input order; ids outside [0, numSegments) are dropped,
 * as TensorFlow's kernel does.
 *
 * Transpose with the identity permutation returns its input (a new reference to the same data)
 * instead of copying it element by element: tfjs's gather gradient transposes the whole
 * embedding-gradient matrix twice with identity permutations, ~150 ms per step for BERT's vocabulary.
 *
 * A real transpose, Add/Sub/Multiply/RealDiv on float32 and a float32 Sum over axes that are not the
 * innermost go through
 * lib/backend/cpu-layout.ts (the same values, without the stock kernels' per-element coordinate
 * arrays).
 *
 * BatchMatMul is lib/backend/cpu-matmul.ts: the stock kernel's numbers bit for bit, its operands laid
 * out with the shared dimension contiguous (the stock kernel was 58% of a CPU training step).
 *
 * AngleAdamW (the fused optimiser step of lib/ops/adamw-step.ts) gets a cpu kernel too: one loop over the
 * parameter instead of ~10 whole-tensor ops, which made the update of BERT's 2M-value embedding
 * matrix alone cost ~0.9 s per step. Same arithmetic as PyTorch's AdamW, in PyTorch's order:
 *   p·(1 − lr·wd) − (lr / bc1) · m / (√v / √bc2 + eps),  m, v the updated moments.
 */
import * as tf from '@tensorflow/tfjs-core';
import { broadcastBinary, sumInnermost, transposeValues, type BinaryOp } from './cpu-layout.js';
import { blockedBatchMatMul } from './cpu-matmul.js';
import { FUSED_KERNELS } from './fused-kernels.js';

interface CpuLikeBackend {
  readSync(dataId: object): ArrayLike<number>;
  /** tfjs-backend-cpu */
  makeTensorInfo?(shape: number[], dtype: tf.DataType, values: tf.TypedArray): tf.TensorInfo;
  /** tfjs-backend-wasm, which has no makeTensorInfo (copies the values into its heap) */
  makeOutput?(shape: number[], dtype: tf.DataType, memoryOffset: undefined, values: tf.TypedArray): tf.TensorInfo;
}

function output(backend: CpuLikeBackend, shape: number[], dtype: tf.DataType, values: tf.TypedArray): tf.TensorInfo {
  // Check makeTensorInfo first: the cpu backend also has a makeOutput, with another signature.
  return backend.makeTensorInfo ? backend.makeTensorInfo(shape, dtype, values) : backend.makeOutput!(shape, dtype, undefined, values);
}

function unsortedSegmentSum(args: { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: tf.NamedAttrMap }): tf.TensorInfo {
  const { x, segmentIds } = args.inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
  const numSegments = (args.attrs as { numSegments: number }).numSegments;
  const backend = args.backend as CpuLikeBackend;
  const idRank = segmentIds.shape.length;
  const rest = x.shape.slice(idRank);
  const width = rest.reduce((a, b) => a * b, 1);
  const ids = backend.readSync(segmentIds.dataId);
  const values = backend.readSync(x.dataId);
  const dtype = x.dtype === 'int32' ? 'int32' : 'float32';
  const out = dtype === 'int32' ? new Int32Array(numSegments * width) : new Float32Array(numSegments * width);
  for (let i = 0; i < ids.length; i++) {
    const s = ids[i];
    if (s < 0 || s >= numSegments) continue;
    const o = s * width;
    const xi = i * width;
    for (let j = 0; j < width; j++) out[o + j] += values[xi + j];
  }
  return output(backend, [numSegments, ...rest], dtype, out);
}

function adamW(args: { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: tf.NamedAttrMap }): tf.TensorInfo[] {
  const { param, grad, m, v } = args.inputs as Record<'param' | 'grad' | 'm' | 'v', tf.TensorInfo>;
  const a = args.attrs as Record<'lr' | 'beta1' | 'beta2' | 'eps' | 'weightDecay' | 'biasCorrection1' | 'biasCorrection2', number>;
  const backend = args.backend as CpuLikeBackend;
  const P = backend.readSync(param.dataId);
  const G = backend.readSync(grad.dataId);
  const M = backend.readSync(m.dataId);
  const V = backend.readSync(v.dataId);
  const n = P.length;
  const pOut = new Float32Array(n);
  const mOut = new Float32Array(n);
  const vOut = new Float32Array(n);
  const decay = 1 - a.lr * a.weightDecay;
  const stepSize = a.lr / a.biasCorrection1;
  const bc2Sqrt = Math.sqrt(a.biasCorrection2);
  const b1 = a.beta1;
  const b2 = a.beta2;
  for (let i = 0; i < n; i++) {
    const g = G[i];
    const mi = b1 * M[i] + (1 - b1) * g;
    const vi = b2 * V[i] + (1 - b2) * g * g;
    mOut[i] = mi;
    vOut[i] = vi;
    pOut[i] = P[i] * decay - (stepSize * mi) / (Math.sqrt(vi) / bc2Sqrt + a.eps);
  }
  return [
    output(backend, param.shape.slice(), 'float32', pOut),
    output(backend, param.shape.slice(), 'float32', mOut),
    output(backend, param.shape.slice(), 'float32', vOut),
  ];
}

/** The stock kernel's shape logic; the arithmetic in blockedBatchMatMul (float32 only). */
function withBlockedMatMul(original: tf.KernelFunc): tf.KernelFunc {
  return ((args: { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: tf.NamedAttrMap }) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
    const ra = a.shape.length;
    const rb = b.shape.length;
    const K = transposeA ? a.shape[ra - 2] : a.shape[ra - 1];
    const blockSize = (args.backend as { blockSize?: number }).blockSize;
    // anything unusual (another dtype, mismatched shapes: its error message) goes to the stock kernel
    if (a.dtype !== 'float32' || b.dtype !== 'float32' || ra < 2 || rb < 2 || K !== (transposeB ? b.shape[rb - 1] : b.shape[rb - 2]) || !(blockSize! > 0)) {
      return original(args as Parameters<tf.KernelFunc>[0]);
    }
    const M = transposeA ? a.shape[ra - 1] : a.shape[ra - 2];
    const N = transposeB ? b.shape[rb - 2] : b.shape[rb - 1];
    const outer = tf.broadcast_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
    const batchA = tf.util.sizeFromShape(a.shape.slice(0, -2));
    const batchB = tf.util.sizeFromShape(b.shape.slice(0, -2));
    const backend = args.backend as CpuLikeBackend;
    const values = blockedBatchMatMul(backend.readSync(a.dataId), backend.readSync(b.dataId), { batchA, batchB, M, N, K, transposeA, transposeB }, blockSize!);
    return output(backend, [...outer, M, N], 'float32', values);
  }) as tf.KernelFunc;
}

/** Float32 operands here (broadcast or not); everything else to the stock kernel. */
function withFastBroadcast(op: BinaryOp, original: tf.KernelFunc): tf.KernelFunc {
  return ((args: { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: tf.NamedAttrMap }) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const backend = args.backend as CpuLikeBackend;
    if (a.dtype !== 'float32' || b.dtype !== 'float32' || !backend.makeTensorInfo) {
      return original(args as Parameters<tf.KernelFunc>[0]);
    }
    const outShape = tf.backend_util.assertAndGetBroadcastShape(a.shape, b.shape);
    return output(backend, outShape, 'float32', broadcastBinary(op, backend.readSync(a.dataId), a.shape, backend.readSync(b.dataId), b.shape, outShape));
  }) as tf.KernelFunc;
}

/** A float32 Sum over axes that are not innermost: the stock kernel's transpose-then-sum, the fast transpose. */
function withFastTransposedSum(original: tf.KernelFunc): tf.KernelFunc {
  return ((args: { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: tf.NamedAttrMap }) => {
    const x = (args.inputs as { x: tf.TensorInfo }).x;
    const { axis, keepDims } = args.attrs as { axis: number | number[]; keepDims: boolean };
    const backend = args.backend as CpuLikeBackend;
    const rank = x.shape.length;
    const axes = tf.util.parseAxisParam(axis, x.shape);
    const perm = tf.backend_util.getAxesPermutation(axes, rank);
    if (x.dtype !== 'float32' || !backend.makeTensorInfo || perm == null) return original(args as Parameters<tf.KernelFunc>[0]);
    const permuted = transposeValues(backend.readSync(x.dataId) as Float32Array, x.shape, perm);
    const [outShape, reduceShape] = tf.backend_util.computeOutAndReduceShapes(
      perm.map((p) => x.shape[p]),
      tf.backend_util.getInnerMostAxes(axes.length, rank),
    );
    const values = sumInnermost(permuted, tf.util.sizeFromShape(reduceShape));
    return output(backend, keepDims ? tf.backend_util.expandShapeToKeepDim(outShape, axes) : outShape, 'float32', values);
  }) as tf.KernelFunc;
}

const BROADCAST_OPS: Array<[string, BinaryOp]> = [
  [tf.Add, 'add'],
  [tf.Sub, 'sub'],
  [tf.Multiply, 'mul'],
  [tf.RealDiv, 'div'],
];

interface RefCountingBackend {
  incRef(dataId: object): void;
}

function withIdentityShortcut(original: tf.KernelFunc): tf.KernelFunc {
  return ((args: { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: tf.NamedAttrMap }) => {
    const x = (args.inputs as { x: tf.TensorInfo }).x;
    const perm = (args.attrs as { perm: number[] }).perm;
    if (perm.every((p, i) => p === i)) {
      (args.backend as RefCountingBackend).incRef(x.dataId);
      return { dataId: x.dataId, shape: x.shape.slice(), dtype: x.dtype };
    }
    const backend = args.backend as CpuLikeBackend;
    if (backend.makeTensorInfo && (x.dtype === 'float32' || x.dtype === 'int32')) {
      const values = backend.readSync(x.dataId) as Float32Array | Int32Array;
      return output(backend, perm.map((p) => x.shape[p]), x.dtype, transposeValues(values, x.shape, perm));
    }
    return original(args as Parameters<tf.KernelFunc>[0]);
  }) as tf.KernelFunc;
}

let registered = false;
let registeredWasm = false;

/**
 * tfjs-backend-wasm has no UnsortedSegmentSum at all (so no gradient of gather, i.e. no BERT
 * training) and no AngleAdamW; the same JavaScript kernels serve it, reading and writing its heap.
 */
export function registerWasmKernelAdditions(): void {
  if (registeredWasm) return;
  if (!tf.getKernel(tf.UnsortedSegmentSum, 'wasm')) {
    tf.registerKernel({ kernelName: tf.UnsortedSegmentSum, backendName: 'wasm', kernelFunc: unsortedSegmentSum as unknown as tf.KernelFunc });
  }
  if (!tf.getKernel(FUSED_KERNELS.adamW, 'wasm')) {
    tf.registerKernel({ kernelName: FUSED_KERNELS.adamW, backendName: 'wasm', kernelFunc: adamW as unknown as tf.KernelFunc });
  }
  registeredWasm = true;
}

/** Installs the replacements for the cpu backend (idempotent). */
export function registerCpuKernelOverrides(): void {
  if (registered) return;
  if (tf.getKernel(tf.UnsortedSegmentSum, 'cpu')) tf.unregisterKernel(tf.UnsortedSegmentSum, 'cpu');
  tf.registerKernel({ kernelName: tf.UnsortedSegmentSum, backendName: 'cpu', kernelFunc: unsortedSegmentSum as unknown as tf.KernelFunc });
  const transpose = tf.getKernel(tf.Transpose, 'cpu');
  if (transpose) {
    tf.unregisterKernel(tf.Transpose, 'cpu');
    tf.registerKernel({ ...transpose, kernelFunc: withIdentityShortcut(transpose.kernelFunc) });
  }
  for (const [name, op] of BROADCAST_OPS) {
    const stock = tf.getKernel(name, 'cpu');
    if (!stock) continue;
    tf.unregisterKernel(name, 'cpu');
    tf.registerKernel({ ...stock, kernelFunc: withFastBroadcast(op, stock.kernelFunc) });
  }
  const sum = tf.getKernel(tf.Sum, 'cpu');
  if (sum) {
    tf.unregisterKernel(tf.Sum, 'cpu');
    tf.registerKernel({ ...sum, kernelFunc: withFastTransposedSum(sum.kernelFunc) });
  }
  const matMul = tf.getKernel(tf.BatchMatMul, 'cpu');
  if (matMul) {
    tf.unregisterKernel(tf.BatchMatMul, 'cpu');
    tf.registerKernel({ ...matMul, kernelFunc: withBlockedMatMul(matMul.kernelFunc) });
  }
  if (!tf.getKernel(FUSED_KERNELS.adamW, 'cpu')) {
    tf.registerKernel({ kernelName: FUSED_KERNELS.adamW, backendName: 'cpu', kernelFunc: adamW as unknown as tf.KernelFunc });
  }
  registered = true;
}
