/**
 * AnglE §4.5's Flickr30k retrieval for one model, run the way a notebook needs it: the model
 * entry (./evaluation-models.ts) is opened, its captions embedded and every query scored
 * (lib/eval/caption-queries.ts: strict top-5 accuracy with the query in the corpus, recall@k of the
 * other captions), and the result written as an evaluation record (lib/report/evaluation-record.ts)
 * in results/<experiment>/ with the per-query outcomes in its details — what a bootstrap over
 * queries and the table of example queries need — through the run store (./run-store.ts), so that
 * running the notebook again reuses it (key: the model's weights, the encoder settings, the split
 * and the k's; ./run-evaluation.ts `evaluationKey`). A model that cannot be opened comes back as `unavailable` with the reason.
 * Each model is a plan row (./flickr30k-rows.ts); under the rehearsal preset the plan calls
 * `rehearseFlickr30k` instead: the captions' encoding at its real shapes (./rehearsal/encode.ts).
 *
 * Record metrics (×100, as the paper prints %): test_strict_accuracy, test_recall_at_<k>.
 */
import { activeBackend } from '../backend/index.js';
import { evaluateFlickr30kQueries } from '../eval/caption-queries.js';
import type { ChunkedSearchOptions } from '../eval/chunked-search.js';
import { writeEvaluationRecord } from '../report/evaluation-record.js';
import { collectProvenance } from '../report/provenance.js';
import type { LoadedRun } from '../report/results-reader.js';
import type { PaperCell } from '../report/run-record.js';
import { portableModelIdentity } from '../report/training-record.js';
import { InputError } from '../util/errors.js';
import { withModelEntry, type ModelEntry } from './evaluation-models.js';
import { evaluationKey } from './run-evaluation.js';
import { storedRun } from './run-store.js';
import { loadFlickr30kCaptions } from '../data/flickr.js';
import { rehearseEncoding } from './rehearsal/encode.js';
import type { RehearsalRow } from './rehearsal/summary.js';

export interface Flickr30kRunOptions {
  entry: ModelEntry;
  experiment: string;
  resultsDir?: string;
  dataDir?: string;
  /** Default 'test' (the paper's split). */
  split?: 'test' | 'dev';
  /** recall@k of the other captions; default 1, 5, 10. */
  ks?: readonly number[];
  /** Chunk and block sizes of the device search (lib/eval/chunked-search.ts). */
  search?: Omit<ChunkedSearchOptions, 'exclude' | 'onChunk'>;
  force?: boolean;
  paper?: PaperCell;
  log?: (line: string) => void;
}

/** Per-query outcomes as the record's details keep them. */
export interface Flickr30kQueryDetails {
  /** Per query (image), 1 when its top 5 is exactly its image's captions. */
  strict: number[];
  /** Per k: per query, how many of the image's other captions are among the top k (query excluded). */
  hitsAtK: Record<string, number[]>;
  /** Per query, its top `perImage` caption indices with the query in the corpus. */
  top: number[][];
  perImage: number;
}

export interface Flickr30kRun {
  entry: ModelEntry;
  status: 'reused' | 'evaluated' | 'unavailable';
  /** Why the model could not be evaluated (status 'unavailable'). */
  reason?: string;
  key?: string;
  run?: LoadedRun;
  queries?: Flickr30kQueryDetails;
}

const EVALUATOR = (split: string) => `Flickr30k ${split} caption retrieval (query = first caption of each image, corpus = all captions)`;

/** The per-query details of a Flickr30k record (written by runFlickr30k). */
export function flickr30kQueryDetails(run: LoadedRun): Flickr30kQueryDetails {
  const q = (run.record.details as { queries?: Flickr30kQueryDetails } | undefined)?.queries;
  if (!q || !Array.isArray(q.strict) || !Array.isArray(q.top) || typeof q.hitsAtK !== 'object') {
    throw new InputError('not a Flickr30k retrieval record: details.queries (strict, hitsAtK, top) is missing', { file: run.file });
  }
  return q;
}

