/**
 * A request that produced no answer, saying which prompt (its id), what went wrong, and whether
 * retrying could help: the one error type every generator throws for a failed request, so a batch
 * report can list failures by prompt id and kind.
 *
 * Kinds: `http` (the server answered with an error status), `timeout` (no complete answer within
 * the time limit), `connection` (refused, reset or dropped), `malformed` (a 2xx answer that is not
 * a chat completion, or not the embeddings asked for: wrong count, width or model), `input` (the request itself is invalid: too long for the context, unknown
 * model), `aborted` (the caller cancelled it), `cache` (the answer came but could not be stored in
 * the answer cache: a full or read-only disk).
 */
export type GenerationErrorKind = 'http' | 'timeout' | 'connection' | 'malformed' | 'input' | 'aborted' | 'cache';

export class GenerationError extends Error {
  constructor(
    readonly kind: GenerationErrorKind,
    /** What happened, without the prompt id (the message adds it). */
    readonly detail: string,
    readonly info: {
      /** The prompt's id (ChatRequest.id), when it had one. */
      id?: string;
      /** The HTTP status, for kind 'http'. */
      status?: number;
      /** HTTP attempts made (1 = not retried). */
      attempts?: number;
      /** Whether another attempt could succeed (429, 5xx, timeouts, dropped connections). */
      retryable?: boolean;
      /** The wait the server asked for before a retry (Retry-After), in ms. */
      retryAfterMs?: number;
      /** The server's error body (OpenAI's error JSON, or the start of whatever it sent). */
      body?: string;
      cause?: unknown;
    } = {},
  ) {
    const attempts = info.attempts !== undefined && info.attempts > 1 ? ` (after ${info.attempts} attempts)` : '';
    super(`prompt ${info.id ?? '(no id)'}: ${detail}${attempts}`, info.cause !== undefined ? { cause: info.cause } : undefined);
    this.name = 'GenerationError';
  }

  get id(): string | undefined {
    return this.info.id;
  }
  get status(): number | undefined {
    return this.info.status;
  }
  get attempts(): number {
    return this.info.attempts ?? 1;
  }
  get retryable(): boolean {
    return this.info.retryable ?? false;
  }

  /** The same error with other facts (attempts, prompt id) or another detail; the message is rebuilt. */
  with(info: Partial<GenerationError['info']>, detail = this.detail): GenerationError {
    return new GenerationError(this.kind, detail, { ...this.info, ...info });
  }
}
