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
 * or when its sequence fills the context ('context'). `onToken` streams each row's text as it
 * grows, holding back a tail that may still become a stop string or an unfinished UTF-8 character.
 *
 * Text is decoded as the tokenizer decodes the continuation after the prompt's last token (run.c
 * prints each token after its predecessor, so "Once" after BOS but " They" after "dog."); the
 * tokenizer must have `decode` for text, otherwise `text` is empty and `ids` are the result.
 *
 * A prompt longer than the context is an error unless `truncatePrompt`, which keeps the prompt's
 * last tokens so that prompt + maxNewTokens fit (a leading BOS is kept).
 *
 * The batch is a `DecodingBatch`, which continuous batching (lib/llm/continuous-batcher.ts) drives
 * too: rows can join a running batch at a step boundary (their prompts are prefilled together, and
 * their KV cache is merged into the batch's, left-padded to a common length) and leave it when they
 * finish (their cache rows are dropped, and columns that are padding in every remaining row are cut
 * off). Rows stay right-aligned — every row's last token is in the last column — so the padded
 * length is the longest row's, and since the model numbers rotary/learned positions per row from the
 * attention mask, a row computes what it computes alone, up to the order of floating-point sums.
 */
import { tf } from '../../backend/index.js';
import { InputError } from '../../util/errors.js';
import type { TextTokenizer } from '../types.js';
import { disposeKvCache, type DecoderInput, type DecoderOptions, type DecoderOutput, type KvCache } from '../causal-decoder.js';

/**
 * What generation needs of a model (LlamaModel has it). `decode` must accept a cache it returned
 * earlier whose tensors were re-batched along axis 0 and left-padded along axis 2 (the layout of
 * KvCache: [batch, heads, length, headDim]), with an attention mask that marks the padding 0, and
 * number each row's positions from that mask (as LlamaModel's positionsFromMask does).
 */
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

/**
 * The uniform draws of a seeded generation: [maxNewTokens, rows] row-major from tf.randomUniform,
 * so step s of row b uses element s·rows + b (a lone request's draws are its seed's first column).
 */
export function samplingDraws(maxNewTokens: number, rows: number, seed: number): Float32Array {
  return tf.tidy(() => tf.randomUniform([maxNewTokens, rows], 0, 1, 'float32', seed).dataSync()) as Float32Array;
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

/** One row of a decoding batch: how it chooses tokens and when it ends. */
export interface DecodingRowSpec {
  /** The prompt's token ids (special tokens included; at least one, at most the context). */
  promptIds: number[];
  maxNewTokens: number;
  /** 0 = greedy; > 0 = sampling at this temperature with `draws`. */
  temperature: number;
  /** Nucleus mass in (0, 1]. */
  topP: number;
  /** Uniform draws in [0, 1), one per step (sampling only): step s uses draws[s]. */
  draws?: ArrayLike<number>;
  /** The row ends when its text contains one of these (empty strings are ignored). */
  stopStrings: readonly string[];
  /** Ids that end the row. */
  eosTokenIds: ReadonlySet<number>;
  /** Every chosen token, with the text that it makes visible ('' while a tail is held back). */
  onToken?: (event: { step: number; tokenId: number; text: string }) => void;
}

/** A row's generation so far: chosen ids, text, what was streamed, whether and why it ended. */
export class DecodingRow {
  readonly ids: number[] = [];
  text = '';
  finishReason: FinishReason = 'length';
  done = false;
  private streamed = 0;
  private readonly stops: string[];

  constructor(
    readonly spec: DecodingRowSpec,
    private readonly tokenizer: TextTokenizer,
  ) {
    this.stops = spec.stopStrings.filter((s) => s.length > 0);
    if (spec.temperature > 0 && !spec.draws) throw new Error('a sampling row needs its uniform draws');
    if (spec.maxNewTokens === 0) this.done = true;
  }

  get promptIds(): number[] {
    return this.spec.promptIds;
  }

  /** Tokens of the row's sequence once its last chosen token is fed: prompt + generated. */
  get length(): number {
    return this.spec.promptIds.length + this.ids.length;
  }

  /** Chooses the next token from the row's logits `z`; `context` is the model's context length. */
  choose(z: ArrayLike<number>, context: number): void {
    const { spec } = this;
    const step = this.ids.length;
    const id = spec.temperature > 0 ? sampleTopP(z, spec.temperature, spec.topP, spec.draws![step]) : argmax(z);
    this.ids.push(id);
    let text = continuationText(this.tokenizer, spec.promptIds[spec.promptIds.length - 1], this.ids);
    let finished = true;
    const at = this.stops.map((s) => text.indexOf(s)).filter((i) => i >= 0);
    if (at.length > 0) {
      text = text.slice(0, Math.min(...at));
      this.finishReason = 'stop';
    } else if (spec.eosTokenIds.has(id)) {
      this.finishReason = 'eos';
    } else if (this.ids.length >= spec.maxNewTokens) {
      this.finishReason = 'length';
    } else if (this.length > context) {
      // The token chosen now could not be fed back: the row's sequence would outgrow the context.
      this.finishReason = 'context';
    } else {
      finished = false;
    }
    this.text = text;
    // Stream what can no longer change: not a possible start of a stop string, not a partial character.
    let visible = text.length;
    if (!finished) visible = Math.min(visible - stopHoldback(text, this.stops), text.endsWith('\uFFFD') ? text.length - 1 : text.length);
    visible = Math.max(visible, this.streamed);
    const delta = text.slice(this.streamed, visible);
    this.streamed = visible;
    this.done = finished;
    spec.onToken?.({ step, tokenId: id, text: delta });
  }

  result(): Generation {
    return { promptIds: this.spec.promptIds, ids: [...this.ids], text: this.text, finishReason: this.finishReason };
  }
}

/** The rows `keep` of a cache and of its mask [rows, length]. */
function selectRows(cache: KvCache, mask: Int32Array, keep: readonly number[]): { cache: KvCache; mask: Int32Array } {
  const len = cache.length;
  const kept = new Int32Array(keep.length * len);
  keep.forEach((r, i) => kept.set(mask.subarray(r * len, (r + 1) * len), i * len));
  const idx = tf.tensor1d(Int32Array.from(keep), 'int32');
  const pick = (ts: tf.Tensor4D[]) => ts.map((t) => tf.gather(t, idx, 0) as tf.Tensor4D);
  const out = { keys: pick(cache.keys), values: pick(cache.values), length: len };
  idx.dispose();
  return { cache: out, mask: kept };
}

/** The cache and mask without their first `n` columns (padding in every row). */
function dropLeadingColumns(cache: KvCache, mask: Int32Array, rows: number, n: number): { cache: KvCache; mask: Int32Array } {
  const len = cache.length;
  const cut = new Int32Array(rows * (len - n));
  for (let r = 0; r < rows; r++) cut.set(mask.subarray(r * len + n, (r + 1) * len), r * (len - n));
  const slice = (ts: tf.Tensor4D[]) => ts.map((t) => tf.slice(t, [0, 0, n, 0], [-1, -1, -1, -1]) as tf.Tensor4D);
  return { cache: { keys: slice(cache.keys), values: slice(cache.values), length: len - n }, mask: cut };
}

/** Two batches' caches stacked (rows of `a` first), the shorter left-padded with masked zeros. */
function stackBatches(a: { cache: KvCache; mask: Int32Array; rows: number }, b: { cache: KvCache; mask: Int32Array; rows: number }): { cache: KvCache; mask: Int32Array } {
  const len = Math.max(a.cache.length, b.cache.length);
  const mask = new Int32Array((a.rows + b.rows) * len);
  const place = (x: typeof a, first: number) => {
    const off = len - x.cache.length;
    for (let r = 0; r < x.rows; r++) mask.set(x.mask.subarray(r * x.cache.length, (r + 1) * x.cache.length), (first + r) * len + off);
  };
  place(a, 0);
  place(b, a.rows);
  const padded = (t: tf.Tensor4D, n: number) => (n === 0 ? t : tf.pad(t, [[0, 0], [0, 0], [n, 0], [0, 0]]));
  const join = (ta: tf.Tensor4D[], tb: tf.Tensor4D[]) =>
    ta.map((t, l) => tf.tidy(() => tf.concat([padded(t, len - a.cache.length), padded(tb[l], len - b.cache.length)], 0) as tf.Tensor4D));
  return { cache: { keys: join(a.cache.keys, b.cache.keys), values: join(a.cache.values, b.cache.values), length: len }, mask };
}

/** Index of the first column where some row of `mask` [rows, len] is 1 (len when none is). */
function firstRealColumn(mask: Int32Array, rows: number, len: number): number {
  let first = len;
  for (let r = 0; r < rows; r++) {
    for (let s = 0; s < first; s++) {
      if (mask[r * len + s] !== 0) {
        first = s;
        break;
      }
    }
  }
  return first;
}

/**
 * Rows decoded together over one KV cache. `join` prefills new rows and adds them; `step` feeds
 * every row's last chosen token and chooses the next; finished rows leave at once. Each call is one
 * forward pass of the model. Not safe for overlapping calls: await each before the next.
 */
export class DecodingBatch {
  private rows: DecodingRow[] = [];
  private cache: KvCache | undefined;
  /** [rows, cache length]: 1 for real tokens, 0 for padding. */
  private mask: Int32Array = new Int32Array(0);

  constructor(
    private readonly model: CausalLanguageModel,
    private readonly tokenizer: TextTokenizer,
  ) {}

  /** Rows in the batch (each with a chosen token not yet fed). */
  get size(): number {
    return this.rows.length;
  }

  /** The padded length of the batch's cache. */
  get cacheLength(): number {
    return this.cache?.length ?? 0;
  }

  /**
   * Prefills the rows of `specs` in one left-padded forward pass and chooses each row's first
   * token; the rows that did not end with it join the batch. Returns every new row (a row with
   * maxNewTokens 0 is done without a forward pass).
   */
  async join(specs: readonly DecodingRowSpec[]): Promise<DecodingRow[]> {
    const ctx = this.model.maxPositions;
    specs.forEach((s, i) => {
      if (s.promptIds.length === 0) throw new InputError(`prompt ${i} has no tokens (a decoder needs at least one, e.g. BOS)`);
      if (s.promptIds.length > ctx) throw new InputError(`prompt ${i} has ${s.promptIds.length} tokens, more than the context length ${ctx}`);
    });
    const rows = specs.map((s) => new DecodingRow(s, this.tokenizer));
    const live = rows.filter((r) => !r.done);
    if (live.length === 0) return rows;
    const first = this.tokenizer.pad(
      live.map((r) => ({ ids: r.promptIds, typeIds: r.promptIds.map(() => 0) })),
      { padSide: 'left' },
    );
    const res = this.model.decode({ inputIds: first.inputIds, batch: live.length, seqLen: first.seqLen, attentionMask: first.attentionMask }, { returnCache: true, logits: 'last' });
    let added: { cache: KvCache; mask: Int32Array } = { cache: res.cache!, mask: first.attentionMask };
    try {
      const logits = (await res.logits!.data()) as Float32Array;
      tf.dispose([res.logits!, res.lastHiddenState, ...res.hiddenStates]);
      const V = logits.length / live.length;
      live.forEach((r, b) => r.choose(logits.subarray(b * V, (b + 1) * V), ctx));
      const keep = live.map((r, b) => (r.done ? -1 : b)).filter((b) => b >= 0);
      if (keep.length === 0) return rows;
      if (keep.length < live.length) {
        const picked = selectRows(added.cache, added.mask, keep);
        disposeKvCache(added.cache);
        added = picked;
      }
      const joining = keep.map((b) => live[b]);
      if (!this.cache) {
        this.cache = added.cache;
        this.mask = added.mask;
        added = { cache: { keys: [], values: [], length: 0 }, mask: new Int32Array(0) };
      } else {
        const stacked = stackBatches({ cache: this.cache, mask: this.mask, rows: this.rows.length }, { ...added, rows: joining.length });
        disposeKvCache(this.cache);
        this.cache = stacked.cache;
        this.mask = stacked.mask;
      }
      this.rows.push(...joining);
      this.compact();
      return rows;
    } finally {
      disposeKvCache(added.cache);
    }
  }

  /** Feeds every row's last chosen token and chooses its next one; returns the rows that ended (they have left). */
  async step(): Promise<DecodingRow[]> {
    if (!this.cache || this.rows.length === 0) return [];
    const B = this.rows.length;
    const len = this.cache.length;
    const grown = new Int32Array(B * (len + 1));
    for (let b = 0; b < B; b++) {
      grown.set(this.mask.subarray(b * len, (b + 1) * len), b * (len + 1));
      grown[b * (len + 1) + len] = 1;
    }
    const next = Int32Array.from(this.rows, (r) => r.ids[r.ids.length - 1]);
    const res = this.model.decode({ inputIds: next, batch: B, seqLen: 1, attentionMask: grown }, { cache: this.cache, returnCache: true, logits: 'last' });
    disposeKvCache(this.cache);
    this.cache = res.cache;
    this.mask = grown;
    const logits = (await res.logits!.data()) as Float32Array;
    tf.dispose([res.logits!, res.lastHiddenState, ...res.hiddenStates]);
    const V = logits.length / B;
    const ctx = this.model.maxPositions;
    this.rows.forEach((r, b) => r.choose(logits.subarray(b * V, (b + 1) * V), ctx));
    const ended = this.rows.filter((r) => r.done);
    if (ended.length > 0) this.remove(ended);
    return ended;
  }

  /** Takes rows out of the batch (ended ones, or ones whose caller gave up). */
  remove(rows: readonly DecodingRow[]): void {
    const gone = new Set(rows);
    const keep = this.rows.map((r, b) => (gone.has(r) ? -1 : b)).filter((b) => b >= 0);
    if (keep.length === this.rows.length) return;
    if (keep.length === 0) {
      this.dispose();
      return;
    }
    const picked = selectRows(this.cache!, this.mask, keep);
    disposeKvCache(this.cache);
    this.cache = picked.cache;
    this.mask = picked.mask;
    this.rows = keep.map((b) => this.rows[b]);
    this.compact();
  }

  /** Drops the columns that are padding in every row (after the longest row left). */
  private compact(): void {
    const n = firstRealColumn(this.mask, this.rows.length, this.cache!.length);
    if (n === 0) return;
    const cut = dropLeadingColumns(this.cache!, this.mask, this.rows.length, n);
    disposeKvCache(this.cache);
    this.cache = cut.cache;
    this.mask = cut.mask;
  }

  /** Frees the cache; the batch is empty afterwards. */
  dispose(): void {
    disposeKvCache(this.cache);
    this.cache = undefined;
    this.mask = new Int32Array(0);
    this.rows = [];
  }
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
  const draws = temperature > 0 && maxNew > 0 ? samplingDraws(maxNew, B, seed) : undefined;
  const specs: DecodingRowSpec[] = promptIds.map((ids, b) => ({
    promptIds: ids,
    maxNewTokens: maxNew,
    temperature,
    topP,
    draws: draws ? Float32Array.from({ length: maxNew }, (_, s) => draws[s * B + b]) : undefined,
    stopStrings: opts.stopStrings ?? [],
    eosTokenIds: eos,
    onToken: opts.onToken ? (e) => opts.onToken!({ row: b, ...e }) : undefined,
  }));
  const batch = new DecodingBatch(model, tokenizer);
  try {
    const rows = await batch.join(specs);
    while (batch.size > 0) await batch.step();
    return rows.map((r) => r.result());
  } finally {
    batch.dispose();
  }
}
