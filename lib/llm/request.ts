/**
 * Checking a chat-completion request, and reading one from an HTTP body in OpenAI's JSON.
 *
 * The rules (OpenAI's, where the local decoder can honour them): `messages` a non-empty list of
 * `{ role, content }` with role system, developer, user or assistant and content a string or a
 * list of `{ type: 'text', text }` parts (joined); `temperature` in [0, 2]; `top_p` in (0, 1];
 * `max_tokens` (or its newer name `max_completion_tokens`) an integer >= 1; `stop` a string or a
 * list of strings; `seed` an integer; `n` only 1; `stream` a boolean, with
 * `stream_options.include_usage`. Other fields (logprobs, tools, response_format, …) are not
 * supported and are ignored, as vLLM and llama.cpp's server ignore what they do not know.
 *
 * A violation is an `InvalidRequestError` naming the parameter, which the server turns into
 * OpenAI's error JSON (`invalid_request_error`, `param`).
 */
import { InputError } from '../util/errors.js';
import type { ChatMessage, ChatRequest } from './types.js';

export class InvalidRequestError extends InputError {
  constructor(
    message: string,
    /** The request field at fault, e.g. 'messages[1].content'. */
    readonly param?: string,
    /** OpenAI's error code where it has one ('model_not_found', 'context_length_exceeded'). */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'InvalidRequestError';
  }
}

const ROLES = ['system', 'developer', 'user', 'assistant'];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A short description of a JSON value for an error message. */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.length === 0 ? 'an empty list' : 'a list';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

function messageContent(v: unknown, param: string): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    return v
      .map((part, j) => {
        if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
          throw new InvalidRequestError(`${param}[${j}] must be a text part { "type": "text", "text": "…" } (only text is supported), got ${describe(part)}`, `${param}[${j}]`);
        }
        return part.text;
      })
      .join('');
  }
  throw new InvalidRequestError(`${param} must be a string or a list of text parts, got ${describe(v)}`, param);
}

function messagesOf(v: unknown): ChatMessage[] {
  if (!Array.isArray(v) || v.length === 0) throw new InvalidRequestError(`'messages' must be a non-empty list of { "role", "content" }, got ${v === undefined ? 'nothing' : describe(v)}`, 'messages');
  return v.map((m, i) => {
    if (!isObject(m)) throw new InvalidRequestError(`messages[${i}] must be an object { "role", "content" }, got ${describe(m)}`, `messages[${i}]`);
    if (typeof m.role !== 'string' || !ROLES.includes(m.role)) throw new InvalidRequestError(`messages[${i}].role must be one of ${ROLES.join(', ')}, got ${describe(m.role)}`, `messages[${i}].role`);
    return { role: m.role, content: messageContent(m.content, `messages[${i}].content`) };
  });
}

function numberIn(v: unknown, param: string, lo: number, hi: number, loOpen: boolean): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || (loOpen ? v <= lo : v < lo) || v > hi) {
    throw new InvalidRequestError(`'${param}' must be a number in ${loOpen ? '(' : '['}${lo}, ${hi}], got ${describe(v)}`, param);
  }
  return v;
}

function integerFrom(v: unknown, param: string, min: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new InvalidRequestError(`'${param}' must be an integer >= ${min}, got ${describe(v)}`, param);
  return v;
}

function stopOf(v: unknown): string | string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[];
  throw new InvalidRequestError(`'stop' must be a string or a list of strings, got ${describe(v)}`, 'stop');
}

/** The request with every field checked (messages with text content; numbers in range). */
export function validateChatRequest(r: ChatRequest): ChatRequest {
  if (!isObject(r)) throw new InvalidRequestError(`a chat request must be an object, got ${describe(r)}`);
  const out: ChatRequest = { messages: messagesOf(r.messages) };
  if (r.id !== undefined) out.id = r.id;
  if (r.model !== undefined && r.model !== null) {
    if (typeof r.model !== 'string' || r.model === '') throw new InvalidRequestError(`'model' must be a non-empty string, got ${describe(r.model)}`, 'model');
    out.model = r.model;
  }
  const temperature = numberIn(r.temperature, 'temperature', 0, 2, false);
  if (temperature !== undefined) out.temperature = temperature;
  const topP = numberIn(r.top_p, 'top_p', 0, 1, true);
  if (topP !== undefined) out.top_p = topP;
  const maxTokens = integerFrom(r.max_tokens, 'max_tokens', 1);
  if (maxTokens !== undefined) out.max_tokens = maxTokens;
  const stop = stopOf(r.stop);
  if (stop !== undefined) out.stop = stop;
  const seed = integerFrom(r.seed, 'seed', Number.MIN_SAFE_INTEGER);
  if (seed !== undefined) out.seed = seed;
  return out;
}

/** The stop strings of a request as a list (empty strings dropped). */
export function stopStrings(r: ChatRequest): string[] {
  return (typeof r.stop === 'string' ? [r.stop] : (r.stop ?? [])).filter((s) => s.length > 0);
}

export interface ChatCompletionBody {
  request: ChatRequest;
  stream: boolean;
  /** stream_options.include_usage: a last chunk with the usage. */
  includeUsage: boolean;
}

/** A POST /chat/completions body (parsed JSON) as a checked request. */
export function parseChatCompletionBody(body: unknown): ChatCompletionBody {
  if (!isObject(body)) throw new InvalidRequestError(`the request body must be a JSON object, got ${describe(body)}`);
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw new InvalidRequestError(`'n' must be 1 (one choice per request), got ${describe(body.n)}`, 'n');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw new InvalidRequestError(`'stream' must be true or false, got ${describe(body.stream)}`, 'stream');
  const opts = body.stream_options;
  if (opts !== undefined && opts !== null && !isObject(opts)) throw new InvalidRequestError(`'stream_options' must be an object, got ${describe(opts)}`, 'stream_options');
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  const request = validateChatRequest({
    messages: body.messages as ChatMessage[],
    model: body.model as string | undefined,
    temperature: body.temperature as number | undefined,
    top_p: body.top_p as number | undefined,
    max_tokens: maxTokens as number | undefined,
    stop: body.stop as string[] | undefined,
    seed: body.seed as number | undefined,
  });
  if (body.max_completion_tokens !== undefined && body.max_tokens !== undefined && body.max_completion_tokens !== body.max_tokens) {
    throw new InvalidRequestError(`'max_tokens' (${describe(body.max_tokens)}) and 'max_completion_tokens' (${describe(body.max_completion_tokens)}) disagree; give one`, 'max_tokens');
  }
  for (const k of Object.keys(request) as Array<keyof ChatRequest>) if (request[k] === undefined) delete request[k];
  return { request, stream: body.stream === true, includeUsage: isObject(opts) && opts.include_usage === true };
}
