/**
 * Reads results folders (`results/<experiment>/<run-id>.json`, ./run-record.ts) into a data frame
 * (an arquero table): one row per run, its columns as ./record-columns.ts names them (experiment,
 * runId, seed, model, every config field flattened, data identities, provenance, each metric,
 * the paper's value per metric), with the records kept whole beside it for drill-down, each with
 * its `<run-id>.predictions.json` sidecar (./training-record.ts) when it has one.
 *
 * Bad files do not stop the rest: a file that is not JSON (truncated by a crash, a merge conflict),
 * JSON that is not a run record (a foreign file), or a sidecar that does not belong to its record
 * is listed in `skipped` with its path, the line where known, and why. Subfolders (`runs/`
 * checkpoints) and non-JSON files are not read.
 *
 * Why arquero: pure JavaScript (installs from the npm registry alone, here, in CI and on a user's
 * machine, and runs in tslab), maintained (UW Data), with the verbs a results table needs
 * (groupby/rollup with mean, sample stdev, count; filter; join) and no native code.
 */
import * as aq from 'arquero';
import type { ColumnTable } from 'arquero';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { resolveResultsDir } from '../config.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import { RUN_COLUMNS, isConfigurationColumn, recordRow, type ColumnValue } from './record-columns.js';
import type { RunRecord } from './run-record.js';
import type { PredictionsFile } from './training-record.js';

const SIDECAR_SUFFIX = '.predictions.json';

/** One run: its record as written, its file, and its predictions sidecar when it has one. */
export interface LoadedRun {
  record: RunRecord;
  /** Path of the record's file. */
  file: string;
  predictions?: PredictionsFile;
  /** Path of the predictions sidecar (present when `predictions` is). */
  predictionsFile?: string;
}

/** A file the reader did not load, and why. */
export interface SkippedFile {
  file: string;
  /** 1-based line of a JSON syntax error, when the parser says where. */
  line?: number;
  reason: string;
}

export interface ResultsFrame {
  /** One row per run, in `runs` order (experiment, then start time, then run id). */
  table: ColumnTable;
  /** The records behind the rows, same order. */
  runs: LoadedRun[];
  skipped: SkippedFile[];
  /** Columns holding metrics (ρ × 100 where the papers print it so). */
  metricColumns: string[];
  /** Columns that identify a configuration: group by these to aggregate seeds. */
  configurationColumns: string[];
}

export interface ReadResultsOptions {
  /** Default: ANGLE_RESULTS_DIR or results/. */
  resultsDir?: string;
  /** Which experiment folders; default every folder of `resultsDir` that holds a .json file. */
  experiments?: string | readonly string[];
}

/** "path:line: reason", as an error would name it. */
export function describeSkipped(s: SkippedFile): string {
  return `${s.file}${s.line !== undefined ? `:${s.line}` : ''}: ${s.reason}`;
}

function experimentFolders(resultsDir: string): string[] {
  if (!existsSync(resultsDir)) return [];
  return readdirSync(resultsDir)
    .filter((e) => statSync(join(resultsDir, e)).isDirectory())
    .filter((e) => readdirSync(join(resultsDir, e)).some((f) => f.endsWith('.json')))
    .sort();
}

/** JSON.parse, or a skip naming the line of the syntax error when the message gives a position. */
function parseJson(file: string): { value: unknown } | SkippedFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return { file, reason: `cannot be read: ${(e as Error).message}` };
  }
  if (text.trim() === '') return { file, reason: 'empty file, expected a JSON object' };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    const message = (e as Error).message;
    const position = /at position (\d+)/.exec(message);
    const line = position ? text.slice(0, Number(position[1])).split('\n').length : /end of JSON input/.test(message) ? text.split('\n').length : undefined;
    return { file, ...(line !== undefined ? { line } : {}), reason: `not valid JSON (${message}); truncated or not a results file` };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why `v` is not a run record, or undefined when it is one. */
