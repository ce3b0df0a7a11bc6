/**
 * AnglE's LLM-supervised data (Table 5, Figure 4): for every unlabelled in-domain text (STS-B
 * train's sentence1 column: lib/data/domain.ts loadStsbSentence1), ask a generator with Figure 4's
 * prompt for `size` same-meaning sentences and `size` opposite-meaning ones, and turn the answers
 * into labelled pairs (input, generated): score 1 for a positive, 0 for a negative — the labels of
 * the authors' released files, which their training script reads as JSON lines
 * `{"sentence1", "sentence2", "score"}` with `float(score)` as the label and `score == 0` marking
 * the negatives (SeanLee97/AnglE train_angle.py `load_stsb_llm`, commits de7b750 and a02b3b3; the
 * files `data/llm_supervised_stsb/stsb.{chatgpt,llama,chatglm}.train.jsonl` are not in the
 * repository). Lines that are not a sentence are kept as rejects with the reason
 * (./parse-answer.ts); requests that failed are listed with their prompt id.
 *
 * Resumable: with `cacheDir` the generator runs behind the on-disk cache
 * (./cached-generator.ts), so a rerun after a crash or a stop pays only for the prompts that have
 * no answer yet. Prompt ids are `<idPrefix>-<index>:<polarity>` (index into `texts`).
 *
 * The ensemble (Table 5's "Ensemble" row) is, as in the authors' script, the pairs of all
 * generators concatenated. Their script also drops, for the ChatGPT file and the ensemble (not for
 * LLaMA or ChatGLM alone), every negative whose sentence1 has fewer than 5 distinct words (Python
 * str.split()) that its sentence2 lacks — an "antonym" that only swaps a word or two
 * (`dropNearCopyNegatives`).
 *
 * What the paper leaves open (the defaults here, say so beside results): {size} (1), the temperature
 * (0: greedy, reproducible and cacheable), the answer length (max_tokens 48·size + 32), and how the
 * prompt is sent (one user message).
 */
import { writeFileAtomic } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import { CachedGenerator } from './cached-generator.js';
import { completeMany, type GenerationFailure } from './complete-many.js';
import { figure4Messages, POLARITIES, type Polarity } from './figure4-prompt.js';
import { parseGeneratedSentences, type RejectReason } from './parse-answer.js';
import { UsageTally } from './pricing.js';
import type { ChatGenerator, ChatRequest, ChatResult } from './types.js';

/** A labelled pair: `a` the input text, `b` a generated sentence; `score` 1 (positive) or 0 (negative). */
export interface SupervisedPair {
  a: string;
  b: string;
  score: 0 | 1;
  polarity: Polarity;
  /** The prompt it answers, e.g. "stsb-train-17:positive". */
  promptId: string;
  /** The generator's name. */
  generator: string;
}

/** A line of an answer that did not become a pair, or a prompt that got no answer ('failed'). */
export interface SupervisedReject {
  promptId: string;
  polarity: Polarity;
  input: string;
  line: string;
  reason: RejectReason | 'failed';
  generator: string;
}

export interface LlmSupervisionOptions {
  /** {size}: sentences asked for per prompt (default 1; the paper does not say). */
  size?: number;
  /** Which prompts (default both). */
  polarities?: readonly Polarity[];
  /** Sampling temperature (default 0: greedy). */
  temperature?: number;
  top_p?: number;
  /** Default 48·size + 32. */
  max_tokens?: number;
  /** Default 0 (only matters when sampling). */
  seed?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Run behind the on-disk answer cache in this folder (resumable, never pays twice). */
  cacheDir?: string;
  /** Stops gracefully: nothing new starts; answers in flight are kept (and cached). */
  signal?: AbortSignal;
  /** Prefix of the prompt ids (default 'stsb-train'). */
  idPrefix?: string;
  /** Longest generated sentence kept, in words (default: ./parse-answer.ts's). */
  maxWords?: number;
  /** Called with every answer as it arrives (after it is cached). */
  onResult?: (result: ChatResult) => void;
  /** A progress line with this label. */
  progress?: string;
}

export interface LlmSupervisionResult {
  generator: string;
  pairs: SupervisedPair[];
  rejects: SupervisedReject[];
  /** Prompts that got no answer, with the reason (their ids name the text and polarity). */
  failures: GenerationFailure[];
  /** Prompt ids never sent because the run was stopped. */
  notStarted: string[];
  /** Requests made (answers paid in this run, and answers read from the cache), tokens and cost. */
  usage: UsageTally;
  /** Prompts in the run. */
  prompts: number;
  stopped: boolean;
}

const DEFAULT_ID_PREFIX = 'stsb-train';

/** The chat requests of a run: for each text, one per polarity, with ids `<prefix>-<i>:<polarity>`. */
export function supervisionRequests(texts: readonly string[], opts: LlmSupervisionOptions = {}): Array<ChatRequest & { id: string }> {
  const size = opts.size ?? 1;
  const polarities = opts.polarities ?? POLARITIES;
  const prefix = opts.idPrefix ?? DEFAULT_ID_PREFIX;
  const maxTokens = opts.max_tokens ?? 48 * size + 32;
  const out: Array<ChatRequest & { id: string }> = [];
  texts.forEach((text, i) => {
    if (typeof text !== 'string' || text.trim() === '') throw new InputError(`text ${i} is ${typeof text === 'string' ? 'empty' : typeof text}: every input needs a sentence`);
    for (const polarity of polarities) {
      out.push({
        id: `${prefix}-${i}:${polarity}`,
        messages: figure4Messages(polarity, text, size),
        temperature: opts.temperature ?? 0,
        ...(opts.top_p !== undefined ? { top_p: opts.top_p } : {}),
        max_tokens: maxTokens,
        seed: opts.seed ?? 0,
      });
    }
  });
  return out;
}

