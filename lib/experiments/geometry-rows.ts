/**
 * The embedding-geometry notebook (06) as one plan (./plan.ts): the training rows it draws paths of
 * (AnglE Table 4's rows, trained with the alignment/uniformity probe), then evaluation rows
 * (./plan-evaluation.ts) that measure each model's geometry (./geometry-measure.ts) — one per
 * training row, measuring the best dev checkpoint of each of its runs once it trained, and one per
 * model entry of the parameter cell. Under the rehearsal preset the plan asks each entry's row to
 * rehearse its encoding of the STS set; a training row's runs are rehearsed as trainings (no
 * checkpoint exists to measure). The measurements are recomputed whenever the notebook runs (they
 * take seconds per model and keep the per-pair cosines the figures draw, which no record holds).
 *
 * After `plan.run()`, `geometryOf(plan)` gives what the figures and tables read: every model
 * measured (trained runs first, in the rows' order), those that could not be opened here, and the
 * trained runs with the entries they were measured as.
 */
import { join } from 'node:path';
import type { StsSet } from '../data/sts.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { ModelEntry } from './evaluation-models.js';
import { measureEntryGeometry, rehearseEntryGeometry, type GeometryMeasurement } from './geometry-measure.js';
import type { EvaluationContext, EvaluationOutcome, RehearsalContext, RehearsedEvaluation, RowEvaluation, TrainedRun } from './plan-evaluation.js';
import type { Plan, PlanRow } from './plan.js';

export interface GeometryRowOptions {
  /** The STS set whose pairs give Figure 5's cosines (STS-B test). */
  set?: StsSet;
  /** Alignment and uniformity on a fixed sample (the same probe the training rows track). */
  probe?: Evaluator;
  goldEdges: readonly number[];
  /** Why the rows cannot run here (the set is missing); every geometry row says so instead. */
  unavailable?: string;
}

/** One model measured, or (no `measurement`) one that could not be opened here. */
export interface GeometryResult {
  entry: ModelEntry;
  measurement?: GeometryMeasurement;
}

function measureOptions(o: GeometryRowOptions): { set: StsSet; probe: Evaluator; goldEdges: readonly number[] } {
  if (!o.set || !o.probe) throw new Error('geometry rows: no STS set or probe (the row should have been unavailable)');
  return { set: o.set, probe: o.probe, goldEdges: o.goldEdges };
}

/** A model entry of the parameter cell: its geometry. */
export class EntryGeometryEvaluation implements RowEvaluation {
  readonly kind = 'geometry';
  readonly recorded = false;

  constructor(
    readonly entry: ModelEntry,
    private readonly o: GeometryRowOptions,
  ) {}

  get model(): string {
    return this.entry.model;
  }

  get summary(): string {
    return `cosines of the STS set by gold bucket and alignment/uniformity of ${this.entry.model}`;
  }

  get identity(): string {
    return JSON.stringify({ kind: this.kind, entry: this.entry, probe: this.o.probe?.name, edges: this.o.goldEdges });
  }

  async run(ctx: EvaluationContext): Promise<EvaluationOutcome> {
    const measurement = await measureEntryGeometry(this.entry, measureOptions(this.o), { workDir: join(ctx.resultsDir, 'released-models') });
    const result: GeometryResult[] = [{ entry: this.entry, ...(measurement ? { measurement } : {}) }];
    return { runs: [], result, ...(measurement ? {} : { why: `${this.entry.model} could not be opened here (needs the Hub)` }) };
  }

  async rehearse(ctx: RehearsalContext): Promise<RehearsedEvaluation> {
    const row = await rehearseEntryGeometry(this.entry, { set: measureOptions(this.o).set, notebook: ctx.notebook, resultsDir: ctx.resultsDir });
    const result: GeometryResult[] = [{ entry: this.entry }];
    return { rows: [row], result };
  }
}

/** The model entry a training run is measured as: its best dev checkpoint, with the pooling it trained. */
export function trainedGeometryEntry(resultsDir: string, experiment: string, label: string, t: TrainedRun): ModelEntry {
  return { label: `${label}, seed ${t.seed}`, model: `${resultsDir}/${experiment}/runs/${t.run.key}/best`, pooling: String(t.run.run.record.config.pooling ?? 'cls') };
}