export function runRecordProblem(v: unknown): string | undefined {
  const expected = 'expected a run record (an object with experiment, runId, seed, config, data, model, metrics)';
  if (!isObject(v)) return `${Array.isArray(v) ? 'a JSON array' : `a JSON ${v === null ? 'null' : typeof v}`}: ${expected}`;
  const missing: string[] = [];
  const need = (key: string, ok: (x: unknown) => boolean, what: string) => {
    if (!ok(v[key])) missing.push(`'${key}' (${what})`);
  };
  need('experiment', (x) => typeof x === 'string', 'a string');
  need('runId', (x) => typeof x === 'string', 'a string');
  need('startedAt', (x) => typeof x === 'string', 'a string');
  need('seed', (x) => typeof x === 'number', 'a number');
  need('config', isObject, 'an object');
  need('data', Array.isArray, 'an array');
  need('model', (x) => isObject(x) && typeof x.id === 'string', 'an object with an id');
  need('metrics', isObject, 'an object of numbers');
  const required = ['experiment', 'runId', 'startedAt', 'seed', 'config', 'data', 'model', 'metrics'];
  if (required.every((k) => !(k in v))) {
    const keys = Object.keys(v);
    return `a JSON object with none of the fields of a run record (its keys: ${keys.length ? keys.slice(0, 8).join(', ') + (keys.length > 8 ? ', …' : '') : 'none'}): ${expected}`;
  }
  if (missing.length > 0) return `not a run record: missing or mistyped ${missing.join(', ')}`;
  for (const [k, m] of Object.entries(v.metrics as Record<string, unknown>)) {
    if (typeof m !== 'number' && m !== null) return `not a run record: metrics.${k} is ${JSON.stringify(m)}, expected a number`;
  }
  for (const [i, d] of (v.data as unknown[]).entries()) {
    if (!isObject(d) || typeof d.id !== 'string' || typeof d.split !== 'string' || typeof d.rows !== 'number') {
      return `not a run record: data[${i}] is not {id, split, rows}`;
    }
  }
  return undefined;
}

/** Why a parsed sidecar does not fit its record, or undefined when it does. */
function sidecarProblem(v: unknown, runId: string): string | undefined {
  if (!isObject(v)) return 'not a predictions sidecar: expected an object with runId, predictions and gold';
  if (v.runId !== runId) return `a predictions sidecar of run '${String(v.runId)}' beside the record of run '${runId}'`;
  for (const k of ['predictions', 'gold'] as const) {
    const a = v[k];
    if (!Array.isArray(a)) return `not a predictions sidecar: '${k}' is not an array`;
    const bad = a.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
    if (bad >= 0) return `${k}[${bad}] is ${JSON.stringify(a[bad])}, expected a finite number`;
  }
  const [p, g] = [v.predictions as number[], v.gold as number[]];
  if (p.length !== g.length) return `${p.length} predictions for ${g.length} gold values`;
  if (p.length === 0) return 'no predictions';
  return undefined;
}

/**
 * One record file and its sidecar, for a caller that names the file (a run card): a file that is
 * not a run record is an error naming it; a sidecar that does not fit is too.
 */
export function loadRun(file: string): LoadedRun {
  if (file.endsWith(SIDECAR_SUFFIX)) throw new InputError('a predictions sidecar, not a run record (give its <run-id>.json)', { file });
  if (!file.endsWith('.json')) throw new InputError('expected a run record file (<run-id>.json)', { file });
  const parsed = parseJson(file);
  if (!('value' in parsed)) throw new InputError(parsed.reason, { file, ...(parsed.line !== undefined ? { line: parsed.line } : {}) });
  const problem = runRecordProblem(parsed.value);
  if (problem) throw new InputError(problem, { file });
  const record = parsed.value as RunRecord;
  const sideFile = file.replace(/\.json$/, SIDECAR_SUFFIX);
  if (!existsSync(sideFile)) return { record, file };
  const side = parseJson(sideFile);
  if (!('value' in side)) throw new InputError(side.reason, { file: sideFile, ...(side.line !== undefined ? { line: side.line } : {}) });
  const why = sidecarProblem(side.value, record.runId);
  if (why) throw new InputError(why, { file: sideFile });
  return { record, file, predictions: side.value as PredictionsFile, predictionsFile: sideFile };
}

