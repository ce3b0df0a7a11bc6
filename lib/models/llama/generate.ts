/**
 * Text generation from a causal decoder with a KV cache: prompts batched together with left
 * padding, one forward pass over the prompts (prefill), then one token per row per step.
 *
 * Choosing the next token from the last position's logits z:
 * - greedy (temperature 0, the default): argmax z, the first index on ties (torch.argmax, run.c);
 * - sampling (temperature T > 0): p = softmax(z / T); with top-p < 1 only the most probable tokens
 *   whose cumulative probability first reaches top-p are kept (nucleus sampling; HF's TopP rule)
 *   and renormalised; the token is the first whose cumulative probability exceeds a uniform draw.
 *   The draws come from tf.randomUniform with the given seed (computed on the host by tfjs, so the
 *   same on every backend): one per step and row, so a seed reproduces a batch's generations.
 *
 * A row ends at an end-of-sequence id (config.json's eos_token_id), at a stop string (its text is
 * cut before the stop string; the token that completed it is kept in `ids`), after maxNewTokens,
 * or when the batch's padded sequence fills the context ('context'). `onToken` streams each row's
 * text as it grows, holding back a tail that may still become a stop string or an unfinished
 * UTF-8 character.
 *
 * Text is decoded as the tokenizer decodes the continuation after the prompt's last token (run.c
 * prints each token after its predecessor, so "Once" after BOS but " They" after "dog."); the
 * tokenizer must have `decode` for text, otherwise `text` is empty and `ids` are the result.
 *
 * A prompt longer than the context is an error unless `truncatePrompt`, which keeps the prompt's
 * last tokens so that prompt + maxNewTokens fit (a leading BOS is kept).
 */
import { tf } from '../../backend/index.js';
import { InputError } from '../../util/errors.js';
import type { TextTokenizer } from '../types.js';
import { disposeKvCache, type DecoderInput, type DecoderOptions, type DecoderOutput, type KvCache } from './model.js';

/** What generation needs of a model (LlamaModel has it). */
export interface CausalLanguageModel {
  readonly maxPositions: number;
  readonly config: { eosTokenId: number[]; bosTokenId: number | null };
  decode(input: DecoderInput, opts?: DecoderOptions): DecoderOutput;
}

export interface GenerateOptions {
  /** New tokens per row at most (default 64). */
  maxNewTokens?: number;
  /** 0 (default) = greedy; > 0 = sampling at this temperature. */
  temperature?: number;
  /** Nucleus sampling mass in (0, 1] (default 1 = off); only with temperature > 0. */
  topP?: number;
  /** Seed of the sampling draws (default 0). */
  seed?: number;
  /** A row ends when its text contains one of these. */
  stopStrings?: string[];
  /** Ids that end a row (default: the model config's eos_token_id). */
  eosTokenIds?: number[];
  /** Keep the last tokens of a prompt that does not fit the context instead of failing. */
  truncatePrompt?: boolean;
  /** Streams each row's new text (and the token that produced it). */
  onToken?: (event: { row: number; step: number; tokenId: number; text: string }) => void;
}

export type FinishReason = 'eos' | 'stop' | 'length' | 'context';

export interface Generation {
  /** Prompt ids as fed (after truncation). */
  promptIds: number[];
  /** Generated ids (the end-of-sequence id or stop-string token included when it ended the row). */
  ids: number[];
  /** Generated text (up to a stop string). */
  text: string;
  finishReason: FinishReason;
}

/** Index of the largest value (the first on ties). */
export function argmax(z: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < z.length; i++) if (z[i] > z[best]) best = i;
  return best;
}

/**
 * A token drawn from softmax(z / temperature) restricted to the top-p nucleus, with the uniform
 * draw u in [0, 1).
 */
export function sampleTopP(z: ArrayLike<number>, temperature: number, topP: number, u: number): number {
  let max = -Infinity;
  for (let i = 0; i < z.length; i++) max = Math.max(max, z[i]);
  const p = new Float64Array(z.length);
  let sum = 0;
  for (let i = 0; i < z.length; i++) {
    p[i] = Math.exp((z[i] - max) / temperature);
    sum += p[i];
  }
  const order = Array.from(p.keys()).sort((a, b) => p[b] - p[a] || a - b);
  let kept = 0;
  let mass = 0;
  while (kept < order.length) {
    mass += p[order[kept++]] / sum;
    if (mass >= topP) break;
  }
  const r = u * mass * sum;
  let c = 0;
  for (let k = 0; k < kept; k++) {
    c += p[order[k]];
    if (c > r) return order[k];
  }
  return order[kept - 1];
}

/** Text of `ids` as they continue after `context` (the prompt's last token). */
function continuationText(tok: TextTokenizer, context: number | undefined, ids: number[]): string {
  if (!tok.decode) return '';
  if (context === undefined) return tok.decode(ids);
  const full = tok.decode([context, ...ids]);
  const prefix = tok.decode([context]);
  return full.startsWith(prefix) ? full.slice(prefix.length) : tok.decode(ids);
}

/** Length of the longest tail of `text` that is a proper prefix of a stop string. */
function stopHoldback(text: string, stops: readonly string[]): number {
  let hold = 0;
  for (const s of stops) {
    for (let k = Math.min(s.length - 1, text.length); k > hold; k--) {
      if (text.endsWith(s.slice(0, k))) {
        hold = k;
        break;
      }
    }
  }
  return hold;
}

