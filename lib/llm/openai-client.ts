/**
 * A client of any OpenAI-compatible chat-completions endpoint: `POST {baseURL}/chat/completions`
 * with OpenAI's request JSON, reading OpenAI's response JSON (or its server-sent-event stream).
 * OpenAI itself, vLLM, llama.cpp's server, TGI and this project's own server (./server.ts) speak it.
 *
 * - Where to: `baseURL` (e.g. http://127.0.0.1:8080/v1), else OPENAI_BASE_URL, else
 *   https://api.openai.com/v1; the key: `apiKey`, else OPENAI_API_KEY (sent as a bearer token; a
 *   local server needs none); the model: `model`, else OPENAI_MODEL.
 * - At most `maxConcurrency` requests of this client are in flight at once (one slot per request,
 *   held through its retries, so a rate-limited server is not hit harder while it recovers).
 * - Failed attempts are retried as ./backoff.ts says (429 honouring Retry-After, 5xx, timeouts,
 *   dropped connections, garbled 2xx bodies; never another 4xx), each attempt limited to
 *   `timeoutMs`. A request that still fails is a GenerationError naming the prompt's id.
 * - Every answer carries its token usage (the server's `usage`, else an estimate flagged as such)
 *   and its estimated cost from the caller's price table (./pricing.ts); `usage` tallies the run.
 * - With `onText` the request streams (`stream: true`, `stream_options.include_usage`); a stream
 *   retried after part of it was delivered continues after what was already delivered when the new
 *   answer begins with it (greedy decoding, seeded sampling), and fails otherwise.
 *
 * Caching is not done here: wrap the client in ./cached-generator.ts.
 */
import { InputError } from '../util/errors.js';
import { backoffMs, DEFAULT_RETRY_POLICY, isRetryableStatus, retryAfterMs, shouldRetryHeader, sleep, type RetryPolicy } from './backoff.js';
import { GenerationError } from './generation-error.js';
import { Limiter } from './limiter.js';
import { costOf, estimateTokens, UsageTally, type PriceTable } from './pricing.js';
import { validateChatRequest } from './request.js';
import { sseData } from './sse.js';
import type { ChatGenerator, ChatRequest, ChatResult, CompleteOptions, TokenUsage } from './types.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIClientOptions {
  /** The API root that `/chat/completions` is appended to. Default: OPENAI_BASE_URL, else OpenAI's. */
  baseURL?: string;
  /** Default: OPENAI_API_KEY; none is sent when there is none. */
  apiKey?: string;
  /** The model of requests that name none. Default: OPENAI_MODEL. */
  model?: string;
  /** Requests in flight at once (default 8). */
  maxConcurrency?: number;
  /** Time limit of one attempt, in ms, from sending to the last byte of the answer (default 120 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Prices for the cost estimate (none assumed). */
  prices?: PriceTable;
  /** Extra HTTP headers (e.g. OpenAI-Organization). */
  headers?: Record<string, string>;
  /** The name of the token limit in the body: 'max_tokens' (default, understood everywhere) or OpenAI's newer 'max_completion_tokens'. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Called before each retry (progress lines, logs). */
  onRetry?: (event: { id?: string; retry: number; delayMs: number; error: GenerationError }) => void;
  /** Where OPENAI_* are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Uniform draws of the backoff jitter (default Math.random). */
  random?: () => number;
}

