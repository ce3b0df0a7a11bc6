/**
 * The project's own decoder (lib/models/llama: `generate()` on a loaded LLaMA) behind the chat
 * generator interface, so a notebook switches between it and a remote endpoint by changing one
 * object, and ./server.ts can serve it to other tools.
 *
 * Prompt: where the model's tokenizer_config.json has a chat template (LLaMA-2-chat's), the
 * messages rendered by it with the generation prompt, as transformers' apply_chat_template
 * (lib/models/llama/chat-template.ts chatPromptIds); otherwise (base models, llama2.c's folders)
 * the messages' contents joined by a blank line, encoded as the tokenizer encodes text (with its
 * BOS), and continued from there.
 *
 * Parameters as OpenAI's API defines them, defaults included: temperature 1 and top_p 1 when the
 * request leaves them out; temperature 0 is greedy; `max_tokens` defaults to the room left in the
 * context; a prompt that with its max_tokens does not fit the context is refused
 * ('context_length_exceeded'), as OpenAI and vLLM refuse it. Sampling draws come from `seed`
 * (a request without one gets a fresh random seed, so repeated calls differ as on OpenAI). The
 * finish reason is 'stop' (end-of-sequence id or a stop string) or 'length'.
 *
 * Requests are queued and decoded one batch at a time (the decoder holds the whole device).
 * Greedy requests waiting in the queue with the same max_tokens and stop strings are decoded
 * together, left-padded, up to `maxBatchSize` (batched greedy decoding equals one-by-one decoding:
 * test/generate.test.ts; set maxBatchSize 1 where even floating-point ties must not differ);
 * a sampling request runs alone, so that its answer depends only on itself and its seed.
 * A queued request whose signal aborts is dropped; a batch being decoded runs to its end.
 */
import { InputError } from '../util/errors.js';
import { chatPromptIds, readChatTemplate } from '../models/llama/chat-template.js';
import { generate, type CausalLanguageModel, type Generation } from '../models/llama/generate.js';
import type { TextTokenizer } from '../models/types.js';
import { GenerationError } from './generation-error.js';
import { InvalidRequestError, stopStrings, validateChatRequest } from './request.js';
import type { ChatGenerator, ChatMessage, ChatRequest, ChatResult, CompleteOptions } from './types.js';

/** What the local generator needs of a loaded model (a LoadedModel<LlamaModel> has it). */
export interface LocalDecoder {
  model: CausalLanguageModel;
  tokenizer: TextTokenizer;
  /** The model directory (its tokenizer_config.json may hold a chat template). */
  dir: string;
  /** What it was loaded as: a Hub id or a path. */
  id: string;
}

export interface LocalGeneratorOptions {
  /** The name requests and answers use for the model (default: the id it was loaded as). */
  modelName?: string;
  /** Greedy requests decoded together at most (default 8). */
  maxBatchSize?: number;
  /** 'auto' (default): the chat template where the model has one, else the plain prompt. */
  prompt?: 'auto' | 'chat-template' | 'plain';
}

interface Job {
  req: ChatRequest;
  promptIds: number[];
  maxNew: number;
  temperature: number;
  topP: number;
  seed: number;
  stops: string[];
  onText?: (delta: string) => void;
  signal?: AbortSignal;
  resolve: (r: ChatResult) => void;
  reject: (e: unknown) => void;
}

/** The plain prompt of a conversation: its contents, a blank line between messages. */
export function plainPrompt(messages: readonly ChatMessage[]): string {
  return messages.map((m) => m.content).join('\n\n');
}

export class LocalChatGenerator implements ChatGenerator {
  readonly name: string;
  readonly model: string;
  readonly promptStyle: 'chat-template' | 'plain';
  /** Batches decoded, and the requests in them (a test and a progress line read them). */
  readonly stats = { batches: 0, requests: 0, largestBatch: 0 };
  private readonly queue: Job[] = [];
  private running = false;
  private readonly maxBatch: number;

  constructor(
    readonly decoder: LocalDecoder,
    opts: LocalGeneratorOptions = {},
  ) {
    this.model = opts.modelName ?? decoder.id;
    this.name = `local:${this.model}`;
    this.maxBatch = opts.maxBatchSize ?? 8;
    if (!Number.isInteger(this.maxBatch) || this.maxBatch < 1) throw new InputError(`maxBatchSize must be an integer >= 1, got ${opts.maxBatchSize}`);
    const hasTemplate = readChatTemplate(decoder.dir) !== undefined;
    const style = opts.prompt ?? 'auto';
    if (style === 'chat-template' && !hasTemplate) throw new InputError('the model has no chat template (tokenizer_config.json chat_template); use the plain prompt', { file: decoder.dir });
    this.promptStyle = style === 'plain' || !hasTemplate ? 'plain' : 'chat-template';
  }