/** A training row of the same plan: the geometry of each of its runs' best checkpoints. */
export class TrainedGeometryEvaluation implements RowEvaluation {
  readonly kind = 'geometry';
  readonly recorded = false;

  constructor(
    /** The training row (an earlier row of the same plan). */
    readonly training: PlanRow,
    /** What the tables call its runs ("AnglE (all objectives)"; ", seed N" is added). */
    readonly label: string,
    private readonly o: GeometryRowOptions,
  ) {}

  get model(): string {
    return `the best dev checkpoints of '${this.training.row}'`;
  }

  get summary(): string {
    return `cosines of the STS set by gold bucket and alignment/uniformity of ${this.model}`;
  }

  get identity(): string {
    return JSON.stringify({ kind: this.kind, training: this.training.row, label: this.label, probe: this.o.probe?.name, edges: this.o.goldEdges });
  }

  async run(ctx: EvaluationContext): Promise<EvaluationOutcome> {
    const result: GeometryResult[] = [];
    for (const t of ctx.trainedRuns(this.training)) {
      const entry = trainedGeometryEntry(ctx.resultsDir, ctx.experiment, this.label, t);
      const measurement = await measureEntryGeometry(entry, measureOptions(this.o));
      result.push({ entry, ...(measurement ? { measurement } : {}) });
    }
    return { runs: [], result, ...(result.length === 0 ? { why: `'${this.training.row}' has no finished run` } : {}) };
  }

  /** The training row's runs are rehearsed as trainings; no checkpoint exists to measure. */
  async rehearse(): Promise<RehearsedEvaluation> {
    return { rows: [], result: [] };
  }
}

/**
 * The notebook's plan rows: `training` (each trained as it is), one geometry row per training row
 * (`labels` by the training row's label), then one per model entry. With `o.unavailable` every
 * geometry row says why instead of measuring.
 */
export function geometryRows(training: readonly PlanRow[], labels: Readonly<Record<string, string>>, entries: readonly ModelEntry[], o: GeometryRowOptions): PlanRow[] {
  const blocked = o.unavailable ? { unavailable: o.unavailable } : {};
  return [
    ...training,
    ...training.map((t) => ({ row: `${labels[t.row] ?? t.row}: geometry`, cells: [], offTable: true, ...blocked, evaluation: new TrainedGeometryEvaluation(t, labels[t.row] ?? t.row, o) })),
    ...entries.map((e) => ({ row: `${e.label}: geometry`, cells: [], offTable: true, ...blocked, evaluation: new EntryGeometryEvaluation(e, o) })),
  ];
}

/** A trained run of the plan with the entry it is measured as. */
export interface TrainedGeometry {
  row: PlanRow;
  seed: number;
  run: TrainedRun['run'];
  entry: ModelEntry;
}

/**
 * After `plan.run()`: every model measured (in the rows' order), those that could not be opened
 * (`skipped`; under the rehearsal preset every entry, as none is measured), and the training rows'
 * finished runs with their entries (whether or not they were measured).
 */
export function geometryOf(plan: Plan): { measured: GeometryMeasurement[]; skipped: ModelEntry[]; trained: TrainedGeometry[] } {
  const measured: GeometryMeasurement[] = [];
  const skipped: ModelEntry[] = [];
  const trained: TrainedGeometry[] = [];
  const byEntry = new Map<string, ModelEntry>();
  for (const row of plan.rows) {
    const ev = row.evaluation;
    if (!(ev instanceof EntryGeometryEvaluation) && !(ev instanceof TrainedGeometryEvaluation)) continue;
    if (ev instanceof TrainedGeometryEvaluation) {
      for (const r of plan.runs.filter((x) => x.row === ev.training && x.run)) {
        const entry = trainedGeometryEntry(plan.resultsDir, plan.o.experiment, ev.label, { seed: r.seed, run: r.run! });
        byEntry.set(entry.model, entry);
        trained.push({ row: ev.training, seed: r.seed, run: r.run!, entry });
      }
    }
    const results = (plan.outcomeOf(row)?.result as GeometryResult[] | undefined) ?? [];
    for (const x of results) {
      // A trained run's measurement names the same entry object as `trained` (the figures pair them by identity).
      const entry = byEntry.get(x.entry.model) ?? x.entry;
      if (x.measurement) measured.push({ ...x.measurement, entry });
      else skipped.push(entry);
    }
  }
  return { measured, skipped, trained };
}
