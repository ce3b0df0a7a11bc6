/**
 * Result files in MTEB's layout, so MTEB's tooling (mteb.load_results, the leaderboard's results
 * repository) reads scores computed here (lib/eval/mteb-sts.ts):
 *
 *   <root>/<model name, "/" -> "__", " " -> "_">/<revision>/<TaskName>.json   one TaskResult per task
 *   <root>/<model name ...>/<revision>/model_meta.json                         the model's ModelMeta
 *
 * A TaskResult (embeddings-benchmark/mteb, mteb/results/task_result.py, as `TaskResult.to_disk`
 * writes it) is
 *
 *   { dataset_revision, task_name, mteb_version, scores: { <split>: [ { <metric>: number, ...,
 *     main_score, hf_subset, languages } ] }, evaluation_time, kg_co2_emissions, date, evaluation_phases }
 *
 * with scores rounded to 6 decimals; an STS task's metrics are pearson, spearman, cosine_*,
 * manhattan_*, euclidean_* (mteb/abstasks/sts.py STSMetrics), its main_score cosine_spearman, its
 * subset "default" and languages ["eng-Latn"]. `mteb_version` is null: the numbers were not computed
 * by mteb (MTEB reads a null version as a current-format file). A model without a Hub revision
 * goes under MTEB's own placeholder `no_revision_available`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { MtebStsTaskResult } from '../eval/mteb-sts.js';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';

export const MTEB_NO_REVISION = 'no_revision_available';

export interface MtebModelInfo {
  /** The model's name as MTEB shows it (a Hub id, or a name of our own for a model trained here). */
  name: string;
  /** Hub commit, or another stable identity of the weights (default MTEB's placeholder). */
  revision?: string;
  /** Parameters, embedding width and token limit, where known (model_meta.json). */
  nParameters?: number;
  embedDim?: number;
  maxTokens?: number;
}

/** MTEB's ModelMeta.model_name_as_path: "/" -> "__", " " -> "_". */
export function mtebModelPath(name: string): string {
  return name.replace(/\//g, '__').replace(/ /g, '_');
}

/** Rounds as TaskResult.to_disk does (round(v, 6)). */
function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}

/** The TaskResult object MTEB writes for one STS task's test split. */
export function mtebTaskResult(r: MtebStsTaskResult, date = new Date()): Record<string, unknown> {
  const s = r.scores;
  const scores: Record<string, unknown> = {};
  for (const k of ['pearson', 'spearman', 'cosine_pearson', 'cosine_spearman', 'manhattan_pearson', 'manhattan_spearman', 'euclidean_pearson', 'euclidean_spearman'] as const) {
    if (!Number.isFinite(s[k])) throw new InputError(`MTEB task ${r.task.name}: ${k} is ${s[k]}, not a number (a constant embedding?)`);
    scores[k] = round6(s[k]);
  }
  scores.main_score = round6(s.main_score);
  scores.hf_subset = 'default';
  scores.languages = ['eng-Latn'];
  return {
    dataset_revision: r.task.revision,
    task_name: r.task.name,
    mteb_version: null,
    scores: { test: [scores] },
    evaluation_time: r.seconds,
    kg_co2_emissions: null,
    date: date.getTime() / 1000,
    evaluation_phases: null,
  };
}

/** The ModelMeta fields MTEB's results folders carry for a model (model_meta.json). */
export function mtebModelMeta(m: MtebModelInfo): Record<string, unknown> {
  return {
    name: m.name,
    revision: m.revision ?? MTEB_NO_REVISION,
    release_date: null,
    languages: ['eng-Latn'],
    n_parameters: m.nParameters ?? null,
    memory_usage: null,
    max_tokens: m.maxTokens ?? null,
    embed_dim: m.embedDim ?? null,
    license: null,
    open_source: null,
    similarity_fn_name: 'cosine',
    framework: [],
    loader: null,
  };
}

/**
 * Writes one `<TaskName>.json` per result and `model_meta.json` under `root` in MTEB's layout
 * (atomically; a rerun replaces the same files, as MTEB does). Returns the folder.
 */
export function writeMtebResults(root: string, model: MtebModelInfo, results: readonly MtebStsTaskResult[], date = new Date()): string {
  if (!model.name.trim()) throw new InputError('an MTEB results folder needs a model name');
  const revision = model.revision ?? MTEB_NO_REVISION;
  if (/[\\/]/.test(revision) || revision === '..' || revision === '.') throw new InputError(`MTEB revision '${revision}' must be one path segment (a commit hash or a name)`);
  const dir = join(root, mtebModelPath(model.name), revision);
  mkdirSync(dir, { recursive: true });
  const seen = new Set<string>();
  for (const r of results) {
    if (seen.has(r.task.name)) throw new InputError(`MTEB task ${r.task.name} is given twice`);
    seen.add(r.task.name);
    writeFileAtomicSync(join(dir, `${r.task.name}.json`), JSON.stringify(mtebTaskResult(r, date), null, 2) + '\n');
  }
  writeFileAtomicSync(join(dir, 'model_meta.json'), JSON.stringify(mtebModelMeta({ ...model, revision }), null, 2) + '\n');
  return dir;
}
