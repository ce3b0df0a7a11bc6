/**
 * BatchMatMul through cuBLASLt (TF32 tensor-core math by default, exact fp32 when the backend's
 * matmulPrecision is 'fp32'). Batch dimensions broadcast: a side whose batch is 1 is read with
 * stride 0; other broadcasts are materialised first.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CudaBackend } from '../backend.js';
import { MATMUL_PRECISION } from '../op-codes.js';
import { broadcastStrides, sizeOf } from '../shapes.js';
import { attr, castTo, cudaOf, input, stridedCopy, type CudaKernel, type Info } from './core.js';

export function batchMatMulImpl(b: CudaBackend, a: Info, c: Info, transA: boolean, transB: boolean): Info {
  const ra = a.shape.length;
  const rb = c.shape.length;
  if (ra < 2 || rb < 2) throw new Error(`cuda backend: BatchMatMul needs rank >= 2 operands, got [${a.shape}] and [${c.shape}]`);
  const M = transA ? a.shape[ra - 1] : a.shape[ra - 2];
  const K = transA ? a.shape[ra - 2] : a.shape[ra - 1];
  const K2 = transB ? c.shape[rb - 1] : c.shape[rb - 2];
  const N = transB ? c.shape[rb - 2] : c.shape[rb - 1];
  if (K !== K2) throw new Error(`cuda backend: BatchMatMul inner dimensions differ: [${a.shape}]${transA ? 'ᵀ' : ''} x [${c.shape}]${transB ? 'ᵀ' : ''}`);
  const batchA = a.shape.slice(0, -2);
  const batchB = c.shape.slice(0, -2);
  const batchShape = tf.backend_util.assertAndGetBroadcastShape(batchA, batchB);
  const batch = sizeOf(batchShape);
  const out = b.makeTensorInfo([...batchShape, M, N], 'float32');
  if (batch * M * N === 0) return out;
  const temps: Info[] = [];
  // Each operand: stride 0 when it has one matrix for all batches, packed when its batch shape is
  // the full one, materialised (broadcast copy) otherwise.
  const operand = (t: Info, tb: number[]): [Info, number] => {
    let x = t.dtype === 'float32' ? t : castTo(b, t, 'float32');
    if (x !== t) temps.push(x);
    const mat = t.shape[t.shape.length - 2] * t.shape[t.shape.length - 1];
    if (sizeOf(tb) === 1) return [x, 0];
    if (sizeOf(tb) === batch) return [x, mat];
    const full = [...batchShape, ...t.shape.slice(-2)];
    const strides = broadcastStrides(t.shape, full);
    x = stridedCopy(b, x, full, strides, 0);
    temps.push(x);
    return [x, mat];
  };
  const [pa, sa] = operand(a, batchA);
  const [pb, sb] = operand(c, batchB);
  b.addon.matmul(b.ptr(pa), b.ptr(pb), b.ptr(out), batch, M, N, K, transA, transB, sa, sb, MATMUL_PRECISION[b.matmulPrecision]);
  for (const t of temps) b.disposeIntermediateTensorInfo(t);
  return out;
}

export const matmulKernels: CudaKernel[] = [
  {
    kernelName: tf.BatchMatMul,
    kernelFunc: (a) => batchMatMulImpl(cudaOf(a), input(a, 'a'), input(a, 'b'), attr<boolean>(a, 'transposeA') ?? false, attr<boolean>(a, 'transposeB') ?? false),
  },
];
