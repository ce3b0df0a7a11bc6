/**
 * A client of any OpenAI-compatible chat-completions endpoint: `POST {baseURL}/chat/completions`
 * with OpenAI's request JSON, reading OpenAI's response JSON (or its server-sent-event stream).
 * OpenAI itself, vLLM, llama.cpp's server, TGI and this project's own server (./server.ts) speak it.
 *
 * - Where to: `baseURL` (e.g. http://127.0.0.1:8080/v1), else OPENAI_BASE_URL, else
 *   https://api.openai.com/v1; the key: `apiKey`, else OPENAI_API_KEY (sent as a bearer token; a
 *   local server needs none); the model: `model`, else OPENAI_MODEL.
 * - Concurrency, time limits and retries are ./openai-endpoint.ts's (shared with the embeddings
 *   client): at most `maxConcurrency` requests in flight, retries of 429 (honouring Retry-After),
 *   5xx, timeouts, dropped connections and garbled 2xx bodies, never of another 4xx. A request
 *   that still fails is a GenerationError naming the prompt's id.
 * - Every answer carries its token usage (the server's `usage`, else an estimate flagged as such)
 *   and its estimated cost from the caller's price table (./pricing.ts); `usage` tallies the run.
 * - With `onText` the request streams (`stream: true`, `stream_options.include_usage`); a stream
 *   retried after part of it was delivered continues after what was already delivered when the new
 *   answer begins with it (greedy decoding, seeded sampling), and fails otherwise.
 *
 * Caching is not done here: wrap the client in ./cached-generator.ts.
 */
import { InputError } from '../util/errors.js';
import { GenerationError } from './generation-error.js';
import type { Limiter } from './limiter.js';
import { isObject, nonEmpty, OpenAIEndpoint, serverMessage, type OpenAIEndpointOptions } from './openai-endpoint.js';
import { costOf, estimateTokens, UsageTally, type PriceTable } from './pricing.js';
import { validateChatRequest } from './request.js';
import { sseData } from './sse.js';
import type { ChatGenerator, ChatRequest, ChatResult, CompleteOptions, TokenUsage } from './types.js';

export { OPENAI_DEFAULT_BASE_URL } from './openai-endpoint.js';

export interface OpenAIClientOptions extends OpenAIEndpointOptions {
  /** The model of requests that name none. Default: OPENAI_MODEL. */
  model?: string;
  /** Prices for the cost estimate (none assumed). */
  prices?: PriceTable;
  /** The name of the token limit in the body: 'max_tokens' (default, understood everywhere) or OpenAI's newer 'max_completion_tokens'. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

function usageOf(u: unknown, promptChars: string, text: string): TokenUsage {
  if (isObject(u) && typeof u.prompt_tokens === 'number' && typeof u.completion_tokens === 'number') {
    const total = typeof u.total_tokens === 'number' ? u.total_tokens : u.prompt_tokens + u.completion_tokens;
    return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, totalTokens: total };
  }
  const promptTokens = estimateTokens(promptChars);
  const completionTokens = estimateTokens(text);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, estimated: true };
}

/** What one attempt produced. */
interface Answer {
  text: string;
  finishReason: string;
  model: string;
  usage: unknown;
}

export class OpenAIChatClient implements ChatGenerator {
  readonly name: string;
  readonly model: string;
  readonly baseURL: string;
  /** The chat-completions URL. */
  readonly endpoint: string;
  /** Tokens and cost of every answer this client produced. */
  readonly usage = new UsageTally();
  private readonly http: OpenAIEndpoint;

  constructor(private readonly opts: OpenAIClientOptions = {}) {
    const env = opts.env ?? process.env;
    this.http = new OpenAIEndpoint(opts, '/chat/completions');
    this.baseURL = this.http.baseURL;
    this.endpoint = this.http.url('/chat/completions');
    const model = nonEmpty(opts.model) ?? nonEmpty(env.OPENAI_MODEL);
    if (!model) throw new InputError('no model for the chat-completions client: pass { model } or set OPENAI_MODEL');
    this.model = model;
    this.name = `openai:${model}@${new URL(this.endpoint).host}`;
  }

  /** The concurrency bound of this client's requests. */
  get limiter(): Limiter {
    return this.http.limiter;
  }

  /** HTTP attempts sent (retries included). */
  get attemptsSent(): number {
    return this.http.attemptsSent;
  }

