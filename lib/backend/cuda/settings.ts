/**
 * Settings of the cuda backend that come from the environment:
 *
 * | variable          | meaning                                                               |
 * |-------------------|-----------------------------------------------------------------------|
 * | ANGLE_CUDA_MATMUL | `tf32` (default: tensor-core TF32 math, fp32 storage), `fp32` (exact), `bf16` or `fp16` (tensor cores on inputs rounded to 16 bits, fp32 accumulation and storage) |
 * | ANGLE_CUDA_ADDON  | path of the built addon (default build/cuda/angle_cuda.node)          |
 */
import { InputError } from '../../util/errors.js';

export type MatmulPrecision = 'tf32' | 'fp32' | 'bf16' | 'fp16';

export const MATMUL_PRECISIONS: readonly MatmulPrecision[] = ['tf32', 'fp32', 'bf16', 'fp16'];

export function matmulPrecisionFromEnv(env: NodeJS.ProcessEnv = process.env): MatmulPrecision {
  const v = env.ANGLE_CUDA_MATMUL?.trim().toLowerCase();
  if (!v) return 'tf32';
  if ((MATMUL_PRECISIONS as readonly string[]).includes(v)) return v as MatmulPrecision;
  throw new InputError(`ANGLE_CUDA_MATMUL='${env.ANGLE_CUDA_MATMUL}': expected ${MATMUL_PRECISIONS.join(', ')}`);
}
