/**
 * PromptEOL's evaluations without training (its Tables 1 and 4): a decoder embeds every sentence
 * through the template — plainly, and after an in-context demonstration — and each row is an
 * evaluation record of the SentEval STS suite (./run-evaluation.ts: reused on a rerun). Beside
 * them, the improvement the demonstration brings next to Table 4's per OPT size.
 *
 * Each model of the tables is embedded where ./prompt-embedding-route.ts sends it:
 * - in process: loaded here (float32), `PromptSentenceEncoder` (lib/embed/prompt-encoder.ts);
 * - through an endpoint: an OpenAI-compatible `/v1/embeddings` (vLLM, `npm run serve-llm`) asked
 *   first whether it serves the model, then sent the prompts our side filled
 *   (lib/llm/openai-embeddings-client.ts: the same `promptFor` as the in-process encoder), with
 *   vectors cached under `<results>/embedding-cache` (keyed by the served name, the prompt and the
 *   text); the record says which engine embedded it, and its key differs from an in-process one;
 * - or not at all, the row saying why (and, for a missing endpoint, the command that starts one).
 *
 * Each row of the tables is a plan row (./prompt-evaluation-rows.ts): the plan runs it, or under the
 * rehearsal preset rehearses its encoding instead, and fills its cells from its record.
 *
 * A stand-in (the smoke preset's tiny OPT for an OPT size) is marked in its records (`standIn`),
 * and — the tiny model knowing only 64 positions — each sentence whose prompt would outgrow the
 * model's context is cut (never the template, whose last token is the embedding) and the record's
 * settings say so. The paper's models are never cut.
 */
import { join } from 'node:path';
import { resolveResultsDir } from '../config.js';
import { PromptSentenceEncoder, promptFor, type Demonstration } from '../embed/prompt-encoder.js';
import type { PromptTemplateOptions } from '../llm/prompt-template.js';
import type { SentenceEncoder } from '../embed/types.js';
import type { Evaluator } from '../eval/evaluator.js';
import { GenerationError } from '../llm/generation-error.js';
import { OpenAIEmbeddingsClient } from '../llm/openai-embeddings-client.js';
import { servedModels } from '../llm/served-models.js';
import { embeddingWidthOfConfig } from '../models/architectures.js';
import { KNOWN_CONFIGS } from '../models/model-from-config.js';
import type { LoadedModel } from '../models/types.js';
import type { PaperTable } from '../paper/types.js';
import type { PaperCell } from '../report/run-record.js';
import type { LoadedRun } from '../report/results-reader.js';
import { portableModelRef } from '../report/training-record.js';
import { InputError, UnavailableError } from '../util/errors.js';
import type { SimpleTable } from '../util/table.js';
import type { PlanCell } from './plan.js';
import { serveLlmCommand, vllmEmbeddingCommand, type PromptEmbeddingRoute } from './prompt-embedding-route.js';
import { truncateSentence } from './prompted-task.js';
import { runEvaluation, type RunEvaluationOptions } from './run-evaluation.js';
import { PROMPTEOL_ICL_DEMONSTRATIONS, promptEolEncoderSettings, type PromptEolTable1Model } from './tables/prompteol.js';

export interface PromptRow {
  label: string;
  demonstrations: readonly Demonstration[];
  /** The paper's cells of the row (Table 1), copied into its record; none: an off-table row. */
  cells?: readonly PlanCell[];
}

/** The rows without training: the plain template, and the template after the demonstration. */
export function promptEolRows(modelName: string, demonstration: Demonstration): PromptRow[] {
  return [
    { label: `PromptEOL ${modelName}`, demonstrations: [] },
    { label: `PromptEOL+ICL ${modelName}`, demonstrations: [demonstration] },
  ];
}

interface RowRunOptions {
  evaluator: Evaluator;
  experiment: string;
  resultsDir?: string;
  dataDir?: string;
  force?: boolean;
  log?: (line: string) => void;
  /** Prompts per forward pass (in process) or per request (endpoint); default 32 / 64. */
  batchSize?: number;
  details?: Record<string, unknown>;
}

const NO_LLAMA_ROW = "PromptEOL's Tables 1 and 4 print OPT rows only; no LLaMA row without fine-tuning";

/** The paper's numbers of a row by record metric, or the note of an off-table row. */
function paperOf(row: PromptRow): { paper: Record<string, PaperCell> } | { paperNote: string } {
  const cells = (row.cells ?? []).filter((c) => c.paper);
  return cells.length > 0 ? { paper: Object.fromEntries(cells.map((c) => [c.metric ?? 'test_spearman', c.paper!])) } : { paperNote: NO_LLAMA_ROW };
}

