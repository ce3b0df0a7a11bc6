/**
 * Continuous batching of generation requests over one decoder, in the spirit of vLLM's scheduler
 * (Kwon et al. 2023, "Efficient memory management for large language model serving with
 * PagedAttention"; Yu et al. 2022, "Orca": iteration-level scheduling): the batch is re-formed at
 * every decode step instead of once per batch.
 *
 * One loop runs while there is work. Each iteration:
 * 1. drops requests whose caller gave up (an aborted signal), queued or running;
 * 2. admits waiting requests, oldest first, while the batch has fewer than `maxBatchSize` rows: their
 *    prompts are prefilled together in one forward pass and their KV cache joins the running batch's
 *    (lib/models/llama/generate.ts DecodingBatch.join);
 * 3. decodes one token for every running row in one forward pass (DecodingBatch.step); a row that
 *    ends (end of sequence, stop string, max tokens, context) leaves the batch and its request is
 *    answered at once, so its slot is free for the next waiting request;
 * 4. yields to the event loop (setImmediate), so HTTP requests are read, `/health` is answered and
 *    streamed text is written between steps (and between a prefill and the step after it): one
 *    forward pass is the longest the loop holds the thread.
 *
 * The loop starts on the next turn of the event loop after a request arrives, so requests that
 * arrive together (in one turn) are prefilled together. Each request's text streams through its own
 * `onText` as in a lone `generate()` call.
 *
 * Results: greedy decoding gives the tokens a lone `generate()` of the same prompt gives (rows are
 * right-aligned and positions are numbered per row, so a row's arithmetic differs from its lone run
 * only in the order of floating-point sums over padded keys; test/llm-batching.test.ts checks
 * equality). A sampling request draws from its own seed's stream, tf.randomUniform([maxNewTokens, 1],
 * seed), which is what a lone `generate(…, { seed })` draws: its answer depends on itself and its
 * seed, not on the requests it shares the batch with (again up to float rounding of the logits).
 */
import { GenerationError } from './generation-error.js';
import { DecodingBatch, samplingDraws, type CausalLanguageModel, type DecodingRow, type DecodingRowSpec, type Generation } from '../models/llama/generate.js';
import type { TextTokenizer } from '../models/types.js';
import { InputError } from '../util/errors.js';

/** One generation request. */
export interface BatchedRequest {
  /** Named in errors (the prompt's id). */
  id?: string;
  promptIds: number[];
  maxNewTokens: number;
  /** 0 = greedy. */
  temperature: number;
  topP: number;
  /** Seed of the sampling draws (ignored when greedy). */
  seed: number;
  stopStrings: readonly string[];
  /** Default: the model config's eos_token_id. */
  eosTokenIds?: readonly number[];
  /** The new text as it is generated (pieces in order; their concatenation is the result's text). */
  onText?: (delta: string) => void;
  /** Aborting drops the request: while queued, or at the next step boundary while generating. */
  signal?: AbortSignal;
}

export interface ContinuousBatcherOptions {
  /** Rows decoded together at most (default 8). */
  maxBatchSize?: number;
}

/** What the batcher did: a test and a progress line read it. */
export interface BatcherStats {
  /** Requests answered. */
  requests: number;
  /** Prefill forward passes (each admits one or more requests). */
  prefills: number;
  /** Decode steps (one forward pass each, all running rows together). */
  decodeSteps: number;
  /** The most rows in one forward pass. */
  largestBatch: number;
}

interface Entry {
  req: BatchedRequest;
  resolve: (g: Generation) => void;
  reject: (e: unknown) => void;
  /** What the request's own onText threw: it fails that request only, at the next step boundary. */
  failure?: { error: unknown };
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

export class ContinuousBatcher {
  readonly maxBatchSize: number;
  readonly stats: BatcherStats = { requests: 0, prefills: 0, decodeSteps: 0, largestBatch: 0 };
  private readonly waiting: Entry[] = [];
  private readonly running = new Map<DecodingRow, Entry>();
  private readonly batch: DecodingBatch;
  private looping = false;

  constructor(
    private readonly decoder: { model: CausalLanguageModel; tokenizer: TextTokenizer },
    opts: ContinuousBatcherOptions = {},
  ) {
    this.maxBatchSize = opts.maxBatchSize ?? 8;
    if (!Number.isInteger(this.maxBatchSize) || this.maxBatchSize < 1) throw new InputError(`maxBatchSize must be an integer >= 1, got ${opts.maxBatchSize}`);
    this.batch = new DecodingBatch(decoder.model, decoder.tokenizer);
  }

  /** Requests waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Requests being decoded. */
  get active(): number {
    return this.running.size;
  }