  /** The prompt's token ids for a conversation, as this generator feeds them. */
  promptIds(messages: readonly ChatMessage[]): number[] {
    if (this.promptStyle === 'chat-template') return chatPromptIds(this.decoder, messages.map((m) => ({ role: m.role, content: m.content })));
    return this.decoder.tokenizer.encode(plainPrompt(messages)).ids;
  }

  complete(request: ChatRequest, opts: CompleteOptions = {}): Promise<ChatResult> {
    let job: Job;
    try {
      job = this.prepare(request, opts);
    } catch (e) {
      const id = (request as ChatRequest | undefined)?.id;
      if (e instanceof InputError) return Promise.reject(new GenerationError('input', e.message, { id, cause: e }));
      return Promise.reject(e);
    }
    return new Promise<ChatResult>((resolve, reject) => {
      job.resolve = resolve;
      job.reject = reject;
      if (opts.signal) {
        opts.signal.addEventListener(
          'abort',
          () => {
            const i = this.queue.indexOf(job);
            if (i >= 0) {
              this.queue.splice(i, 1);
              reject(new GenerationError('aborted', 'aborted while queued', { id: job.req.id, cause: opts.signal!.reason }));
            }
          },
          { once: true },
        );
      }
      this.queue.push(job);
      void this.drain();
    });
  }

  private prepare(request: ChatRequest, opts: CompleteOptions): Job {
    const req = validateChatRequest(request);
    if (req.model !== undefined && req.model !== this.model) throw new InvalidRequestError(`the model '${req.model}' does not exist here; this server has '${this.model}'`, 'model', 'model_not_found');
    opts.signal?.throwIfAborted();
    const promptIds = this.promptIds(req.messages);
    const ctx = this.decoder.model.maxPositions;
    if (promptIds.length >= ctx) {
      throw new InvalidRequestError(`the prompt has ${promptIds.length} tokens; the model's context is ${ctx} tokens, which leaves no room for an answer`, 'messages', 'context_length_exceeded');
    }
    const maxNew = req.max_tokens ?? ctx - promptIds.length;
    if (promptIds.length + maxNew > ctx) {
      throw new InvalidRequestError(`the prompt (${promptIds.length} tokens) and max_tokens (${maxNew}) exceed the model's context of ${ctx} tokens; ask for at most ${ctx - promptIds.length} tokens`, 'max_tokens', 'context_length_exceeded');
    }
    return {
      req,
      promptIds,
      maxNew,
      temperature: req.temperature ?? 1,
      topP: req.top_p ?? 1,
      seed: req.seed ?? Math.floor(Math.random() * 2 ** 31),
      stops: stopStrings(req),
      onText: opts.onText,
      signal: opts.signal,
      resolve: () => undefined,
      reject: () => undefined,
    };
  }

  /** Decodes queued requests, one batch at a time, until the queue is empty. */
  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.nextBatch();
        await this.decode(batch);
      }
    } finally {
      this.running = false;
    }
  }

  /** The first queued job, and the greedy jobs that can share its batch. */
  private nextBatch(): Job[] {
    const first = this.queue.shift()!;
    const batch = [first];
    if (first.temperature === 0) {
      const same = (j: Job) => j.temperature === 0 && j.maxNew === first.maxNew && j.stops.length === first.stops.length && j.stops.every((s, i) => s === first.stops[i]);
      for (let i = 0; i < this.queue.length && batch.length < this.maxBatch; ) {
        if (same(this.queue[i])) batch.push(...this.queue.splice(i, 1));
        else i++;
      }
    }
    return batch;
  }

  private async decode(batch: Job[]): Promise<void> {
    const first = batch[0];
    let out: Generation[];
    try {
      out = await generate(
        this.decoder,
        batch.map((j) => j.promptIds),
        {
          maxNewTokens: first.maxNew,
          temperature: first.temperature,
          topP: first.topP,
          seed: first.seed,
          stopStrings: first.stops,
          onToken: (e) => {
            if (e.text !== '') batch[e.row].onText?.(e.text);
          },
        },
      );
    } catch (e) {
      for (const j of batch) j.reject(e instanceof InputError ? new GenerationError('input', e.message, { id: j.req.id, cause: e }) : e);
      return;
    }
    this.stats.batches++;
    this.stats.requests += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    batch.forEach((j, i) => {
      const g = out[i];
      j.resolve({
        ...(j.req.id !== undefined ? { id: j.req.id } : {}),
        text: g.text,
        usage: { promptTokens: g.promptIds.length, completionTokens: g.ids.length, totalTokens: g.promptIds.length + g.ids.length },
        finishReason: g.finishReason === 'eos' || g.finishReason === 'stop' ? 'stop' : 'length',
        model: this.model,
        cached: false,
        attempts: 0,
      });
    });
  }
}