/** Reads one experiment folder's records and sidecars. */
function readExperiment(dir: string, runs: LoadedRun[], skipped: SkippedFile[]): void {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && statSync(join(dir, f)).isFile())
    .sort();
  const sidecars = new Set(files.filter((f) => f.endsWith(SIDECAR_SUFFIX)));
  const claimed = new Set<string>();
  for (const f of files) {
    if (sidecars.has(f)) continue;
    const file = join(dir, f);
    const parsed = parseJson(file);
    if (!('value' in parsed)) {
      skipped.push(parsed);
      continue;
    }
    const problem = runRecordProblem(parsed.value);
    if (problem) {
      skipped.push({ file, reason: problem });
      continue;
    }
    const record = parsed.value as RunRecord;
    const run: LoadedRun = { record, file };
    const sidecarName = f.replace(/\.json$/, SIDECAR_SUFFIX);
    if (sidecars.has(sidecarName)) {
      claimed.add(sidecarName);
      const sideFile = join(dir, sidecarName);
      const side = parseJson(sideFile);
      if (!('value' in side)) skipped.push(side);
      else {
        const why = sidecarProblem(side.value, record.runId);
        if (why) skipped.push({ file: sideFile, reason: why });
        else {
          run.predictions = side.value as PredictionsFile;
          run.predictionsFile = sideFile;
        }
      }
    }
    runs.push(run);
  }
  for (const s of sidecars) {
    if (!claimed.has(s)) skipped.push({ file: join(dir, s), reason: `a predictions sidecar without its record ${s.replace(SIDECAR_SUFFIX, '.json')}` });
  }
}

/**
 * Reads the results of one or more experiments into a frame. An experiment folder that does not
 * exist is an error listing those that do; bad files inside one are skipped and listed.
 */
export function readResults(options: ReadResultsOptions = {}): ResultsFrame {
  const resultsDir = resolveResultsDir(options.resultsDir);
  const available = experimentFolders(resultsDir);
  const wanted = options.experiments === undefined ? available : typeof options.experiments === 'string' ? [options.experiments] : [...options.experiments];
  const runs: LoadedRun[] = [];
  const skipped: SkippedFile[] = [];
  for (const e of wanted) {
    const dir = join(resultsDir, e);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UnknownNameError('experiment', e, available, { file: resultsDir });
    readExperiment(dir, runs, skipped);
  }
  runs.sort((a, b) => cmp(a.record.experiment, b.record.experiment) || cmp(a.record.startedAt, b.record.startedAt) || cmp(a.record.runId, b.record.runId));
  return frameOfRuns(runs, skipped, resultsDir);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The frame of runs already loaded (e.g. a selection of another frame's runs). */
export function frameOfRuns(runs: readonly LoadedRun[], skipped: readonly SkippedFile[] = [], resultsDir?: string): ResultsFrame {
  const rows = runs.map((r) => recordRow(r.record, fileLabel(r.file, resultsDir), r.predictions !== undefined));
  // Columns: the union over rows, first-seen order within each kind, so every row has every column.
  const names: string[] = [...RUN_COLUMNS];
  const seen = new Set<string>(names);
  const metricColumns: string[] = [];
  for (const row of rows) {
    for (const k of Object.keys(row.values)) {
      if (seen.has(k)) continue;
      seen.add(k);
      if (row.metrics.includes(k)) metricColumns.push(k);
      else names.push(k);
    }
  }
  const paper = names.filter((n) => n.startsWith('paper.'));
  const ordered = [...names.filter((n) => !n.startsWith('paper.')), ...metricColumns, ...paper];
  const columns: Record<string, ColumnValue[]> = {};
  for (const n of ordered) columns[n] = rows.map((r) => (r.values[n] === undefined ? null : r.values[n]!));
  return {
    table: aq.table(columns, ordered),
    runs: [...runs],
    skipped: [...skipped],
    metricColumns,
    configurationColumns: ordered.filter(isConfigurationColumn),
  };
}

/** A record's file as the frame names it: relative to the results folder when inside it. */
function fileLabel(file: string, resultsDir?: string): string {
  if (resultsDir) {
    const prefix = join(resultsDir, '/');
    if (file.startsWith(prefix)) return file.slice(prefix.length).split('\\').join('/');
  }
  return basename(file);
}

/** One run by id (and experiment, when ids repeat across experiments). */
export function findRun(frame: ResultsFrame, runId: string, experiment?: string): LoadedRun {
  const hits = frame.runs.filter((r) => r.record.runId === runId && (experiment === undefined || r.record.experiment === experiment));
  if (hits.length === 0) throw new UnknownNameError('run', experiment ? `${experiment}/${runId}` : runId, frame.runs.map((r) => `${r.record.experiment}/${r.record.runId}`));
  if (hits.length > 1) throw new InputError(`run id '${runId}' is in several experiments (${hits.map((h) => h.record.experiment).join(', ')}); pass the experiment`);
  return hits[0]!;
}