  /** Queues a request; resolves with its generation when it ends. */
  submit(req: BatchedRequest): Promise<Generation> {
    const ctx = this.decoder.model.maxPositions;
    if (!Number.isInteger(req.maxNewTokens) || req.maxNewTokens < 0) return Promise.reject(new InputError(`maxNewTokens must be an integer >= 0, got ${req.maxNewTokens}`));
    if (!(req.temperature >= 0 && Number.isFinite(req.temperature))) return Promise.reject(new InputError(`temperature must be >= 0, got ${req.temperature}`));
    if (!(req.topP > 0 && req.topP <= 1)) return Promise.reject(new InputError(`topP must be in (0, 1], got ${req.topP}`));
    if (req.promptIds.length === 0) return Promise.reject(new InputError('the prompt has no tokens (a decoder needs at least one, e.g. BOS)'));
    if (req.promptIds.length > ctx) return Promise.reject(new InputError(`the prompt has ${req.promptIds.length} tokens, more than the context length ${ctx}`));
    if (req.signal?.aborted) return Promise.reject(this.aborted(req, 'before it was queued'));
    return new Promise<Generation>((resolve, reject) => {
      this.waiting.push({ req, resolve, reject });
      if (!this.looping) {
        this.looping = true;
        // Started on the next turn, so that requests arriving in this one are prefilled together.
        setImmediate(() => void this.loop());
      }
    });
  }

  private aborted(req: BatchedRequest, when: string): GenerationError {
    return new GenerationError('aborted', `aborted ${when}`, { id: req.id, cause: req.signal?.reason });
  }

  private async loop(): Promise<void> {
    try {
      while (this.waiting.length > 0 || this.running.size > 0) {
        this.dropAborted();
        // A prefill and a decode step are separate turns, so the thread is held for one forward pass at a time.
        if (await this.admit()) await nextTurn();
        if (this.running.size > 0) {
          this.stats.decodeSteps++;
          this.stats.largestBatch = Math.max(this.stats.largestBatch, this.batch.size);
          let ended: DecodingRow[];
          try {
            ended = await this.batch.step();
          } catch (e) {
            // A failed step leaves no usable cache: every running request fails with it.
            this.failRunning(e);
            continue;
          }
          for (const row of ended) this.finish(row);
        }
        await nextTurn();
      }
    } finally {
      this.looping = false;
    }
  }

  private dropAborted(): void {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const e = this.waiting[i];
      if (e.req.signal?.aborted) {
        this.waiting.splice(i, 1);
        e.reject(this.aborted(e.req, 'while queued'));
      }
    }
    const gone = [...this.running].filter(([, e]) => e.req.signal?.aborted || e.failure);
    if (gone.length === 0) return;
    this.batch.remove(gone.map(([row]) => row));
    for (const [row, e] of gone) {
      this.running.delete(row);
      e.reject(e.failure ? e.failure.error : this.aborted(e.req, `while generating (after ${row.ids.length} tokens)`));
    }
  }

  /** Prefills as many waiting requests as there are free rows; whether it ran a forward pass. */
  private async admit(): Promise<boolean> {
    const room = this.maxBatchSize - this.running.size;
    if (room <= 0 || this.waiting.length === 0) return false;
    const entries = this.waiting.splice(0, room);
    const specs = entries.map((e): DecodingRowSpec => {
      const r = e.req;
      const sampling = r.temperature > 0 && r.maxNewTokens > 0;
      return {
        promptIds: r.promptIds,
        maxNewTokens: r.maxNewTokens,
        temperature: r.temperature,
        topP: r.topP,
        draws: sampling ? samplingDraws(r.maxNewTokens, 1, r.seed) : undefined,
        stopStrings: r.stopStrings,
        eosTokenIds: new Set(r.eosTokenIds ?? this.decoder.model.config.eosTokenId),
        onToken: r.onText
          ? (ev) => {
              if (ev.text === '' || e.failure) return;
              try {
                r.onText!(ev.text);
              } catch (error) {
                e.failure = { error };
              }
            }
          : undefined,
      };
    });
    this.stats.prefills++;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, entries.length);
    let rows: DecodingRow[];
    try {
      rows = await this.batch.join(specs);
    } catch (e) {
      // The prefill failed before anything joined the batch: only these requests fail.
      for (const entry of entries) entry.reject(e);
      return true;
    }
    rows.forEach((row, i) => {
      const entry = entries[i];
      if (row.done) this.settle(entry, row);
      else this.running.set(row, entry);
    });
    return true;
  }

  private finish(row: DecodingRow): void {
    const entry = this.running.get(row);
    if (!entry) return;
    this.running.delete(row);
    this.settle(entry, row);
  }

  private settle(entry: Entry, row: DecodingRow): void {
    if (entry.failure) return entry.reject(entry.failure.error);
    this.stats.requests++;
    entry.resolve(row.result());
  }

  private failRunning(e: unknown): void {
    const entries = [...this.running.values()];
    this.running.clear();
    this.batch.dispose();
    for (const entry of entries) entry.reject(e);
  }
}