/** Figure 4's pairs from one generator for `texts`. */
export async function generateSupervisedPairs(generator: ChatGenerator, texts: readonly string[], opts: LlmSupervisionOptions = {}): Promise<LlmSupervisionResult> {
  const size = opts.size ?? 1;
  const polarities = opts.polarities ?? POLARITIES;
  const requests = supervisionRequests(texts, opts);
  const gen = opts.cacheDir !== undefined && !(generator instanceof CachedGenerator) ? new CachedGenerator(generator, opts.cacheDir) : generator;
  const run = await completeMany(gen, requests, {
    concurrency: opts.concurrency ?? 4,
    signal: opts.signal,
    onResult: opts.onResult ? (r) => opts.onResult!(r) : undefined,
    progress: opts.progress,
  });
  const pairs: SupervisedPair[] = [];
  const rejects: SupervisedReject[] = [];
  requests.forEach((req, k) => {
    const i = Math.floor(k / polarities.length);
    const polarity = polarities[k % polarities.length];
    const input = texts[i];
    const r = run.results[k];
    if (!r) return;
    const parsed = parseGeneratedSentences(r.text, input, { size, finishReason: r.finishReason, ...(opts.maxWords !== undefined ? { maxWords: opts.maxWords } : {}) });
    for (const b of parsed.sentences) pairs.push({ a: input, b, score: polarity === 'positive' ? 1 : 0, polarity, promptId: req.id, generator: generator.name });
    for (const x of parsed.rejects) rejects.push({ promptId: req.id, polarity, input, line: x.line, reason: x.reason, generator: generator.name });
  });
  for (const f of run.failures) {
    const k = f.index;
    rejects.push({ promptId: f.id, polarity: polarities[k % polarities.length], input: texts[Math.floor(k / polarities.length)], line: f.message, reason: 'failed', generator: generator.name });
  }
  return { generator: generator.name, pairs, rejects, failures: run.failures, notStarted: run.notStarted, usage: run.usage, prompts: requests.length, stopped: run.stopped };
}

export interface EnsembleResult {
  /** Each generator's run, in the order given. */
  members: LlmSupervisionResult[];
  /** All members' pairs, concatenated in member order (the authors' ensemble). */
  pairs: SupervisedPair[];
}

/**
 * Table 5's ensemble: the same texts through several generators (concurrently; each with the
 * options' concurrency), their pairs concatenated. With one cacheDir for all, answers are keyed by
 * each generator's model name: give different generators different model names.
 */
export async function generateEnsemble(generators: readonly ChatGenerator[], texts: readonly string[], opts: LlmSupervisionOptions = {}): Promise<EnsembleResult> {
  if (generators.length === 0) throw new InputError('an ensemble needs at least one generator');
  const models = generators.map((g) => g.model);
  const dup = models.find((m, i) => models.indexOf(m) !== i);
  if (dup !== undefined && opts.cacheDir !== undefined) throw new InputError(`two generators of the ensemble have the model name '${dup}': their answers would share cache entries; serve them under different names`);
  const members = await Promise.all(generators.map((g) => generateSupervisedPairs(g, texts, { ...opts, progress: opts.progress ? `${opts.progress} ${g.name}` : undefined })));
  return { members, pairs: members.flatMap((m) => m.pairs) };
}

/** The characters Python's str.split() splits on (str.isspace: JavaScript's \s, with U+001C–U+001F and U+0085, without U+FEFF). */
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/**
 * The authors' filter of near-copy negatives (train_angle.py `skip_neg`): a pair with score 0 is
 * dropped when fewer than `minNewWords` (5) distinct words of `a` are missing from `b`, words being
 * what Python's str.split() gives (runs of white space separate them). Positives are kept.
 */
export function dropNearCopyNegatives<P extends { a: string; b: string; score: number }>(pairs: readonly P[], minNewWords = 5): P[] {
  const words = (s: string) => new Set(s.split(PY_WHITESPACE).filter(Boolean));
  return pairs.filter((p) => {
    if (p.score !== 0) return true;
    const b = words(p.b);
    let missing = 0;
    for (const w of words(p.a)) if (!b.has(w)) missing++;
    return missing >= minNewWords;
  });
}

/** Pairs as the authors' JSON lines: {"sentence1", "sentence2", "score"} (what load_stsb_llm reads). */
export function angleJsonl(pairs: readonly { a: string; b: string; score: number }[]): string {
  return pairs.map((p) => `${JSON.stringify({ sentence1: p.a, sentence2: p.b, score: p.score })}\n`).join('');
}

/** Writes angleJsonl(pairs) atomically. */
export async function writeAngleJsonl(path: string, pairs: readonly { a: string; b: string; score: number }[]): Promise<void> {
  await writeFileAtomic(path, angleJsonl(pairs));
}
