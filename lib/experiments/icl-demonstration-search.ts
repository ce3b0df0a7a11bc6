/**
 * PromptEOL's in-context demonstration search (Jiang et al., §3.2 and §4.1, Figure 3; Table 4
 * prints its outcome): every candidate demonstration (a sentence and its one word,
 * ./icl-demonstration-sets.ts) is prepended to the template in turn, the decoder embeds STS-B dev
 * through it, and the model gets the candidate with the highest Spearman. Beside it, the plain
 * template (no demonstration): Figure 3 draws each model's distribution of the candidates'
 * Spearman correlations against that line, the share below it being the demonstrations that hurt.
 * The reference does the same (kongds/scaling_sentemb evaluation.py `--icl_examples_file`, mode
 * dev: SentEval's STSBenchmark-dev, `spearman × 100` per template).
 *
 * - Each evaluation — the plain template and every candidate — is an evaluation record
 *   (./run-evaluation.ts), keyed by the weights, the encoder settings and the evaluator: a rerun
 *   reuses every finished one and evaluates only the rest (a search stopped half-way resumes);
 *   `force` evaluates all again. The encoder is the one the table rows use, in this process
 *   (./prompt-evaluations.ts `inProcessPromptEncoder`) or through an OpenAI-compatible
 *   `/v1/embeddings` serving the model (`endpointPromptEncoder`: OPT-30B and -66B, which one GPU
 *   does not hold in float32), so a demonstration evaluated by the search and as a table row on
 *   the same evaluator is one run.
 * - STS-B dev (`stsbDevEvaluator`): the stsb task's own dev evaluator (./tasks.ts), its first
 *   `pairs` pairs when asked (smoke).
 * - Under the rehearsal preset the search is not run (the plan calls `rehearseIclSearch`): its encoding is rehearsed at the real shapes
 *   instead (./rehearsal/encode.ts): the dev sentences behind the longest demonstration (in
 *   characters; its batch sets the peak), counted once for the plain template and once per
 *   candidate — `rehearsalCandidates` of them, e.g. the paper's 300 — so the projected time counts
 *   every candidate at the longest one's length, which overstates it a little. A model served by
 *   an endpoint is not rehearsed (the serving engine embeds it).
 * - A stand-in with a short context (the smoke preset's tiny OPT) cuts sentences to fit, as the
 *   table rows do; a candidate whose demonstration leaves no room for any sentence (every prompt
 *   the same, Spearman undefined) is listed as skipped.
 *
 * Spearman values here are ρ × 100, as the records and the paper print them.
 */
import { loadStsBenchmark } from '../data/sts.js';
import { promptFor, type Demonstration } from '../embed/prompt-encoder.js';
import type { SentenceEncoder } from '../embed/types.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { DemonstrationCandidate } from '../llm/demonstration-set.js';
import { GenerationError } from '../llm/generation-error.js';
import { servedModels } from '../llm/served-models.js';
import type { LoadedModel } from '../models/types.js';
import { portableModelRef } from '../report/training-record.js';
import { InputError, UnavailableError } from '../util/errors.js';
import { Progress } from '../util/progress.js';
import { endpointPromptEncoder, fitSentencesToContext, inProcessPromptEncoder } from './prompt-evaluations.js';
import { rehearseEncoding } from './rehearsal/encode.js';
import type { RehearsalRow } from './rehearsal/summary.js';
import { runEvaluation } from './run-evaluation.js';
import { loadTaskData } from './tasks.js';

export interface IclSearchOptions {
  /** The results folder of the search's records (e.g. "09-prompteol-icl-search": hundreds of records, kept apart from the tables'). */
  experiment: string;
  resultsDir?: string;
  dataDir?: string;
  /** The first N pairs of STS-B dev only (smoke); default all 1,500. */
  pairs?: number;
  /** Evaluate every candidate again (new records beside the old ones). */
  force?: boolean;
  /** Progress: a line at the start, one per candidate evaluated (reused ones are counted), and the outcome. */
  log?: (line: string) => void;
  /** Prompts per forward pass (default 32, as the table rows). */
  batchSize?: number;
  /** Cut sentences that would outgrow the context (stand-ins only; see ./prompt-evaluations.ts). */
  fitToContext?: boolean;
  /** A stand-in's mark, kept in every record (details.standIn) and in the result. */
  standIn?: string;
  /** What the model is called in logs, records and tables (default: the decoder's id). */
  label?: string;
  details?: Record<string, unknown>;
  /** The rehearsal summary's notebook (default `experiment`). */
  notebook?: string;
  /** Candidates the rehearsal counts (default: the set's size; PROMPTEOL_DEMONSTRATION_SET_SIZE projects the paper's 300). */
  rehearsalCandidates?: number;
}

