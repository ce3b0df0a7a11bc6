/**
 * Rehearsing an evaluation — embedding a set of texts with a model — at the paper's shapes, as the
 * evaluations do under the `rehearsal` preset (the STS suite, Flickr30k, SentEval's transfer tasks,
 * the geometry measurements, prompt embeddings) instead of evaluating — the plan (../plan.ts)
 * decides that from its preset and asks each evaluation row to rehearse: the model at
 * its real size with random weights (./models.ts; a released checkpoint as the architecture it is
 * built on), its texts sorted longest first, one batch
 *
 * 1. forward on the shape-only backend that mirrors `cuda`: the peak device bytes of an encoding
 *    batch, projected onto the H100 (./projection.ts);
 * 2. forward for real on the notebook's backend where that is cheap here (about
 *    `realStepSeconds`; BERT-base's 64-sentence batches are), for the time and memory measured here
 *    (once per process for a model and batch shape: the released BERTs share one architecture);
 * 3. every text of the evaluation at the H100's projected rate (FLOPs at the measured MFU).
 */
import { tf } from '../../backend/index.js';
import { trackTensorMemory } from '../../backend/memory-tracking.js';
import { measurePeakBytes } from '../../backend/shape-only/index.js';
import { resolveResultsDir } from '../../config.js';
import { STS_TASKS } from '../../data/registry.js';
import { loadStsTask } from '../../data/sts.js';
import { prepareTransferTask } from '../../eval/transfer/tasks.js';
import { RELEASED_CHECKPOINTS } from '../../models/released.js';
import type { TextModel } from '../../models/types.js';
import { instantiate, rehearsalModel, type RehearsalModelSpec } from './models.js';
import { h100Calibration } from './calibration.js';
import { FIT_BUDGET_BYTES, projectH100Seconds } from './projection.js';
import type { RehearsalRow } from './summary.js';
import { writeRehearsalRows } from './summary.js';

/**
 * The model a rehearsal stands in for `id`: itself when it can be had, else the architecture a
 * released checkpoint is built on (lib/models/released.ts: BERT checkpoints and sentence-transformers
 * folders are bert-base-uncased; adapters go on their base decoder).
 */
export function rehearsalModelId(id: string): string {
  const released = RELEASED_CHECKPOINTS.find((c) => c.id === id);
  if (!released) return id;
  return released.kind === 'lora-adapter' ? (released.baseModel ?? id) : 'google-bert/bert-base-uncased';
}

/** Inference FLOP/s of this machine through tfjs-wasm (BERT-base, 12.8 sentences/s of about 30 tokens: README, environment.md). */
const CPU_INFERENCE_FLOPS = 12.8 * 30 * 2 * 109_482_240;

const specs = new Map<string, Promise<RehearsalModelSpec>>();

/** What one batch measured, by model and batch shape: released checkpoints of one architecture share it, so it is measured once per process. */
interface BatchMeasurement {
  metaPeakDeviceBytes: number;
  metaPeakBytes: number;
  metaBackend: string;
  real?: { seconds: number; peakBytes: number; backend: string };
}
const measured = new Map<string, BatchMeasurement>();

export interface RehearseEncodingOptions {
  notebook: string;
  /** What the row is called (the evaluation and the model). */
  run: string;
  /** A Hub id, a folder, or a released checkpoint's id. */
  model: string;
  texts: readonly string[];
  batchSize: number;
  /** Token limit per text (default: the model's maximum). */
  maxLength?: number;
  /** Texts of the evaluation beyond `texts` (e.g. repeated over SentEval's inner folds): counted, not embedded. */
  repeat?: number;
  realStepSeconds?: number;
  resultsDir?: string;
}

