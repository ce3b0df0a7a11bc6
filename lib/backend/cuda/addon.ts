/**
 * The native addon's JavaScript surface (native/src/addon.cu) and its loader. Device buffers are
 * numbers (addresses); shapes and strides are arrays of numbers; every function throws an Error
 * naming the failed CUDA/cuBLAS call.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { UnavailableError } from '../../util/errors.js';
import { packageRoot } from '../../util/package-root.js';

export type Ptr = number;

export interface DeviceInfo {
  name: string;
  computeCapability: string;
  multiprocessors: number;
  totalMemory: number;
  runtimeVersion: number;
  driverVersion: number;
  cublasLtVersion: string;
}

export interface NativeMemoryStats {
  inUse: number;
  requested: number;
  cached: number;
  peakInUse: number;
  limit: number;
  liveBlocks: number;
  cudaMallocs: number;
  allocations: number;
  matmulPlans: number;
  deviceFree?: number;
  deviceTotal?: number;
  /** Free bytes kept for captured CUDA graphs (native/src/graph.h), not reusable by other tensors. */
  graphReserved?: number;
  /** Captured graphs alive. */
  graphs?: number;
}

/** What graphEnd reports of a captured graph (native/src/graph.h GraphInfo). */
export interface NativeGraphInfo {
  id: number;
  /** Kernel nodes: what one graphLaunch runs. */
  kernels: number;
  nodes: number;
  /** Smallest dropout seed captured, and largest − smallest + 1 (0 when nothing draws random numbers). */
  firstSeed: number;
  seeds: number;
}

type TA = Float32Array | Int32Array | Uint8Array;

export interface CudaAddon {
  init(): DeviceInfo;
  malloc(bytes: number): Ptr;
  free(p: Ptr): void;
  memoryStats(): NativeMemoryStats;
  emptyCache(): void;
  setMemoryLimit(bytes: number): void;
  sizeClass(bytes: number): number;
  upload(p: Ptr, data: TA): void;
  readSync(p: Ptr, into: TA): void;
  read<T extends TA>(p: Ptr, into: T): Promise<T>;
  sync(): void;
  unary(op: number, inDt: number, outDt: number, x: Ptr, y: Ptr, n: number, alpha: number, beta: number): void;
  binary(op: number, inDt: number, outDt: number, a: Ptr, b: Ptr, dims: number[], aStrides: number[], bStrides: number[], y: Ptr): void;
  select(dt: number, cond: Ptr, a: Ptr, b: Ptr, y: Ptr, dims: number[], cs: number[], as: number[], bs: number[]): void;
  cast(inDt: number, outDt: number, x: Ptr, y: Ptr, n: number, toBool: boolean): void;
  fill(dt: number, y: Ptr, n: number, value: number): void;
  range(dt: number, y: Ptr, n: number, start: number, step: number): void;
  reduce(op: number, dt: number, x: Ptr, y: Ptr, outer: number, r: number, inner: number): void;
  softmax(x: Ptr, y: Ptr, rows: number, cols: number, log: boolean): void;
  topk(dt: number, x: Ptr, values: Ptr, indices: Ptr, rows: number, cols: number, k: number): void;
  cumsum(dt: number, x: Ptr, y: Ptr, outer: number, r: number, inner: number, exclusive: boolean, reverse: boolean): void;
  copyStrided(x: Ptr, y: Ptr, dims: number[], strides: number[], offset: number): void;
  transposeBatched(x: Ptr, y: Ptr, batch: number, rows: number, cols: number): void;
  copy2d(dst: Ptr, dstPitch: number, dstOffset: number, src: Ptr, srcPitch: number, srcOffset: number, width: number, rows: number): void;
  pad(dt: number, x: Ptr, y: Ptr, outDims: number[], inDims: number[], before: number[], value: number): void;
  tile(x: Ptr, y: Ptr, outDims: number[], inDims: number[]): void;
  gather(x: Ptr, idx: Ptr, y: Ptr, batch: number, outer: number, n: number, nIdx: number, inner: number): void;
  segmentSum(dt: number, x: Ptr, seg: Ptr, y: Ptr, rows: number, inner: number, numSegments: number): void;
  oneHot(idx: Ptr, y: Ptr, n: number, depth: number, on: number, off: number): void;
  gatherNd(x: Ptr, idx: Ptr, y: Ptr, numSlices: number, sliceRank: number, sliceSize: number, strides: number[], leading: number[]): void;
  scatterNd(dt: number, idx: Ptr, updates: Ptr, y: Ptr, numSlices: number, sliceRank: number, sliceSize: number, strides: number[], leading: number[], outSize: number): void;
  matmul(a: Ptr, b: Ptr, c: Ptr, batch: number, m: number, n: number, k: number, transA: boolean, transB: boolean, strideA: number, strideB: number, precision: number): void;
  layerNorm(x: Ptr, gamma: Ptr, beta: Ptr, y: Ptr, mean: Ptr, rstd: Ptr, rows: number, cols: number, eps: number): void;
  /** LayerNorm of u = dropout(a; rate, seed) + b, writing u too (fused.cu addLayerNormForward; rate 0: a + b). */
  addLayerNorm(a: Ptr, b: Ptr, u: Ptr, gamma: Ptr, beta: Ptr, y: Ptr, mean: Ptr, rstd: Ptr, rows: number, cols: number, eps: number, rate: number, seed: number): void;
  layerNormGrad(dy: Ptr, x: Ptr, gamma: Ptr, mean: Ptr, rstd: Ptr, dx: Ptr, dgamma: Ptr, dbeta: Ptr, rows: number, cols: number): void;
  gelu(x: Ptr, y: Ptr, n: number): void;
  geluGrad(dy: Ptr, x: Ptr, dx: Ptr, n: number): void;
  /** GELU(x + bias), bias [cols] over x [rows, cols]; and d/du GELU at x + bias times dy (fused.cu). */
  biasGelu(x: Ptr, bias: Ptr, y: Ptr, rows: number, cols: number): void;
  biasGeluGrad(dy: Ptr, x: Ptr, bias: Ptr, du: Ptr, rows: number, cols: number): void;
  adamW(p: Ptr, g: Ptr, m: Ptr, v: Ptr, pOut: Ptr, mOut: Ptr, vOut: Ptr, n: number, lr: number, b1: number, b2: number, eps: number, wd: number, bc1: number, bc2: number): void;
  dropout(x: Ptr, y: Ptr, n: number, rate: number, seed: number): void;
  /** y = dropout(x) + residual, dropout's mask (fused.cu dropoutAdd). */
  dropoutAdd(x: Ptr, residual: Ptr, y: Ptr, n: number, rate: number, seed: number): void;
  randomUniform(y: Ptr, n: number, seed: number, lo: number, hi: number): void;
  randomNormal(y: Ptr, n: number, seed: number, mean: number, std: number): void;
  /** AdamW of every listed parameter in place, ⌈count / 64⌉ launches (returned); hyper: device floats [count, 4] = lr, wd, 1 − β1^t, 1 − β2^t. */
  adamWMulti(p: Ptr[], g: Ptr[], m: Ptr[], v: Ptr[], n: number[], hyper: Ptr, b1: number, b2: number, eps: number): number;
  /** CUDA graph capture of the stream (native/src/graph.h): begin, end (instantiates), abort, launch, destroy. */
  graphBegin(): void;
  graphEnd(): NativeGraphInfo;
  graphAbort(): void;
  graphLaunch(id: number, seedBase: number): void;
  graphDestroy(id: number): void;
  /** native/src/attention.h; mask 0 = none; shape = B, H, Hkv, T, S, D, maskB, maskT, scale, dropout rate, seed. */
  attentionForward(q: Ptr, k: Ptr, v: Ptr, mask: Ptr | 0, out: Ptr, m: Ptr, l: Ptr, ...shape: AttentionShapeArgs): void;
  attentionBackward(q: Ptr, k: Ptr, v: Ptr, mask: Ptr | 0, out: Ptr, dout: Ptr, m: Ptr, l: Ptr, rowDot: Ptr, dq: Ptr, dk: Ptr, dv: Ptr, ...shape: AttentionShapeArgs): void;
}