  async complete(request: ChatRequest, opts: CompleteOptions = {}): Promise<ChatResult> {
    let req: ChatRequest;
    try {
      req = validateChatRequest(request);
    } catch (e) {
      // Checked before sending: a request the server would refuse costs nothing.
      throw new GenerationError('input', (e as Error).message, { id: (request as ChatRequest | undefined)?.id, cause: e });
    }
    const id = req.id;
    let delivered = '';
    const onText = opts.onText;
    return this.http.run(id, opts.signal, async (attempt) => {
      let seen = '';
      // A retried stream sends again what was already delivered: pass on only what is new.
      const forward = onText
        ? (delta: string) => {
            const before = seen.length;
            seen += delta;
            const common = Math.min(seen.length, delivered.length);
            if (seen.slice(0, common) !== delivered.slice(0, common)) {
              throw new GenerationError('connection', 'the retried stream differs from the text already streamed (sampling without a seed?); cannot continue it', { id, attempts: attempt, retryable: false });
            }
            if (seen.length > delivered.length) {
              onText(seen.slice(Math.max(before, delivered.length)));
              delivered = seen;
            }
          }
        : undefined;
      const a = await this.http.post(this.endpoint, this.requestBody(req, forward !== undefined), { signal: opts.signal, accept: forward ? 'text/event-stream' : 'application/json' }, async (res) =>
        forward ? this.readStream(res, forward) : this.readJson(await res.text()),
      );
      const model = req.model ?? this.model;
      const usage = usageOf(a.usage, req.messages.map((m) => m.content).join('\n'), a.text);
      const costUsd = costOf(usage, model, this.opts.prices) ?? costOf(usage, a.model, this.opts.prices);
      const result: ChatResult = { ...(id !== undefined ? { id } : {}), text: a.text, usage, finishReason: a.finishReason, model: a.model || model, cached: false, attempts: attempt, ...(costUsd !== undefined ? { costUsd } : {}) };
      this.usage.add(result);
      return result;
    });
  }

  /** The body sent for a request. */
  requestBody(req: ChatRequest, stream: boolean): Record<string, unknown> {
    const body: Record<string, unknown> = { model: req.model ?? this.model, messages: req.messages.map((m) => ({ role: m.role, content: m.content })) };
    if (req.temperature !== undefined) body.temperature = req.temperature;
    if (req.top_p !== undefined) body.top_p = req.top_p;
    if (req.max_tokens !== undefined) body[this.opts.maxTokensField ?? 'max_tokens'] = req.max_tokens;
    if (req.stop !== undefined) body.stop = req.stop;
    if (req.seed !== undefined) body.seed = req.seed;
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  }

  private readJson(text: string): Answer {
    let j: unknown;
    try {
      j = JSON.parse(text);
    } catch {
      throw new GenerationError('malformed', `the answer from ${this.endpoint} is not JSON: ${serverMessage(text)}`, { retryable: true, body: text.slice(0, 2000) });
    }
    const choice = isObject(j) && Array.isArray(j.choices) && isObject(j.choices[0]) ? j.choices[0] : undefined;
    const message = choice && isObject(choice.message) ? choice.message : undefined;
    if (!isObject(j) || !message || !(typeof message.content === 'string' || message.content === null)) {
      throw new GenerationError('malformed', `the answer from ${this.endpoint} is not a chat completion (expected choices[0].message.content): ${serverMessage(text)}`, { retryable: true, body: text.slice(0, 2000) });
    }
    return { text: (message.content as string | null) ?? '', finishReason: typeof choice!.finish_reason === 'string' ? choice!.finish_reason : 'stop', model: typeof j.model === 'string' ? j.model : '', usage: j.usage };
  }

  private async readStream(res: Response, onText: (delta: string) => void): Promise<Answer> {
    if (!res.body) throw new GenerationError('malformed', `the stream from ${this.endpoint} has no body`, { retryable: true });
    let text = '';
    let finishReason: string | undefined;
    let model = '';
    let usage: unknown;
    let done = false;
    for await (const data of sseData(res.body as unknown as AsyncIterable<Uint8Array>)) {
      if (data === '[DONE]') {
        done = true;
        break;
      }
      let j: unknown;
      try {
        j = JSON.parse(data);
      } catch {
        throw new GenerationError('malformed', `a streamed chunk from ${this.endpoint} is not JSON: ${serverMessage(data)}`, { retryable: true });
      }
      if (isObject(j) && isObject(j.error)) throw new GenerationError('http', `the stream from ${this.endpoint} reported an error: ${serverMessage(data)}`, { retryable: false, body: data });
      if (!isObject(j) || !Array.isArray(j.choices)) throw new GenerationError('malformed', `a streamed chunk from ${this.endpoint} is not a chat.completion.chunk: ${serverMessage(data)}`, { retryable: true });
      if (typeof j.model === 'string') model = j.model;
      if (j.usage !== undefined && j.usage !== null) usage = j.usage;
      const choice = j.choices[0];
      if (isObject(choice)) {
        const delta = isObject(choice.delta) ? choice.delta : {};
        if (typeof delta.content === 'string' && delta.content !== '') {
          text += delta.content;
          onText(delta.content);
        }
        if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
      }
    }
    if (!done) throw new GenerationError('connection', `the stream from ${this.endpoint} ended before [DONE]`, { retryable: true });
    return { text, finishReason: finishReason ?? 'stop', model, usage };
  }
}
