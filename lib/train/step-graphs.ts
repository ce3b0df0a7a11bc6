/**
 * Training steps recorded once and replayed (issue 39): on a backend that can record a step
 * (lib/backend/step-graph.ts: cuda as a CUDA graph, the shape-only `meta` backend counting it), a
 * step of a shape seen before runs as one graph launch plus the uploads of its batch — no host
 * dispatch per kernel. Elsewhere, and whenever a step cannot be recorded, it is optimizerStep as is.
 *
 * Per shape key (the micro-batches' [batch, seqLen]; `bucketLengths` pads sequences up to a few
 * lengths so that batches share graphs): `warmup` eager steps (the first makes the optimiser
 * state), then one step is captured and launched, and later steps replay it. A replay is the step
 * eager code would have run: the batch's token arrays, its objective's label inputs (the AnglE
 * objective's label ranks and in-batch target codes, from which it builds its masks on the device:
 * ObjectiveBatch.labelInputs) and the optimiser's learning rates and bias corrections are the
 * graph's feeds (uploaded before each launch), dropout draws the seeds the next
 * eager step would have drawn (the launch's seed base, native/src/graph.h), and the model's dropout
 * counter and AdamW's step counts advance as they would have.
 *
 * What the recorded step must not do, and what happens if it does:
 *   - read a value back or synchronise: the capture fails, the key is marked eager with the reason,
 *     and the step runs eagerly (the model's dropout counter has moved on: that step draws later seeds);
 *   - decide on the host from random numbers (OPT's LayerDrop): a replay repeats the captured
 *     decision, and nothing here can see it — such a model must not be replayed with LayerDrop on;
 *   - upload host data built from its batch that is not a feed (an objective without label inputs
 *     that builds label masks on the host, a teacher's vectors of the batch's texts): every
 *     upload that is not a feed must be byte-equal in the last eager step and the captured one, else
 *     the graph is dropped, the key marked eager with the reason, and the step runs eagerly. Two
 *     batches whose host-built data agree by chance pass this check: an objective whose uploads
 *     depend on its labels is only safe to replay where they do not change between batches.
 * At most `maxGraphs` graphs are kept (least recently used first out); `stats` says what ran.
 */
import { tf } from '../backend/index.js';
import { stepGraphBackend, sameUploads, type HostArray, type StepGraph, type StepGraphBackend, type UploadRecord } from '../backend/step-graph.js';
import type { TokenBatch } from '../models/types.js';
import { hasMultiTensorAdamW } from '../ops/adamw-step.js';
import { InputError } from '../util/errors.js';
import type { TrainingBatch } from './batching.js';
import { readStepValues, stepOnDevice, withLabelInputs, type StepContext, type StepValues } from './training-step.js';

export interface StepGraphOptions {
  /** Eager steps of a shape before it is captured (default and least 2: the first makes the optimiser state, the second gives the check of host uploads a step like the captured one). */
  warmup?: number;
  /** Graphs kept at once (default 4). */
  maxGraphs?: number;
  /** Pad every sequence up to the first of these lengths that holds it (sorted; longer ones are left as they are). */
  bucketLengths?: readonly number[];
}

/** How one step ran. */
export type StepMode = 'eager' | 'captured' | 'replayed';

export interface StepGraphStats {
  eager: number;
  captured: number;
  replayed: number;
  /** Shape keys that run eagerly for good, and why. */
  refused: Record<string, string>;
  /** Kernels per launch of each graph, by shape key. */
  kernels: Record<string, number>;
  /** Why no step can be recorded here at all (the backend cannot record steps), once a step saw it. */
  unsupported?: string;
}

interface KeyState {
  calls: number;
  lastUploads?: UploadRecord[];
  graph?: StepGraph;
  /** The captured step's read-back tensor: the graph writes it at every launch. */
  values?: tf.Tensor1D;
  names?: string[];
  clipped?: boolean;
  adamNames?: readonly string[];
  /** Dropout counter advance per step, and the seed of counter 0 relative to the capture's first seed. */
  seedsPerStep?: number;
  seedOffset?: number;
  refused?: string;
  lastUse: number;
}

/** Pads a token batch to `length` (right or left as `padSide`), masked out; the same batch when it is that long already. */
export function padTokenBatch(t: TokenBatch, length: number, padSide: 'right' | 'left'): TokenBatch {
  if (length === t.seqLen) return t;
  if (length < t.seqLen) throw new InputError(`padTokenBatch: cannot pad ${t.seqLen} tokens down to ${length}`);
  const pad = (src: Int32Array) => {
    const out = new Int32Array(t.batch * length);
    for (let b = 0; b < t.batch; b++) out.set(src.subarray(b * t.seqLen, (b + 1) * t.seqLen), b * length + (padSide === 'left' ? length - t.seqLen : 0));
    return out;
  };
  return { ...t, inputIds: pad(t.inputIds), tokenTypeIds: pad(t.tokenTypeIds), attentionMask: pad(t.attentionMask), seqLen: length };
}

