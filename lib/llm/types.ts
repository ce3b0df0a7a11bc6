/**
 * The one interface every text generator of the library answers to: a chat-completion request in
 * OpenAI's own field names (so the request object is the wire format of `POST /chat/completions`,
 * and a user who knows that API knows this one) and a result with the text, the token usage and why
 * generation finished.
 *
 * Implementations: ./openai-client.ts (any OpenAI-compatible endpoint: OpenAI, vLLM, llama.cpp's
 * server, TGI), ./local-generator.ts (the project's decoder, lib/models/llama), and
 * ./cached-generator.ts (either of them behind an on-disk cache). ./complete-many.ts runs a batch
 * of requests through one of them with bounded concurrency; ./server.ts serves one over HTTP.
 */

/** One message of a conversation (OpenAI's `{ role, content }` with text content). */
export interface ChatMessage {
  /** 'system', 'user' or 'assistant'. */
  role: string;
  content: string;
}

/**
 * A chat-completion request, field for field OpenAI's (the ones generation needs). Fields left out
 * take the generator's (the server's) defaults.
 */
export interface ChatRequest {
  /**
   * The prompt's id in the caller's data (e.g. "stsb-train-17:positive"): named in every failure
   * and progress line; never sent and not part of the cache key.
   */
  id?: string;
  messages: ChatMessage[];
  /** Default: the generator's model. */
  model?: string;
  /** 0 = greedy; OpenAI accepts 0..2. */
  temperature?: number;
  /** Nucleus mass in (0, 1]. */
  top_p?: number;
  /** New tokens at most. */
  max_tokens?: number;
  /** Generation stops before any of these strings (OpenAI: at most 4). */
  stop?: string | string[];
  /** Seed of the sampling draws (best effort on hosted APIs; exact on the local decoder). */
  seed?: number;
}

/** Tokens a request cost: as the server reported them, or estimated where it did not. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** True when the server reported no usage and the counts are estimates (4 characters a token). */
  estimated?: boolean;
}

/**
 * Why generation ended, in OpenAI's words: 'stop' (end of sequence or a stop string), 'length'
 * (max_tokens or the context was reached), or whatever else a server says ('content_filter', …).
 */
export type ChatFinishReason = 'stop' | 'length' | (string & {});

export interface ChatResult {
  /** The request's id, copied. */
  id?: string;
  /** The assistant's text. */
  text: string;
  usage: TokenUsage;
  finishReason: ChatFinishReason;
  /** The model that answered (as the server names it). */
  model: string;
  /** True when the answer came from the cache (nothing was paid for it in this run). */
  cached: boolean;
  /** Estimated US dollars of this answer when it was generated (undefined: no price known). */
  costUsd?: number;
  /** HTTP attempts this answer took (1 = no retry); 0 for cached and local answers. */
  attempts: number;
}

export interface CompleteOptions {
  /** Aborts the request (a queued or in-flight one; an HTTP request is cancelled). */
  signal?: AbortSignal;
  /** Receives the text as it is generated (streaming), pieces in order; their concatenation is `text`. */
  onText?: (delta: string) => void;
}

/** Anything that answers chat-completion requests. */
export interface ChatGenerator {
  /** A short name for reports ("openai:gpt-3.5-turbo", "local:llama2c-stories260K"). */
  readonly name: string;
  /** The model a request without `model` goes to. */
  readonly model: string;
  complete(request: ChatRequest, opts?: CompleteOptions): Promise<ChatResult>;
}