/** Rehearses one evaluation's encoding (see the file comment) and adds its row to the rehearsal summary. */
export async function rehearseEncoding(o: RehearseEncodingOptions): Promise<RehearsalRow> {
  const id = rehearsalModelId(o.model);
  const base = { notebook: o.notebook, run: o.run, kind: 'encode' as const, model: id === o.model ? id : `${id} (for ${o.model})`, batch: o.batchSize, accumulation: 1 };
  let row: RehearsalRow;
  try {
    if (!specs.has(id)) specs.set(id, rehearsalModel(id));
    const spec = await specs.get(id)!;
    const maxLength = Math.min(o.maxLength ?? Number.MAX_SAFE_INTEGER, 512);
    const tok = spec.tokenizer;
    const lengths = o.texts.map((t) => tok.encode(t, null, maxLength).ids.length);
    const order = lengths.map((n, i) => ({ n, i })).sort((a, b) => b.n - a.n);
    const first = order.slice(0, o.batchSize).map((x) => o.texts[x.i]);
    const length = order[0]?.n ?? 0;
    const batch = tok.encodeBatch(first, { maxLength });
    const forward = (m: TextModel) => tf.tidy(() => tf.sum(m.forward(batch, { training: false }).lastHiddenState));
    const { ratio } = await h100Calibration();
    const tokens = batch.batch * batch.seqLen;
    const realSeconds = (2 * spec.parameters * tokens) / CPU_INFERENCE_FLOPS;
    const tryReal = !spec.shapeOnly && realSeconds <= (o.realStepSeconds ?? 60);
    const key = `${id}|${batch.batch}x${batch.seqLen}`;
    let m = measured.get(key);
    if (!m || (tryReal && !m.real)) {
      const meta = await measurePeakBytes(async () => {
        const model = await instantiate(spec);
        try {
          forward(model).dispose();
        } finally {
          model.dispose();
        }
      });
      m = { metaPeakDeviceBytes: meta.peakDeviceBytes, metaPeakBytes: meta.peakBytes, metaBackend: meta.backend };
      if (tryReal) {
        const model = await instantiate(spec);
        try {
          const t0 = performance.now();
          const { memory } = await trackTensorMemory(async () => {
            const s = forward(model);
            await s.data();
            s.dispose();
          });
          m.real = { seconds: (performance.now() - t0) / 1000, peakBytes: memory.peakBufferBytes + model.numParameters() * 4, backend: tf.getBackend() };
        } finally {
          model.dispose();
        }
      }
      measured.set(key, m);
    }
    const projectedPeak = m.metaPeakDeviceBytes * ratio;
    const stepSeconds = m.real?.seconds ?? null;
    const peakBytes = m.real?.peakBytes ?? m.metaPeakBytes;
    const backend = m.real?.backend ?? `${m.metaBackend} (shape-only)`;
    // Every text, padded per batch of length-sorted texts (as the encoder batches them).
    let padded = 0;
    for (let k = 0; k < order.length; k += o.batchSize) padded += order[k].n * Math.min(o.batchSize, order.length - k);
    const time = projectH100Seconds({ tokens: padded * (o.repeat ?? 1), tokensPerMicroBatch: tokens, parameters: spec.parameters, kind: 'encode' });
    const fits = projectedPeak <= FIT_BUDGET_BYTES;
    row = {
      ...base,
      instantiated: spec.instantiated,
      length,
      data: `${o.texts.length.toLocaleString('en-US')} texts${o.repeat && o.repeat > 1 ? ` × ${o.repeat}` : ''}`,
      stepSeconds,
      backend,
      peakBytes,
      projectedPeakBytesH100: projectedPeak,
      projectedHoursH100: time.seconds / 3600,
      timeBasis: time.basis,
      fits80GB: fits,
      status: fits ? 'ok' : 'does-not-fit',
      why: fits ? '' : `projected ${(projectedPeak / 1e9).toFixed(0)} GB for one batch: smaller batches, a 16-bit base`,
    };
  } catch (e) {
    row = { ...base, instantiated: '', length: 0, data: '', stepSeconds: null, backend: tf.getBackend(), peakBytes: 0, projectedPeakBytesH100: 0, projectedHoursH100: 0, timeBasis: '', fits80GB: false, status: 'failed', why: (e as Error).message.split('\n')[0] };
  }
  writeRehearsalRows(resolveResultsDir(o.resultsDir), o.notebook, [row]);
  return row;
}

/** The sentences of the SentEval STS suite's test sets (what one suite evaluation embeds), each once. */
export function stsSuiteTexts(dataDir?: string): string[] {
  const texts = new Set<string>();
  for (const t of STS_TASKS) for (const set of loadStsTask(t, { dataDir, splits: ['test'] })) for (const p of set.pairs) texts.add(p.a).add(p.b);
  return [...texts];
}

/** The sentences of SentEval's transfer tasks (every split; MRPC's both sides), each once. */
export function transferTexts(tasks: readonly string[], dataDir?: string): string[] {
  const texts = new Set<string>();
  for (const task of tasks) {
    const p = prepareTransferTask(task, { dataDir });
    for (const s of Object.values(p.splits)) for (const rows of [s.tokens, s.tokensB ?? []]) for (const r of rows) texts.add(r.join(' '));
  }
  return [...texts];
}