/** The bucket length for `seqLen`: the first of `buckets` that holds it, else seqLen. */
export function bucketLength(seqLen: number, buckets: readonly number[]): number {
  for (const b of buckets) if (b >= seqLen) return b;
  return seqLen;
}

export class StepGraphs {
  private readonly keys = new Map<string, KeyState>();
  private readonly warmup: number;
  private readonly maxGraphs: number;
  private readonly buckets: number[];
  private clock = 0;
  private counts = { eager: 0, captured: 0, replayed: 0 };
  private backend?: StepGraphBackend;
  private unsupported?: string;

  constructor(opts: StepGraphOptions = {}) {
    this.warmup = opts.warmup ?? 2;
    this.maxGraphs = opts.maxGraphs ?? 4;
    if (!(Number.isInteger(this.warmup) && this.warmup >= 2)) throw new InputError(`StepGraphs: warmup must be an integer >= 2 (the first step makes the optimiser state; the second is compared with the captured one), got ${opts.warmup}`);
    if (!(Number.isInteger(this.maxGraphs) && this.maxGraphs >= 1)) throw new InputError(`StepGraphs: maxGraphs must be an integer >= 1, got ${opts.maxGraphs}`);
    this.buckets = [...(opts.bucketLengths ?? [])].sort((a, b) => a - b);
  }

  /** One optimiser step (optimizerStep's numbers), eager, captured or replayed; `mode` says which. */
  async step(ctx: StepContext, micro: readonly TrainingBatch[], lr: number): Promise<StepValues & { mode: StepMode }> {
    // Replays need the in-place multi-tensor AdamW: the per-tensor update gives each parameter a new buffer every step.
    const backend = hasMultiTensorAdamW() ? stepGraphBackend() : undefined;
    // Label inputs made here, once: their arrays are the ones declared as feeds and uploaded by the step.
    const labelled = withLabelInputs(ctx, micro);
    const batches = this.buckets.length > 0 ? labelled.map((b) => ({ ...b, tokens: padTokenBatch(b.tokens, bucketLength(b.tokens.seqLen, this.buckets), ctx.padSide) })) : labelled;
    if (!backend) {
      this.unsupported = stepGraphBackend() ? `the ${tf.getBackend()} backend has no in-place multi-tensor AdamW, which a replay needs` : `the ${tf.getBackend()} backend cannot record steps (cuda can)`;
      return this.eager(ctx, batches, lr, undefined, undefined);
    }
    if (this.backend && this.backend !== backend) this.dispose();
    this.backend = backend;
    const key = batches.map((b) => `${b.tokens.batch}x${b.tokens.seqLen}`).join('+');
    let st = this.keys.get(key);
    if (!st) this.keys.set(key, (st = { calls: 0, lastUse: 0 }));
    st.lastUse = ++this.clock;
    if (st.graph) return this.replay(ctx, batches, lr, st, backend);
    if (!st.refused && st.calls >= this.warmup) {
      const captured = await this.capture(ctx, batches, lr, st, key, backend);
      if (captured) return captured;
    }
    st.calls++;
    return this.eager(ctx, batches, lr, backend, st);
  }

  private feedMap(ctx: StepContext, micro: readonly TrainingBatch[]): Map<HostArray, string> {
    const feeds = new Map<HostArray, string>();
    micro.forEach((b, i) => {
      feeds.set(b.tokens.inputIds, `${i}.inputIds`);
      feeds.set(b.tokens.tokenTypeIds, `${i}.tokenTypeIds`);
      feeds.set(b.tokens.attentionMask, `${i}.attentionMask`);
      for (const [name, arr] of Object.entries(b.labelInputs ?? {})) feeds.set(arr, `${i}.labels.${name}`);
    });
    feeds.set(ctx.optimizer.hyperFeed, 'adamw.hyper');
    return feeds;
  }

  private feedValues(feeds: Map<HostArray, string>): Record<string, HostArray> {
    const out: Record<string, HostArray> = {};
    for (const [arr, name] of feeds) out[name] = arr;
    return out;
  }

  private async eager(ctx: StepContext, micro: readonly TrainingBatch[], lr: number, backend: StepGraphBackend | undefined, st: KeyState | undefined): Promise<StepValues & { mode: StepMode }> {
    this.counts.eager++;
    // The uploads of the last eager step, to compare with the captured step's (see the top of the file).
    if (backend && st) backend.logUploads(this.feedMap(ctx, micro));
    let t;
    try {
      t = stepOnDevice(ctx, micro, lr);
    } finally {
      if (backend && st) st.lastUploads = backend.logUploads(undefined);
    }
    try {
      return { ...(await readStepValues(t)), mode: 'eager' };
    } finally {
      t.values.dispose();
    }
  }

