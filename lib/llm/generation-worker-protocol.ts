/**
 * The messages between `serve-llm`'s HTTP thread and its generation worker (a Node
 * `worker_threads` Worker that holds the model: ./generation-worker.ts answers them there,
 * ./worker-generator.ts sends them from the HTTP thread). The model's forward passes run in the
 * worker, so a forward pass never holds the thread that answers `/health`, reads request bodies and
 * writes already-generated text.
 *
 * HTTP thread → worker: `complete` (a chat request; `aborted` when its signal had fired before it
 * was sent), `abort` (the client went away), `embed` (texts and a pooling).
 * Worker → HTTP thread: `ready` once (what the model is, for /v1/models and the start line), or
 * `failed` once when the model cannot be loaded; then per call `text` (a streamed piece, in order),
 * `completed` / `embedded` (the answer), or `error`.
 *
 * Errors cross the thread boundary as plain objects (structured clone keeps no class): the server
 * chooses the HTTP status by the error's class (./server.ts errorFields), so `serializeError` keeps
 * the classes it tells apart (GenerationError with its kind and cause, InvalidRequestError with its
 * param and code, InputError, UnknownNameError, UnavailableError) and `deserializeError` rebuilds
 * them; anything else becomes a plain Error with the same message.
 */
import { InputError, UnavailableError } from '../util/errors.js';
import type { EmbeddingPooling } from './embedding-model.js';
import { GenerationError, type GenerationErrorKind } from './generation-error.js';
import { InvalidRequestError } from './request.js';
import type { ChatRequest, ChatResult } from './types.js';

/** What the worker says about its model once it is loaded. */
export interface GenerationWorkerInfo {
  /** The name requests use (--served-model-name). */
  model: string;
  /** The generator's report name ("local:<model>"). */
  name: string;
  promptStyle: 'chat-template' | 'plain';
  numParameters: number;
  maxPositions: number;
  /** Width of the embeddings. */
  dim: number;
  defaultPooling: EmbeddingPooling;
  /** The tfjs backend the worker runs on. */
  backend: string;
}

export type ToWorker =
  | { type: 'complete'; id: number; request: ChatRequest; stream: boolean; aborted: boolean }
  | { type: 'abort'; id: number; reason: string }
  | { type: 'embed'; id: number; texts: string[]; pooling: EmbeddingPooling };

export type FromWorker =
  | { type: 'ready'; info: GenerationWorkerInfo }
  | { type: 'failed'; error: SerializedError }
  | { type: 'text'; id: number; delta: string }
  | { type: 'completed'; id: number; result: ChatResult }
  | { type: 'embedded'; id: number; data: Float32Array; tokens: number[] }
  | { type: 'error'; id: number; error: SerializedError };

/** An error as a structured-clone-safe object. */
export interface SerializedError {
  class: 'GenerationError' | 'InvalidRequestError' | 'UnknownNameError' | 'InputError' | 'UnavailableError' | 'Error';
  message: string;
  /** GenerationError: its kind, detail and facts (the cause travels in `cause`). */
  kind?: GenerationErrorKind;
  detail?: string;
  info?: { id?: string; status?: number; attempts?: number; retryable?: boolean; retryAfterMs?: number; body?: string };
  /** InvalidRequestError. */
  param?: string;
  code?: string;
  cause?: SerializedError;
}

export function serializeError(e: unknown): SerializedError {
  if (e instanceof GenerationError) {
    const { cause, ...info } = e.info;
    return { class: 'GenerationError', message: e.message, kind: e.kind, detail: e.detail, info, ...(cause !== undefined ? { cause: serializeError(cause) } : {}) };
  }
  if (e instanceof InvalidRequestError) return { class: 'InvalidRequestError', message: e.message, param: e.param, code: e.code };
  if (e instanceof InputError) return { class: e.name === 'UnknownNameError' ? 'UnknownNameError' : 'InputError', message: e.message };
  if (e instanceof UnavailableError) return { class: 'UnavailableError', message: e.message };
  if (e instanceof Error) return { class: 'Error', message: e.message };
  return { class: 'Error', message: String(e) };
}

export function deserializeError(s: SerializedError): Error {
  switch (s.class) {
    case 'GenerationError':
      return new GenerationError(s.kind ?? 'malformed', s.detail ?? s.message, { ...s.info, ...(s.cause ? { cause: deserializeError(s.cause) } : {}) });
    case 'InvalidRequestError':
      return new InvalidRequestError(s.message, s.param, s.code);
    case 'UnknownNameError':
    case 'InputError': {
      // The message already carries the file and line prefix.
      const e = new InputError(s.message);
      e.name = s.class;
      return e;
    }
    case 'UnavailableError':
      return new UnavailableError(s.message);
    default:
      return new Error(s.message);
  }
}
