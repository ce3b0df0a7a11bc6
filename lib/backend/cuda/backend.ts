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
import { uploadBytes, type HostArray, type StepGraph, type StepGraphBackend, type UploadRecord } from '../step-graph.js';
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

/** An upload deferred by a graph capture (../step-graph.ts): done before each launch (feeds) or the first (constants). */
interface UploadSlot {
  ptr: Ptr;
  dtype: DeviceDType;
  values: number;
  feed?: string;
  /** A constant's values. */
  data?: Float32Array | Int32Array;
}

interface Capture {
  feeds: ReadonlyMap<HostArray, string>;
  slots: UploadSlot[];
  slotPtrs: Set<Ptr>;
  /** Slot buffers freed while capturing: freed after the capture, so the graph's later kernels never reuse them. */
  deferredFrees: Ptr[];
  /** Buffers freed while capturing: the pool may hand them out again, already written by earlier kernels of the graph. */
  freed: Set<Ptr>;
}

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

export class CudaBackend extends tf.KernelBackend implements StepGraphBackend {
  private readonly store: tf.DataStorage<CudaData>;
  private capture?: Capture;
  private uploadLog?: { feeds: ReadonlyMap<HostArray, string>; records: UploadRecord[] };
  private readonly graphs = new Map<number, { slots: UploadSlot[]; launched: boolean; seeded: boolean }>();
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
    const v = d.dtype === 'float32'
      ? (values instanceof Float32Array ? values : Float32Array.from(values as ArrayLike<number>))
      : (values instanceof Int32Array ? values : Int32Array.from(values as ArrayLike<number>));
    this.checkLength(v.length, d);
    const c = this.capture;
    const log = this.uploadLog;
    const feed = (c ?? log)?.feeds.get(values as HostArray);
    if (c) {
      // Nothing runs while capturing: the upload happens before the launch (../step-graph.ts). So
      // its buffer must be one no earlier kernel of the graph writes: a block freed during the
      // capture is set aside (freed after it) and another taken, until one is fresh.
      checkDtype(d.dtype, 'upload');
      while (c.freed.has(d.ptr)) {
        c.deferredFrees.push(d.ptr);
        d.ptr = this.addon.malloc(Math.max(d.size, 1) * 4);
      }
      c.slots.push({ ptr: d.ptr, dtype: d.dtype, values: v.length, feed, data: feed === undefined ? v.slice() : undefined });
      c.slotPtrs.add(d.ptr);
      return;
    }
    if (log) log.records.push({ feed, values: v.length, bytes: feed === undefined ? uploadBytes(v) : undefined });
    this.addon.upload(d.ptr, v);
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
    if (this.capture?.slotPtrs.has(d.ptr)) this.capture.deferredFrees.push(d.ptr);
    else {
      this.capture?.freed.add(d.ptr);
      this.addon.free(d.ptr);
    }
    return true;
  }

  // ---- step graphs (../step-graph.ts, native/src/graph.h) ---------------------------------------------

  get capturingStep(): boolean {
    return this.capture !== undefined;
  }

  beginStepCapture(feeds: ReadonlyMap<HostArray, string>): void {
    if (this.capture) throw new Error('cuda backend: a step capture is in progress already');
    this.addon.graphBegin();
    this.capture = { feeds, slots: [], slotPtrs: new Set(), deferredFrees: [], freed: new Set() };
  }

  private finishCapture(): Capture {
    const c = this.capture;
    if (!c) throw new Error('cuda backend: no step capture is in progress');
    this.capture = undefined;
    return c;
  }

  endStepCapture(): StepGraph {
    const c = this.finishCapture();
    try {
      const info = this.addon.graphEnd();
      this.graphs.set(info.id, { slots: c.slots, launched: false, seeded: info.seeds > 0 });
      return {
        id: info.id,
        kernels: info.kernels,
        feedSlots: c.slots.filter((s) => s.feed !== undefined).length,
        constants: c.slots.filter((s) => s.feed === undefined).map((s) => ({ values: s.values, bytes: uploadBytes(s.data!) })),
        firstSeed: info.firstSeed,
        seeds: info.seeds,
      };
    } finally {
      for (const p of c.deferredFrees) this.addon.free(p);
    }
  }

  abortStepCapture(): void {
    if (!this.capture) return;
    const c = this.finishCapture();
    this.addon.graphAbort();
    for (const p of c.deferredFrees) this.addon.free(p);
  }

  launchStepGraph(g: StepGraph, feeds: Readonly<Record<string, HostArray>>, seedBase: number): void {
    const rec = this.graphs.get(g.id);
    if (!rec) throw new Error(`cuda backend: step graph ${g.id} was destroyed or never captured`);
    for (const s of rec.slots) {
      if (s.feed !== undefined) {
        const src = feeds[s.feed];
        if (!src) throw new Error(`cuda backend: launching step graph ${g.id}: no values for feed '${s.feed}'`);
        if (src.length !== s.values) throw new Error(`cuda backend: launching step graph ${g.id}: feed '${s.feed}' has ${src.length} values, the graph was captured with ${s.values}`);
        this.addon.upload(s.ptr, s.dtype === 'float32' ? (src instanceof Float32Array ? src : Float32Array.from(src)) : src instanceof Int32Array ? src : Int32Array.from(src));
      } else if (!rec.launched) {
        this.addon.upload(s.ptr, s.data!);
      }
    }
    rec.launched = true;
    this.addon.graphLaunch(g.id, rec.seeded ? seedBase : 0);
  }

  destroyStepGraph(g: StepGraph): void {
    if (!this.graphs.delete(g.id)) return;
    this.addon.graphDestroy(g.id);
  }

  logUploads(feeds: ReadonlyMap<HostArray, string> | undefined): UploadRecord[] {
    const records = this.uploadLog?.records ?? [];
    this.uploadLog = feeds ? { feeds, records: [] } : undefined;
    return records;
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

  private noReadWhileCapturing(): void {
    if (this.capture) throw new Error('cuda backend: read back during a graph capture: nothing has run yet (the step reads after it is launched)');
  }

  override readSync(dataId: DataId): tf.backend_util.BackendValues {
    this.noReadWhileCapturing();
    const d = this.store.get(dataId);
    const out = this.hostArray(d);
    this.addon.readSync(d.ptr, out);
    return this.toTfjs(d, out);
  }

  override async read(dataId: DataId): Promise<tf.backend_util.BackendValues> {
    this.noReadWhileCapturing();
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
