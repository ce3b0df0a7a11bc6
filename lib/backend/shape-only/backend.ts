/**
 * The storage half of the shape-only backend (./index.ts): a tfjs KernelBackend whose tensors are
 * records of a size, a dtype and a reference count, with no data behind them. Kernels
 * (./kernels.ts) create outputs with `allocate` after inferring their shapes, or hand back an
 * input's buffer with `share` (reshape, identity), exactly as the backend it mirrors does, so the
 * live bytes this storage counts at every moment are the bytes the mirrored backend would hold.
 *
 * Two counts are kept, each with its peak:
 *   - `liveBytes`: the tensor bytes of every live buffer (element count × bytes per element:
 *     4 for float32 and int32, 1 for bool), what tfjs's accounting counts for one buffer;
 *   - `liveDeviceBytes`: what the `cuda` backend's caching allocator would have in use for the
 *     same buffers (native/src/allocator.cu: bool stored as int32, every block rounded up to its
 *     size class), i.e. `cudaMemoryStats().inUse`. Blocks the allocator caches after a free are
 *     not counted (they are reusable, as PyTorch's `memory_reserved` minus `memory_allocated`).
 *
 * It also counts, per kernel, the host dispatches (every kernel call that reaches the backend: on
 * cuda each is a JavaScript → N-API round trip) and the device kernel launches the cuda backend would
 * make for them (`dispatchCounts`): none for a kernel that only shares a buffer (Reshape, Identity,
 * a same-dtype Cast, ...), else the native function's launches (CUDA_LAUNCHES; one unless listed).
 * The counts are a model of native/src, not a trace of it: cuBLASLt may run more than one kernel
 * for one matmul, and the first call of a matmul shape also autotunes.
 *
 * Reads return ones: there are no values, and a constant that is finite and non-zero lets the
 * checks code makes on values it reads back (no NaN loss, no all-zero embedding row before the
 * angle objective's complex division) pass as they would on real data. Code whose control flow
 * depends on values sees the constant; `reads` counts the reads so a caller can tell.
 */
import * as tf from '@tensorflow/tfjs-core';
import { deviceSizeClass } from './device-allocator.js';
import { uploadBytes, type HostArray, type StepGraph, type StepGraphBackend, type UploadRecord } from '../step-graph.js';

type DataId = object;

/** One tensor buffer: no values, only what memory accounting needs. */
export interface ShapeOnlyData {
  /** Number of elements. */
  size: number;
  dtype: tf.DataType;
  /** Tensor bytes (size × bytes per element). */
  bytes: number;
  /** Bytes the cuda allocator would reserve for it (its size class). */
  deviceBytes: number;
  refCount: number;
}

/** What the backend has allocated, now and at its peak. */
export interface ShapeOnlyMemory {
  liveBytes: number;
  peakBytes: number;
  liveDeviceBytes: number;
  peakDeviceBytes: number;
  liveBuffers: number;
  /** Buffers created since the backend started (or since `resetCounters`). */
  allocations: number;
  /** readSync/read calls answered with ones (there are no values). */
  reads: number;
}

/** Host dispatches and device launches, in total and per kernel name. */
export interface DispatchCounts {
  dispatches: number;
  launches: number;
  byKernel: Record<string, { dispatches: number; launches: number }>;
}

/**
 * Device launches of the cuda backend's kernels that launch more than one CUDA kernel
 * (native/src: the host function's <<<>>> launches on its usual path); every other kernel that
 * writes a buffer launches one.
 */
export const CUDA_LAUNCHES: Readonly<Record<string, number>> = {
  AngleLayerNormGrad: 2, // lnBackwardDx, lnBackwardParams (fused.cu)
  AngleAttentionGrad: 3, // rowDot, dQ, dK/dV (attention.cu)
};

function bytesPerElement(dtype: tf.DataType): number {
  if (dtype === 'bool') return 1;
  if (dtype === 'float32' || dtype === 'int32') return 4;
  throw new Error(`shape-only backend: dtype ${dtype} is not supported (float32, int32 and bool are)`);
}

