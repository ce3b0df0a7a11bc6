/**
 * The second kind of plan row (./plan.ts): an evaluation without training — a model, how it is
 * encoded, and what evaluates it — instead of a recipe. The plan runs it where it runs a training
 * row, through the same run store (./run-evaluation.ts: a finished evaluation is reused, `force`
 * evaluates again), and fills the row's cells from its records as it does a training row's; under
 * the rehearsal preset the plan asks the row to rehearse instead (the plan decides that once, from
 * its preset: no evaluation reads the environment to find out).
 *
 * A row's evaluation is an object with the two things the plan calls, so each kind of evaluation
 * (a prompt row of PromptEOL's Table 1, a demonstration search, …) keeps its own logic in one file
 * and the plan stays the one way through: it hands every evaluation the same context — the
 * experiment, the results directory (resolved once, by the plan), the row's paper numbers and
 * details — and one model slot, so rows over the same model load it once, one model at a time.
 */
import type { LoadedModel } from '../models/types.js';
import type { PaperCell } from '../report/run-record.js';
import type { LoadedRun } from '../report/results-reader.js';
import type { RehearsalRow } from './rehearsal/summary.js';
import type { RecipeRun } from './run-recipe.js';

/** The model in this process, loaded once for the rows that evaluate it in a row; none: why not. */
export type LoadedOrWhy = { loaded: LoadedModel; why?: undefined } | { loaded?: undefined; why: string };

/** What the plan hands a row's evaluation. */
export interface EvaluationContext {
  /** The plan's experiment: the records go to <resultsDir>/<experiment>/ unless the evaluation names its own. */
  experiment: string;
  /** The plan's results directory, absolute. */
  resultsDir: string;
  dataDir?: string;
  force?: boolean;
  log?: (line: string) => void;
  /** The plan's details and the row's (table, row label, group), for the records. */
  details: Record<string, unknown>;
  /** The paper's numbers of the row's cells, by record metric (empty for an off-table row). */
  paper: Record<string, PaperCell>;
  /**
   * Loads `id` in this process, or says why it cannot be loaded here; the plan keeps one model
   * loaded and disposes it when a row asks for another (and after its last row). `why` is logged.
   */
  load(id: string, why?: string): Promise<LoadedOrWhy>;
  /**
   * The finished training runs (one per seed) of a training row of the same plan that ran before
   * this row, e.g. to evaluate their selected weights; `row` is that plan row (matched as the same object).
   */
  trainedRuns(row: object): TrainedRun[];
}

/** A training run of the plan, as an evaluation row reads it. */
export interface TrainedRun {
  seed: number;
  run: RecipeRun;
}

/** What the plan hands a row's evaluation under the rehearsal preset. */
export interface RehearsalContext {
  /** The rehearsal summary's notebook (the plan's experiment). */
  notebook: string;
  resultsDir: string;
  dataDir?: string;
  log?: (line: string) => void;
}

/** One record of an evaluation row, with what it is called. */
export interface EvaluationRecord {
  label: string;
  run: LoadedRun;
  status: string;
}

/** What came of a row's evaluation. */
export interface EvaluationOutcome {
  /** The records that fill the row's cells. */
  runs: EvaluationRecord[];
  /** Why the row has no record (the whole reason: what to start, what is missing). */
  why?: string;
  /** The same in a few words, for a table cell (default: `why`). */
  short?: string;
  /** What the evaluation found beyond its records (e.g. a demonstration search's outcome). */
  result?: unknown;
}

/** What a rehearsed evaluation gives: its rows of the rehearsal summary, or why it is not rehearsed; `result` as in `EvaluationOutcome`. */
export interface RehearsedEvaluation {
  rows: RehearsalRow[];
  why?: string;
  result?: unknown;
}

/** The evaluation of a plan row (see the file comment). */
export interface RowEvaluation {
  /** The kind of evaluation ('prompteol', 'icl-search', …): what a notebook's tables select rows by. */
  readonly kind: string;
  /** The model evaluated (a Hub id or folder), for the tables. */
  readonly model: string;
  /** What is evaluated, in a few words (the cost table). */
  readonly summary: string;
  /** Two rows whose evaluations have the same identity run once. */
  readonly identity: string;
  /** false: nothing is recorded, the evaluation runs again whenever the plan runs (it takes seconds); default: records through the run store, reused. */
  readonly recorded?: boolean;
  /** Evaluates (or reuses the finished evaluation), never throwing for a model or endpoint that is not here: the outcome says why. */
  run(ctx: EvaluationContext): Promise<EvaluationOutcome>;
  /** Under the rehearsal preset: its encoding at the paper's shapes (./rehearsal/encode.ts), or why it is not rehearsed. */
  rehearse(ctx: RehearsalContext): Promise<RehearsedEvaluation>;
}

/**
 * One model loaded at a time (see `EvaluationContext.load`): `loader` loads a model or says why
 * not; asking for another id disposes the one held first.
 */
export class ModelSlot {
  private held?: { id: string; result: LoadedOrWhy };

  constructor(
    private readonly loader: (id: string) => Promise<LoadedOrWhy>,
    private readonly log?: (line: string) => void,
  ) {}

  async load(id: string, why?: string): Promise<LoadedOrWhy> {
    if (this.held?.id === id) return this.held.result;
    this.dispose();
    this.log?.(`loading ${id}${why ? ` (${why})` : ''}`);
    this.held = { id, result: await this.loader(id) };
    return this.held.result;
  }

  dispose(): void {
    this.held?.result.loaded?.model.dispose();
    this.held = undefined;
  }
}