/** [B, H, Hkv, T, S, D, maskB, maskT, scale, dropoutRate, seed], addon.cu's attentionShapeArg. */
export type AttentionShapeArgs = [number, number, number, number, number, number, number, number, number, number, number];

export const BUILD_COMMAND = 'npm run build:cuda';

/** Where the built addon lives (ANGLE_CUDA_ADDON overrides). */
export function addonPath(): string {
  return process.env.ANGLE_CUDA_ADDON?.trim() || join(packageRoot(), 'build', 'cuda', 'angle_cuda.node');
}

/**
 * Loads the addon and initialises the device. Every way this can fail on a machine without a
 * usable GPU becomes an UnavailableError that says why and what to run.
 */
export function loadAddon(): { addon: CudaAddon; device: DeviceInfo; path: string } {
  const path = addonPath();
  if (!existsSync(path)) {
    throw new UnavailableError(
      `backend 'cuda' is unavailable: the native addon ${path} is not built; run \`${BUILD_COMMAND}\` on a machine with the CUDA toolkit (nvcc, cuBLAS) — see docs/gpu.md`,
    );
  }
  let addon: CudaAddon;
  try {
    addon = createRequire(import.meta.url)(path) as CudaAddon;
  } catch (e) {
    const msg = (e as Error).message;
    const lib = /lib(cudart|cublasLt|cublas|cuda)\S*\.so[.\d]*/.exec(msg)?.[0];
    throw new UnavailableError(
      `backend 'cuda' is unavailable: loading ${path} failed${lib ? ` (${lib} cannot be loaded: is the CUDA toolkit/driver installed and on LD_LIBRARY_PATH?)` : ''}: ${msg}. ` +
        `Rebuild with \`${BUILD_COMMAND}\` on this machine if it was built elsewhere.`,
    );
  }
  let device: DeviceInfo;
  try {
    device = addon.init();
  } catch (e) {
    throw new UnavailableError(`backend 'cuda' is unavailable: no usable CUDA device (${(e as Error).message})`);
  }
  return { addon, device, path };
}
