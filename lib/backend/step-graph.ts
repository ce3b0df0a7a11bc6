/**
 * The contract between a backend that can record a training step once and replay it (cuda: a CUDA
 * graph, native/src/graph.h; the shape-only `meta` backend: the same bookkeeping, counted) and the
 * code that decides when to record and replay (lib/train/step-graphs.ts).
 *
 * While a step is captured nothing runs on the device: the kernels are recorded. Host data the step
 * uploads (token ids, masks, scalars, the optimiser's learning rates) cannot be captured as it is
 * (the bytes would be those of this step forever), so the backend defers every upload of a capture
 * to just before each launch, as a slot: a *feed* when its source array is one the caller declared
 * (by identity: the same typed array object; the caller hands the next step's arrays by name at each
 * launch), else a *constant* (uploaded before the first launch only; its buffer is kept for the
 * graph, so nothing overwrites it). Whether an upload that is not a declared feed really is constant
 * is the caller's to check: `constants` lists them, and `logUploads` lists those of an eager step
 * to compare with.
 */
import * as tf from '@tensorflow/tfjs-core';

export type HostArray = Float32Array | Int32Array | Uint8Array;

/** One upload of a step: its size and bytes, and the feed name when its source was declared. */
export interface UploadRecord {
  feed?: string;
  values: number;
  /** The bytes uploaded (a copy), for constants; undefined for feeds. */
  bytes?: Uint8Array;
}

/** A recorded step, as the backend keeps it. */
export interface StepGraph {
  id: number;
  /** Device kernels one launch runs. */
  kernels: number;
  /** Host→device copies before each launch (feed slots). */
  feedSlots: number;
  /** Uploads taken as constants. */
  constants: UploadRecord[];
  /** Smallest dropout seed captured and how many consecutive seeds the step draws (0: none). */
  firstSeed: number;
  seeds: number;
}

export interface StepGraphBackend {
  /** Whether a step is being captured now (nothing runs; no value can be read). */
  readonly capturingStep: boolean;
  /** Starts recording; uploads of arrays in `feeds` become named feed slots. */
  beginStepCapture(feeds: ReadonlyMap<HostArray, string>): void;
  /** Ends recording and instantiates the graph (throws, leaving nothing captured, when the step could not be captured). */
  endStepCapture(): StepGraph;
  /** Abandons a capture after a failure (idempotent). */
  abortStepCapture(): void;
  /** Uploads the feed slots from `feeds` (constants too, the first time) and runs the graph; seeds start at `seedBase`. */
  launchStepGraph(g: StepGraph, feeds: Readonly<Record<string, HostArray>>, seedBase: number): void;
  destroyStepGraph(g: StepGraph): void;
  /** Starts (or, with undefined, stops and returns) a log of the uploads of eager work, feeds named as above. */
  logUploads(feeds: ReadonlyMap<HostArray, string> | undefined): UploadRecord[];
}

/** The active backend, when it can record and replay steps. */
export function stepGraphBackend(): StepGraphBackend | undefined {
  const b = tf.backend() as unknown as Partial<StepGraphBackend>;
  return typeof b.beginStepCapture === 'function' && typeof b.launchStepGraph === 'function' ? (b as StepGraphBackend) : undefined;
}

/**
 * Whether the active backend is capturing a step: code that reads a value back only to check it
 * (a loss's finiteness check) skips the read then — it would fail the capture, and the step's own
 * read of its loss, after the launch, still shows a NaN.
 */
export function capturingStep(): boolean {
  return stepGraphBackend()?.capturingStep === true;
}

/** The bytes of a typed array (a copy). */
export function uploadBytes(values: ArrayLike<number> | HostArray): Uint8Array {
  if (ArrayBuffer.isView(values)) return new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));
  return new Uint8Array(Float32Array.from(values).buffer);
}

/** Whether two constant logs are the same uploads with the same bytes (feeds compared by name and size). */
export function sameUploads(a: readonly UploadRecord[], b: readonly UploadRecord[]): { same: true } | { same: false; why: string } {
  if (a.length !== b.length) return { same: false, why: `${a.length} uploads in one step, ${b.length} in the other` };
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.feed !== y.feed || x.values !== y.values) return { same: false, why: `upload ${i}: ${x.feed ?? 'constant'} of ${x.values} values vs ${y.feed ?? 'constant'} of ${y.values}` };
    if (x.bytes && y.bytes) {
      if (x.bytes.length !== y.bytes.length || x.bytes.some((v, k) => v !== y.bytes![k])) {
        return { same: false, why: `upload ${i} (${x.values} values, not a declared feed) differs between steps: host data the step builds from its batch` };
      }
    }
  }
  return { same: true };
}
