/**
 * When to retry a failed HTTP request and how long to wait first.
 *
 * Retried: 429 (rate limited), every 5xx, timeouts, dropped or refused connections, and a 2xx
 * answer that is not a chat completion (a truncated or garbled body: a transient fault of the path,
 * not of the request). Never retried: any other 4xx (the request itself is wrong: retrying would
 * fail again, and on a paid API pay again). A server's `x-should-retry: true|false` header (sent by
 * OpenAI) overrides the status rule, as OpenAI's own clients do.
 *
 * The wait before retry n (n = 1, 2, …):
 * - the server's `retry-after-ms` (milliseconds) or `Retry-After` (seconds, or an HTTP date) when
 *   it sent one, taken as given (a server that says when to come back knows best); a wait longer
 *   than `maxRetryAfterMs` fails the request instead of sleeping for it;
 * - else exponential backoff with jitter: min(maxDelayMs, initialDelayMs · 2^(n−1)) · (1 − jitter·u),
 *   u uniform in [0, 1) — jitter 0.25 as OpenAI's python client, so parallel clients that failed
 *   together do not retry together.
 */
export interface RetryPolicy {
  /** Retries after the first attempt (default 4: five attempts in all). */
  maxRetries: number;
  /** First backoff (default 500 ms). */
  initialDelayMs: number;
  /** Largest backoff (default 8 s). */
  maxDelayMs: number;
  /** Fraction of the backoff taken off at random (default 0.25). */
  jitter: number;
  /** Longest Retry-After honoured (default 60 s); a longer one fails the request. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, initialDelayMs: 500, maxDelayMs: 8000, jitter: 0.25, maxRetryAfterMs: 60_000 };

/** Whether an HTTP status is worth retrying (before any x-should-retry override). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** The server's x-should-retry verdict, if it gave one. */
export function shouldRetryHeader(headers: Headers): boolean | undefined {
  const v = headers.get('x-should-retry')?.trim().toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : undefined;
}

/**
 * The wait the server asks for, in ms: `retry-after-ms`, else `Retry-After` as seconds or as an
 * HTTP date (relative to `now`); undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** The backoff before retry `retry` (1-based), with the uniform draw `u` in [0, 1). */
export function backoffMs(retry: number, policy: RetryPolicy, u: number = Math.random()): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (retry - 1));
  return base * (1 - policy.jitter * u);
}

/** Sleeps `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
