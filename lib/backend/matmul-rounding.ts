/**
 * The CPU emulation of 16-bit tensor-core matmuls: while `fn` runs, every BatchMatMul and
 * _FusedMatMul of the active backend first rounds its two float32 inputs to bf16 or fp16 (round to
 * nearest even, lib/util/half-rounding.ts) and then multiplies in float32 — what the cuda backend's
 * cuBLASLt does under CUBLAS_COMPUTE_32F_FAST_16BF / _16F (native/src/matmul.cu, precision 'bf16' /
 * 'fp16'). Everything else (LayerNorm, softmax, the loss, AdamW and its state, the weights) stays
 * float32, as on the device. This is what lets the golden parity measure a 16-bit run's deviation
 * on a machine without a GPU (lib/parity/train.ts, `precision`).
 *
 * The kernels are swapped in tfjs's global registry and put back afterwards, also when `fn` throws.
 */
import * as tf from '@tensorflow/tfjs-core';
import { roundArrayTo, type HalfPrecision } from '../util/half-rounding.js';

const MATMUL_KERNELS = [tf.BatchMatMul, tf._FusedMatMul];

type KernelArgs = Parameters<tf.KernelFunc>[0];

/**
 * What every tfjs backend has (KernelBackend): read, write and dispose data. Not makeTensorInfo /
 * disposeIntermediateTensorInfo, which the cpu backend has and the wasm backend (the smoke preset's)
 * lacks: `npm run train --precision bf16` failed there with "makeTensorInfo is not a function".
 */
interface RoundingBackend {
  readSync(dataId: object): tf.backend_util.BackendValues;
  write(values: tf.backend_util.BackendValues, shape: number[], dtype: tf.DataType): object;
  disposeData(dataId: object, force?: boolean): boolean;
}

/** A float32 copy of `t` rounded to `precision` (the caller disposes it with disposeData). */
function roundedCopy(backend: RoundingBackend, t: tf.TensorInfo, precision: HalfPrecision): tf.TensorInfo {
  const values = Float32Array.from(backend.readSync(t.dataId) as Float32Array);
  return { dataId: backend.write(roundArrayTo(precision, values), t.shape, 'float32'), shape: t.shape, dtype: 'float32' };
}

/** Runs `fn` with every matmul of the active backend rounding its inputs to `precision` first. */
export async function withMatmulInputRounding<T>(precision: HalfPrecision, fn: () => Promise<T>): Promise<T> {
  if (precision !== 'bf16' && precision !== 'fp16') throw new Error(`withMatmulInputRounding: precision '${precision as string}': expected bf16 or fp16`);
  const backendName = tf.getBackend();
  const originals = MATMUL_KERNELS.map((name) => tf.getKernel(name, backendName)).filter((k): k is tf.KernelConfig => k !== undefined);
  for (const orig of originals) {
    tf.unregisterKernel(orig.kernelName, backendName);
    tf.registerKernel({
      ...orig,
      kernelFunc: (args: KernelArgs) => {
        const backend = args.backend as unknown as RoundingBackend;
        const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
        if (a.dtype !== 'float32' || b.dtype !== 'float32') return orig.kernelFunc(args);
        const ra = roundedCopy(backend, a, precision);
        const rb = roundedCopy(backend, b, precision);
        try {
          return orig.kernelFunc({ ...args, inputs: { ...args.inputs, a: ra, b: rb } });
        } finally {
          backend.disposeData(ra.dataId);
          backend.disposeData(rb.dataId);
        }
      },
    });
  }
  try {
    return await fn();
  } finally {
    for (const orig of originals) {
      tf.unregisterKernel(orig.kernelName, backendName);
      tf.registerKernel(orig);
    }
  }
}
