/**
 * OpenAI's embeddings API on the wire (https://platform.openai.com/docs/api-reference/embeddings),
 * both ends: the request a server reads and the answer a client reads.
 *
 * Request `POST /v1/embeddings`: `input` a string or a non-empty list of at most 2048 strings (token
 * id lists, which OpenAI also takes, are refused here: this server embeds text), `model`,
 * `encoding_format` 'float' (default) or 'base64', `dimensions` (at most the model's width: a
 * smaller one keeps each vector's first components, as angle_emb's embedding_size and
 * sentence-transformers' truncate_dim do), `user` (ignored), and this project's
 * extension `pooling` ('last' or 'mean'; vLLM fixes its pooling when it starts instead).
 *
 * Answer: `{ object: 'list', data: [{ object: 'embedding', index, embedding }], model, usage:
 * { prompt_tokens, total_tokens } }`, `embedding` a list of numbers or, with base64, the vector's
 * float32 values little-endian, base64-encoded (what OpenAI's and vLLM's servers send and the
 * official clients decode). A float32 printed as JSON by its shortest round-trip form and read back
 * is the same float32, so both formats carry the vectors exactly.
 *
 * The client's reading (`readEmbeddingsAnswer`) refuses an answer that is not the embeddings asked
 * for, naming what is wrong: not a list of embeddings (`malformed`, retried: a garbled body), or a
 * list of the wrong count, an index missing or repeated, a vector of the wrong width or with a
 * non-finite value, another model's name (`malformed`, not retried: the endpoint serves something
 * else, and asking again would get the same).
 */
import { GenerationError } from './generation-error.js';
import { EMBEDDING_POOLINGS, type EmbeddingPooling } from './embedding-model.js';
import { isObject } from './openai-endpoint.js';
import { describe, InvalidRequestError } from './request.js';

export const EMBEDDING_FORMATS = ['float', 'base64'] as const;
export type EmbeddingFormat = (typeof EMBEDDING_FORMATS)[number];

/** OpenAI's limit on the inputs of one request. */
export const MAX_EMBEDDING_INPUTS = 2048;

export interface EmbeddingsRequest {
  input: string[];
  model?: string;
  encodingFormat: EmbeddingFormat;
  dimensions?: number;
  pooling?: EmbeddingPooling;
}

/** A POST /embeddings body (parsed JSON) as a checked request. */
export function parseEmbeddingsBody(body: unknown): EmbeddingsRequest {
  if (!isObject(body)) throw new InvalidRequestError(`the request body must be a JSON object, got ${describe(body)}`);
  const raw = body.input;
  let input: string[];
  if (typeof raw === 'string') input = [raw];
  else if (Array.isArray(raw) && raw.length > 0) {
    input = raw.map((x, i) => {
      if (typeof x === 'string') return x;
      if (typeof x === 'number' || Array.isArray(x)) throw new InvalidRequestError(`'input' holds token ids (input[${i}] is ${describe(x)}); this server embeds text: send strings`, 'input');
      throw new InvalidRequestError(`input[${i}] must be a string, got ${describe(x)}`, 'input');
    });
  } else {
    throw new InvalidRequestError(`'input' must be a string or a non-empty list of strings, got ${raw === undefined ? 'nothing' : describe(raw)}`, 'input');
  }
  if (input.length > MAX_EMBEDDING_INPUTS) throw new InvalidRequestError(`'input' holds ${input.length} texts; at most ${MAX_EMBEDDING_INPUTS} per request`, 'input');
  const out: EmbeddingsRequest = { input, encodingFormat: 'float' };
  if (body.model !== undefined && body.model !== null) {
    if (typeof body.model !== 'string' || body.model === '') throw new InvalidRequestError(`'model' must be a non-empty string, got ${describe(body.model)}`, 'model');
    out.model = body.model;
  }
  const format = body.encoding_format;
  if (format !== undefined && format !== null) {
    if (!(EMBEDDING_FORMATS as readonly unknown[]).includes(format)) throw new InvalidRequestError(`'encoding_format' must be one of ${EMBEDDING_FORMATS.join(', ')}, got ${describe(format)}`, 'encoding_format');
    out.encodingFormat = format as EmbeddingFormat;
  }
  const dims = body.dimensions;
  if (dims !== undefined && dims !== null) {
    if (typeof dims !== 'number' || !Number.isSafeInteger(dims) || dims < 1) throw new InvalidRequestError(`'dimensions' must be an integer >= 1, got ${describe(dims)}`, 'dimensions');
    out.dimensions = dims;
  }
  const pooling = body.pooling;
  if (pooling !== undefined && pooling !== null) {
    if (!(EMBEDDING_POOLINGS as readonly unknown[]).includes(pooling)) throw new InvalidRequestError(`'pooling' must be one of ${EMBEDDING_POOLINGS.join(', ')}, got ${describe(pooling)}`, 'pooling');
    out.pooling = pooling as EmbeddingPooling;
  }
  return out;
}

