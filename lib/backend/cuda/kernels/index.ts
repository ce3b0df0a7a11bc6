/**
 * Every kernel the cuda backend registers. Importing this module does not load the native addon:
 * the kernels reach it through the backend instance tfjs passes them.
 */
import { attentionKernels } from './attention.js';
import { elementwiseKernels } from './elementwise.js';
import { fusedKernels } from './fused.js';
import { layoutKernels } from './layout.js';
import { matmulKernels } from './matmul.js';
import { reduceKernels } from './reduce.js';
import type { CudaKernel } from './core.js';

export const CUDA_KERNELS: readonly CudaKernel[] = [...elementwiseKernels, ...reduceKernels, ...layoutKernels, ...matmulKernels, ...fusedKernels, ...attentionKernels];

/** The names, sorted (what the fixture test compares with test/fixtures/cuda/kernels.json). */
export function cudaKernelNames(): string[] {
  return CUDA_KERNELS.map((k) => k.kernelName).sort();
}
