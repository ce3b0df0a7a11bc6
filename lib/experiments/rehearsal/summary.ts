/**
 * The rehearsal's output, one row per planned run of every notebook — training or evaluation —
 * in `<results>/summary.json` (the rehearsal preset's results folder, results/rehearsal/) with a
 * rendered `summary.md` beside it:
 *
 *   { "rows": [ { "notebook", "run", "model", "batch", "length", "accumulation", "stepSeconds",
 *                 "peakBytes", "projectedPeakBytesH100", "projectedHoursH100", "fits80GB",
 *                 "status": "ok" | "failed" | "does-not-fit", "why", … } ] }
 *
 * Notebooks run one after another, each in its own kernel, and a notebook may rehearse in several
 * cells (a plan's training, then its evaluations): each call adds its rows, replacing rows of the
 * same notebook and run, with an atomic rewrite; `clearRehearsalRows` forgets a notebook's rows
 * before it is rehearsed again (the notebook runner does it), so none are left from an older run.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../util/atomic-write.js';
import { provenanceLines, rehearsalProvenance, type RehearsalProvenance } from './provenance.js';
import { InputError } from '../../util/errors.js';
import { tableToMarkdown, type SimpleTable } from '../../util/table.js';

export interface RehearsalRow {
  /** The notebook (its experiment name), e.g. '02-non-transfer-sts'. */
  notebook: string;
  /** The run: a table row and recipe, or an evaluation. */
  run: string;
  /** What kind of work: a training step (full, LoRA) or encoding. */
  kind: 'train' | 'lora' | 'encode';
  /** The model (Hub id) and how it was instantiated here. */
  model: string;
  instantiated: string;
  /** Examples per micro-batch (pairs, triplets, sentences). */
  batch: number;
  /** Tokens per sequence of the rehearsed (longest) micro-batch. */
  length: number;
  /** Micro-batches per optimiser step. */
  accumulation: number;
  /** Where the data came from: 'real', or 'synthetic (…)' where the set is not on this machine. */
  data: string;
  /** Wall seconds of one step (one micro-batch for encoding) on this machine's backend; null when shape-only. */
  stepSeconds: number | null;
  /** The backend the step ran on. */
  backend: string;
  /** Peak bytes of live tensors during the step, measured here. */
  peakBytes: number;
  /** The run's projected H100 peak: the larger of the two below where a training row has them. */
  projectedPeakBytesH100: number;
  /**
   * Training rows: the projected H100 peak while the model is built and prepared for training
   * (weights as instantiated, a LoRA row's frozen base stored in 16 or 4 bits), and the peak of
   * the optimiser step after it (peak reset in between). A LoRA row whose load peak is far above
   * its step peak held the float32 base before quantising it.
   */
  projectedLoadPeakBytesH100?: number;
  projectedStepPeakBytesH100?: number;
  projectedHoursH100: number;
  /** How the hours were projected. */
  timeBasis: string;
  fits80GB: boolean;
  status: 'ok' | 'failed' | 'does-not-fit';
  /** Why a row failed or does not fit, and what will make it fit; empty for an ok row. */
  why: string;
  /** Where the row was produced (stamped by `writeRehearsalRows` when absent). */
  provenance?: RehearsalProvenance;
}

export interface RehearsalSummary {
  rows: RehearsalRow[];
}

export const REHEARSAL_SUMMARY = 'summary.json';

/** The summary in `dir` (an empty one when there is none yet). */
export function readRehearsalSummary(dir: string): RehearsalSummary {
  const file = join(dir, REHEARSAL_SUMMARY);
  if (!existsSync(file)) return { rows: [] };
  let s: unknown;
  try {
    s = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`not valid JSON: ${(e as Error).message}`, { file });
  }
  if (!s || typeof s !== 'object' || !Array.isArray((s as RehearsalSummary).rows)) throw new InputError("expected { rows: [...] }", { file });
  return s as RehearsalSummary;
}

const GB = (b: number) => `${(b / 1e9).toFixed(1)} GB`;
const hours = (h: number) => (h < 0.1 ? `${(h * 60).toFixed(1)} min` : `${h.toFixed(1)} h`);

/**
 * The projected wall-clock hours of a notebook's runs spread over `gpus` GPUs, one run per GPU at a
 * time (`npm run notebooks -- --gpus`, or a Slurm array with that many GPUs free): each training row
 * at each seed and each evaluation once is a job, placed longest first on the GPU that frees first
 * (LPT list scheduling, within 4/3 of the best order). Every job counted independent: an evaluation
 * after training (notebook 01's suite) really waits for its training, so where that matters the
 * figure is a little low; a single run longer than the rest bounds it from below whatever `gpus` is.
 */
export function parallelWallClockHours(rows: readonly RehearsalRow[], seeds: number, gpus: number): number {
  const jobs = rows.flatMap((r) => Array<number>(r.kind === 'encode' ? 1 : seeds).fill(r.projectedHoursH100)).sort((a, b) => b - a);
  const load = Array<number>(Math.max(1, gpus)).fill(0);
  for (const h of jobs) {
    const i = load.indexOf(Math.min(...load));
    load[i]! += h;
  }
  return Math.max(...load);
}

/**
 * One line per notebook: its planned runs, the largest projected H100 peak, and its projected
 * hours — one seed, and with training repeated over `seeds` seeds (the paper preset's three;
 * evaluations run once). Each notebook alone: a run another notebook already finished is reused
 * and costs nothing, so the sum over notebooks is an upper bound.
 */