/** A vector's float32 values, little-endian, in base64. */
export function float32ToBase64(v: Float32Array): string {
  const bytes = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) bytes.writeFloatLE(v[i], i * 4);
  return bytes.toString('base64');
}

/** The float32 values of a base64 string of little-endian float32s; undefined when it is not one. */
export function base64ToFloat32(s: string): Float32Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  const bytes = Buffer.from(s, 'base64');
  if (bytes.length % 4 !== 0) return undefined;
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

/** The answer to an embeddings request: rows of `data` [texts, dim] in input order. */
export function embeddingsAnswerJson(o: { data: Float32Array; dim: number; tokens: readonly number[]; model: string; format: EmbeddingFormat }): Record<string, unknown> {
  const rows = o.tokens.length;
  const data = Array.from({ length: rows }, (_, i) => {
    const v = o.data.subarray(i * o.dim, (i + 1) * o.dim);
    return { object: 'embedding', index: i, embedding: o.format === 'base64' ? float32ToBase64(v) : Array.from(v) };
  });
  const promptTokens = o.tokens.reduce((s, n) => s + n, 0);
  return { object: 'list', data, model: o.model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } };
}

export interface EmbeddingsAnswer {
  /** One vector per input, in input order. */
  vectors: Float32Array[];
  /** The model the server says answered ('' when it named none). */
  model: string;
  /** usage.prompt_tokens, when the server reported it. */
  promptTokens?: number;
}

/**
 * The vectors of an embeddings answer, checked against what was asked: `count` inputs, `model`,
 * and each vector `dim` wide when `dim` is given (else all of one width). `where` names the
 * endpoint in errors.
 */
export function readEmbeddingsAnswer(json: unknown, asked: { count: number; model: string; dim?: number }, where: string): EmbeddingsAnswer {
  const garbled = (what: string) => new GenerationError('malformed', `the answer from ${where} is not an embeddings list (${what})`, { retryable: true });
  const wrong = (what: string) => new GenerationError('malformed', `the answer from ${where} is not what was asked for: ${what}; nothing of it was cached`, { retryable: false });
  if (!isObject(json) || !Array.isArray(json.data)) throw garbled('expected { "data": [...] }');
  const model = typeof json.model === 'string' ? json.model : '';
  if (model !== '' && model !== asked.model) throw wrong(`it names the model '${model}', but '${asked.model}' was asked for`);
  if (json.data.length !== asked.count) throw wrong(`${json.data.length} embeddings for ${asked.count} inputs`);
  const vectors: Array<Float32Array | undefined> = new Array(asked.count);
  json.data.forEach((item, k) => {
    if (!isObject(item)) throw garbled(`data[${k}] is ${describe(item)}`);
    const index = item.index ?? k;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= asked.count) throw wrong(`data[${k}].index is ${describe(index)}, not an input index 0..${asked.count - 1}`);
    if (vectors[index]) throw wrong(`data[${k}].index ${index} appears twice`);
    const e = item.embedding;
    let v: Float32Array | undefined;
    if (typeof e === 'string') v = base64ToFloat32(e);
    else if (Array.isArray(e) && e.every((x) => typeof x === 'number')) v = Float32Array.from(e as number[]);
    if (!v) throw garbled(`data[${k}].embedding is ${describe(e)}, not a list of numbers or base64 float32s`);
    const width = asked.dim ?? vectors.find((x) => x)?.length ?? v.length;
    if (v.length !== width) throw wrong(`the embedding of input ${index} has ${v.length} dimensions, expected ${width}${asked.dim !== undefined ? '' : ' (the width of the others)'}`);
    const bad = v.findIndex((x) => !Number.isFinite(x));
    if (bad >= 0) throw wrong(`the embedding of input ${index} has ${v[bad]} at dimension ${bad}`);
    vectors[index] = v;
  });
  const usage = isObject(json.usage) && typeof json.usage.prompt_tokens === 'number' ? json.usage.prompt_tokens : undefined;
  return { vectors: vectors as Float32Array[], model, ...(usage !== undefined ? { promptTokens: usage } : {}) };
}
