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
 * Requests are decoded by continuous batching (./continuous-batcher.ts): up to `maxBatchSize` of
 * them together, greedy and sampling alike, whatever their max_tokens and stop strings; a request
 * joins the running batch at the next decode step and leaves it when it ends, and the decoder yields
 * to the event loop between steps (a server stays responsive while it generates). A greedy answer
 * equals the one `generate()` gives the prompt alone (test/llm-batching.test.ts), a sampled one is
 * drawn from the request's own seed as a lone `generate()` with that seed would draw it (up to
 * float rounding of the logits in either case; set maxBatchSize 1 where even floating-point ties
 * must not differ). A request whose signal aborts is dropped, queued or running (at the next step).
 */
import { InputError } from '../util/errors.js';
import { chatPromptIds, readChatTemplate } from '../models/llama/chat-template.js';
import type { CausalLanguageModel } from '../models/llama/generate.js';
import type { TextTokenizer } from '../models/types.js';
import { ContinuousBatcher, type BatcherStats } from './continuous-batcher.js';
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
  /** Requests decoded together at most (default 8). */
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
}

/** The plain prompt of a conversation: its contents, a blank line between messages. */
export function plainPrompt(messages: readonly ChatMessage[]): string {
  return messages.map((m) => m.content).join('\n\n');
}

export class LocalChatGenerator implements ChatGenerator {
  readonly name: string;
  readonly model: string;
  readonly promptStyle: 'chat-template' | 'plain';
  private readonly batcher: ContinuousBatcher;

  constructor(
    readonly decoder: LocalDecoder,
    opts: LocalGeneratorOptions = {},
  ) {
    this.model = opts.modelName ?? decoder.id;
    this.name = `local:${this.model}`;
    this.batcher = new ContinuousBatcher(decoder, { maxBatchSize: opts.maxBatchSize });
    const hasTemplate = readChatTemplate(decoder.dir) !== undefined;
    const style = opts.prompt ?? 'auto';
    if (style === 'chat-template' && !hasTemplate) throw new InputError('the model has no chat template (tokenizer_config.json chat_template); use the plain prompt', { file: decoder.dir });
    this.promptStyle = style === 'plain' || !hasTemplate ? 'plain' : 'chat-template';
  }

  /** Requests answered, prefills, decode steps and the largest batch (a test and a progress line read them). */
  get stats(): Readonly<BatcherStats> {
    return this.batcher.stats;
  }

  /** Requests waiting for a slot, and requests being decoded. */
  get load(): { queued: number; active: number } {
    return { queued: this.batcher.queued, active: this.batcher.active };
  }

  /** The prompt's token ids for a conversation, as this generator feeds them. */
  promptIds(messages: readonly ChatMessage[]): number[] {
    if (this.promptStyle === 'chat-template') return chatPromptIds(this.decoder, messages.map((m) => ({ role: m.role, content: m.content })));
    return this.decoder.tokenizer.encode(plainPrompt(messages)).ids;
  }

  async complete(request: ChatRequest, opts: CompleteOptions = {}): Promise<ChatResult> {
    let job: Job;
    try {
      job = this.prepare(request, opts);
    } catch (e) {
      const id = (request as ChatRequest | undefined)?.id;
      if (e instanceof InputError) throw new GenerationError('input', e.message, { id, cause: e });
      if (opts.signal?.aborted) throw new GenerationError('aborted', 'aborted before it was queued', { id, cause: e });
      throw e;
    }
    const id = job.req.id;
    let g;
    try {
      g = await this.batcher.submit({ id, promptIds: job.promptIds, maxNewTokens: job.maxNew, temperature: job.temperature, topP: job.topP, seed: job.seed, stopStrings: job.stops, onText: opts.onText, signal: opts.signal });
    } catch (e) {
      throw e instanceof InputError ? new GenerationError('input', e.message, { id, cause: e }) : e;
    }
    return {
      ...(id !== undefined ? { id } : {}),
      text: g.text,
      usage: { promptTokens: g.promptIds.length, completionTokens: g.ids.length, totalTokens: g.promptIds.length + g.ids.length },
      finishReason: g.finishReason === 'eos' || g.finishReason === 'stop' ? 'stop' : 'length',
      model: this.model,
      cached: false,
      attempts: 0,
    };
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
    };
  }
}
