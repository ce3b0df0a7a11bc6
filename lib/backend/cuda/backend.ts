/**
 * The tfjs KernelBackend of the `cuda` backend: maps tfjs data ids to device buffers owned by the
 * native addon (its caching allocator), with the reference counting tfjs expects (the same rules
 * as tfjs-backend-cpu: write/makeTensorInfo start at 1, kernels that return an input's data id
 * incRef it, disposeData frees only when the count reaches 0 or when forced).
 *
 * float32 and int32 tensors live on the device as themselves, bool tensors as int32 0/1;
 * string and complex64 tensors are not supported (nothing in this project creates them).
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CudaAddon, DeviceInfo, NativeMemoryStats, Ptr } from './addon.js';
import { DT } from './op-codes.js';
import type { MatmulPrecision } from './settings.js';
import { sizeOf } from './shapes.js';

type DataId = object;

export interface CudaData {
  ptr: Ptr;
  /** Number of elements. */
  size: number;
  dtype: tf.DataType;
  refCount: number;
}

export type DeviceDType = 'float32' | 'int32' | 'bool';

function checkDtype(dtype: tf.DataType, what: string): asserts dtype is DeviceDType {
  if (dtype !== 'float32' && dtype !== 'int32' && dtype !== 'bool') {
    throw new Error(`cuda backend: ${what}: dtype ${dtype} is not supported (float32, int32 and bool are)`);
  }
}

/** The addon's dtype code for a tfjs dtype (bool is stored as int32). */
export function dtCode(dtype: tf.DataType): number {
  checkDtype(dtype, 'dtype');
  return dtype === 'float32' ? DT.float32 : DT.int32;
}

export class CudaBackend extends tf.KernelBackend {
  private readonly store: tf.DataStorage<CudaData>;
  private static nextId = 0;
  matmulPrecision: MatmulPrecision;
  private disposed = false;

  constructor(
    readonly addon: CudaAddon,
    readonly device: DeviceInfo,
    precision: MatmulPrecision = 'tf32',
  ) {
    super();
    this.store = new tf.DataStorage(this, tf.engine());
    this.matmulPrecision = precision;
  }

  // ---- storage ---------------------------------------------------------------------------------

  /** The device data of a tensor (moving it here from another backend first, if needed). */
  get(dataId: DataId): CudaData {
    return this.store.get(dataId);
  }

  ptr(t: tf.TensorInfo): Ptr {
    return this.store.get(t.dataId).ptr;
  }

  private allocate(size: number, dtype: tf.DataType): CudaData {
    checkDtype(dtype, 'allocate');
    return { ptr: this.addon.malloc(Math.max(size, 1) * 4), size, dtype, refCount: 1 };
  }

  private upload(d: CudaData, values: tf.backend_util.BackendValues | null | undefined): void {
    if (values == null || d.size === 0) return;
    if (d.dtype === 'float32') {
      const v = values instanceof Float32Array ? values : Float32Array.from(values as ArrayLike<number>);
      this.checkLength(v.length, d);
      this.addon.upload(d.ptr, v);
    } else {
      const v = values instanceof Int32Array ? values : Int32Array.from(values as ArrayLike<number>);
      this.checkLength(v.length, d);
      this.addon.upload(d.ptr, v);
    }
  }

  private checkLength(n: number, d: CudaData): void {
    if (n !== d.size) throw new Error(`cuda backend: ${n} values for a tensor of ${d.size} elements`);
  }

  override write(values: tf.backend_util.BackendValues, shape: number[], dtype: tf.DataType): DataId {
    const dataId = { id: CudaBackend.nextId++ };
    const d = this.allocate(sizeOf(shape), dtype);
    this.store.set(dataId, d);
    this.upload(d, values);
    return dataId;
  }

  override move(dataId: DataId, values: tf.backend_util.BackendValues, shape: number[], dtype: tf.DataType, refCount: number): void {
    const d = this.allocate(sizeOf(shape), dtype);
    d.refCount = refCount;
    this.store.set(dataId, d);
    this.upload(d, values);
  }

  /** A new tensor of `shape` (contents uninitialised unless `values` are given). */
  makeTensorInfo(shape: number[], dtype: tf.DataType, values?: tf.backend_util.BackendValues): tf.TensorInfo {
    const dataId = { id: CudaBackend.nextId++ };
    const d = this.allocate(sizeOf(shape), dtype);
    this.store.set(dataId, d);
    if (values) this.upload(d, values);
    return { dataId, shape, dtype };
  }

  /** A kernel output that shares `x`'s device buffer (reshape, identity). */
  share(x: tf.TensorInfo, shape: number[] = x.shape, dtype: tf.DataType = x.dtype): tf.TensorInfo {
    this.incRef(x.dataId);
    return { dataId: x.dataId, shape, dtype };
  }

  override refCount(dataId: DataId): number {
    return this.store.has(dataId) ? this.store.get(dataId).refCount : 0;
  }

  override incRef(dataId: DataId): void {
    this.store.get(dataId).refCount++;
  }

  decRef(dataId: DataId): void {
    if (this.store.has(dataId)) this.store.get(dataId).refCount--;
  }

  override disposeData(dataId: DataId, force = false): boolean {
    if (!this.store.has(dataId)) return true;
    const d = this.store.get(dataId);
    d.refCount--;
    if (!force && d.refCount > 0) return false;
    this.store.delete(dataId);
    this.addon.free(d.ptr);
    return true;
  }

  /** Frees an intermediate result a kernel made for itself. */
  disposeIntermediateTensorInfo(t: tf.TensorInfo): void {
    this.disposeData(t.dataId);
  }

  override numDataIds(): number {
    return this.store.numDataIds();
  }

  private hostArray(d: CudaData): Float32Array | Int32Array {
    return d.dtype === 'float32' ? new Float32Array(d.size) : new Int32Array(d.size);
  }

  private toTfjs(d: CudaData, raw: Float32Array | Int32Array): tf.backend_util.BackendValues {
    return d.dtype === 'bool' ? Uint8Array.from(raw as Int32Array) : raw;
  }

  override readSync(dataId: DataId): tf.backend_util.BackendValues {
    const d = this.store.get(dataId);
    const out = this.hostArray(d);
    this.addon.readSync(d.ptr, out);
    return this.toTfjs(d, out);
  }

  override async read(dataId: DataId): Promise<tf.backend_util.BackendValues> {
    const d = this.store.get(dataId);
    const out = this.hostArray(d);
    await this.addon.read(d.ptr, out);
    return this.toTfjs(d, out);
  }

  // ---- information ------------------------------------------------------------------------------

  override memory(): { unreliable: boolean; reasons?: string[] } & Record<string, unknown> {
    const s: NativeMemoryStats = this.addon.memoryStats();
    return { unreliable: false, numBytesInGPU: s.inUse, numBytesInGPUAllocated: s.inUse + s.cached, numBytesInGPUFree: s.cached, ...s };
  }

  override async time(f: () => void): Promise<tf.BackendTimingInfo> {
    this.addon.sync();
    const t0 = performance.now();
    f();
    this.addon.sync();
    return { kernelMs: performance.now() - t0 };
  }

  override timerAvailable(): boolean {
    return true;
  }

  override floatPrecision(): 16 | 32 {
    return 32;
  }

  override epsilon(): number {
    return 1e-7;
  }

  override dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.addon.sync();
  }
}
