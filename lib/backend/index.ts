/**
 * Choosing and starting a tfjs backend.
 *
 * | name         | what                                                          | availability               |
 * |--------------|---------------------------------------------------------------|----------------------------|
 * | `cpu`        | @tensorflow/tfjs-backend-cpu (plain JS)                       | always; CI and tests        |
 * | `wasm`       | @tensorflow/tfjs-backend-wasm (SIMD wasm shipped in the tarball) | always; lacks some training kernels (gradient of Gather) |
 * | `cuda`       | this project's native CUDA backend (native/)                  | GPU hosts where it was built |
 * | `tensorflow` | @tensorflow/tfjs-node-gpu or @tensorflow/tfjs-node            | only if the user installed one |
 *
 * The choice comes from the argument, else ANGLE_BACKEND, else `cpu`. Gradients are registered
 * whatever the backend (see ./gradients.ts).
 */
import * as tf from '@tensorflow/tfjs-core';
import { cpus, arch } from 'node:os';
import { envConfig } from '../config.js';
import { UnavailableError, UnknownNameError } from '../util/errors.js';
import { registerCpuKernelOverrides, registerWasmKernelAdditions } from './cpu-kernels.js';
import { registerGradients } from './gradients.js';

export const BACKEND_NAMES = ['cpu', 'wasm', 'cuda', 'tensorflow'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export interface BackendInfo {
  /** The tfjs backend name now active. */
  name: BackendName;
  /** A human description of the device the backend computes on. */
  device: string;
  tfjsCore: string;
}

let active: BackendInfo | undefined;

function parseBackendName(name: string): BackendName {
  const n = name.trim().toLowerCase();
  if ((BACKEND_NAMES as readonly string[]).includes(n)) return n as BackendName;
  throw new UnknownNameError('backend', name, BACKEND_NAMES);
}

async function importOptional(specifier: string): Promise<unknown | undefined> {
  try {
    return await import(specifier);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return undefined;
    throw e;
  }
}

function cpuDevice(): string {
  const c = cpus();
  return `${c[0]?.model?.trim() ?? 'unknown CPU'} (${c.length} cores, ${arch()})`;
}

async function start(name: BackendName): Promise<string> {
  switch (name) {
    case 'cpu': {
      await import('@tensorflow/tfjs-backend-cpu');
      registerCpuKernelOverrides();
      await tf.setBackend('cpu');
      // The cpu backend prints an advert for tfjs-node on its first tensor; we know, and say
      // which backend runs in our own line instead.
      (tf.backend() as unknown as { firstUse?: boolean }).firstUse = false;
      return cpuDevice();
    }
    case 'wasm': {
      const wasm = (await import('@tensorflow/tfjs-backend-wasm')) as typeof import('@tensorflow/tfjs-backend-wasm');
      registerWasmKernelAdditions();
      if (!(await tf.setBackend('wasm'))) throw new UnavailableError('backend wasm failed to initialise');
      return `${cpuDevice()}, wasm threads ${wasm.getThreadsCount()}`;
    }
    case 'tensorflow': {
      const gpu = await importOptional('@tensorflow/tfjs-node-gpu');
      const node = gpu ?? (await importOptional('@tensorflow/tfjs-node'));
      if (!node) {
        throw new UnavailableError(
          "backend 'tensorflow' is unavailable: neither @tensorflow/tfjs-node-gpu nor @tensorflow/tfjs-node is installed " +
            '(they cannot be installed on hosts without their prebuilt libtensorflow; use cpu, wasm or cuda)',
        );
      }
      await tf.setBackend('tensorflow');
      return gpu ? 'libtensorflow (tfjs-node-gpu)' : `libtensorflow CPU (tfjs-node), ${cpuDevice()}`;
    }
    case 'cuda': {
      // Loaded only on request: the module loads the native addon and throws UnavailableError
      // (saying why and how to build it) where there is no addon, CUDA library or GPU.
      const cuda = await import('./cuda/index.js');
      return cuda.startCuda();
    }
  }
}

/**
 * Starts the requested backend (argument, else ANGLE_BACKEND, else cpu), registers gradients,
 * and prints one line saying which backend and device are in use.
 */
export async function initBackend(
  requested?: string,
  opts: { quiet?: boolean; log?: (line: string) => void } = {},
): Promise<BackendInfo> {
  const name = parseBackendName(requested ?? envConfig().backend ?? 'cpu');
  registerGradients();
  if (active?.name === name && tf.getBackend() === name) return active;
  const device = await start(name);
  active = { name, device, tfjsCore: tf.version_core };
  if (!opts.quiet) (opts.log ?? console.log)(`backend: ${name} on ${device} (tfjs-core ${tf.version_core})`);
  return active;
}

/** The backend started by initBackend, if any. */
export function activeBackend(): BackendInfo | undefined {
  return active;
}

export { tf };
export { backendCapabilities, registerBackendCapabilities, type BackendCapabilities } from './capabilities.js';
