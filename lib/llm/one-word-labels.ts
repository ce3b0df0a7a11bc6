/**
 * One-word labels for demonstration sentences, asked of a chat model (PromptEOL §3.2 and §4.1:
 * 100 STS-B train sentences "with words labeled by gpt-3.5-turbo", asked "with same template in
 * Figure 2", i.e. PromptEOL's own `This sentence : "{text}" means in one word:"`). Each sentence
 * is one user message holding the filled template (the sentence as given, no clean-up: the
 * demonstrations of Table 4 keep their sentences as printed); the answer is parsed into one word
 * (`parseOneWordAnswer`) or rejected with the reason.
 *
 * What the paper leaves open, and the defaults here (say so beside results): the temperature
 * (0: greedy, reproducible and cacheable), the answer length (max_tokens 16: any one word and its
 * closing quote), how an answer becomes a word (below), and which train sentences (the caller's).
 *
 * Resumable as ./llm-supervision.ts is: with `cacheDir` the generator runs behind the on-disk
 * answer cache (./cached-generator.ts), so a rerun pays only for sentences without an answer.
 * Prompt ids are `<idPrefix>-<index>` (index into `sentences`).
 */
import { InputError } from '../util/errors.js';
import { CachedGenerator } from './cached-generator.js';
import { completeMany, type GenerationFailure } from './complete-many.js';
import type { UsageTally } from './pricing.js';
import { PROMPTEOL_TEMPLATE, promptFor } from './prompt-template.js';
import type { ChatGenerator, ChatRequest, ChatResult } from './types.js';

/** Why an answer gave no word. */
export const ONE_WORD_REJECT_REASONS = ['empty', 'more than one word', 'not a word', 'too long for a word', 'failed'] as const;
export type OneWordRejectReason = (typeof ONE_WORD_REJECT_REASONS)[number];

/** Longest word accepted, in characters ("Horseback-riding" has 16): a longer run is a degenerate answer. */
export const MAX_WORD_CHARS = 40;

/** A word: letters or digits, then letters, digits, hyphens and apostrophes ("Horseback-riding", "Four-in-hand"). */
const WORD = /^[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*$/u;

/**
 * The one word of an answer, or why there is none:
 * 1. its first line, trimmed;
 * 2. opening quotes dropped, and everything from the first closing double quote on (the
 *    template's open quote is closed after the word, as in the demonstrations `"Equestrian".`);
 * 3. trailing sentence punctuation (. , ; : ! ?) dropped;
 * 4. what remains must be one word (`WORD`) of at most MAX_WORD_CHARS characters.
 * An answer cut by max_tokens inside a word cannot be told from a whole word; the default 16 tokens
 * leave room for any word.
 */
export function parseOneWordAnswer(answer: string): { word: string } | { reason: Exclude<OneWordRejectReason, 'failed'> } {
  let t = (answer.split(/\r?\n/).find((l) => l.trim() !== '') ?? '').trim();
  t = t.replace(/^["'“‘]+/, '');
  const close = t.search(/["”]/);
  if (close >= 0) t = t.slice(0, close);
  t = t.replace(/[.,;:!?]+$/, '').trim();
  if (t === '') return { reason: 'empty' };
  if (/\s/.test(t)) return { reason: 'more than one word' };
  if (!WORD.test(t)) return { reason: 'not a word' };
  if ([...t].length > MAX_WORD_CHARS) return { reason: 'too long for a word' };
  return { word: t };
}

export interface OneWordLabelOptions {
  /** The template the sentence is put into (default PromptEOL's, as the paper asked). */
  template?: string;
  /** Sampling temperature (default 0: greedy). */
  temperature?: number;
  /** Default 16. */
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
  /** A progress line with this label. */
  progress?: string;
  /** Called with every answer as it arrives (after it is cached). */
  onResult?: (result: ChatResult) => void;
}

export interface OneWordLabel {
  sentence: string;
  word: string;
  promptId: string;
}

export interface OneWordReject {
  sentence: string;
  /** The answer (or, for 'failed', the error). */
  answer: string;
  reason: OneWordRejectReason;
  promptId: string;
}

export interface OneWordLabelResult {
  generator: string;
  /** Accepted labels, in the order of the sentences. */
  labels: OneWordLabel[];
  rejects: OneWordReject[];
  failures: GenerationFailure[];
  /** Prompt ids never sent because the run was stopped. */
  notStarted: string[];
  usage: UsageTally;
  stopped: boolean;
}

/** The chat requests of a labelling run: one per sentence, ids `<prefix>-<index>`. */
export function oneWordRequests(sentences: readonly string[], o: OneWordLabelOptions = {}): Array<ChatRequest & { id: string }> {
  const prefix = o.idPrefix ?? 'stsb-train';
  const seen = new Map<string, number>();
  return sentences.map((s, i) => {
    if (typeof s !== 'string' || s.trim() === '') throw new InputError(`sentence ${i} is ${typeof s === 'string' ? 'empty' : typeof s}: every demonstration needs a sentence`);
    const j = seen.get(s);
    if (j !== undefined) throw new InputError(`sentences ${j} and ${i} are the same (${JSON.stringify(s)}): label each sentence once`);
    seen.set(s, i);
    return {
      id: `${prefix}-${i}`,
      messages: [{ role: 'user', content: promptFor(s, { template: o.template ?? PROMPTEOL_TEMPLATE }) }],
      temperature: o.temperature ?? 0,
      max_tokens: o.max_tokens ?? 16,
      seed: o.seed ?? 0,
    };
  });
}

/** Labels each sentence with one word by `generator` (see the file comment). */
export async function labelOneWord(generator: ChatGenerator, sentences: readonly string[], o: OneWordLabelOptions = {}): Promise<OneWordLabelResult> {
  const requests = oneWordRequests(sentences, o);
  const gen = o.cacheDir !== undefined && !(generator instanceof CachedGenerator) ? new CachedGenerator(generator, o.cacheDir) : generator;
  const run = await completeMany(gen, requests, { concurrency: o.concurrency ?? 4, signal: o.signal, onResult: o.onResult ? (r) => o.onResult!(r) : undefined, progress: o.progress });
  const labels: OneWordLabel[] = [];
  const rejects: OneWordReject[] = [];
  requests.forEach((req, i) => {
    const r = run.results[i];
    if (!r) return;
    const p = parseOneWordAnswer(r.text);
    if ('word' in p) labels.push({ sentence: sentences[i]!, word: p.word, promptId: req.id });
    else rejects.push({ sentence: sentences[i]!, answer: r.text, reason: p.reason, promptId: req.id });
  });
  for (const f of run.failures) rejects.push({ sentence: sentences[f.index]!, answer: f.message, reason: 'failed', promptId: f.id });
  return { generator: generator.name, labels, rejects, failures: run.failures, notStarted: run.notStarted, usage: run.usage, stopped: run.stopped };
}
