/**
 * Starting the `cuda` backend: load the native addon (build/cuda/angle_cuda.node), initialise the
 * device, register the backend and its kernels with tfjs, make it active. Imported dynamically by
 * ../index.ts only when `cuda` is requested, so a CPU machine never loads the addon.
 */
import * as tf from '@tensorflow/tfjs-core';
import { registerBackendCapabilities } from '../capabilities.js';
import { loadAddon, type CudaAddon, type DeviceInfo, type NativeMemoryStats } from './addon.js';
import { CudaBackend } from './backend.js';
import { CUDA_KERNELS } from './kernels/index.js';
import { MATMUL_PRECISIONS, matmulPrecisionFromEnv, type MatmulPrecision } from './settings.js';

export const CUDA_BACKEND_NAME = 'cuda';

let backend: CudaBackend | undefined;

function describe(d: DeviceInfo): string {
  const v = (n: number) => `${Math.floor(n / 1000)}.${Math.floor((n % 1000) / 10)}`;
  return `${d.name} (sm_${d.computeCapability.replace('.', '')}, ${d.multiprocessors} SMs, ${(d.totalMemory / 2 ** 30).toFixed(1)} GiB; CUDA runtime ${v(d.runtimeVersion)}, driver ${v(d.driverVersion)}, cuBLASLt ${d.cublasLtVersion})`;
}

/**
 * Registers a CudaBackend over `addon` under the tfjs backend name `name`, with every kernel of
 * CUDA_KERNELS (those not registered for that name yet). `startCuda` uses it for 'cuda' and the
 * native addon; tests use it to run the same TypeScript layer over an emulated addon under
 * another name. Does not make the backend active.
 */
export function registerCudaBackendWith(name: string, addon: CudaAddon, device: DeviceInfo, precision: MatmulPrecision = 'tf32', priority = 2): CudaBackend {
  const b = new CudaBackend(addon, device, precision);
  tf.registerBackend(name, () => b, priority);
  // cuBLASLt reads transposed operands through its layout flags: a transpose costs nothing there.
  registerBackendCapabilities(name, { matMulTransposeIsFree: true });
  for (const k of CUDA_KERNELS) {
    if (!tf.getKernel(k.kernelName, name)) {
      tf.registerKernel({ kernelName: k.kernelName, backendName: name, kernelFunc: k.kernelFunc as unknown as tf.KernelFunc });
    }
  }
  return b;
}

/** Registers (once) and activates the cuda backend; returns a description of the device. */
export async function startCuda(): Promise<string> {
  if (!backend) {
    const { addon, device } = loadAddon();
    backend = registerCudaBackendWith(CUDA_BACKEND_NAME, addon, device, matmulPrecisionFromEnv());
  }
  if (!(await tf.setBackend(CUDA_BACKEND_NAME))) throw new Error('tf.setBackend(cuda) failed after registering the backend');
  return describe(backend.device);
}

/** The started backend (undefined before startCuda). */
export function cudaBackend(): CudaBackend | undefined {
  return backend;
}

function started(): CudaBackend {
  if (!backend) throw new Error("the cuda backend is not started (call initBackend('cuda') first)");
  return backend;
}

/** TF32 tensor-core matmuls (default), exact fp32 ones, or bf16/fp16 tensor cores with fp32 accumulation, from now on. */
export function setCudaMatmulPrecision(p: MatmulPrecision): void {
  if (!MATMUL_PRECISIONS.includes(p)) throw new Error(`matmul precision '${p as string}': expected ${MATMUL_PRECISIONS.join(', ')}`);
  started().matmulPrecision = p;
}

export function cudaMemoryStats(): NativeMemoryStats {
  return started().addon.memoryStats();
}

/** Waits for all queued device work (for timing). */
export function cudaSynchronize(): void {
  started().addon.sync();
}

/** Returns cached device blocks to the driver. */
export function cudaEmptyCache(): void {
  started().addon.emptyCache();
}

/** The raw addon, for tests and benchmarks that exercise it directly. */
export function cudaAddon(): CudaAddon {
  return started().addon;
}

export type { MatmulPrecision };