function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** A capture in progress on the shape-only backend: what the cuda backend would record (../step-graph.ts). */
interface ShapeOnlyCapture {
  feeds: ReadonlyMap<HostArray, string>;
  uploads: UploadRecord[];
  kernels: number;
  firstSeed?: number;
  lastSeed: number;
}

export class ShapeOnlyBackend extends tf.KernelBackend implements StepGraphBackend {
  private readonly store: tf.DataStorage<ShapeOnlyData>;
  private capture?: ShapeOnlyCapture;
  private uploadLog?: { feeds: ReadonlyMap<HostArray, string>; records: UploadRecord[] };
  private readonly graphs = new Map<number, { feedSlots: number; constants: number; launched: boolean }>();
  private nextGraph = 1;
  private explicitLaunches?: number;
  private static nextId = 0;
  private counters: ShapeOnlyMemory = { liveBytes: 0, peakBytes: 0, liveDeviceBytes: 0, peakDeviceBytes: 0, liveBuffers: 0, allocations: 0, reads: 0 };
  private dispatch: DispatchCounts = { dispatches: 0, launches: 0, byKernel: {} };

  constructor(
    /** The tfjs name it is registered under. */
    readonly name: string,
    /** Which real backend's buffer sharing and dtype rules the kernels follow. */
    readonly mirrors: 'cuda' | 'cpu',
  ) {
    super();
    this.store = new tf.DataStorage(this, tf.engine());
  }

  // ---- storage ---------------------------------------------------------------------------------

  private record(size: number, dtype: tf.DataType): ShapeOnlyData {
    const bytes = size * bytesPerElement(dtype);
    // The cuda backend stores bool as int32 and allocates at least one element (backend.ts `allocate`).
    const deviceBytes = deviceSizeClass(Math.max(size, 1) * 4);
    const c = this.counters;
    c.liveBytes += bytes;
    c.liveDeviceBytes += deviceBytes;
    c.liveBuffers++;
    c.allocations++;
    if (c.liveBytes > c.peakBytes) c.peakBytes = c.liveBytes;
    if (c.liveDeviceBytes > c.peakDeviceBytes) c.peakDeviceBytes = c.liveDeviceBytes;
    return { size, dtype, bytes, deviceBytes, refCount: 1 };
  }

  private release(d: ShapeOnlyData): void {
    this.counters.liveBytes -= d.bytes;
    this.counters.liveDeviceBytes -= d.deviceBytes;
    this.counters.liveBuffers--;
  }

  /** An upload of host values (write/move): deferred into a slot while capturing, else logged when asked. */
  private noteUpload(values: tf.backend_util.BackendValues | null | undefined): void {
    if (values == null || !(this.capture || this.uploadLog)) return;
    const feed = (this.capture ?? this.uploadLog)!.feeds.get(values as HostArray);
    const n = (values as ArrayLike<number>).length;
    const rec: UploadRecord = { feed, values: n, bytes: feed === undefined ? uploadBytes(values as HostArray) : undefined };
    (this.capture?.uploads ?? this.uploadLog!.records).push(rec);
  }

  override write(values: tf.backend_util.BackendValues, shape: number[], dtype: tf.DataType): DataId {
    this.noteUpload(values);
    const dataId = { id: ShapeOnlyBackend.nextId++ };
    this.store.set(dataId, this.record(sizeOf(shape), dtype));
    return dataId;
  }

  override move(dataId: DataId, values: tf.backend_util.BackendValues, shape: number[], dtype: tf.DataType, refCount: number): void {
    this.noteUpload(values);
    const d = this.record(sizeOf(shape), dtype);
    d.refCount = refCount;
    this.store.set(dataId, d);
  }

  /** A new buffer for a kernel output (no values). */
  makeTensorInfo(shape: number[], dtype: tf.DataType): tf.TensorInfo {
    const dataId = { id: ShapeOnlyBackend.nextId++ };
    this.store.set(dataId, this.record(sizeOf(shape), dtype));
    return { dataId, shape, dtype };
  }

