/**
 * The results file of a run that evaluates without training (a prompt-based decoder's
 * embeddings, a released checkpoint): the same run record as a training run's (./run-record.ts),
 * so the results reader, side-by-side tables and run cards treat both alike.
 *
 * - metrics: the evaluator's, as `test_<metric>` × 100 (as ./training-record.ts writes a test
 *   evaluation), e.g. `test_STS12`, `test_avg`, `test_spearman`;
 * - config: how the embeddings were made (encoder settings: template, pooling, max length …);
 * - data: the evaluation set (split `test`);
 * - a predictions sidecar `<run-id>.predictions.json` when the evaluator returned per-item
 *   predictions (written first, the record last, both atomically: a record always has its sidecar).
 */
import { existsSync } from 'node:fs';
import type { EvaluationResult } from '../eval/evaluator.js';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import type { Provenance } from './provenance.js';
import { newRunId, runRecordPath, writeRunRecord, type ModelIdentity, type PaperCell, type RunRecord } from './run-record.js';
import { predictionsPath, type PredictionsFile } from './training-record.js';

export interface EvaluationRecordOptions {
  experiment: string;
  resultsDir?: string;
  /** Default: a new id from `startedAt`. */
  runId?: string;
  startedAt: string;
  wallSeconds: number;
  /** The seed of whatever was random (0 for a deterministic evaluation). */
  seed: number;
  /** How the embeddings were made (encoder settings). */
  config: Record<string, unknown>;
  model: ModelIdentity;
  evaluator: { name: string; rows: number };
  result: EvaluationResult;
  provenance: Provenance;
  paper?: Record<string, PaperCell>;
  paperNote?: string;
  details?: Record<string, unknown>;
}

/** The run record of an evaluation (no training). */
export function evaluationRunRecord(o: EvaluationRecordOptions): RunRecord {
  const metrics: Record<string, number> = {};
  for (const [k, v] of Object.entries(o.result.metrics)) {
    if (!Number.isFinite(v)) throw new InputError(`evaluation '${o.evaluator.name}' returned ${k} = ${v}, expected a finite number`);
    metrics[`test_${k}`] = v * 100;
  }
  const runId = o.runId ?? newRunId(new Date(o.startedAt));
  return {
    experiment: o.experiment,
    runId,
    startedAt: o.startedAt,
    finishedAt: new Date().toISOString(),
    wallSeconds: o.wallSeconds,
    seed: o.seed,
    config: o.config,
    data: [{ id: o.evaluator.name, split: 'test', rows: o.evaluator.rows }],
    model: o.model,
    provenance: o.provenance,
    metrics,
    ...(o.paper ? { paper: o.paper } : { paperNote: o.paperNote ?? 'no paper cell was given for this run' }),
    details: {
      kind: 'evaluation',
      ...(o.result.predictions ? { predictionsFile: `${runId}.predictions.json` } : {}),
      ...o.details,
    },
  };
}

/** Writes the record (and its predictions sidecar) of an evaluation; returns the record's path. */
export function writeEvaluationRecord(o: EvaluationRecordOptions): string {
  const record = evaluationRunRecord(o);
  const path = runRecordPath(record.experiment, record.runId, o.resultsDir);
  if (existsSync(path)) throw new InputError(`a results file for run '${record.runId}' already exists; runs never overwrite each other`, { file: path });
  const { predictions, gold } = o.result;
  if (predictions && gold) {
    if (predictions.length !== gold.length) throw new InputError(`evaluation '${o.evaluator.name}' returned ${predictions.length} predictions for ${gold.length} gold values`);
    const side: PredictionsFile = { runId: record.runId, evaluator: o.evaluator.name, weights: 'as loaded (no training)', predictions: [...predictions], gold: [...gold] };
    writeFileAtomicSync(predictionsPath(record.experiment, record.runId, o.resultsDir), JSON.stringify(side) + '\n');
  }
  return writeRunRecord(record, o.resultsDir);
}
