/**
 * The models the training notebooks left behind, as entries an evaluation notebook can evaluate:
 * every finished run of an experiment (results/<experiment>/<run-id>.json with `details.runKey`,
 * written by ./run-recipe.ts) whose best-dev checkpoint folder results/<experiment>/runs/<key>/best
 * still exists, labelled by its table row and seed, with the pooling it was trained with. Runs whose
 * folder was deleted are left out (the record alone holds no weights).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { resolveResultsDir } from '../config.js';
import { readResults } from '../report/results-reader.js';
import type { ModelEntry } from './evaluation-models.js';

export interface TrainedModelQuery {
  /** Keep only these table rows (the record's `details.tableRow`, e.g. 'AnglE-BERT-all'). */
  rows?: readonly string[];
  /** Keep only runs of these tasks' data (the record's training set id contains it, e.g. 'STSBenchmark'). */
  trainedOn?: string;
  resultsDir?: string;
}

/** The best/ folders of finished runs of `experiments`, newest last; see the file comment. */
export function trainedModelEntries(experiments: string | readonly string[], q: TrainedModelQuery = {}): ModelEntry[] {
  const resultsDir = resolveResultsDir(q.resultsDir);
  const list = typeof experiments === 'string' ? [experiments] : experiments;
  const present = list.filter((e) => existsSync(join(resultsDir, e)));
  if (present.length === 0) return [];
  const frame = readResults({ resultsDir, experiments: present });
  const out: ModelEntry[] = [];
  for (const run of frame.runs) {
    const r = run.record;
    const d = (r.details ?? {}) as { runKey?: string; tableRow?: string; recipe?: string };
    if (!d.runKey) continue;
    if (q.rows && !(d.tableRow !== undefined && q.rows.includes(d.tableRow))) continue;
    if (q.trainedOn && !r.data.some((x) => x.split === 'train' && x.id.includes(q.trainedOn!))) continue;
    const best = join(resultsDir, r.experiment, 'runs', d.runKey, 'best');
    if (!existsSync(join(best, 'config.json'))) continue;
    const pooling = typeof r.config.pooling === 'string' ? r.config.pooling : undefined;
    const test = r.metrics.test_spearman;
    out.push({
      label: `${r.experiment}: ${d.tableRow ?? d.recipe ?? r.runId} (seed ${r.seed})`,
      model: best,
      ...(pooling ? { pooling } : {}),
      note: `best dev checkpoint of run ${r.runId}${typeof test === 'number' ? `, STS test ρ×100 ${test.toFixed(2)}` : ''}`,
    });
  }
  return out;
}
