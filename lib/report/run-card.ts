/**
 * A run card: a Markdown page beside each run record (`<run-id>.md` next to `<run-id>.json`) that
 * tells a reader what the run was without opening the JSON — what sentence-transformers' model
 * cards give their users (model, training data and its size, loss, hyperparameters, evaluation
 * results, framework versions), for one run of this project:
 *
 * - what ran: task, objective (and loss weights), pooling, model id, commit and weights hash prefix;
 * - hyperparameters: those that differ from the recipe, "recipe" beside "this run" (the caller
 *   passes the recipe's configuration: lib/experiments is above this layer), or all of them when no
 *   recipe is given; the resolved schedule (steps, warmup);
 * - metrics against the paper's cell when the record has one, with the bootstrap interval of the
 *   test Spearman when the predictions sidecar holds it;
 * - data identity (id, split, rows, sha256 prefix), hardware and versions (provenance), wall time,
 *   and links to the record and its predictions sidecar.
 *
 * The card is derived from the record (never the other way round) and has no time of writing in
 * it, so rewriting an unchanged record's card gives the same bytes. Writes are atomic.
 */
import { basename, dirname, join } from 'node:path';
import { resolveResultsDir } from '../config.js';
import { writeFileAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import { tableToMarkdown, type SimpleTable, type TableValue } from '../util/table.js';
import { formatDuration, hashPrefix, signed } from './format-numbers.js';
import { flatten, type ColumnValue } from './record-columns.js';
import { loadRun, readResults, type LoadedRun, type SkippedFile } from './results-reader.js';
import type { RunRecord } from './run-record.js';
import type { SideBySideBootstrap } from './side-by-side.js';
import { formatWithInterval } from './statistics/mean-std.js';
import { DEFAULT_RESAMPLES } from './statistics/rank-bootstrap.js';
import { bootstrapSpearmanCI } from './statistics/spearman-bootstrap.js';

/** Fields the run record adds to the trainer's config (results, not settings). */
const RECORD_ONLY_CONFIG = ['resolved', 'resumedFrom', 'decayedParameters', 'trainableParameters', 'frozenParameters'];

/** The metric the predictions sidecar measures (the trainer's test evaluator, primary metric). */
const SIDECAR_METRIC = 'test_spearman';

export interface RunCardOptions {
  /**
   * The recipe's trainer configuration this run started from (e.g. lib/experiments recipe.config),
   * or a function giving it per record; nested keys compare by dotted name ('objective.loss.weights.ibn').
   */
  recipe?: Readonly<Record<string, unknown>> | ((record: RunRecord) => Readonly<Record<string, unknown>> | undefined);
  /** The recipe's name, shown in the card. */
  recipeName?: string | ((record: RunRecord) => string | undefined);
  /** One line naming the task (default: from the data identities). */
  task?: string;
  /** Bootstrap interval of the test Spearman (default 1000 resamples, seed 0, 95% BCa). */
  bootstrap?: SideBySideBootstrap;
}

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;
const md = (t: SimpleTable) => tableToMarkdown(t);
const valueText = (v: ColumnValue | undefined) => (v === undefined ? '— (default)' : v === null ? 'null' : String(v));

function settingsOf(config: Record<string, unknown>): Record<string, ColumnValue> {
  const rest = Object.fromEntries(Object.entries(config).filter(([k]) => !RECORD_ONLY_CONFIG.includes(k)));
  return flatten(rest);
}

function whatRan(r: RunRecord, task: string | undefined): SimpleTable {
  const c = r.config as Record<string, unknown>;
  const resolved = (c.resolved ?? {}) as Record<string, unknown>;
  const objective = c.objective as { name?: string; loss?: Record<string, unknown> } | undefined;
  const loss = objective?.loss;
  const lossParts: string[] = [];
  if (loss?.preset) lossParts.push(`preset ${String(loss.preset)}`);
  if (loss?.weights && typeof loss.weights === 'object') lossParts.push(`weights ${Object.entries(loss.weights).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const train = r.data.find((d) => d.split === 'train');
  const evals = r.data.filter((d) => d.split !== 'train').map((d) => `${d.id} (${d.split})`);
  const taskText = task ?? [train ? `trained on ${train.id}` : undefined, evals.length ? `evaluated on ${evals.join(', ')}` : undefined].filter(Boolean).join('; ');
  const rows: TableValue[][] = [
    ['task', taskText || '—'],
    ['objective', objective?.name ? `${objective.name}${lossParts.length ? ` (${lossParts.join('; ')})` : ''}` : '—'],
    ['pooling', String(c.pooling ?? resolved.pooling ?? '—')],
    ['model', code(r.model.id)],
    ...(r.model.commit ? [['model commit', code(r.model.commit)] as TableValue[]] : []),
    ['weights sha256', r.model.weightsSha256 ? code(hashPrefix(r.model.weightsSha256)) : '—'],
    ['seed', r.seed],
  ];
  return { columns: ['', 'this run'], rows };
}

function hyperparameters(r: RunRecord, recipe: Readonly<Record<string, unknown>> | undefined, recipeName: string | undefined): string {
  const run = settingsOf(r.config);
  const lines: string[] = [];
  if (recipe) {
    const base = settingsOf(recipe as Record<string, unknown>);
    const keys = [...new Set([...Object.keys(base), ...Object.keys(run)])];
    const differ = keys.filter((k) => JSON.stringify(base[k]) !== JSON.stringify(run[k]));
    lines.push(`Against the recipe${recipeName ? ` ${code(recipeName)}` : ''}: ${differ.length === 0 ? 'every setting as in the recipe.' : `${differ.length} of ${keys.length} settings differ ("— (default)": not set, the trainer's default).`}`);
    if (differ.length > 0) lines.push('', md({ columns: ['setting', 'recipe', 'this run'], rows: differ.map((k) => [code(k), valueText(base[k]), valueText(run[k])]) }));
  } else {
    lines.push('No recipe given: every setting of this run.', '', md({ columns: ['setting', 'this run'], rows: Object.entries(run).map(([k, v]) => [code(k), valueText(v)]) }));
  }
  const resolved = (r.config as Record<string, unknown>).resolved as Record<string, unknown> | undefined;
  if (resolved) {
    const sched = (resolved.schedule ?? {}) as Record<string, unknown>;
    const parts = [
      resolved.totalSteps !== undefined ? `${resolved.totalSteps} optimiser steps` : undefined,
      resolved.stepsPerEpoch !== undefined ? `${resolved.stepsPerEpoch} per epoch` : undefined,
      resolved.accumulation !== undefined ? `gradient accumulation ${resolved.accumulation}` : undefined,
      sched.name !== undefined ? `schedule ${sched.name}${sched.warmupSteps !== undefined ? ` with ${sched.warmupSteps} warmup steps` : ''}` : undefined,
    ].filter(Boolean);
    if (parts.length) lines.push('', `Resolved: ${parts.join(', ')}.`);
  }
  return lines.join('\n');
}

function metrics(run: LoadedRun, b: SideBySideBootstrap): string {
  const r = run.record;
  const hasPaper = r.paper !== undefined && Object.keys(r.paper).length > 0;
  let interval: string | undefined;
  const p = run.predictions;
  const testValue = r.metrics[SIDECAR_METRIC];
  let noInterval: string | undefined;
  if (p && typeof testValue === 'number') {
    let boot: ReturnType<typeof bootstrapSpearmanCI> | undefined;
    try {
      boot = bootstrapSpearmanCI(p.predictions, p.gold, { resamples: b.resamples ?? DEFAULT_RESAMPLES, seed: b.seed ?? 0, level: b.level ?? 0.95, method: b.method ?? 'bca', source: run.predictionsFile });
    } catch (e) {
      // A smoke run's few test pairs (e.g. 4: a resample of one repeated pair has no correlation)
      // have no interval; the card says so instead of failing the run whose record is written.
      if (!(e instanceof InputError)) throw e;
      // Without the sidecar's path: cards are committed, and carry no absolute path of this machine.
      const where = e.file ? `${e.file}${e.line !== undefined ? `:${e.line}` : ''}: ` : '';
      noInterval = e.message.slice(e.message.startsWith(where) ? where.length : 0).split('\n')[0];
    }
    // Only an interval of the number it stands beside.
    if (boot && Math.abs(boot.spearman * 100 - testValue) <= 1e-6 * Math.max(1, Math.abs(testValue))) {
      interval = `${formatWithInterval(boot.spearman, boot.ci, { scale: 100 })}, ${boot.resamples} resamples of ${boot.n} test pairs, seed ${boot.seed}`;
    }
  }
  const rows: TableValue[][] = Object.entries(r.metrics).map(([name, v]) => {
    const paper = r.paper?.[name];
    const value = typeof v === 'number' ? v.toFixed(2) : 'n/a';
    return [code(name), value, ...(hasPaper ? [paper ? String(paper.value) : '', paper && typeof v === 'number' ? signed(v - paper.value) : '', paper?.source ?? ''] : [])];
  });
  const lines = [md({ columns: ['metric', 'this run', ...(hasPaper ? ['paper', 'Δ (run − paper)', 'paper source'] : [])], rows })];
  lines.push('', 'Spearman ρ × 100 where the papers print it so; `final_loss` is the training loss of the last step.');
  if (interval) lines.push('', `Bootstrap interval of ${code(SIDECAR_METRIC)}: ${interval}.`);
  if (noInterval) lines.push('', `No bootstrap interval of ${code(SIDECAR_METRIC)}: ${noInterval}.`);
  if (!hasPaper) lines.push('', `No paper cell: ${r.paperNote ?? 'the record names none.'}`);
  return lines.join('\n');
}

function training(r: RunRecord): string | undefined {
  const d = (r.details ?? {}) as Record<string, unknown>;
  const log = Array.isArray(d.log) ? (d.log as { step?: number; loss?: number }[]) : [];
  const best = d.best as { metric?: string; value?: number; step?: number } | null | undefined;
  const parts: string[] = [];
  if (log.length) parts.push(`${log.length} logged steps; last loss ${typeof log[log.length - 1]?.loss === 'number' ? log[log.length - 1]!.loss!.toFixed(4) : 'n/a'}`);
  if (typeof d.tokensSeen === 'number') parts.push(`${d.tokensSeen.toLocaleString('en-US')} tokens seen`);
  if (best && typeof best.value === 'number') parts.push(`best dev ${best.metric} ${(best.value * 100).toFixed(2)} at step ${best.step}`);
  if (typeof d.testWeights === 'string') parts.push(`tested with ${d.testWeights}`);
  return parts.length ? parts.join('; ') + '.' : undefined;
}

function dataTable(r: RunRecord): string {
  return md({ columns: ['split', 'data', 'rows', 'sha256'], rows: r.data.map((d) => [d.split, d.id, d.rows, d.sha256 ? code(hashPrefix(d.sha256)) : '—']) });
}

function environment(r: RunRecord): string {
  const p = (r.provenance ?? {}) as unknown as Record<string, unknown>;
  const dirty = p.gitDirty === true ? ' (with uncommitted changes)' : p.gitDirty === 'unknown' ? ' (clean or not: unknown)' : '';
  const rows: TableValue[][] = [
    ['code', p.gitCommit ? `${code(String(p.gitCommit))}${dirty}` : '—'],
    ['backend', String(p.backend ?? '—')],
    ['device', String(p.device ?? '—')],
    ['cpu', String(p.cpu ?? '—')],
    ['memory', p.memoryGiB !== undefined ? `${p.memoryGiB} GiB` : '—'],
    ['platform', String(p.platform ?? '—')],
    ['node', String(p.node ?? '—')],
    ...Object.entries((p.packages ?? {}) as Record<string, string>).map(([k, v]) => [code(k), v] as TableValue[]),
  ];
  return md({ columns: ['', 'version / value'], rows });
}

function files(run: LoadedRun): string {
  const self = basename(run.file);
  const lines = [`- record: [${self}](${encodeURI(self)})`];
  if (run.predictions && run.predictionsFile) {
    const side = basename(run.predictionsFile);
    lines.push(`- per-pair test predictions: [${side}](${encodeURI(side)}) (${run.predictions.predictions.length} pairs of ${run.predictions.evaluator}, ${run.predictions.weights}): what a bootstrap interval or a paired comparison with another run needs`);
  } else {
    lines.push('- no predictions sidecar: this run has no per-pair test predictions (no interval, no paired comparison)');
  }
  return lines.join('\n');
}

/** The card of one run, as Markdown. */
export function runCardMarkdown(run: LoadedRun, options: RunCardOptions = {}): string {
  const r = run.record;
  const recipe = typeof options.recipe === 'function' ? options.recipe(r) : options.recipe;
  const recipeName = typeof options.recipeName === 'function' ? options.recipeName(r) : options.recipeName;
  const trainingLine = training(r);
  const sections = [
    `# Run ${r.runId}`,
    '',
    `Experiment ${code(r.experiment)} · seed ${r.seed} · started ${r.startedAt}${r.finishedAt ? ` · finished ${r.finishedAt}` : ''} · wall time ${formatDuration(r.wallSeconds)}`,
    '',
    `Written from ${code(basename(run.file))} by lib/report/run-card.ts; the record is the source of truth.`,
    '',
    '## What ran',
    '',
    md(whatRan(r, options.task)),
    '',
    '## Hyperparameters',
    '',
    hyperparameters(r, recipe, recipeName),
    '',
    '## Metrics',
    '',
    metrics(run, options.bootstrap ?? {}),
    ...(trainingLine ? ['', `Training: ${trainingLine}`] : []),
    '',
    '## Data',
    '',
    dataTable(r),
    '',
    '## Hardware and versions',
    '',
    environment(r),
    '',
    '## Files',
    '',
    files(run),
    '',
  ];
  return sections.join('\n');
}

/** The card's path beside its record: `<run-id>.md`. */
export function runCardPath(recordFile: string): string {
  if (!recordFile.endsWith('.json') || recordFile.endsWith('.predictions.json')) throw new InputError('expected a run record file (<run-id>.json)', { file: recordFile });
  return join(dirname(recordFile), basename(recordFile).replace(/\.json$/, '.md'));
}

/** Writes (or rewrites) the card of one record, atomically; returns its path. */
export function writeRunCard(run: LoadedRun | string, options: RunCardOptions = {}): string {
  const loaded = typeof run === 'string' ? loadRun(run) : run;
  const path = runCardPath(loaded.file);
  writeFileAtomicSync(path, runCardMarkdown(loaded, options));
  return path;
}

/**
 * (Re)writes the card of every record of an experiment folder. Files the reader skips (not run
 * records, truncated) get no card and are returned in `skipped`.
 */
export function writeRunCards(experiment: string, options: RunCardOptions & { resultsDir?: string } = {}): { written: string[]; skipped: SkippedFile[] } {
  const frame = readResults({ resultsDir: resolveResultsDir(options.resultsDir), experiments: experiment });
  return { written: frame.runs.map((r) => writeRunCard(r, options)), skipped: frame.skipped };
}