  private async capture(ctx: StepContext, micro: readonly TrainingBatch[], lr: number, st: KeyState, key: string, backend: StepGraphBackend): Promise<(StepValues & { mode: StepMode }) | undefined> {
    this.evict(backend);
    const counts = ctx.optimizer.stepCounts();
    const counter0 = ctx.model.dropoutCounter;
    // The hyper-parameter array is rewritten in place by the step: declared before it runs.
    const feeds = this.feedMap(ctx, micro);
    let graph: StepGraph;
    let t;
    try {
      backend.beginStepCapture(feeds);
      t = stepOnDevice(ctx, micro, lr);
      graph = backend.endStepCapture();
    } catch (e) {
      backend.abortStepCapture();
      ctx.optimizer.restoreStepCounts(counts);
      st.refused = `the step could not be captured: ${(e as Error).message}`;
      return undefined;
    }
    const same = st.lastUploads ? sameUploads(st.lastUploads.filter((u) => u.feed === undefined), graph.constants) : { same: false as const, why: 'no eager step to compare its uploads with' };
    if (!same.same) {
      backend.destroyStepGraph(graph);
      t.values.dispose();
      ctx.optimizer.restoreStepCounts(counts);
      st.refused = `host data that is not a feed changes between steps (${same.why})`;
      return undefined;
    }
    st.graph = graph;
    st.values = t.values;
    st.names = t.names;
    st.clipped = t.clipped;
    st.adamNames = ctx.optimizer.lastStepNames.slice();
    st.seedsPerStep = ctx.model.dropoutCounter - counter0;
    st.seedOffset = graph.firstSeed - counter0;
    // The capture ran nothing: this launch is the step.
    backend.launchStepGraph(graph, this.feedValues(feeds), graph.firstSeed);
    this.counts.captured++;
    return { ...(await readStepValues({ ...t, values: st.values })), tokens: t.tokens, mode: 'captured' };
  }

  private async replay(ctx: StepContext, micro: readonly TrainingBatch[], lr: number, st: KeyState, backend: StepGraphBackend): Promise<StepValues & { mode: StepMode }> {
    const hyper = ctx.optimizer.advanceForReplay(st.adamNames!, lr);
    const feeds: Record<string, HostArray> = { 'adamw.hyper': hyper };
    micro.forEach((b, i) => {
      feeds[`${i}.inputIds`] = b.tokens.inputIds;
      feeds[`${i}.tokenTypeIds`] = b.tokens.tokenTypeIds;
      feeds[`${i}.attentionMask`] = b.tokens.attentionMask;
      for (const [name, arr] of Object.entries(b.labelInputs ?? {})) feeds[`${i}.labels.${name}`] = arr;
    });
    // The seeds the next eager step would draw: the captured ones shifted by the counter's advance.
    const seedBase = ctx.model.dropoutCounter + st.seedOffset!;
    backend.launchStepGraph(st.graph!, feeds, seedBase);
    ctx.model.dropoutCounter += st.seedsPerStep!;
    this.counts.replayed++;
    const tokens = micro.reduce((s, b) => s + b.realTokens, 0);
    return { ...(await readStepValues({ values: st.values!, names: st.names!, clipped: st.clipped!, tokens })), mode: 'replayed' };
  }

  /** Drops the least recently used graph while maxGraphs are alive. */
  private evict(backend: StepGraphBackend): void {
    const live = [...this.keys.values()].filter((s) => s.graph);
    while (live.length >= this.maxGraphs) {
      live.sort((a, b) => a.lastUse - b.lastUse);
      const old = live.shift()!;
      this.drop(old, backend);
      old.calls = 0;
    }
  }

  private drop(st: KeyState, backend: StepGraphBackend): void {
    if (st.graph) backend.destroyStepGraph(st.graph);
    st.values?.dispose();
    st.graph = undefined;
    st.values = undefined;
  }

  stats(): StepGraphStats {
    const refused: Record<string, string> = {};
    const kernels: Record<string, number> = {};
    for (const [k, s] of this.keys) {
      if (s.refused) refused[k] = s.refused;
      if (s.graph) kernels[k] = s.graph.kernels;
    }
    return { ...this.counts, refused, kernels, ...(this.unsupported ? { unsupported: this.unsupported } : {}) };
  }

  /** Destroys every graph (their memory goes back to the backend). */
  dispose(): void {
    if (this.backend) for (const s of this.keys.values()) this.drop(s, this.backend);
    this.keys.clear();
  }
}