/**
 * `texts` with every sentence whose prompt has more tokens than the model's context cut to fit
 * (its last tokens dropped, the template kept whole): a stand-in with a short context (the tiny
 * OPT's 64 positions) embeds every sentence of the suite, at the template's last token.
 */
export function fitSentencesToContext(m: Pick<LoadedModel, 'model' | 'tokenizer'>, prompt: PromptTemplateOptions): (text: string) => string {
  const tok = m.tokenizer;
  const max = m.model.maxPositions;
  const length = (t: string) => tok.encode(promptFor(t, prompt)).ids.length;
  const frame = length('');
  if (frame >= max) throw new InputError(`the prompt template alone has ${frame} tokens, the model's context ${max}: no sentence fits`);
  return (text) => {
    if (length(text) <= max) return text;
    // The clean-up and the joins of byte-level BPE may add a token or two: shorten until it fits.
    for (let budget = max - frame; budget > 0; budget--) {
      const cut = truncateSentence(text, tok, budget);
      if (length(cut) <= max) return cut;
    }
    return '';
  };
}

/**
 * The in-process PromptEOL encoder of a loaded decoder after `demonstrations`, and the settings its
 * records keep (and key on): with `fitToContext` (stand-ins only) sentences too long for the
 * context are cut (`fitSentencesToContext`; an InputError when the demonstrations alone fill it).
 * One builder for the table rows (`evaluatePromptRows`) and the demonstration search
 * (./icl-demonstration-search.ts), so the same demonstration gets the same key in both.
 */
export function inProcessPromptEncoder(
  loaded: LoadedModel,
  demonstrations: readonly Demonstration[],
  o: { fitToContext?: boolean; batchSize?: number } = {},
): { encoder: SentenceEncoder; config: Record<string, unknown> } {
  const prompt: PromptTemplateOptions = { demonstrations: [...demonstrations], prepareText: 'prompteol' };
  const inner = new PromptSentenceEncoder(loaded, { ...prompt, batchSize: o.batchSize ?? 32 });
  let encoder: SentenceEncoder = inner;
  if (o.fitToContext) {
    const fit = fitSentencesToContext(loaded, prompt);
    encoder = { encode: (texts, eo) => inner.encode(texts.map(fit), eo) };
  }
  return { encoder, config: { ...promptEolEncoderSettings(demonstrations), ...(o.fitToContext ? { sentencesCutToContext: loaded.model.maxPositions } : {}) } };
}

/**
 * One prompt row evaluated (or reused) with the encoder built for it, in-process or through an
 * endpoint: the record keys on the model, the encoder's settings and the evaluator, and keeps the
 * row's paper numbers and `details` (where it was embedded).
 */
async function evaluatePromptRow(
  row: PromptRow,
  built: { model: RunEvaluationOptions['model']; encoder: SentenceEncoder; config: Record<string, unknown> },
  o: RowRunOptions,
  details: Record<string, unknown>,
): Promise<{ label: string; run: LoadedRun; status: string }> {
  const r = await runEvaluation({
    label: row.label,
    ...built,
    evaluator: o.evaluator,
    experiment: o.experiment,
    resultsDir: o.resultsDir,
    force: o.force,
    log: o.log,
    ...paperOf(row),
    details: { ...o.details, tableRow: row.label, ...details },
  });
  return { label: row.label, run: r.run, status: r.status };
}

/**
 * Evaluates (or reuses) each row on `evaluator` with the decoder, when it is loaded (none: no row
 * runs). With `fitToContext` (stand-ins only) sentences too
 * long for the model's context are cut (see `fitSentencesToContext`), and the record says so.
 * `standIn` is recorded in each record's details. See the file comment.
 */
export async function evaluatePromptRows(
  decoder: { id: string; loaded?: LoadedModel },
  rows: readonly PromptRow[],
  o: RowRunOptions & { fitToContext?: boolean; standIn?: string },
): Promise<Array<{ label: string; run: LoadedRun; status: string }>> {
  const out: Array<{ label: string; run: LoadedRun; status: string }> = [];
  const loaded = decoder.loaded;
  if (!loaded) return out;
  for (const row of rows) {
    const built = { model: loaded, ...inProcessPromptEncoder(loaded, row.demonstrations, o) };
    out.push(await evaluatePromptRow(row, built, o, o.standIn ? { standIn: o.standIn } : {}));
  }
  return out;
}

