/**
 * An evaluation without training, through the run store (./run-store.ts) as ./run-recipe.ts runs a
 * training: identified by a key — a hash of the model's weights, the encoder settings, the
 * evaluator and the seed — so that running the notebook again reuses the finished evaluation and
 * `force` evaluates again (a new record beside the old one). A finished evaluation gets its record
 * (lib/report/evaluation-record.ts, with the predictions sidecar) and a run card.
 *
 * The caller owns the model and the encoder (one loaded decoder serves several rows: plain
 * prompts, in-context demonstrations …); only their identity goes into the key.
 */
import type { SentenceEncoder } from '../embed/types.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { LoadedModel } from '../models/types.js';
import { writeEvaluationRecord } from '../report/evaluation-record.js';
import { collectProvenance } from '../report/provenance.js';
import type { PaperCell } from '../report/run-record.js';
import { portableModelIdentity } from '../report/training-record.js';
import { keyOf, storedRun, type StoredRun } from './run-store.js';

export interface RunEvaluationOptions {
  /** What the run is called in logs (e.g. the table row). */
  label: string;
  model: Pick<LoadedModel, 'id' | 'dir' | 'source' | 'commit' | 'weightsSha256'>;
  encoder: SentenceEncoder;
  /** The encoder's settings: recorded as the run's config and part of its key. */
  config: Record<string, unknown>;
  evaluator: Evaluator;
  /** Default 0 (an evaluation of fixed weights draws nothing at random). */
  seed?: number;
  experiment: string;
  resultsDir?: string;
  force?: boolean;
  paper?: Record<string, PaperCell>;
  paperNote?: string;
  details?: Record<string, unknown>;
  log?: (line: string) => void;
}

export type EvaluationRun = StoredRun<'evaluated', undefined>;

/** The key of an evaluation: a hash of what decides its numbers. */
export function evaluationKey(parts: { weightsSha256: string; config: Record<string, unknown>; evaluator: string; rows: number; seed: number }): string {
  const identity = { kind: 'evaluation', weights: parts.weightsSha256, config: parts.config, evaluator: parts.evaluator, rows: parts.rows, seed: parts.seed };
  return keyOf(identity);
}

/** Evaluates (or reuses a finished evaluation of) an encoder; see the file comment. */
export async function runEvaluation(o: RunEvaluationOptions): Promise<EvaluationRun> {
  const seed = o.seed ?? 0;
  const key = evaluationKey({ weightsSha256: o.model.weightsSha256, config: o.config, evaluator: o.evaluator.name, rows: o.evaluator.rows, seed });
  return storedRun({ experiment: o.experiment, resultsDir: o.resultsDir, key, label: o.label, force: o.force, log: o.log }, async (resultsDir) => {
    const provenance = collectProvenance();
    const startedAt = new Date().toISOString();
    const t0 = performance.now();
    const result = await o.evaluator.evaluate(o.encoder);
    const wallSeconds = (performance.now() - t0) / 1000;
    const file = writeEvaluationRecord({
      experiment: o.experiment,
      resultsDir,
      startedAt,
      wallSeconds,
      seed,
      config: o.config,
      model: portableModelIdentity(o.model),
      evaluator: { name: o.evaluator.name, rows: o.evaluator.rows },
      result,
      provenance,
      paper: o.paper,
      paperNote: o.paperNote,
      details: { runKey: key, label: o.label, ...o.details },
    });
    return { file, status: 'evaluated', card: { recipe: o.config, recipeName: o.label }, message: `evaluated in ${wallSeconds.toFixed(1)} s` };
  });
}
