/**
 * Choosing and starting a tfjs backend.
 *
 * | name         | what                                                          | availability               |
 * |--------------|---------------------------------------------------------------|----------------------------|
 * | `cpu`        | @tensorflow/tfjs-backend-cpu (plain JS)                       | always; CI and tests        |
 * | `wasm`       | @tensorflow/tfjs-backend-wasm (SIMD wasm shipped in the tarball) | always; lacks some training kernels (gradient of Gather) |
 * | `cuda`       | this project's native CUDA backend (native/)                  | GPU hosts where it was built |
 * | `tensorflow` | @tensorflow/tfjs-node-gpu or @tensorflow/tfjs-node            | only if the user installed one |
 * | `meta`, `meta-cpu` | shape-only: shapes and byte counts, no data (./shape-only) | always; through `withShapeOnlyBackend` / `measurePeakBytes`, not `initBackend` |
 *
 * The choice comes from the argument, else ANGLE_BACKEND, else `cpu`. It is a backend name or
 * `auto` (./auto.ts: cuda when its addon loads and a device answers, else wasm, else cpu; the
 * `paper` preset's choice). Gradients are registered whatever the backend (see ./gradients.ts).
 */
import * as tf from '@tensorflow/tfjs-core';
import { cpus, arch } from 'node:os';
import { envConfig } from '../config.js';
import { UnavailableError, UnknownNameError } from '../util/errors.js';
import { AUTO_BACKEND, startAuto } from './auto.js';
import { registerCpuKernelOverrides, registerWasmKernelAdditions } from './cpu-kernels.js';
import { registerGradients } from './gradients.js';

import { BACKEND_NAMES, type BackendName } from './names.js';

export { BACKEND_NAMES, type BackendName };

/** What initBackend and ANGLE_BACKEND accept: a backend name, or `auto` (./auto.ts). */
export type BackendChoice = BackendName | typeof AUTO_BACKEND;
/** Every accepted choice, for messages and option help. */
export const BACKEND_CHOICES: readonly BackendChoice[] = [...BACKEND_NAMES, AUTO_BACKEND];

export interface BackendInfo {
  /** The tfjs backend name now active. */
  name: BackendName;
  /** A human description of the device the backend computes on. */
  device: string;
  tfjsCore: string;
  /** Set when `auto` chose the backend: why this one (./auto.ts). */
  auto?: string;
}

let active: BackendInfo | undefined;

function parseBackendChoice(name: string): BackendChoice {
  const n = name.trim().toLowerCase();
  if ((BACKEND_CHOICES as readonly string[]).includes(n)) return n as BackendChoice;
  throw new UnknownNameError('backend', name, BACKEND_CHOICES);
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
 * Starts the requested backend (argument, else ANGLE_BACKEND, else cpu; `auto` picks one, see
 * ./auto.ts), registers gradients, and prints one line saying which backend and device are in
 * use (and, for `auto`, why that one).
 */
export async function initBackend(
  requested?: string,
  opts: { quiet?: boolean; log?: (line: string) => void } = {},
): Promise<BackendInfo> {
  const choice = parseBackendChoice(requested ?? envConfig().backend ?? 'cpu');
  registerGradients();
  if (choice === AUTO_BACKEND) {
    if (active?.auto !== undefined && tf.getBackend() === active.name) return active;
    const picked = await startAuto(start);
    active = { name: picked.name, device: picked.device, tfjsCore: tf.version_core, auto: picked.why };
  } else {
    if (active?.name === choice && tf.getBackend() === choice) return active;
    active = { name: choice, device: await start(choice), tfjsCore: tf.version_core };
  }
  const { name, device } = active;
  const why = active.auto !== undefined ? `; auto: ${active.auto}` : '';
  if (!opts.quiet) (opts.log ?? console.log)(`backend: ${name} on ${device} (tfjs-core ${tf.version_core})${why}`);
  return active;
}

/**
 * The active backend, starting the default one (ANGLE_BACKEND, else cpu: initBackend() with no
 * argument) when none was started, so that loading a model in a script, a REPL or a notebook that
 * never called initBackend() works instead of failing in tfjs with "No backend found in registry".
 * A backend set up by other means (tf.setBackend on one registered by hand) is left as it is.
 */
export async function ensureBackend(): Promise<BackendInfo | undefined> {
  if (active && tf.getBackend() === active.name) return active;
  if ((tf.engine() as unknown as { backendInstance?: unknown }).backendInstance != null) return active;
  return initBackend();
}

/** The backend started by initBackend, if any. */
export function activeBackend(): BackendInfo | undefined {
  return active;
}

export { tf };
export { backendCapabilities, registerBackendCapabilities, type BackendCapabilities } from './capabilities.js';