/** Generates a continuation of each prompt (text, or token ids with special tokens) in one batch. */
export async function generate(
  m: { model: CausalLanguageModel; tokenizer: TextTokenizer },
  prompts: ReadonlyArray<string | readonly number[]>,
  opts: GenerateOptions = {},
): Promise<Generation[]> {
  const { model, tokenizer } = m;
  const maxNew = opts.maxNewTokens ?? 64;
  const temperature = opts.temperature ?? 0;
  const topP = opts.topP ?? 1;
  const stops = (opts.stopStrings ?? []).filter((s) => s.length > 0);
  const eos = new Set(opts.eosTokenIds ?? model.config.eosTokenId);
  if (!Number.isInteger(maxNew) || maxNew < 0) throw new InputError(`maxNewTokens must be an integer >= 0, got ${maxNew}`);
  if (!(temperature >= 0 && Number.isFinite(temperature))) throw new InputError(`temperature must be >= 0, got ${temperature}`);
  if (!(topP > 0 && topP <= 1)) throw new InputError(`topP must be in (0, 1], got ${topP}`);
  const seed = opts.seed ?? 0;
  if (prompts.length === 0) return [];

  const ctx = model.maxPositions;
  const promptIds = prompts.map((p, i) => {
    let ids = typeof p === 'string' ? tokenizer.encode(p).ids : [...p];
    if (ids.length === 0) throw new InputError(`prompt ${i} has no tokens (a decoder needs at least one, e.g. BOS)`);
    const room = opts.truncatePrompt ? Math.max(1, ctx - maxNew) : ctx;
    if (ids.length > room) {
      if (!opts.truncatePrompt) {
        throw new InputError(`prompt ${i} has ${ids.length} tokens, more than the context length ${ctx}; shorten it or pass truncatePrompt to keep its last tokens`);
      }
      const keepBos = model.config.bosTokenId !== null && ids[0] === model.config.bosTokenId && room > 1;
      ids = keepBos ? [ids[0], ...ids.slice(ids.length - room + 1)] : ids.slice(ids.length - room);
    }
    return ids;
  });

  const B = prompts.length;
  const rows = promptIds.map((ids) => ({ ids, typeIds: ids.map(() => 0) }));
  const first = tokenizer.pad(rows, { padSide: 'left' });
  const draws = temperature > 0 && maxNew > 0 ? (tf.tidy(() => tf.randomUniform([maxNew, B], 0, 1, 'float32', seed).dataSync()) as Float32Array) : undefined;
  const out: Generation[] = promptIds.map((ids) => ({ promptIds: ids, ids: [], text: '', finishReason: 'length' }));
  const done = new Array<boolean>(B).fill(maxNew === 0);
  const streamed = new Array<number>(B).fill(0);
  const context = promptIds.map((ids) => ids[ids.length - 1]);

  let mask = first.attentionMask;
  let seqLen = first.seqLen;
  let input: DecoderInput = { inputIds: first.inputIds, batch: B, seqLen, attentionMask: mask };
  let cache: KvCache | undefined;
  try {
    for (let step = 0; step < maxNew && done.some((d) => !d); step++) {
      const res = model.decode(input, { cache, returnCache: true, logits: 'last' });
      disposeKvCache(cache);
      cache = res.cache;
      const logits = (await res.logits!.data()) as Float32Array;
      tf.dispose([res.logits!, res.lastHiddenState, ...res.hiddenStates]);
      const V = logits.length / B;
      // The tokens chosen now could not be fed back: the context is full after this step.
      const contextFull = seqLen + 1 > ctx;
      const next = new Int32Array(B).fill(tokenizer.padId);
      for (let b = 0; b < B; b++) {
        if (done[b]) continue;
        const z = logits.subarray(b * V, (b + 1) * V);
        const id = draws ? sampleTopP(z, temperature, topP, draws[step * B + b]) : argmax(z);
        next[b] = id;
        const g = out[b];
        g.ids.push(id);
        let text = continuationText(tokenizer, context[b], g.ids);
        let finished = false;
        const at = stops.map((s) => text.indexOf(s)).filter((i) => i >= 0);
        if (at.length > 0) {
          text = text.slice(0, Math.min(...at));
          g.finishReason = 'stop';
          finished = true;
        } else if (eos.has(id)) {
          g.finishReason = 'eos';
          finished = true;
        } else if (g.ids.length >= maxNew) {
          finished = true;
        } else if (contextFull) {
          g.finishReason = 'context';
          finished = true;
        }
        g.text = text;
        // Stream what can no longer change: not a possible start of a stop string, not a partial character.
        let visible = text.length;
        if (!finished) visible = Math.min(visible - stopHoldback(text, stops), text.endsWith('\uFFFD') ? text.length - 1 : text.length);
        visible = Math.max(visible, streamed[b]);
        opts.onToken?.({ row: b, step, tokenId: id, text: text.slice(streamed[b], visible) });
        streamed[b] = visible;
        done[b] = finished;
      }
      if (done.every((d) => d)) break;
      const grown = new Int32Array(B * (seqLen + 1));
      for (let b = 0; b < B; b++) {
        grown.set(mask.subarray(b * seqLen, (b + 1) * seqLen), b * (seqLen + 1));
        grown[b * (seqLen + 1) + seqLen] = 1;
      }
      mask = grown;
      seqLen += 1;
      input = { inputIds: next, batch: B, seqLen: 1, attentionMask: mask };
    }
  } finally {
    disposeKvCache(cache);
  }
  return out;
}
