/**
 * PromptEOL's evaluations without training as plan rows (./plan-evaluation.ts): a row of Table 1
 * (a decoder's prompt embeddings, plain or after a demonstration, on the SentEval STS suite) and a
 * model's demonstration search on STS-B dev (Figure 3, Table 4). Each runs where the model's route
 * sends it (./prompt-embedding-route.ts): in this process through the plan's model slot (rows of one
 * model share one load), through an OpenAI-compatible endpoint, or not at all with why; under the
 * rehearsal preset the plan asks each to rehearse its encoding instead. The encoders and the
 * searches themselves are ./prompt-evaluations.ts and ./icl-demonstration-search.ts.
 *
 * After `plan.run()`, `promptEolResults(plan)` gives each model of Tables 1 and 4 with its runs and
 * `iclSearchesOf(plan)` each model's search: what the routes, ICL and search tables read.
 */
import { promptFor, type Demonstration } from '../embed/prompt-encoder.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { DemonstrationCandidate } from '../llm/demonstration-set.js';
import { portableModelRef } from '../report/training-record.js';
import { rehearseIclSearch, searchIclDemonstrations, type IclSearch, type IclSearchOptions } from './icl-demonstration-search.js';
import type { EvaluationContext, EvaluationOutcome, RehearsalContext, RehearsedEvaluation, RowEvaluation } from './plan-evaluation.js';
import type { Plan, PlanRow } from './plan.js';
import type { PromptEmbeddingRoute } from './prompt-embedding-route.js';
import { evaluatePromptRows, evaluatePromptRowsThroughEndpoint, shortReason, type PromptModelResult, type PromptRow } from './prompt-evaluations.js';
import { rehearseEncoding, stsSuiteTexts } from './rehearsal/encode.js';
import type { PromptEolTable1Model } from './tables/prompteol.js';

/** A model of Tables 1 and 4 with where it is embedded. */
export type RoutedPromptModel = PromptEolTable1Model & { route: PromptEmbeddingRoute };

const NOT_REHEARSED_ENDPOINT = 'embedded by the serving engine, not in this process: not rehearsed';

/** The mark a stand-in's records carry (the smoke preset's tiny OPT for an OPT size). */
function standInOf(route: PromptEmbeddingRoute): string | undefined {
  return route.kind === 'in-process' && route.standInFor ? `the tiny random OPT (${portableModelRef(route.model)}) stands in for ${route.standInFor}` : undefined;
}

function where(route: PromptEmbeddingRoute): string {
  return route.kind === 'in-process' ? `in process: ${portableModelRef(route.model)}` : route.kind === 'endpoint' ? `endpoint ${route.baseURL}` : 'not run';
}

/** One row of Table 1 (or the off-table LLaMA rows): `row`'s prompt embeddings of `entry`'s model on `evaluator`. */
export class PromptRowEvaluation implements RowEvaluation {
  readonly kind = 'prompteol';

  constructor(
    readonly entry: RoutedPromptModel,
    readonly row: PromptRow,
    readonly evaluator: Evaluator,
    private readonly o: { batchSize?: number } = {},
  ) {}

  get model(): string {
    return this.entry.model;
  }

  get summary(): string {
    return `prompt embeddings on ${this.evaluator.name} (${this.evaluator.rows} pairs), ${where(this.entry.route)}`;
  }

  get identity(): string {
    return JSON.stringify({ kind: this.kind, model: this.entry.model, route: this.entry.route, demonstrations: this.row.demonstrations, evaluator: [this.evaluator.name, this.evaluator.rows], batchSize: this.o.batchSize });
  }

  async run(ctx: EvaluationContext): Promise<EvaluationOutcome> {
    const route = this.entry.route;
    if (route.kind === 'skipped') return { runs: [], why: route.why, short: route.short };
    const o = { evaluator: this.evaluator, experiment: ctx.experiment, resultsDir: ctx.resultsDir, force: ctx.force, log: ctx.log, details: ctx.details, batchSize: this.o.batchSize };
    if (route.kind === 'endpoint') {
      const r = await evaluatePromptRowsThroughEndpoint(route, [this.row], o);
      return { runs: r.runs, ...(r.why ? { why: r.why, short: shortReason(r.why) } : {}) };
    }
    const decoder = await ctx.load(route.model, `${this.entry.model}: ${route.why}`);
    if (!decoder.loaded) return { runs: [], why: decoder.why, short: shortReason(decoder.why) };
    const standIn = standInOf(route);
    return { runs: await evaluatePromptRows({ id: route.model, loaded: decoder.loaded }, [this.row], { ...o, ...(standIn ? { standIn, fitToContext: true } : {}) }) };
  }

  /** The row's encoding of the SentEval STS suite at its real shapes (an endpoint's model is not rehearsed: the serving engine embeds it). */
  async rehearse(ctx: RehearsalContext): Promise<RehearsedEvaluation> {
    const route = this.entry.route;
    if (route.kind === 'skipped') return { rows: [], why: route.short };
    if (route.kind === 'endpoint') return { rows: [], why: NOT_REHEARSED_ENDPOINT };
    const prompted = stsSuiteTexts(ctx.dataDir).map((t) => promptFor(t, { demonstrations: [...this.row.demonstrations], prepareText: 'prompteol' }));
    return { rows: [await rehearseEncoding({ notebook: ctx.notebook, run: `${this.row.label}: SentEval STS suite`, model: route.model, texts: prompted, batchSize: this.o.batchSize ?? 32, resultsDir: ctx.resultsDir })] };
  }
}

/** One model of Tables 1 and 4 and its search (or why there is none). */
export interface IclModelSearch extends PromptEolTable1Model {
  route: PromptEmbeddingRoute;
  search: IclSearch;
}

