/**
 * AnglE §4.5's Flickr30k retrieval as plan rows (./plan-evaluation.ts): one evaluation row per
 * model entry (./evaluation-models.ts), run by ./flickr30k-run.ts through the run store, or under
 * the rehearsal preset its captions' encoding rehearsed instead. A row whose entry names a paper
 * row (`paperRow`) fills that row's cell with its strict accuracy; the others are off the table.
 * After `plan.run()`, `flickr30kRunsOf(plan)` gives every entry's run (or why none) in the rows'
 * order: what ./flickr30k-tables.ts shows.
 */
import type { ChunkedSearchOptions } from '../eval/chunked-search.js';
import type { PaperTable } from '../paper/types.js';
import type { ModelEntry } from './evaluation-models.js';
import { rehearseFlickr30k, runFlickr30k, type Flickr30kRun } from './flickr30k-run.js';
import type { EvaluationContext, EvaluationOutcome, RehearsalContext, RehearsedEvaluation, RowEvaluation } from './plan-evaluation.js';
import type { Plan, PlanRow } from './plan.js';

export interface Flickr30kRowOptions {
  /** recall@k of the other captions (default 1, 5, 10). */
  ks?: readonly number[];
  /** Chunk and block sizes of the device search. */
  search?: Omit<ChunkedSearchOptions, 'exclude' | 'onChunk'>;
}

/** One model entry's Flickr30k test retrieval. */
export class Flickr30kEvaluation implements RowEvaluation {
  readonly kind = 'flickr30k';

  constructor(
    readonly entry: ModelEntry,
    private readonly o: Flickr30kRowOptions = {},
  ) {}

  get model(): string {
    return this.entry.model;
  }

  get summary(): string {
    return `Flickr30k test caption retrieval of ${this.entry.model}${this.entry.pooling ? ` (${this.entry.pooling})` : ''}`;
  }

  get identity(): string {
    return JSON.stringify({ kind: this.kind, entry: this.entry, o: this.o });
  }

  private outcome(r: Flickr30kRun): EvaluationOutcome {
    return { runs: r.run ? [{ label: this.entry.label, run: r.run, status: r.status }] : [], ...(r.reason ? { why: r.reason } : {}), result: r };
  }

  async run(ctx: EvaluationContext): Promise<EvaluationOutcome> {
    const paper = ctx.paper.test_strict_accuracy;
    const r = await runFlickr30k({ entry: this.entry, experiment: ctx.experiment, resultsDir: ctx.resultsDir, dataDir: ctx.dataDir, ks: this.o.ks, search: this.o.search, force: ctx.force, ...(paper ? { paper } : {}), log: ctx.log });
    return this.outcome(r);
  }

  async rehearse(ctx: RehearsalContext): Promise<RehearsedEvaluation> {
    const r = await rehearseFlickr30k({ entry: this.entry, experiment: ctx.notebook, resultsDir: ctx.resultsDir, dataDir: ctx.dataDir });
    return { rows: [r.row], result: r.run };
  }
}

/**
 * The rows of `entries` over the paper's Flickr30k numbers (`table`): an entry naming a paper row
 * is that row (its cell and printed number), the others are off the table; with `unavailable`
 * (the data is not here) every row says so instead of running.
 */
export function flickr30kRows(entries: readonly ModelEntry[], table: PaperTable, o: Flickr30kRowOptions & { unavailable?: string } = {}): PlanRow[] {
  return entries.map((entry) => {
    const n = entry.paperRow !== undefined ? table.numbers.find((x) => x.row === entry.paperRow) : undefined;
    const cells = n ? [{ column: n.column, metric: 'test_strict_accuracy', paper: { value: n.value, source: `${table.file}, §4.5` } }] : [];
    return { row: n ? n.row : entry.label, table: table.table, cells, ...(n ? {} : { offTable: true }), ...(o.unavailable ? { unavailable: o.unavailable } : {}), evaluation: new Flickr30kEvaluation(entry, o) };
  });
}

/** Every entry's run after `plan.run()`, in the rows' order; a row that did not run is 'unavailable' with why. */
export function flickr30kRunsOf(plan: Plan): Flickr30kRun[] {
  return plan.rows.flatMap((row) => {
    if (!(row.evaluation instanceof Flickr30kEvaluation)) return [];
    const r = plan.outcomeOf(row)?.result as Flickr30kRun | undefined;
    const skipped = plan.runs.find((x) => x.row === row && x.skipped)?.skipped;
    return [r ?? { entry: row.evaluation.entry, status: 'unavailable' as const, reason: skipped ?? 'not run' }];
  });
}