/** Evaluates (or reuses the finished evaluation of) one model entry; see the file comment. */
export async function runFlickr30k(o: Flickr30kRunOptions): Promise<Flickr30kRun> {
  const log = o.log ?? (() => {});
  const split = o.split ?? 'test';
  const ks = [...new Set(o.ks ?? [1, 5, 10])].sort((a, b) => a - b);
  return withModelEntry(o.entry, async (m) => {
    if (!m.loaded || !m.encoder) {
      log(`${o.entry.label}: ${m.unavailable}${m.detail && !m.unavailable?.includes(m.detail) ? ` (${m.detail})` : ''}`);
      return { entry: o.entry, status: 'unavailable', reason: m.unavailable };
    }
    const loaded = m.loaded;
    const encoder = m.encoder;
    const config = { ...m.config, task: 'flickr30k-caption-retrieval', split, ks };
    const evaluator = EVALUATOR(split);
    const key = evaluationKey({ weightsSha256: loaded.weightsSha256, config, evaluator, rows: 0, seed: 0 });
    const stored = await storedRun({ experiment: o.experiment, resultsDir: o.resultsDir, key, label: o.entry.label, force: o.force, log }, async (resultsDir) => {
      const provenance = collectProvenance();
      const startedAt = new Date().toISOString();
      const t0 = performance.now();
      const r = await evaluateFlickr30kQueries(encoder, { dataDir: o.dataDir, split, ks, search: o.search, encode: { progress: false } });
      const wallSeconds = (performance.now() - t0) / 1000;
      const metrics: Record<string, number> = { strict_accuracy: r.strictAccuracy };
      for (const k of ks) metrics[`recall_at_${k}`] = r.recall[k]!.mean;
      const queries: Flickr30kQueryDetails = {
        strict: Array.from(r.strict),
        hitsAtK: Object.fromEntries(ks.map((k) => [String(k), Array.from(r.recall[k]!.perQuery, (v) => Math.round(v * (r.perImage - 1)))])),
        top: Array.from({ length: r.images }, (_, i) => Array.from(r.top.indices.subarray(i * r.top.k, (i + 1) * r.top.k))),
        perImage: r.perImage,
      };
      const file = writeEvaluationRecord({
        experiment: o.experiment,
        resultsDir,
        startedAt,
        wallSeconds,
        seed: 0,
        config,
        model: portableModelIdentity(loaded),
        evaluator: { name: evaluator, rows: r.images },
        result: { metrics },
        provenance,
        ...(o.paper ? { paper: { test_strict_accuracy: o.paper } } : { paperNote: 'the paper reports no Flickr30k number for this model' }),
        details: {
          runKey: key,
          label: o.entry.label,
          ...(o.entry.paperRow ? { tableRow: o.entry.paperRow } : {}),
          images: r.images,
          captions: r.captions,
          backend: activeBackend()?.name ?? null,
          seconds: { encode: r.encodeSeconds, search: r.search.seconds },
          search: { k: r.search.k, chunkRows: r.search.chunkRows ?? null, queryRows: r.search.queryRows ?? null, memoryBoundBytes: r.search.memoryBoundBytes },
          queries,
        },
      });
      return {
        file,
        status: 'evaluated' as const,
        card: { recipe: config, recipeName: o.entry.label },
        message: `evaluated in ${wallSeconds.toFixed(1)} s (embedding ${r.encodeSeconds.toFixed(1)} s, search ${r.search.seconds.toFixed(2)} s)`,
      };
    });
    return { entry: o.entry, status: stored.status, key, run: stored.run, queries: flickr30kQueryDetails(stored.run) };
  });
}

/** The captions' encoding of one model entry rehearsed at its real shapes (./rehearsal/encode.ts), instead of evaluated. */
export async function rehearseFlickr30k(o: Pick<Flickr30kRunOptions, 'entry' | 'experiment' | 'resultsDir' | 'dataDir' | 'split'>): Promise<{ row: RehearsalRow; run: Flickr30kRun }> {
  const split = o.split ?? 'test';
  const captions = loadFlickr30kCaptions(split, { dataDir: o.dataDir }).captions;
  const row = await rehearseEncoding({ notebook: o.experiment, run: `${o.entry.label}: Flickr30k ${split} captions`, model: o.entry.model, texts: captions, batchSize: 64, maxLength: o.entry.maxLength, resultsDir: o.resultsDir });
  return { row, run: { entry: o.entry, status: 'unavailable', reason: `rehearsed: ${row.status}${row.why ? ` (${row.why})` : ''} — see the rehearsal table` } };
}
