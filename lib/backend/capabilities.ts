/**
 * What a backend can do that changes how model code is best written, asked by name instead of
 * `tf.getBackend() === 'cuda'` in model files. A backend registers its capabilities when it is
 * registered (cuda does, in ./cuda/index.ts); a backend that registers nothing gets the defaults,
 * which are what the cpu and wasm backends need.
 */
import * as tf from '@tensorflow/tfjs-core';

export interface BackendCapabilities {
  /**
   * matMul reads a transposed operand at no extra cost (cuBLASLt's transpose flags), so models
   * pass transposeB instead of running a Transpose kernel forward and backward. False by default:
   * the wasm backend (XNNPACK) has a fast path only for untransposed operands and is ~10x slower
   * with transposeB (measured: [2048,768]x[768,768] 2.0 s vs 0.19 s), and on cpu the golden parity
   * numbers were measured with explicit transposes.
   */
  matMulTransposeIsFree: boolean;
}

const DEFAULTS: BackendCapabilities = { matMulTransposeIsFree: false };
const registered = new Map<string, BackendCapabilities>();

/** Declares what backend `name` can do (a backend's registration calls this). */
export function registerBackendCapabilities(name: string, caps: Partial<BackendCapabilities>): void {
  registered.set(name, { ...DEFAULTS, ...caps });
}

/** The capabilities of backend `name` (default: the active one). */
export function backendCapabilities(name: string = tf.getBackend()): BackendCapabilities {
  return registered.get(name) ?? DEFAULTS;
}
