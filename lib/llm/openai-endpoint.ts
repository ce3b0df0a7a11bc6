/**
 * The HTTP side that every client of an OpenAI-compatible API shares (./openai-client.ts for
 * `POST /chat/completions`, ./openai-embeddings-client.ts for `POST /embeddings`): where to send
 * (base URL and key from the options or OPENAI_BASE_URL / OPENAI_API_KEY), bounded concurrency, a
 * time limit per attempt, and retries.
 *
 * - At most `maxConcurrency` requests are in flight at once (one slot per request, held through its
 *   retries, so a rate-limited server is not hit harder while it recovers).
 * - Failed attempts are retried as ./backoff.ts says (429 honouring Retry-After, 5xx, timeouts,
 *   dropped connections, garbled 2xx bodies; never another 4xx), each attempt limited to
 *   `timeoutMs` from sending to the last byte read. A request that still fails is a GenerationError
 *   naming the request's id and the number of attempts.
 */
import { InputError } from '../util/errors.js';
import { backoffMs, DEFAULT_RETRY_POLICY, isRetryableStatus, retryAfterMs, shouldRetryHeader, sleep, type RetryPolicy } from './backoff.js';
import { GenerationError } from './generation-error.js';
import { Limiter } from './limiter.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIEndpointOptions {
  /** The API root that routes such as `/chat/completions` are appended to. Default: OPENAI_BASE_URL, else OpenAI's. */
  baseURL?: string;
  /** Default: OPENAI_API_KEY; none is sent when there is none. */
  apiKey?: string;
  /** Requests in flight at once (default 8). */
  maxConcurrency?: number;
  /** Time limit of one attempt, in ms, from sending to the last byte of the answer (default 120 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Extra HTTP headers (e.g. OpenAI-Organization). */
  headers?: Record<string, string>;
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

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The value trimmed, or undefined when absent or blank. */
export function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

/** The server's own words from an error body (OpenAI's error JSON, else the start of the text). */
export function serverMessage(body: string): string {
  try {
    const j = JSON.parse(body) as OpenAIErrorBody;
    if (isObject(j) && isObject(j.error) && typeof j.error.message === 'string') return j.error.message + (typeof j.error.code === 'string' ? ` (${j.error.code})` : '');
  } catch {
    // not JSON: show the text
  }
  const t = body.trim().replace(/\s+/g, ' ');
  return t === '' ? '(empty body)' : t.length > 300 ? `${t.slice(0, 300)}…` : t;
}

export class OpenAIEndpoint {
  readonly baseURL: string;
  readonly limiter: Limiter;
  readonly policy: RetryPolicy;
  readonly timeoutMs: number;
  /** HTTP attempts sent (retries included). */
  attemptsSent = 0;
  private readonly apiKey?: string;

  constructor(
    private readonly opts: OpenAIEndpointOptions,
    /** A route of the client (e.g. '/chat/completions'), to check the base URL with. */
    route: string,
  ) {
    const env = opts.env ?? process.env;
    this.baseURL = (nonEmpty(opts.baseURL) ?? nonEmpty(env.OPENAI_BASE_URL) ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '');
    let url: URL;
    try {
      url = new URL(`${this.baseURL}${route}`);
    } catch {
      throw new InputError(`the OpenAI-compatible base URL '${this.baseURL}' is not a URL (expected e.g. http://127.0.0.1:8080/v1)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InputError(`the base URL '${this.baseURL}' must be http(s)`);
    this.apiKey = nonEmpty(opts.apiKey) ?? nonEmpty(env.OPENAI_API_KEY);
    if (!this.apiKey && url.hostname === 'api.openai.com') throw new InputError('api.openai.com needs a key: pass { apiKey } or set OPENAI_API_KEY');
    this.limiter = new Limiter(opts.maxConcurrency ?? 8);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.timeoutMs = opts.timeoutMs ?? 120_000;
  }

  /** The absolute URL of a route such as '/embeddings'. */
  url(route: string): string {
    return new URL(`${this.baseURL}${route}`).href;
  }

  /**
   * Runs `attempt` (1, 2, …) in one concurrency slot until it succeeds, retrying GenerationErrors
   * that are retryable after the backoff or the server's Retry-After. Other errors (bugs) pass at once.
   */
  run<T>(id: string | undefined, signal: AbortSignal | undefined, attempt: (n: number) => Promise<T>): Promise<T> {
    return this.limiter
      .run(async () => {
        for (let n = 1; ; n++) {
          try {
            return await attempt(n);
          } catch (e) {
            if (!(e instanceof GenerationError)) throw e; // a bug, not a failed request
            const err = e.with({ id, attempts: n });
            if (!err.retryable || n > this.policy.maxRetries || signal?.aborted) throw err;
            let delay = backoffMs(n, this.policy, (this.opts.random ?? Math.random)());
            const asked = err.info.retryAfterMs;
            if (asked !== undefined) {
              if (asked > this.policy.maxRetryAfterMs) {
                throw err.with({ retryable: false }, `${err.detail}; the server asks to retry after ${(asked / 1000).toFixed(1)} s, more than the ${(this.policy.maxRetryAfterMs / 1000).toFixed(0)} s allowed (retry.maxRetryAfterMs)`);
              }
              delay = asked;
            }
            this.opts.onRetry?.({ id, retry: n, delayMs: delay, error: err });
            try {
              await sleep(delay, signal);
            } catch {
              throw new GenerationError('aborted', 'aborted while waiting to retry', { id, attempts: n, cause: err });
            }
          }
        }
      }, signal)
      .catch((e) => {
        if (e instanceof GenerationError) throw e;
        if (signal?.aborted) throw new GenerationError('aborted', 'aborted before it was sent', { id, cause: e });
        throw e;
      });
  }

  /**
   * One HTTP attempt: POSTs `body` as JSON to `url` and hands a 2xx response to `read`, within the
   * time limit. Errors are GenerationErrors saying whether a retry could help: an error status
   * (`http`, with the server's message and Retry-After), a refused or dropped connection, a
   * timeout, the caller's abort; whatever `read` throws that is not a GenerationError counts as a
   * connection that broke while the answer was read.
   */
  async post<T>(url: string, body: unknown, o: { signal?: AbortSignal; accept?: string }, read: (res: Response) => Promise<T>): Promise<T> {
    const { signal } = o;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: o.accept ?? 'application/json', ...this.opts.headers };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const failed = (e: unknown, during: string): GenerationError => {
      if (e instanceof GenerationError) return e;
      if (signal?.aborted) return new GenerationError('aborted', `aborted ${during}`, { cause: e });
      if (timeout.aborted) return new GenerationError('timeout', `no complete answer from ${url} within ${this.timeoutMs} ms (${during})`, { retryable: true, cause: e });
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (e as Error).message;
      return new GenerationError('connection', `connection to ${url} failed ${during}: ${why}`, { retryable: true, cause: e });
    };
    this.attemptsSent++;
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: both });
    } catch (e) {
      throw failed(e, 'before an answer');
    }
    if (!res.ok) {
      let text = '';
      try {
        text = await res.text();
      } catch {
        // the status says enough
      }
      const override = shouldRetryHeader(res.headers);
      const retryable = override ?? isRetryableStatus(res.status);
      const wait = retryAfterMs(res.headers);
      throw new GenerationError('http', `HTTP ${res.status} from ${url}: ${serverMessage(text)}`, { status: res.status, retryable, body: text.slice(0, 2000), ...(wait !== undefined ? { retryAfterMs: wait } : {}) });
    }
    try {
      return await read(res);
    } catch (e) {
      throw failed(e, 'while reading the answer');
    }
  }
}
