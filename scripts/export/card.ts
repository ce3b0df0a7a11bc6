/**
 * The model card's content and the MTEB result files of an export, taken from run records
 * (lib/embed/model-card.ts formats them): the training record of a run (its recipe as recorded,
 * data, selected weights, metrics), the evaluation records of the exported weights
 * (./run-source.ts `evaluationsOf`: SentEval STS and the MTEB protocol beside it), and the MTEB
 * files those evaluations wrote (`details.mtebDir`), each checked against its record: a file whose
 * main score is not the one its record holds was rewritten by another evaluation since, and is
 * left out with a note rather than shipped under the wrong record.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { CardRecord, CardResult, CardTraining } from '../../lib/embed/model-card.js';
import type { LoadedRun } from '../../lib/report/results-reader.js';

/** The card's view of a record: its file relative to the results folder, id, date, provenance. */
export function cardRecord(run: LoadedRun, resultsDir: string): CardRecord {
  const r = run.record;
  const p = r.provenance;
  return {
    file: relative(resultsDir, run.file).split(sep).join('/'),
    runId: r.runId,
    finishedAt: r.finishedAt,
    provenance: { gitCommit: p.gitCommit, gitDirty: p.gitDirty === 'unknown' ? null : p.gitDirty, node: p.node, platform: p.platform, device: p.device, backend: p.backend, packages: p.packages },
  };
}

/** `config` flattened to dotted keys, values as JSON (strings bare). */
export function flattenConfig(config: Record<string, unknown>, prefix = ''): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(config)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) out.push(...flattenConfig(v as Record<string, unknown>, key));
    else out.push([key, typeof v === 'string' ? v : JSON.stringify(v)]);
  }
  return out;
}

/** The training section of a run's card. */
export function cardTraining(run: LoadedRun, resultsDir: string): CardTraining {
  const r = run.record;
  const d = (r.details ?? {}) as { recipe?: string; testWeights?: string; log?: unknown[] };
  return {
    record: cardRecord(run, resultsDir),
    experiment: r.experiment,
    ...(d.recipe ? { recipe: d.recipe } : {}),
    startedFrom: { id: r.model.id, ...(r.model.weightsSha256 ? { weightsSha256: r.model.weightsSha256 } : {}) },
    seed: r.seed,
    config: flattenConfig(r.config),
    data: r.data.map((x) => ({ id: x.id, split: x.split, rows: x.rows, ...(x.sha256 ? { sha256: x.sha256 } : {}) })),
    ...(d.testWeights ? { selected: d.testWeights } : {}),
    ...(Array.isArray(d.log) ? { steps: d.log.length } : {}),
    wallSeconds: r.wallSeconds,
  };
}

/** What a metric was measured on, in words, from the record's data identities. */
function measuredOn(run: LoadedRun, metric: string): string {
  const r = run.record;
  const split = /^(best_)?dev_/.test(metric) ? 'dev' : /^test_/.test(metric) ? 'test' : undefined;
  const protocol = typeof r.config.protocol === 'string' ? r.config.protocol : undefined;
  if (split) return r.data.filter((x) => x.split === split).map((x) => x.id).join(', ') || split;
  if (metric.startsWith('mteb_')) return `MTEB protocol, ${metric.slice(5)}`;
  if (metric === 'final_loss') return "the training objective's loss at the last step";
  return protocol ? `${protocol}: ${metric}` : metric;
}

/** One result row per metric of each record. */
export function cardResults(runs: readonly LoadedRun[], resultsDir: string): CardResult[] {
  return runs.flatMap((run) => Object.entries(run.record.metrics).map(([metric, value]) => ({ metric, value, on: measuredOn(run, metric), record: cardRecord(run, resultsDir) })));
}

export interface MtebShipment {
  /** Path inside the export folder → file contents. */
  files: Record<string, Uint8Array>;
  /** The card's MTEB table rows. */
  rows: Array<{ path: string; task: string; mainScore: number; record: CardRecord }>;
  /** Files left out, and why. */
  skipped: string[];
}

/** The MTEB files the evaluation records wrote, checked against them; see the file comment. */
export function mtebShipment(evaluations: readonly LoadedRun[], resultsDir: string): MtebShipment {
  const out: MtebShipment = { files: {}, rows: [], skipped: [] };
  for (const run of evaluations) {
    const d = (run.record.details ?? {}) as { mtebDir?: unknown; mteb?: Array<{ task: string; scores: { main_score: number } }> };
    if (typeof d.mtebDir !== 'string' || !Array.isArray(d.mteb)) continue;
    const dir = join(resultsDir, d.mtebDir);
    if (!existsSync(dir)) {
      out.skipped.push(`${d.mtebDir}: named by ${run.record.runId}, not found`);
      continue;
    }
    // <experiment>/mteb/<model>/<revision> → mteb/<model>/<revision> in the export, MTEB's layout.
    const inside = d.mtebDir.split(/[\\/]/).slice(2).join('/');
    const expected = new Map(d.mteb.map((m) => [m.task, Math.round(m.scores.main_score * 1e6) / 1e6]));
    let shipped = 0;
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.json') && x !== 'model_meta.json').sort()) {
      const bytes = readFileSync(join(dir, f));
      const path = `mteb/${inside}/${f}`;
      const task = JSON.parse(bytes.toString('utf8')) as { task_name?: string; scores?: { test?: Array<{ main_score?: number }> } };
      const main = task.scores?.test?.[0]?.main_score;
      const want = task.task_name ? expected.get(task.task_name) : undefined;
      if (typeof main !== 'number' || want === undefined || Math.abs(main - want) > 1e-6) {
        out.skipped.push(`${d.mtebDir}/${f}: main_score ${main} is not the ${want ?? '(absent)'} its record ${run.record.runId} holds (rewritten by a later evaluation)`);
        continue;
      }
      out.files[path] = bytes;
      out.rows.push({ path, task: task.task_name!, mainScore: main, record: cardRecord(run, resultsDir) });
      shipped++;
    }
    if (shipped > 0 && existsSync(join(dir, 'model_meta.json'))) out.files[`mteb/${inside}/model_meta.json`] = readFileSync(join(dir, 'model_meta.json'));
  }
  return out;
}
