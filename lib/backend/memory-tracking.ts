/**
 * Peak memory of a piece of tfjs code by the engine's own accounting, on any backend.
 *
 * tfjs counts memory per tensor object (`tf.memory().numBytes`): a reshaped view and each clone
 * the gradient tape saves count again, although they share one buffer. It also knows which data
 * buffers exist (`numDataBuffers`), but not their bytes, and `tf.profile` reports the peak of
 * `numBytes` only. So this wraps the two engine methods where a buffer starts and stops being held
 * by tensors (`trackTensor` for a data id the engine has not seen, `removeDataId` when the
 * backend freed it) and keeps, while a measurement runs, both figures and their peaks:
 *
 *   - `bufferBytes`: the bytes of the distinct buffers that tensors hold (each buffer counted
 *     once, at the size of the first tensor that held it) — the memory a backend really holds
 *     for tensors, short of the scratch buffers kernels allocate and free inside one call;
 *   - `tensorBytes`: tfjs's `numBytes`, every tensor object counted.
 *
 * Both are relative to the moment the measurement started (tfjs cannot enumerate what was live
 * before). The wrappers are installed while at least one measurement is open and removed after.
 * The engine methods are internal to @tensorflow/tfjs-core (checked on 4.22); when they are
 * missing this throws instead of measuring nothing.
 */
import * as tf from '@tensorflow/tfjs-core';

interface EngineInternals {
  state: { numBytes: number; tensorInfo: { has(id: object): boolean; get(id: object): { bytes: number; backend: unknown } | undefined } };
  trackTensor(a: tf.Tensor, backend: unknown): void;
  removeDataId(dataId: object, backend: unknown): void;
}

/** What one measurement saw, relative to its start. */
export interface TensorMemoryPeak {
  /** Highest bytes of distinct buffers held by tensors, above the start. */
  peakBufferBytes: number;
  /** Buffer bytes at the end, above the start (what the code left alive). */
  endBufferBytes: number;
  /** Highest tf.memory().numBytes, above the start (every tensor object counted). */
  peakTensorBytes: number;
  endTensorBytes: number;
  /** Buffers that started being held by tensors while it ran. */
  buffersCreated: number;
}

class Measurement {
  buffer = 0;
  peakBuffer = 0;
  created = 0;
  readonly tensorStart: number;
  peakTensor = 0;

  constructor(readonly engine: EngineInternals) {
    this.tensorStart = engine.state.numBytes;
  }

  sampleTensorBytes(): void {
    const t = this.engine.state.numBytes - this.tensorStart;
    if (t > this.peakTensor) this.peakTensor = t;
  }

  result(): TensorMemoryPeak {
    this.sampleTensorBytes();
    return {
      peakBufferBytes: this.peakBuffer,
      endBufferBytes: this.buffer,
      peakTensorBytes: this.peakTensor,
      endTensorBytes: this.engine.state.numBytes - this.tensorStart,
      buffersCreated: this.created,
    };
  }
}

const open = new Set<Measurement>();
let restore: (() => void) | undefined;

function engineInternals(): EngineInternals {
  const e = tf.engine() as unknown as EngineInternals;
  if (typeof e.trackTensor !== 'function' || typeof e.removeDataId !== 'function' || !e.state?.tensorInfo) {
    throw new Error(`memory tracking: this tfjs-core (${tf.version_core}) has no engine trackTensor/removeDataId to observe; it was written against 4.22`);
  }
  return e;
}

function install(e: EngineInternals): void {
  const trackTensor = e.trackTensor;
  const removeDataId = e.removeDataId;
  e.trackTensor = function (this: EngineInternals, a: tf.Tensor, backend: unknown) {
    const isNew = !this.state.tensorInfo.has(a.dataId);
    trackTensor.call(this, a, backend);
    for (const m of open) {
      if (isNew && a.dtype !== 'string' && a.dtype !== 'complex64') {
        m.buffer += a.size * tf.util.bytesPerElement(a.dtype);
        m.created++;
        if (m.buffer > m.peakBuffer) m.peakBuffer = m.buffer;
      }
      m.sampleTensorBytes();
    }
  };
  e.removeDataId = function (this: EngineInternals, dataId: object, backend: unknown) {
    const info = this.state.tensorInfo.get(dataId);
    const removed = info !== undefined && info.backend === backend;
    removeDataId.call(this, dataId, backend);
    if (removed) for (const m of open) m.buffer -= info!.bytes;
  };
  restore = () => {
    e.trackTensor = trackTensor;
    e.removeDataId = removeDataId;
  };
}

/**
 * Runs `fn` (sync or async) and returns its result with the peak buffer and tensor bytes tfjs
 * held while it ran, above what was held when it started. Measurements may nest.
 */
export async function trackTensorMemory<T>(fn: () => T | Promise<T>): Promise<{ result: T; memory: TensorMemoryPeak }> {
  const e = engineInternals();
  if (open.size === 0) install(e);
  const m = new Measurement(e);
  open.add(m);
  try {
    const result = await fn();
    return { result, memory: m.result() };
  } finally {
    open.delete(m);
    if (open.size === 0) {
      restore?.();
      restore = undefined;
    }
  }
}
