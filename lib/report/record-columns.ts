/**
 * A run record (./run-record.ts) as one flat row of named columns, as the results reader puts it in
 * a data frame: nested objects become dotted names (`config.objective.name`, `data.test.rows`), each
 * metric keeps its own name (`test_spearman`), and the columns that say *which configuration* ran
 * are told apart from those that say *which run* it was (seed, run id, time, machine).
 *
 * Seeds of one configuration are the rows that agree on every configuration column: the
 * experiment, the model and its weights, the data identities, and every config field except the
 * seed (`config.seed`, `config.resolved.seed`) and whether the run was resumed
 * (`config.resumedFrom`: a resumed run is the same run, bit for bit on cpu).
 *
 * Arrays (e.g. `betas`) become one JSON string cell, so two configurations compare by value.
 * Missing fields are null (never undefined), so grouping treats "absent" as one value.
 */
import type { RunRecord } from './run-record.js';

export type ColumnValue = string | number | boolean | null;

/** Columns every row has, in this order, before the flattened ones. */
export const RUN_COLUMNS = ['experiment', 'runId', 'seed', 'startedAt', 'wallSeconds', 'file', 'hasPredictions'] as const;

/** Config fields that vary between seeds of one configuration (not part of its identity). */
export const PER_RUN_CONFIG_COLUMNS: readonly string[] = ['config.seed', 'config.resolved.seed', 'config.resumedFrom'];

/** Provenance fields kept as columns (where and with what a run ran; not part of a configuration). */
export const PROVENANCE_COLUMNS: readonly string[] = ['gitCommit', 'gitDirty', 'backend', 'device', 'node', 'platform'];

/**
 * Flattens `value` into `out` under `prefix`: objects recurse with dotted names, arrays and other
 * leaves become one cell (arrays as JSON), undefined is left out.
 */
export function flattenInto(value: unknown, prefix: string, out: Record<string, ColumnValue>): void {
  if (value === undefined) return;
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    out[prefix] = value;
    return;
  }
  if (Array.isArray(value)) {
    out[prefix] = JSON.stringify(value);
    return;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) out[prefix] = '{}';
    for (const [k, v] of entries) flattenInto(v, prefix ? `${prefix}.${k}` : k, out);
    return;
  }
  out[prefix] = String(value);
}

/** `flattenInto` into a fresh object. */
export function flatten(value: unknown, prefix = ''): Record<string, ColumnValue> {
  const out: Record<string, ColumnValue> = {};
  flattenInto(value, prefix, out);
  return out;
}

/**
 * The data identities by split: `data.<split>.id`, `.rows`, `.sha256`; a split listed more than
 * once (several test sets) numbers its entries from the second on: `data.test.2.id`.
 */
function dataColumns(data: RunRecord['data'], out: Record<string, ColumnValue>): void {
  const seen = new Map<string, number>();
  for (const d of data) {
    const k = (seen.get(d.split) ?? 0) + 1;
    seen.set(d.split, k);
    const prefix = k === 1 ? `data.${d.split}` : `data.${d.split}.${k}`;
    out[`${prefix}.id`] = d.id;
    out[`${prefix}.rows`] = d.rows;
    if (d.sha256 !== undefined) out[`${prefix}.sha256`] = d.sha256;
  }
}

export interface RecordRow {
  /** Every column of the row (run, model, config, data, provenance, metrics, paper). */
  values: Record<string, ColumnValue>;
  /** The metric columns of this row, by metric name. */
  metrics: string[];
}

/**
 * One run as a flat row. `file` is how the row names its record (e.g. `train-stsb/<run-id>.json`).
 * A metric whose name is also a run column is kept as `metrics.<name>`, so nothing is overwritten.
 */
export function recordRow(record: RunRecord, file: string, hasPredictions: boolean): RecordRow {
  const v: Record<string, ColumnValue> = {
    experiment: record.experiment,
    runId: record.runId,
    seed: record.seed,
    startedAt: record.startedAt,
    wallSeconds: typeof record.wallSeconds === 'number' ? record.wallSeconds : null,
    file,
    hasPredictions,
  };
  v['model.id'] = record.model.id;
  v['model.commit'] = record.model.commit ?? null;
  v['model.weightsSha256'] = record.model.weightsSha256 ?? null;
  flattenInto(record.config, 'config', v);
  dataColumns(record.data, v);
  for (const k of PROVENANCE_COLUMNS) {
    const p = (record.provenance as unknown as Record<string, unknown> | undefined)?.[k];
    v[`provenance.${k}`] = p === undefined ? null : (p as ColumnValue);
  }
  const metrics: string[] = [];
  for (const [name, value] of Object.entries(record.metrics)) {
    const column = name in v ? `metrics.${name}` : name;
    v[column] = typeof value === 'number' ? value : null;
    metrics.push(column);
  }
  for (const [name, cell] of Object.entries(record.paper ?? {})) v[`paper.${name}`] = cell.value;
  return { values: v, metrics };
}

/** Whether a column names part of a configuration (see the file comment). */
export function isConfigurationColumn(column: string): boolean {
  if (PER_RUN_CONFIG_COLUMNS.includes(column)) return false;
  return column === 'experiment' || column.startsWith('model.') || column.startsWith('config.') || column.startsWith('data.');
}