/** The search options a plan row fixes (the rest comes from the plan). */
export type IclSearchRowOptions = Pick<IclSearchOptions, 'pairs' | 'batchSize' | 'rehearsalCandidates'> & {
  /** The results folder of the search's records (default: the plan's experiment); hundreds of records are best kept apart from the tables'. */
  experiment?: string;
};

/** A model's demonstration search on STS-B dev (./icl-demonstration-search.ts) over `candidates`. */
export class IclSearchEvaluation implements RowEvaluation {
  readonly kind = 'icl-search';

  constructor(
    readonly entry: RoutedPromptModel,
    readonly candidates: readonly DemonstrationCandidate[],
    private readonly o: IclSearchRowOptions = {},
  ) {}

  get model(): string {
    return this.entry.model;
  }

  get label(): string {
    return this.entry.opt ? `OPT ${this.entry.size}` : this.entry.size;
  }

  get summary(): string {
    return `demonstration search over ${this.candidates.length} candidates on STS-B dev${this.o.pairs !== undefined ? ` (first ${this.o.pairs} pairs)` : ''}, ${where(this.entry.route)}`;
  }

  get identity(): string {
    return JSON.stringify({ kind: this.kind, model: this.entry.model, route: this.entry.route, candidates: this.candidates.map((c) => c.demonstration), o: this.o });
  }

  private options(ctx: { experiment: string; resultsDir: string; dataDir?: string; log?: (line: string) => void }, notebook: string, force?: boolean, details?: Record<string, unknown>): IclSearchOptions {
    const standIn = standInOf(this.entry.route);
    return {
      ...this.o,
      experiment: this.o.experiment ?? ctx.experiment,
      notebook,
      resultsDir: ctx.resultsDir,
      dataDir: ctx.dataDir,
      force,
      log: ctx.log,
      label: this.label,
      ...(details ? { details } : {}),
      ...(standIn ? { standIn, fitToContext: true } : {}),
    };
  }

  private outcome(search: IclSearch): EvaluationOutcome {
    const result: IclModelSearch = { ...this.entry, search };
    return { runs: [], result, ...(search.kind === 'not-run' ? { why: search.why } : {}) };
  }

  async run(ctx: EvaluationContext): Promise<EvaluationOutcome> {
    const route = this.entry.route;
    const notRun = (why: string) => this.outcome({ kind: 'not-run', label: this.label, model: this.entry.model, why });
    if (route.kind === 'skipped') return notRun(route.short);
    const o = this.options(ctx, ctx.experiment, ctx.force, ctx.details);
    if (route.kind === 'endpoint') return this.outcome(await searchIclDemonstrations({ id: route.model, endpoint: route.baseURL }, this.candidates, o));
    const decoder = await ctx.load(route.model, `${this.label}: ${route.why}`);
    if (!decoder.loaded) return notRun(decoder.why);
    return this.outcome(await searchIclDemonstrations({ id: route.model, loaded: decoder.loaded }, this.candidates, o));
  }

  async rehearse(ctx: RehearsalContext): Promise<RehearsedEvaluation> {
    const route = this.entry.route;
    const notRun = (why: string) => ({ ...this.outcome({ kind: 'not-run', label: this.label, model: this.entry.model, why }), rows: [] });
    if (route.kind === 'skipped') return notRun(route.short);
    if (route.kind === 'endpoint') return notRun(NOT_REHEARSED_ENDPOINT);
    const r = await rehearseIclSearch(route.model, this.candidates, this.options({ ...ctx, experiment: ctx.notebook }, ctx.notebook));
    return { ...this.outcome(r), rows: [r.row] };
  }
}

/**
 * Table 1's rows of `models` as plan rows, each an evaluation on `evaluator`: the OPT rows with
 * the paper's cells, the notebook's LLaMA decoder's off the table (the paper prints none).
 */
export function promptEolTable1Rows(models: readonly RoutedPromptModel[], evaluator: Evaluator): PlanRow[] {
  return models.flatMap((m) => m.rows.map((r) => ({ row: r.label, table: 'Table 1', cells: r.cells, ...(m.opt ? {} : { offTable: true }), evaluation: new PromptRowEvaluation(m, r, evaluator) })));
}

/** Each model of Tables 1 and 4 (in the plan's order) with the runs of its rows, or why they did not run; `runs` is absent before `plan.run()`. */
export function promptEolResults(plan: Plan): Array<RoutedPromptModel & { runs?: PromptModelResult['runs']; why?: string }> {
  const out = new Map<RoutedPromptModel, RoutedPromptModel & { runs?: PromptModelResult['runs']; why?: string }>();
  for (const row of plan.rows) {
    const ev = row.evaluation;
    if (!(ev instanceof PromptRowEvaluation)) continue;
    const m = out.get(ev.entry) ?? { ...ev.entry };
    out.set(ev.entry, m);
    const outcome = plan.outcomeOf(row);
    if (!outcome) continue;
    m.runs = [...(m.runs ?? []), ...outcome.runs.map((r) => ({ label: r.label, run: r.run }))];
    m.why ??= outcome.why;
  }
  return [...out.values()];
}

/** The same after `plan.run()`: every model with its runs (none where it did not run). */
export function promptEolRunResults(plan: Plan): PromptModelResult[] {
  return promptEolResults(plan).map((m) => ({ ...m, runs: m.runs ?? [] }));
}

/** Each searched model's demonstration search (after `plan.run()`), with Table 4's demonstration for its size. */
export function iclSearchesOf(plan: Plan): Array<IclModelSearch & { demonstration: Demonstration }> {
  return plan.rows.flatMap((row) => {
    const result = row.evaluation instanceof IclSearchEvaluation ? (plan.outcomeOf(row)?.result as IclModelSearch | undefined) : undefined;
    return result ? [result] : [];
  });
}
