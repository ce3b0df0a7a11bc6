/**
 * How much tensor memory the active tfjs backend can hold, for code that sizes inference work to
 * fit (lib/models/bert/inference-weights.ts decides whether to keep transposed weight copies,
 * lib/embed/engines/tfjs-engine.ts splits batches). The wasm backend's heap is one wasm32 linear
 * memory: tfjs-backend-wasm 4.x (emscripten) grows it up to 4 GiB − 64 KiB and aborts the
 * process beyond that; `cpu` tensors are JavaScript typed arrays bounded only by the machine, and
 * device backends (cuda) by their own device, which this module does not know.
 *
 * (A backend capability would be the better home for this number: lib/backend/capabilities.ts.)
 */
import { tf } from '../backend/index.js';

/** tfjs-backend-wasm's emscripten heap maximum (getHeapMax() in its Node bundle). */
export const WASM_HEAP_LIMIT_BYTES = 4294901760;

/** The tensor memory limit of `backend` (default the active one), or undefined where none is known. */
export function tensorMemoryLimitBytes(backend: string = tf.getBackend()): number | undefined {
  return backend === 'wasm' ? WASM_HEAP_LIMIT_BYTES : undefined;
}