interface OpenAIErrorBody {
  error?: { message?: unknown; type?: unknown; code?: unknown };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

/** The server's own words from an error body (OpenAI's error JSON, else the start of the text). */
function serverMessage(body: string): string {
  try {
    const j = JSON.parse(body) as OpenAIErrorBody;
    if (isObject(j) && isObject(j.error) && typeof j.error.message === 'string') return j.error.message + (typeof j.error.code === 'string' ? ` (${j.error.code})` : '');
  } catch {
    // not JSON: show the text
  }
  const t = body.trim().replace(/\s+/g, ' ');
  return t === '' ? '(empty body)' : t.length > 300 ? `${t.slice(0, 300)}…` : t;
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
  readonly endpoint: string;
  readonly limiter: Limiter;
  /** Tokens and cost of every answer this client produced. */
  readonly usage = new UsageTally();
  /** HTTP attempts sent (retries included). */
  attemptsSent = 0;
  private readonly apiKey?: string;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;

  constructor(private readonly opts: OpenAIClientOptions = {}) {
    const env = opts.env ?? process.env;
    this.baseURL = (nonEmpty(opts.baseURL) ?? nonEmpty(env.OPENAI_BASE_URL) ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '');
    let url: URL;
    try {
      url = new URL(`${this.baseURL}/chat/completions`);
    } catch {
      throw new InputError(`the OpenAI-compatible base URL '${this.baseURL}' is not a URL (expected e.g. http://127.0.0.1:8080/v1)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InputError(`the base URL '${this.baseURL}' must be http(s)`);
    this.endpoint = url.href;
    const model = nonEmpty(opts.model) ?? nonEmpty(env.OPENAI_MODEL);
    if (!model) throw new InputError('no model for the chat-completions client: pass { model } or set OPENAI_MODEL');
    this.model = model;
    this.apiKey = nonEmpty(opts.apiKey) ?? nonEmpty(env.OPENAI_API_KEY);
    if (!this.apiKey && url.hostname === 'api.openai.com') throw new InputError('api.openai.com needs a key: pass { apiKey } or set OPENAI_API_KEY');
    this.limiter = new Limiter(opts.maxConcurrency ?? 8);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.name = `openai:${model}@${url.host}`;
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
    return this.limiter.run(async () => {
      let delivered = '';
      const onText = opts.onText;
      for (let attempt = 1; ; attempt++) {
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
        try {
          const a = await this.attempt(req, opts.signal, forward);
          const model = req.model ?? this.model;
          const usage = usageOf(a.usage, req.messages.map((m) => m.content).join('\n'), a.text);
          const costUsd = costOf(usage, model, this.opts.prices) ?? costOf(usage, a.model, this.opts.prices);
          const result: ChatResult = { ...(id !== undefined ? { id } : {}), text: a.text, usage, finishReason: a.finishReason, model: a.model || model, cached: false, attempts: attempt, ...(costUsd !== undefined ? { costUsd } : {}) };
          this.usage.add(result);
          return result;
        } catch (e) {
          if (!(e instanceof GenerationError)) throw e; // a bug, not a failed request
          const err = e.with({ id, attempts: attempt });
          if (!err.retryable || attempt > this.policy.maxRetries || opts.signal?.aborted) throw err;
          let delay = backoffMs(attempt, this.policy, (this.opts.random ?? Math.random)());
          const asked = err.info.retryAfterMs;
          if (asked !== undefined) {
            if (asked > this.policy.maxRetryAfterMs) {
              throw err.with({ retryable: false }, `${err.detail}; the server asks to retry after ${(asked / 1000).toFixed(1)} s, more than the ${(this.policy.maxRetryAfterMs / 1000).toFixed(0)} s allowed (retry.maxRetryAfterMs)`);
            }
            delay = asked;
          }
          this.opts.onRetry?.({ id, retry: attempt, delayMs: delay, error: err });
          try {
            await sleep(delay, opts.signal);
          } catch {
            throw new GenerationError('aborted', 'aborted while waiting to retry', { id, attempts: attempt, cause: err });
          }
        }
      }
    }, opts.signal).catch((e) => {
      if (e instanceof GenerationError) throw e;
      if (opts.signal?.aborted) throw new GenerationError('aborted', 'aborted before it was sent', { id, cause: e });
      throw e;
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

  /** One HTTP attempt; errors are GenerationErrors saying whether a retry could help. */
  private async attempt(req: ChatRequest, signal: AbortSignal | undefined, onText: ((delta: string) => void) | undefined): Promise<Answer> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: onText ? 'text/event-stream' : 'application/json', ...this.opts.headers };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const failed = (e: unknown, during: string): GenerationError => {
      if (e instanceof GenerationError) return e;
      if (signal?.aborted) return new GenerationError('aborted', `aborted ${during}`, { cause: e });
      if (timeout.aborted) return new GenerationError('timeout', `no complete answer from ${this.endpoint} within ${this.timeoutMs} ms (${during})`, { retryable: true, cause: e });
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (e as Error).message;
      return new GenerationError('connection', `connection to ${this.endpoint} failed ${during}: ${why}`, { retryable: true, cause: e });
    };
    this.attemptsSent++;
    let res: Response;
    try {
      res = await fetch(this.endpoint, { method: 'POST', headers, body: JSON.stringify(this.requestBody(req, onText !== undefined)), signal: both });
    } catch (e) {
      throw failed(e, 'before an answer');
    }
    if (!res.ok) {
      let body = '';
      try {
        body = await res.text();
      } catch {
        // the status says enough
      }
      const override = shouldRetryHeader(res.headers);
      const retryable = override ?? isRetryableStatus(res.status);
      const wait = retryAfterMs(res.headers);
      throw new GenerationError('http', `HTTP ${res.status} from ${this.endpoint}: ${serverMessage(body)}`, { status: res.status, retryable, body: body.slice(0, 2000), ...(wait !== undefined ? { retryAfterMs: wait } : {}) });
    }
    try {
      return onText ? await this.readStream(res, onText) : this.readJson(await res.text());
    } catch (e) {
      throw failed(e, 'while reading the answer');
    }
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
