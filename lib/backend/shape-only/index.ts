/**
 * A shape-only tfjs backend: tensors with shapes, dtypes and byte counts but no data — what
 * PyTorch's `meta` device and accelerate's `init_empty_weights` / `estimate-memory` give Python.
 * The same model, loss, trainer and optimiser code runs on it unchanged (every kernel infers its
 * outputs' shapes, ./kernels.ts), in milliseconds per step whatever the model size, and the
 * backend counts the bytes every live buffer would take (./backend.ts). So the peak memory of a
 * training step of LLaMA-2-13B in fp32 can be measured on a machine that could not hold its
 * weights, and a code path can be proven to run at a recipe's real shapes.
 *
 * Two registrations, one per backend it can stand in for:
 *
 * | name       | mirrors | fused kernels (lib/backend/fused-kernels.ts)   | matMulTransposeIsFree |
 * |------------|---------|-----------------------------------------------|-----------------------|
 * | `meta`     | `cuda`  | LayerNorm, GELU, dropout (mask regenerated), AdamW, attention | true      |
 * | `meta-cpu` | `cpu`   | AdamW only (the rest run as composites of tfjs ops) | false            |
 *
 * `meta` is what projects onto a GPU: the code takes the paths it takes on `cuda`, buffers are
 * shared where cuda shares them, and `peakDeviceBytes` adds the cuda allocator's size classes.
 * `meta-cpu` takes the `cpu` backend's paths, so it can be checked against a real run there
 * (test/shape-only-backend.test.ts: the same peak bytes, tensor for tensor).
 *
 * Usage:
 *
 *   import { measurePeakBytes } from 'lib/backend/shape-only/index.js';
 *   const m = await measurePeakBytes(async () => {
 *     const model = modelFromConfig(llamaConfig);          // lib/models/model-from-config.ts: no data
 *     addLora(model, { r: 32, alpha: 32, dropout: 0.1, targetModules: 'all-linear' });
 *     await optimizerStep(ctx, [batch], 2e-4);               // lib/train/training-step.ts
 *   });
 *   m.peakBytes, m.peakDeviceBytes                         // everything held at the peak
 *
 * `withShapeOnlyBackend(fn)` only switches the backend around `fn` (and back after). Values read
 * from a shape-only tensor are ones (finite and non-zero, so value checks pass): a loss reads as
 * 1, and code that branches on values sees ones (`reads` counts how often that happened).
 */
import * as tf from '@tensorflow/tfjs-core';
import { registerBackendCapabilities } from '../capabilities.js';
import { registerGradients } from '../gradients.js';
import { trackTensorMemory, type TensorMemoryPeak } from '../memory-tracking.js';
import { ShapeOnlyBackend, type ShapeOnlyMemory } from './backend.js';
import { FUSED_SHAPE_KERNELS, SHAPE_ONLY_KERNELS } from './kernels.js';

export { CUDA_LAUNCHES, ShapeOnlyBackend, type DispatchCounts, type ShapeOnlyMemory } from './backend.js';
export { deviceSizeClass } from './device-allocator.js';

/** The shape-only backend that stands in for `cuda`. */
export const SHAPE_ONLY_BACKEND = 'meta';
/** The shape-only backend that stands in for `cpu`. */
export const SHAPE_ONLY_CPU_BACKEND = 'meta-cpu';

export type ShapeOnlyMirror = 'cuda' | 'cpu';

const backends = new Map<string, ShapeOnlyBackend>();

function register(name: string, mirrors: ShapeOnlyMirror): ShapeOnlyBackend {
  let b = backends.get(name);
  if (b) return b;
  b = new ShapeOnlyBackend(name, mirrors);
  const instance = b;
  // Priority -1: never chosen as a default backend.
  tf.registerBackend(name, () => instance, -1);
  registerBackendCapabilities(name, { matMulTransposeIsFree: mirrors === 'cuda' });
  const kernels = mirrors === 'cuda' ? [...SHAPE_ONLY_KERNELS, ...FUSED_SHAPE_KERNELS] : SHAPE_ONLY_KERNELS;
  for (const k of kernels) {
    const kernelFunc = ((args: Parameters<tf.KernelFunc>[0]) => instance.countDispatch(k.kernelName, () => (k.kernelFunc as unknown as tf.KernelFunc)(args))) as tf.KernelFunc;
    if (!tf.getKernel(k.kernelName, name)) tf.registerKernel({ kernelName: k.kernelName, backendName: name, kernelFunc });
  }
  backends.set(name, b);
  return b;
}