  /** A kernel output that is an input's buffer under another shape or dtype (reshape, identity). */
  share(x: tf.TensorInfo, shape: number[] = x.shape, dtype: tf.DataType = x.dtype): tf.TensorInfo {
    this.incRef(x.dataId);
    return { dataId: x.dataId, shape, dtype };
  }

  /** A buffer a kernel needs only while it runs (the mirrored backend's scratch): counted, then freed. */
  scratch(shape: number[], dtype: tf.DataType): void {
    this.release(this.record(sizeOf(shape), dtype));
  }

  has(dataId: DataId): boolean {
    return this.store.has(dataId);
  }

  override refCount(dataId: DataId): number {
    return this.store.has(dataId) ? this.store.get(dataId).refCount : 0;
  }

  override incRef(dataId: DataId): void {
    this.store.get(dataId).refCount++;
  }

  override disposeData(dataId: DataId, force = false): boolean {
    if (!this.store.has(dataId)) return true;
    const d = this.store.get(dataId);
    d.refCount--;
    if (!force && d.refCount > 0) return false;
    this.store.delete(dataId);
    this.release(d);
    return true;
  }

  disposeIntermediateTensorInfo(t: tf.TensorInfo): void {
    this.disposeData(t.dataId);
  }

  override numDataIds(): number {
    return this.store.numDataIds();
  }

  override readSync(dataId: DataId): tf.backend_util.BackendValues {
    if (this.capture) throw new Error('shape-only backend: read back during a graph capture: nothing has run yet (as on cuda)');
    const d = this.store.get(dataId);
    this.counters.reads++;
    if (d.dtype === 'float32') return new Float32Array(d.size).fill(1);
    if (d.dtype === 'int32') return new Int32Array(d.size).fill(1);
    return new Uint8Array(d.size).fill(1);
  }

  override async read(dataId: DataId): Promise<tf.backend_util.BackendValues> {
    return this.readSync(dataId);
  }

  // ---- accounting -------------------------------------------------------------------------------

  /** Runs one kernel call and counts its dispatch and launches (./index.ts wraps every kernel with this). */
  countDispatch<T>(kernelName: string, run: () => T): T {
    const before = this.counters.allocations;
    this.explicitLaunches = undefined;
    const out = run();
    // No new buffer (outputs or scratch): the kernel only shared an input's buffer, nothing ran on the
    // device — unless it works in place and said how many kernels it launched (noteLaunches).
    const launches = this.explicitLaunches ?? (this.counters.allocations > before ? (CUDA_LAUNCHES[kernelName] ?? 1) : 0);
    this.explicitLaunches = undefined;
    if (this.capture) {
      // Recorded into the graph, not launched: the host still dispatched the kernel.
      this.capture.kernels += launches;
      this.count(kernelName, 1, 0);
    } else {
      this.count(kernelName, 1, launches);
    }
    return out;
  }

  private count(kernelName: string, dispatches: number, launches: number): void {
    const d = this.dispatch;
    const k = (d.byKernel[kernelName] ??= { dispatches: 0, launches: 0 });
    d.dispatches += dispatches;
    d.launches += launches;
    k.dispatches += dispatches;
    k.launches += launches;
  }

  /** For a kernel that writes in place (no new buffer): the device kernels it launches. */
  noteLaunches(n: number): void {
    this.explicitLaunches = n;
  }

  /** A dropout seed a kernel draws with (graph.h: a capture shifts them by the launch's base). */
  noteSeed(seed: number): void {
    const c = this.capture;
    if (!c) return;
    if (c.firstSeed === undefined) c.firstSeed = seed;
    if (seed < c.firstSeed) throw new Error(`shape-only backend: graph capture: seed ${seed} is below the capture's first seed ${c.firstSeed} (seeds must increase)`);
    c.lastSeed = Math.max(c.lastSeed, seed);
  }