/** The width of a known model's embeddings (its architecture's entry: OPT's word_embed_proj_dim), to check every vector an endpoint sends. */
function embeddingWidth(model: string): number | undefined {
  const c = (KNOWN_CONFIGS as Record<string, Readonly<Record<string, unknown>>>)[model];
  if (!c) return undefined;
  return embeddingWidthOfConfig(c);
}

function firstLine(e: unknown): string {
  return (e as Error).message.split('\n')[0]!;
}

/**
 * The PromptEOL encoder of a model served by an endpoint after `demonstrations`
 * (OpenAIEmbeddingsClient, vectors cached under `<results>/embedding-cache` unless `force`), the
 * model identity its records key on (the served name: the served weights are known by it only)
 * and the settings they keep. One builder for the table rows and the demonstration search.
 */
export function endpointPromptEncoder(
  route: { baseURL: string; model: string },
  demonstrations: readonly Demonstration[],
  o: { resultsDir?: string; batchSize?: number; force?: boolean } = {},
): { model: Pick<LoadedModel, 'id' | 'dir' | 'source' | 'weightsSha256'>; encoder: OpenAIEmbeddingsClient; config: Record<string, unknown> } {
  const dimensions = embeddingWidth(route.model);
  const encoder = new OpenAIEmbeddingsClient({
    baseURL: route.baseURL,
    model: route.model,
    prompt: { demonstrations: [...demonstrations], prepareText: 'prompteol' },
    ...(dimensions !== undefined ? { dimensions } : {}),
    batchSize: o.batchSize ?? 64,
    // FORCE embeds again rather than reading the vectors of the last run back.
    ...(o.force ? {} : { cache: join(resolveResultsDir(o.resultsDir), 'embedding-cache') }),
  });
  return {
    model: { id: route.model, dir: '', source: 'hub', weightsSha256: `served:${route.model}` },
    encoder,
    config: { ...promptEolEncoderSettings(demonstrations), embeddedBy: 'an OpenAI-compatible /v1/embeddings endpoint (prompt filled here; the engine tokenises, runs the decoder and pools the last token)' },
  };
}

/**
 * Evaluates (or reuses) each row through an endpoint serving `route.model`: asks the endpoint what
 * it serves, then embeds through OpenAIEmbeddingsClient (see the file comment). Returns the runs,
 * or why none ran (the endpoint is down, serves another model, or failed a request).
 */
export async function evaluatePromptRowsThroughEndpoint(
  route: { baseURL: string; model: string },
  rows: readonly PromptRow[],
  o: RowRunOptions,
): Promise<{ runs: Array<{ label: string; run: LoadedRun; status: string }>; why?: string }> {
  let served: string[];
  try {
    served = await servedModels(route.baseURL);
  } catch (e) {
    if (!(e instanceof UnavailableError)) throw e;
    return { runs: [], why: `the endpoint did not answer: ${firstLine(e)}` };
  }
  if (!served.includes(route.model)) {
    return { runs: [], why: `the endpoint at ${route.baseURL} serves ${served.map((s) => `'${s}'`).join(', ') || 'no model'}, not '${route.model}': start it with \`${vllmEmbeddingCommand(route.model)}\` or \`${serveLlmCommand(route.model)}\`` };
  }
  const runs: Array<{ label: string; run: LoadedRun; status: string }> = [];
  for (const row of rows) {
    try {
      runs.push(await evaluatePromptRow(row, endpointPromptEncoder(route, row.demonstrations, o), o, { endpoint: new URL(route.baseURL).host, servedModel: route.model }));
    } catch (e) {
      if (!(e instanceof GenerationError)) throw e;
      return { runs, why: `the endpoint failed on ${row.label}: ${firstLine(e)}` };
    }
  }
  return { runs };
}

/** One model of Tables 1 and 4 after its rows ran where its route says (or did not, and why). */
export interface PromptModelResult extends PromptEolTable1Model {
  route: PromptEmbeddingRoute;
  runs: Array<{ label: string; run: LoadedRun }>;
  /** Why some or all of its rows have no run. */
  why?: string;
}

function routeText(r: PromptEmbeddingRoute): string {
  if (r.kind === 'in-process') return r.standInFor ? `in process: ${portableModelRef(r.model)} (stand-in)` : 'in process (float32)';
  if (r.kind === 'endpoint') return `endpoint ${r.baseURL}`;
  return 'not run';
}