/** One evaluation on STS-B dev: ρ × 100 and its record. */
export interface IclScore {
  spearman: number;
  runId: string;
  status: 'reused' | 'evaluated';
}

export interface IclCandidateScore extends IclScore {
  candidate: DemonstrationCandidate;
  /** Its position in the candidate set. */
  index: number;
}

export interface IclSearchResult {
  kind: 'searched';
  label: string;
  model: string;
  evaluator: { name: string; rows: number };
  /** The plain template (no demonstration): Figure 3's red line. */
  baseline: IclScore;
  /** Every candidate evaluated, in the set's order. */
  scores: IclCandidateScore[];
  /** Candidates not evaluated, and why (a demonstration that alone fills a stand-in's context). */
  skipped: Array<{ candidate: DemonstrationCandidate; index: number; why: string }>;
  /** The highest Spearman (the first of equals, in the set's order); absent when none was evaluated. */
  best?: IclCandidateScore;
  /** Share of the evaluated candidates strictly below the baseline (Figure 3's blue area); absent when none was evaluated. */
  fractionBelowBaseline?: number;
  standIn?: string;
}

export interface IclSearchRehearsal {
  kind: 'rehearsed';
  label: string;
  model: string;
  row: RehearsalRow;
}

export interface IclSearchNotRun {
  kind: 'not-run';
  label: string;
  model: string;
  why: string;
}

export type IclSearch = IclSearchResult | IclSearchRehearsal | IclSearchNotRun;

const PAPER_NOTE = "PromptEOL's demonstration search on STS-B dev (§3.2, Figure 3): the paper prints no number per demonstration, only the chosen one's STS improvement (Table 4)";

/** STS-B dev as the stsb task evaluates it (./tasks.ts), its first `pairs` pairs when asked. */
export function stsbDevEvaluator(o: { dataDir?: string; pairs?: number } = {}): Evaluator {
  return loadTaskData('stsb', { dataDir: o.dataDir, ...(o.pairs !== undefined ? { evalPairs: o.pairs } : {}) }).dev;
}

/** The distinct sentences of STS-B dev (its first `pairs` pairs when asked), what each evaluation embeds. */
function stsbDevTexts(o: { dataDir?: string; pairs?: number }): string[] {
  const pairs = loadStsBenchmark('dev', { dataDir: o.dataDir }).pairs;
  return [...new Set((o.pairs !== undefined ? pairs.slice(0, o.pairs) : pairs).flatMap((p) => [p.a, p.b]))];
}

/** A demonstration in one short line: `"<sentence>" → <word>` (the sentence cut at 60 characters). */
export function quotedDemonstration(d: Demonstration): string {
  const text = d.text.length > 60 ? `${d.text.slice(0, 57)}…` : d.text;
  return `"${text}" → ${d.word}`;
}

/** Index of the highest value (the first of equals). */
function argmax(values: readonly number[]): number {
  let best = -1;
  values.forEach((v, i) => {
    if (best < 0 || v > values[best]!) best = i;
  });
  return best;
}

/** What the search embeds with: the decoder in this process, or an endpoint serving it (./prompt-evaluations.ts builds both). */
interface SearchEncoders {
  model: Pick<LoadedModel, 'id' | 'dir' | 'source' | 'weightsSha256'>;
  encoderFor(demonstrations: readonly Demonstration[]): { encoder: SentenceEncoder; config: Record<string, unknown> };
  details: Record<string, unknown>;
}

/**
 * Searches `candidates` for the demonstration with the best STS-B dev Spearman for `decoder` (see
 * the file comment): `decoder.loaded`, the model in this process, or else `decoder.endpoint`, the
 * base URL of an OpenAI-compatible `/v1/embeddings` serving it under `decoder.id` (asked first
 * whether it does; a request that still fails ends the search with why, what finished being kept
 * for the rerun). Neither: not run. Under the rehearsal preset the plan calls `rehearseIclSearch`
 * instead (./prompt-evaluation-rows.ts).
 */