export function rehearsalNotebookTable(rows: readonly RehearsalRow[], seeds = 3): SimpleTable {
  const notebooks = [...new Set(rows.map((r) => r.notebook))];
  return {
    caption: 'Per notebook: projected onto one H100 80 GB; wall-clock with its runs spread over 1, 4 and 8 such GPUs',
    columns: ['notebook', 'runs (training / evaluation)', 'largest H100 peak', 'hours, one seed', `hours, ${seeds} seeds`, `wall-clock, ${seeds} seeds, on 1 / 4 / 8 GPUs`, 'not ok'],
    rows: notebooks.map((n) => {
      const mine = rows.filter((r) => r.notebook === n);
      const training = mine.filter((r) => r.kind !== 'encode');
      const one = mine.reduce((a, r) => a + r.projectedHoursH100, 0);
      const all = one + (seeds - 1) * training.reduce((a, r) => a + r.projectedHoursH100, 0);
      const bad = mine.filter((r) => r.status !== 'ok');
      const wall = [1, 4, 8].map((g) => hours(parallelWallClockHours(mine, seeds, g))).join(' / ');
      return [n, `${training.length} / ${mine.length - training.length}`, GB(Math.max(0, ...mine.map((r) => r.projectedPeakBytesH100))), hours(one), hours(all), wall, bad.length ? bad.map((r) => `${r.run}: ${r.status}`).join('; ') : ''];
    }),
  };
}

/** The rows as a table (what summary.md and the notebooks show). */
export function rehearsalTable(rows: readonly RehearsalRow[], caption = 'Rehearsal: every planned run at the papers\' shapes, projected onto one H100 80 GB'): SimpleTable {
  return {
    caption,
    columns: ['notebook', 'run', 'model', 'batch × length × accumulation', 'data', 'step here', 'peak here', 'H100 peak (projected)', 'of it: loading / step', 'H100 hours (projected)', 'status', 'why'],
    rows: rows.map((r) => [
      r.notebook,
      r.run,
      `${r.model} (${r.instantiated})`,
      `${r.batch} × ${r.length} × ${r.accumulation}`,
      r.data,
      r.stepSeconds === null ? `shape-only (${r.backend})` : `${r.stepSeconds.toFixed(1)} s (${r.backend})`,
      GB(r.peakBytes),
      GB(r.projectedPeakBytesH100),
      r.projectedLoadPeakBytesH100 !== undefined && r.projectedStepPeakBytesH100 !== undefined ? `${GB(r.projectedLoadPeakBytesH100)} / ${GB(r.projectedStepPeakBytesH100)}` : '',
      hours(r.projectedHoursH100),
      r.status,
      r.why,
    ]),
    notes: [
      'Loading / step: a training row\'s peak while its model is built and prepared for training (a LoRA row\'s frozen base stored in 16 or 4 bits), and the peak of the optimiser step after it; the H100 peak is the larger.',
      'H100 peak: bytes measured on the shape-only backend that mirrors cuda, calibrated once against the device peak on record (BERT-base 128×64, 41.3 GiB); H100 hours: the whole run at the H100 speed on record (BERT-base) or its FLOPs at that MFU (other models) — projections, not measurements.',
    ],
  };
}

function render(dir: string, all: readonly RehearsalRow[]): void {
  mkdirSync(dir, { recursive: true });
  const failed = all.filter((r) => r.status === 'failed').length;
  const tooBig = all.filter((r) => r.status === 'does-not-fit').length;
  writeFileAtomicSync(join(dir, REHEARSAL_SUMMARY), `${JSON.stringify({ rows: all }, null, 1)}\n`);
  writeFileAtomicSync(
    join(dir, 'summary.md'),
    `# Rehearsal\n\n${all.length} planned runs of ${new Set(all.map((r) => r.notebook)).size} notebooks: ${all.length - failed - tooBig} ok, ${tooBig} do not fit one H100 80 GB, ${failed} failed.\n\n${tableToMarkdown(rehearsalNotebookTable(all))}\n\n${tableToMarkdown(rehearsalTable(all))}\n\nProvenance (each row's is in summary.json):\n\n${provenanceLines(all).map((l) => `- ${l}`).join('\n')}\n`,
  );
}

/** Adds `rows` of `notebook` to the summary in `dir` (replacing rows of the same run) and rewrites summary.md. */
export function writeRehearsalRows(dir: string, notebook: string, rows: readonly RehearsalRow[]): string {
  const runs = new Set(rows.map((r) => r.run));
  const provenance = rehearsalProvenance();
  rows = rows.map((r) => (r.provenance ? r : { ...r, provenance }));
  const kept = readRehearsalSummary(dir).rows.filter((r) => !(r.notebook === notebook && runs.has(r.run)));
  const all = [...kept, ...rows].sort((a, b) => a.notebook.localeCompare(b.notebook));
  render(dir, all);
  // The notebook's results folder exists once it rehearsed, as after a run with no records (a table read from it is empty, not an unknown experiment).
  mkdirSync(join(dir, notebook), { recursive: true });
  return join(dir, REHEARSAL_SUMMARY);
}

/** Forgets the rows of `notebooks` in the summary in `dir` (before they are rehearsed again). */
export function clearRehearsalRows(dir: string, notebooks: readonly string[]): void {
  if (!existsSync(join(dir, REHEARSAL_SUMMARY))) return;
  render(dir, readRehearsalSummary(dir).rows.filter((r) => !notebooks.includes(r.notebook)));
}
