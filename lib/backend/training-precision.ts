/**
 * The precision a training run multiplies in (the trainer's `precision`, lib/train/trainer.ts):
 *
 * | precision | cuda backend                                        | cpu, wasm (emulation)                     |
 * |-----------|-----------------------------------------------------|-------------------------------------------|
 * | `tf32`    | the backend's setting (TF32 unless ANGLE_CUDA_MATMUL says otherwise) | float32, unchanged         |
 * | `bf16`    | cuBLASLt on bf16-rounded inputs, fp32 accumulation   | matmul inputs rounded to bf16 (./matmul-rounding.ts) |
 * | `fp16`    | the same with fp16 (for fp16 checkpoints)            | the same with fp16                        |
 *
 * In every case tensors, master weights, AdamW state, LayerNorm, softmax and the loss stay float32;
 * only the matmul inputs are rounded. TF32 is the default until the device check's parity says
 * bf16 holds its tolerance (lib/parity/train.ts, TRAIN_GOLDEN_TOLERANCE_16BIT). A shape-only backend
 * has no values, so nothing changes there.
 */
import * as tf from '@tensorflow/tfjs-core';
import { UnknownNameError } from '../util/errors.js';
import { withMatmulInputRounding } from './matmul-rounding.js';

export const TRAINING_PRECISIONS = ['tf32', 'bf16', 'fp16'] as const;
export type TrainingPrecision = (typeof TRAINING_PRECISIONS)[number];

export function parseTrainingPrecision(name: string): TrainingPrecision {
  if ((TRAINING_PRECISIONS as readonly string[]).includes(name)) return name as TrainingPrecision;
  throw new UnknownNameError('precision', name, [...TRAINING_PRECISIONS]);
}

/** Runs `fn` with the active backend's matmuls in `precision`, and restores the backend's setting afterwards. */
export async function withTrainingPrecision<T>(precision: TrainingPrecision, fn: () => Promise<T>): Promise<T> {
  parseTrainingPrecision(precision);
  if (precision === 'tf32') return fn();
  const backend = tf.getBackend();
  if (backend === 'cuda') {
    const cuda = await import('./cuda/index.js');
    const b = cuda.cudaBackend();
    if (!b) throw new Error("withTrainingPrecision: the cuda backend is active but not started");
    const before = b.matmulPrecision;
    cuda.setCudaMatmulPrecision(precision);
    try {
      return await fn();
    } finally {
      cuda.setCudaMatmulPrecision(before);
    }
  }
  if (backend === 'cpu' || backend === 'wasm') return withMatmulInputRounding(precision, fn);
  return fn();
}