export async function searchIclDemonstrations(
  decoder: { id: string; loaded?: LoadedModel; endpoint?: string },
  candidates: readonly DemonstrationCandidate[],
  o: IclSearchOptions,
): Promise<IclSearch> {
  if (candidates.length === 0) throw new InputError('the demonstration search needs at least one candidate');
  const label = o.label ?? decoder.id;
  const model = portableModelRef(decoder.id);
  const notRun = (why: string): IclSearchNotRun => ({ kind: 'not-run', label, model, why });
  let encoders: SearchEncoders;
  if (decoder.loaded) {
    const loaded = decoder.loaded;
    const texts = o.fitToContext ? stsbDevTexts(o) : [];
    const encoderFor = (d: readonly Demonstration[]) => {
      if (o.fitToContext && d.length > 0) {
        // A demonstration that leaves room for no sentence token cuts every sentence away: every
        // prompt is the same, every cosine 1, and Spearman undefined. Such a candidate is skipped.
        const fit = fitSentencesToContext(loaded, { demonstrations: [...d], prepareText: 'prompteol' });
        if (texts.every((t) => fit(t) === '')) throw new InputError(`with this demonstration every STS-B dev sentence is cut away to fit the model's ${loaded.model.maxPositions} positions: no sentence fits`);
      }
      return inProcessPromptEncoder(loaded, d, { fitToContext: o.fitToContext, batchSize: o.batchSize });
    };
    encoders = { model: loaded, encoderFor, details: {} };
  } else if (decoder.endpoint) {
    const route = { baseURL: decoder.endpoint, model: decoder.id };
    let served: string[];
    try {
      served = await servedModels(route.baseURL);
    } catch (e) {
      if (!(e instanceof UnavailableError)) throw e;
      return notRun(`the endpoint did not answer: ${firstLine(e)}`);
    }
    if (!served.includes(route.model)) return notRun(`the endpoint at ${route.baseURL} serves ${served.map((x) => `'${x}'`).join(', ') || 'no model'}, not '${route.model}'`);
    encoders = {
      model: endpointPromptEncoder(route, [], o).model,
      encoderFor: (d) => endpointPromptEncoder(route, d, o),
      details: { endpoint: new URL(route.baseURL).host, servedModel: route.model },
    };
  } else {
    return notRun(`${decoder.id} is neither loaded in this process nor served by an endpoint`);
  }
  const evaluator = stsbDevEvaluator(o);
  const details = { ...o.details, ...encoders.details, ...(o.standIn ? { standIn: o.standIn } : {}) };
  const evaluate = async (runLabel: string, demonstrations: readonly Demonstration[], extra: Record<string, unknown>): Promise<IclScore> => {
    const { encoder, config } = encoders.encoderFor(demonstrations);
    const r = await runEvaluation({ label: runLabel, model: encoders.model, encoder, config, evaluator, experiment: o.experiment, resultsDir: o.resultsDir, force: o.force, paperNote: PAPER_NOTE, details: { ...details, iclSearch: { model: label, ...extra } } });
    const spearman = r.run.record.metrics.test_spearman;
    if (typeof spearman !== 'number') throw new InputError(`run ${r.run.record.runId} has no test_spearman: not an STS-B dev evaluation`, { file: r.run.file });
    return { spearman, runId: r.run.record.runId, status: r.status === 'reused' ? 'reused' : 'evaluated' };
  };
  try {
    return await search(label, model, candidates, evaluator, evaluate, o);
  } catch (e) {
    if (!(e instanceof GenerationError)) throw e;
    return notRun(`the endpoint failed: ${firstLine(e)} (the evaluations that finished are kept: a rerun resumes)`);
  }
}

/**
 * The search rehearsed at its shapes instead of run (the plan's rehearsal preset, see the file
 * comment): the dev sentences behind the longest demonstration, counted once for the plain template
 * and once per candidate (`rehearsalCandidates` of them, default the set's size).
 */