/**
 * Where each model is (or was) embedded, why there, and — after `evaluatePromptEolModels` — what
 * came of it; a skipped model's line holds the whole reason (the command that starts an endpoint).
 */
export function promptRoutesTable(
  models: ReadonlyArray<PromptEolTable1Model & { route: PromptEmbeddingRoute; runs?: PromptModelResult['runs']; why?: string }>,
  caption = 'Where each model is embedded',
): SimpleTable {
  const result = (r: (typeof models)[number]): string => {
    if (r.route.kind === 'skipped') return `not run: ${r.route.why}`;
    if (!r.runs) return 'to run';
    if (r.runs.length === r.rows.length) return `ran: ${r.runs.map((x) => x.run.record.runId).join(', ')}`;
    return [r.runs.length ? `${r.runs.length} of ${r.rows.length} ran` : 'not run', r.why].filter(Boolean).join(': ');
  };
  return {
    caption,
    columns: ['model', 'rows', 'embedded', 'why there', 'result'],
    rows: models.map((r) => [r.model, r.rows.map((x) => x.label).join(', '), routeText(r.route), r.route.kind === 'skipped' ? '' : r.route.why, result(r)]),
  };
}

/** A short reason for a table cell (the routes table has the whole of it). */
function cellReason(r: PromptModelResult): string {
  if (r.route.kind === 'skipped') return r.route.short;
  return shortReason(r.why ?? 'not run');
}

/** A reason cut to fit a table cell (the routes table has the whole of it). */
export function shortReason(why: string): string {
  return why.length > 120 ? `${why.slice(0, 117)}… (see the routes table)` : why;
}

/** The STS average of a model's row with or without the demonstration, when it ran. */
function averageOf(r: PromptModelResult, icl: boolean): number | undefined {
  const row = r.rows.find((x) => (x.demonstrations.length > 0) === icl);
  return r.runs.find((x) => x.label === row?.label)?.run.record.metrics.test_avg;
}

/**
 * The in-context demonstration's effect per OPT size that ran (ICL average − plain average), and
 * a note for every size: a stand-in's, or why it did not run.
 */
export function optIclImprovements(results: readonly PromptModelResult[]): { improvements: Map<string, number>; notes: Map<string, string> } {
  const improvements = new Map<string, number>();
  const notes = new Map<string, string>();
  for (const r of results.filter((x) => x.opt)) {
    const plain = averageOf(r, false);
    const icl = averageOf(r, true);
    if (plain !== undefined && icl !== undefined) improvements.set(r.size, icl - plain);
    if (r.route.kind === 'in-process' && r.route.standInFor) notes.set(r.size, 'stand-in: the tiny random OPT (smoke)');
    else if (plain === undefined || icl === undefined) notes.set(r.size, cellReason(r));
  }
  return { improvements, notes };
}

/**
 * The in-context demonstration's effect on the STS average: ours (plain vs ICL row) beside Table
 * 4's per OPT size (the paper prints no LLaMA row); `optSizesRun` gives ours per OPT size that ran
 * (`optIclImprovements`), `optNotes` a stand-in's mark or why a size did not run.
 */
export function iclImprovementTable(o: {
  modelName: string;
  demonstration: Demonstration;
  plain?: number;
  icl?: number;
  table4: PaperTable;
  optSizesRun?: ReadonlyMap<string, number>;
  optNotes?: ReadonlyMap<string, string>;
}): SimpleTable {
  const t4 = o.table4.numbers.filter((n) => n.column === 'Improve');
  const ours = o.plain !== undefined && o.icl !== undefined ? [[o.modelName, o.demonstration.text, o.demonstration.word, (o.icl - o.plain).toFixed(2), `6.7B: ${t4.find((n) => n.row === '6.7B')?.printed ?? ''}`, 'off the table (the paper prints OPT sizes only)']] : [];
  return {
    caption: 'In-context learning: improvement of the STS average (Table 4 prints OPT sizes only)',
    columns: ['model', 'demonstration', 'word', 'improve (ours)', 'improve (paper, OPT of that size)', 'note'],
    rows: [
      ...ours,
      ...PROMPTEOL_ICL_DEMONSTRATIONS.map((d) => {
        const run = o.optSizesRun?.get(d.size);
        return [`OPT ${d.size}`, d.demonstration.text, d.demonstration.word, run !== undefined ? run.toFixed(2) : '', t4.find((n) => n.row === d.size)?.printed ?? '', o.optNotes?.get(d.size) ?? (run === undefined ? 'not run' : '')];
      }),
    ],
  };
}
