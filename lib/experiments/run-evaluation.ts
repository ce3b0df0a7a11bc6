/**
 * An evaluation without training, run the way a notebook needs it (as ./run-recipe.ts runs a
 * training): identified by a key — a hash of the model's weights, the encoder settings, the
 * evaluator and the seed — so that running the notebook again reuses the finished evaluation
 * (its record in results/<experiment>/ carries the key as `details.runKey`) and `force`
 * evaluates again (a new record beside the old one). A finished evaluation gets its record
 * (lib/report/evaluation-record.ts, with the predictions sidecar) and a run card.
 *
 * The caller owns the model and the encoder (one loaded decoder serves several rows: plain
 * prompts, in-context demonstrations …); only their identity goes into the key.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { envConfig } from '../config.js';
import type { SentenceEncoder } from '../embed/types.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { LoadedModel } from '../models/types.js';
import { writeEvaluationRecord } from '../report/evaluation-record.js';
import { collectProvenance } from '../report/provenance.js';
import { loadRun, type LoadedRun } from '../report/results-reader.js';
import { writeRunCard } from '../report/run-card.js';
import type { PaperCell } from '../report/run-record.js';
import { portableModelIdentity } from '../report/training-record.js';
import { finishedRun } from './run-recipe.js';

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

export interface EvaluationRun {
  key: string;
  status: 'reused' | 'evaluated';
  run: LoadedRun;
}

/** The key of an evaluation: a hash of what decides its numbers. */
export function evaluationKey(parts: { weightsSha256: string; config: Record<string, unknown>; evaluator: string; rows: number; seed: number }): string {
  const identity = { kind: 'evaluation', weights: parts.weightsSha256, config: parts.config, evaluator: parts.evaluator, rows: parts.rows, seed: parts.seed };
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
}

/** Evaluates (or reuses a finished evaluation of) an encoder; see the file comment. */
export async function runEvaluation(o: RunEvaluationOptions): Promise<EvaluationRun> {
  const resultsDir = resolve(o.resultsDir ?? envConfig().resultsDir);
  const log = o.log ?? (() => {});
  const seed = o.seed ?? 0;
  const key = evaluationKey({ weightsSha256: o.model.weightsSha256, config: o.config, evaluator: o.evaluator.name, rows: o.evaluator.rows, seed });
  if (!o.force) {
    const done = finishedRun(resultsDir, o.experiment, key);
    if (done) {
      log(`${o.label}: reused run ${done.record.runId} (key ${key}; FORCE to evaluate again)`);
      return { key, status: 'reused', run: done };
    }
  }
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
  writeRunCard(file, { recipe: o.config, recipeName: o.label });
  log(`${o.label}: evaluated in ${wallSeconds.toFixed(1)} s (run ${loadRun(file).record.runId})`);
  return { key, status: 'evaluated', run: loadRun(file) };
}