/** Registers both shape-only backends (idempotent) and the tfjs gradients. Does not activate one. */
export function registerShapeOnlyBackends(): void {
  registerGradients();
  register(SHAPE_ONLY_BACKEND, 'cuda');
  register(SHAPE_ONLY_CPU_BACKEND, 'cpu');
}

function nameFor(mirrors: ShapeOnlyMirror): string {
  return mirrors === 'cuda' ? SHAPE_ONLY_BACKEND : SHAPE_ONLY_CPU_BACKEND;
}

/** The shape-only backend standing in for `mirrors` (registered on first use). */
export function shapeOnlyBackend(mirrors: ShapeOnlyMirror = 'cuda'): ShapeOnlyBackend {
  registerShapeOnlyBackends();
  return backends.get(nameFor(mirrors))!;
}

/** Whether backend `name` (default: the active one) is a shape-only one. */
export function isShapeOnlyBackend(name: string = tf.getBackend()): boolean {
  return backends.has(name);
}

export interface ShapeOnlyOptions {
  /** Which backend to stand in for (default cuda). */
  mirrors?: ShapeOnlyMirror;
}

/**
 * Runs `fn` with the shape-only backend active and switches back to the backend that was active
 * before (even when `fn` throws). Tensors `fn` leaves alive stay on the shape-only backend.
 */
export async function withShapeOnlyBackend<T>(fn: () => T | Promise<T>, opts: ShapeOnlyOptions = {}): Promise<T> {
  const backend = shapeOnlyBackend(opts.mirrors);
  const previous = tf.getBackend();
  if (!(await tf.setBackend(backend.name))) throw new Error(`tf.setBackend('${backend.name}') failed`);
  try {
    return await fn();
  } finally {
    if (previous && previous !== backend.name) await tf.setBackend(previous);
  }
}

/** What a measurement on a shape-only backend saw. */
export interface PeakBytes<T> extends TensorMemoryPeak {
  result: T;
  /** The shape-only backend it ran on. */
  backend: string;
  /** Bytes of every live buffer of the backend when `fn` started, and at the highest point while it ran. */
  startBytes: number;
  peakBytes: number;
  endBytes: number;
  /** The same as the cuda allocator would reserve them (its size classes; bool as int32). */
  startDeviceBytes: number;
  peakDeviceBytes: number;
  /** Buffers allocated, and reads (answered with ones), while `fn` ran. */
  allocations: number;
  reads: number;
}

/**
 * Runs `fn` on the shape-only backend and returns the peak bytes of live tensor buffers while it
 * ran: absolute (`peakBytes`: everything the backend held, weights made before `fn` included) and,
 * by tfjs's engine accounting, above the start (`peakBufferBytes`, `peakTensorBytes`). A model
 * built inside `fn` counts in both.
 */
export async function measurePeakBytes<T>(fn: () => T | Promise<T>, opts: ShapeOnlyOptions = {}): Promise<PeakBytes<T>> {
  const backend = shapeOnlyBackend(opts.mirrors);
  return withShapeOnlyBackend(async () => {
    const start: ShapeOnlyMemory = backend.memoryCounters();
    backend.resetPeak();
    const { result, memory } = await trackTensorMemory(fn);
    const end = backend.memoryCounters();
    return {
      result,
      ...memory,
      backend: backend.name,
      startBytes: start.liveBytes,
      peakBytes: end.peakBytes,
      endBytes: end.liveBytes,
      startDeviceBytes: start.liveDeviceBytes,
      peakDeviceBytes: end.peakDeviceBytes,
      allocations: end.allocations,
      reads: end.reads,
    };
  }, opts);
}
