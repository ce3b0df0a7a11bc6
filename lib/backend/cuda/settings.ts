/**
 * Settings of the cuda backend that come from the environment:
 *
 * | variable          | meaning                                                               |
 * |-------------------|-----------------------------------------------------------------------|
 * | ANGLE_CUDA_MATMUL | `tf32` (default: tensor-core TF32 math, fp32 storage) or `fp32` (exact) |
 * | ANGLE_CUDA_ADDON  | path of the built addon (default build/cuda/angle_cuda.node)          |
 */
import { InputError } from '../../util/errors.js';

export type MatmulPrecision = 'tf32' | 'fp32';

export function matmulPrecisionFromEnv(env: NodeJS.ProcessEnv = process.env): MatmulPrecision {
  const v = env.ANGLE_CUDA_MATMUL?.trim().toLowerCase();
  if (!v) return 'tf32';
  if (v === 'tf32' || v === 'fp32') return v;
  throw new InputError(`ANGLE_CUDA_MATMUL='${env.ANGLE_CUDA_MATMUL}': expected tf32 or fp32`);
}