  // ---- step graphs (../step-graph.ts): counted as the cuda backend would run them ---------------------

  get capturingStep(): boolean {
    return this.capture !== undefined;
  }

  beginStepCapture(feeds: ReadonlyMap<HostArray, string>): void {
    if (this.capture) throw new Error('shape-only backend: a step capture is in progress already');
    this.capture = { feeds, uploads: [], kernels: 0, lastSeed: 0 };
  }

  endStepCapture(): StepGraph {
    const c = this.capture;
    if (!c) throw new Error('shape-only backend: no step capture is in progress');
    this.capture = undefined;
    const id = this.nextGraph++;
    const feedSlots = c.uploads.filter((u) => u.feed !== undefined).length;
    const constants = c.uploads.filter((u) => u.feed === undefined);
    this.graphs.set(id, { feedSlots, constants: constants.length, launched: false });
    const seeded = c.firstSeed !== undefined;
    return { id, kernels: c.kernels, feedSlots, constants, firstSeed: seeded ? c.firstSeed! : 0, seeds: seeded ? c.lastSeed - c.firstSeed! + 1 : 0 };
  }

  abortStepCapture(): void {
    this.capture = undefined;
  }

  /** One graph launch (a launch, a dispatch) and one upload per feed slot (a dispatch each; constants the first time). */
  launchStepGraph(g: StepGraph, feeds: Readonly<Record<string, HostArray>>, seedBase: number): void {
    void seedBase;
    const rec = this.graphs.get(g.id);
    if (!rec) throw new Error(`shape-only backend: step graph ${g.id} was destroyed or never captured`);
    for (const name of new Set(Object.keys(feeds))) if (feeds[name] === undefined) throw new Error(`shape-only backend: no values for feed '${name}'`);
    this.count('GraphUpload', rec.feedSlots + (rec.launched ? 0 : rec.constants), 0);
    this.count('GraphLaunch', 1, 1);
    rec.launched = true;
  }

  destroyStepGraph(g: StepGraph): void {
    this.graphs.delete(g.id);
  }

  logUploads(feeds: ReadonlyMap<HostArray, string> | undefined): UploadRecord[] {
    const records = this.uploadLog?.records ?? [];
    this.uploadLog = feeds ? { feeds, records: [] } : undefined;
    return records;
  }

  /** Dispatches and launches since the backend started or `resetDispatchCounts` (a copy). */
  dispatchCounts(): DispatchCounts {
    const byKernel: DispatchCounts['byKernel'] = {};
    for (const [k, v] of Object.entries(this.dispatch.byKernel)) byKernel[k] = { ...v };
    return { dispatches: this.dispatch.dispatches, launches: this.dispatch.launches, byKernel };
  }

  resetDispatchCounts(): void {
    this.dispatch = { dispatches: 0, launches: 0, byKernel: {} };
  }

  /** Live and peak bytes (a copy). */
  memoryCounters(): ShapeOnlyMemory {
    return { ...this.counters };
  }

  /** Starts a new peak at the bytes live now (and zeroes the allocation and read counts). */
  resetPeak(): void {
    const c = this.counters;
    c.peakBytes = c.liveBytes;
    c.peakDeviceBytes = c.liveDeviceBytes;
    c.allocations = 0;
    c.reads = 0;
  }

  override memory(): { unreliable: boolean; reasons?: string[] } & Record<string, unknown> {
    return { unreliable: false, ...this.memoryCounters() };
  }

  // ---- information ------------------------------------------------------------------------------

  override async time(f: () => void): Promise<tf.BackendTimingInfo> {
    const t0 = performance.now();
    f();
    return { kernelMs: performance.now() - t0 };
  }

  /** True, so that tf.profile times kernels with `time` instead of reading every output back. */
  override timerAvailable(): boolean {
    return true;
  }

  override floatPrecision(): 16 | 32 {
    return 32;
  }

  override epsilon(): number {
    return 1e-7;
  }

  override dispose(): void {}
}