export async function rehearseIclSearch(decoderId: string, candidates: readonly DemonstrationCandidate[], o: IclSearchOptions): Promise<IclSearchRehearsal> {
  if (candidates.length === 0) throw new InputError('the demonstration search needs at least one candidate');
  const label = o.label ?? decoderId;
  const texts = stsbDevTexts(o);
  // The longest demonstration makes the longest prompts: the batch that sets the peak.
  const longest = candidates.reduce((a, b) => (promptFor('', { demonstrations: [b.demonstration] }).length > promptFor('', { demonstrations: [a.demonstration] }).length ? b : a));
  const n = o.rehearsalCandidates ?? candidates.length;
  const row = await rehearseEncoding({
    notebook: o.notebook ?? o.experiment,
    run: `${label}: demonstration search on STS-B dev (the plain template and ${n} candidates, each counted at the longest demonstration's prompts)`,
    model: decoderId,
    texts: texts.map((t) => promptFor(t, { demonstrations: [longest.demonstration], prepareText: 'prompteol' })),
    batchSize: o.batchSize ?? 32,
    repeat: n + 1,
    resultsDir: o.resultsDir,
  });
  return { kind: 'rehearsed', label, model: portableModelRef(decoderId), row };
}

function firstLine(e: unknown): string {
  return (e as Error).message.split('\n')[0]!;
}

/** The plain template, then every candidate, through `evaluate`; the outcome. */
async function search(
  label: string,
  model: string,
  candidates: readonly DemonstrationCandidate[],
  evaluator: Evaluator,
  evaluate: (runLabel: string, demonstrations: readonly Demonstration[], extra: Record<string, unknown>) => Promise<IclScore>,
  o: IclSearchOptions,
): Promise<IclSearchResult> {
  o.log?.(`${label}: demonstration search over ${candidates.length} candidates on ${evaluator.name} (${evaluator.rows} pairs)${o.standIn ? ` — ${o.standIn}` : ''}`);
  const baseline = await evaluate(`${label}: no demonstration`, [], { candidate: 'none' });
  o.log?.(`${label}: no demonstration: ρ ${baseline.spearman.toFixed(2)} (${baseline.status}, run ${baseline.runId})`);
  const scores: IclCandidateScore[] = [];
  const skipped: IclSearchResult['skipped'] = [];
  const progress = new Progress({ label: `${label}: candidates`, total: candidates.length, unit: 'candidates', enabled: false });
  let reused = 0;
  for (const [index, candidate] of candidates.entries()) {
    let score: IclScore;
    try {
      score = await evaluate(`${label}: ${quotedDemonstration(candidate.demonstration)}`, [candidate.demonstration], { candidate: index, source: candidate.source });
    } catch (e) {
      // Only a stand-in's context can refuse a demonstration; anything else is an error.
      if (!(o.fitToContext && e instanceof InputError && /no sentence fits/.test(e.message))) throw e;
      skipped.push({ candidate, index, why: e.message });
      progress.tick(1);
      o.log?.(`${progress.line()} — skipped ${quotedDemonstration(candidate.demonstration)}: ${e.message}`);
      continue;
    }
    scores.push({ ...score, candidate, index });
    progress.tick(1);
    if (score.status === 'reused') reused++;
    else {
      const best = scores[argmax(scores.map((s) => s.spearman))]!;
      o.log?.(`${progress.line()} — ρ ${score.spearman.toFixed(2)} ${quotedDemonstration(candidate.demonstration)} (best so far ${best.spearman.toFixed(2)})`);
    }
  }
  const b = argmax(scores.map((s) => s.spearman));
  const best = b >= 0 ? scores[b] : undefined;
  const fractionBelowBaseline = scores.length ? scores.filter((s) => s.spearman < baseline.spearman).length / scores.length : undefined;
  o.log?.(
    `${label}: ${scores.length} candidates evaluated (${reused} reused${skipped.length ? `, ${skipped.length} skipped` : ''})` +
      (best ? `; best ρ ${best.spearman.toFixed(2)} ${quotedDemonstration(best.candidate.demonstration)} (${best.candidate.source}); no demonstration ${baseline.spearman.toFixed(2)}; ${(100 * fractionBelowBaseline!).toFixed(0)}% below it` : ''),
  );
  return { kind: 'searched', label, model, evaluator: { name: evaluator.name, rows: evaluator.rows }, baseline, scores, skipped, ...(best ? { best, fractionBelowBaseline } : {}), ...(o.standIn ? { standIn: o.standIn } : {}) };
}
