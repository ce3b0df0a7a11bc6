/**
 * An OpenAI-compatible HTTP server over any chat generator (node:http; scripts/serve-llm.ts serves
 * the project's local decoder with it), so other tools, other machines and this library's own
 * client (./openai-client.ts) can use a model this project runs.
 *
 * Routes (also without the /v1 prefix, as llama.cpp's server accepts them):
 * - `POST /v1/chat/completions`: OpenAI's request JSON (./request.ts says what is read); answers a
 *   `chat.completion` object, or with `stream: true` server-sent events of `chat.completion.chunk`
 *   objects (first the assistant role, then the text as it is generated, then the finish reason; with
 *   `stream_options.include_usage` a last chunk with the usage and no choices), ended by
 *   `data: [DONE]`;
 * - `POST /v1/embeddings` (when the server has an embedding model): OpenAI's request JSON
 *   (./embeddings-wire.ts: `input` a string or a list of strings, `encoding_format` float or
 *   base64, `model`, and the extension `pooling` last or mean); answers the `list` of `embedding`
 *   objects with `usage`;
 * - `GET /v1/models`, `GET /v1/models/{id}`: the model(s) served;
 * - `GET /health`: 200 while the server runs, answered at once: generation yields to the event loop
 *   between decode steps (./continuous-batcher.ts), so this never waits for a generation to end;
 *   with the generator on a worker thread (./worker-generator.ts, serve-llm's default) it does not
 *   wait for a forward pass either.
 *
 * Errors are OpenAI's error JSON `{ "error": { "message", "type", "param", "code" } }`: 400
 * invalid_request_error (unparsable JSON, a bad field — `param` names it —, a prompt too long for
 * the context: code context_length_exceeded), 404 (unknown model: model_not_found; unknown route),
 * 405 (wrong method), 413 (body over `maxBodyBytes`), 401 (a wrong key when the server has one),
 * 500 server_error. A request whose checks fail never starts a stream: the stream begins with the
 * first generated text, so checks made by the generator still answer with a status code. A client
 * that disconnects cancels its request, queued or generating (./local-generator.ts).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InputError } from '../util/errors.js';
import type { EmbeddingModel } from './embedding-model.js';
import { embeddingsAnswerJson, parseEmbeddingsBody } from './embeddings-wire.js';
import { GenerationError } from './generation-error.js';
import { InvalidRequestError, parseChatCompletionBody } from './request.js';
import { sseEvent } from './sse.js';
import type { ChatGenerator, ChatResult } from './types.js';

export interface ChatServerOptions {
  generator: ChatGenerator;
  /** One line per request (method, path, status, tokens, seconds), except health checks that passed. */
  log?: (line: string) => void;
  /** Largest request body accepted (default 4 MiB). */
  maxBodyBytes?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Answers `POST /v1/embeddings` under the generator's model name (absent: that route is 404). */
  embeddings?: EmbeddingModel;
}

interface ErrorFields {
  status: number;
  message: string;
  type: string;
  param?: string | null;
  code?: string | null;
}

class HttpError extends Error {
  constructor(readonly fields: ErrorFields) {
    super(fields.message);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function errorBody(f: ErrorFields): unknown {
  return { error: { message: f.message, type: f.type, param: f.param ?? null, code: f.code ?? null } };
}

/** The HTTP form of an error a request ran into. */
function errorFields(e: unknown): ErrorFields {
  if (e instanceof HttpError) return e.fields;
  const invalid = e instanceof InvalidRequestError ? e : e instanceof GenerationError && e.cause instanceof InvalidRequestError ? e.cause : undefined;
  if (invalid) {
    const notFound = invalid.code === 'model_not_found';
    return { status: notFound ? 404 : 400, message: invalid.message, type: 'invalid_request_error', param: invalid.param ?? null, code: invalid.code ?? null };
  }
  if (e instanceof GenerationError) {
    if (e.kind === 'input') return { status: 400, message: e.detail, type: 'invalid_request_error' };
    if (e.kind === 'http' && e.status !== undefined && e.status >= 400 && e.status < 500) return { status: e.status, message: e.detail, type: 'invalid_request_error' };
    return { status: 502, message: e.detail, type: 'server_error' };
  }
  if (e instanceof InputError) return { status: 400, message: e.message, type: 'invalid_request_error' };
  return { status: 500, message: `internal error: ${(e as Error)?.message ?? String(e)}`, type: 'server_error' };
}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError({ status: 413, message: `the request body is larger than ${limit} bytes`, type: 'invalid_request_error' });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}

function usageJson(r: ChatResult): Record<string, number> {
  return { prompt_tokens: r.usage.promptTokens, completion_tokens: r.usage.completionTokens, total_tokens: r.usage.totalTokens };
}

/** A node:http server answering the OpenAI chat-completions API with `generator`. */
export function createChatServer(opts: ChatServerOptions): Server {
  const { generator } = opts;
  const limit = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const created = Math.floor(Date.now() / 1000);
  const modelJson = { id: generator.model, object: 'model', created, owned_by: 'angle-notebooks' };

  const modelNotFound = (name: string) =>
    new HttpError({ status: 404, message: `the model '${name}' does not exist here; this server has '${generator.model}'`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' });

  async function readJson(req: IncomingMessage): Promise<unknown> {
    const text = await readBody(req, limit);
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new HttpError({ status: 400, message: `the request body is not valid JSON: ${(e as Error).message}`, type: 'invalid_request_error' });
    }
  }

  /** The first `keep` of each row's `width` components, row-major. */
  function firstColumns(data: Float32Array, rows: number, width: number, keep: number): Float32Array {
    const out = new Float32Array(rows * keep);
    for (let r = 0; r < rows; r++) out.set(data.subarray(r * width, r * width + keep), r * keep);
    return out;
  }

  async function embeddings(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const model = opts.embeddings;
    if (!model) throw new HttpError({ status: 404, message: `this server has no embedding model (it answers POST /v1/chat/completions)`, type: 'invalid_request_error', code: 'unknown_url' });
    const r = parseEmbeddingsBody(await readJson(req));
    if (r.model !== undefined && r.model !== generator.model) throw modelNotFound(r.model);
    if (r.dimensions !== undefined && r.dimensions > model.dim) {
      throw new HttpError({ status: 400, message: `'dimensions' is ${r.dimensions}, but this model's embeddings have ${model.dim} dimensions`, type: 'invalid_request_error', param: 'dimensions' });
    }
    const pooling = r.pooling ?? model.defaultPooling;
    const out = await model.embed(r.input, pooling);
    // `dimensions` below the width keeps each vector's first components, as angle_emb's
    // embedding_size and sentence-transformers' truncate_dim do (Matryoshka / Espresso training
    // makes those a usable embedding); no renormalisation, since these vectors are not normalised.
    const dim = r.dimensions ?? model.dim;
    const data = dim === model.dim ? out.data : firstColumns(out.data, r.input.length, model.dim, dim);
    sendJson(res, 200, embeddingsAnswerJson({ data, dim, tokens: out.tokens, model: generator.model, format: r.encodingFormat }));
    return `200 ${r.input.length} embeddings (${pooling}${dim === model.dim ? '' : `, first ${dim} of ${model.dim} dimensions`}, ${out.tokens.reduce((a, b) => a + b, 0)} tokens)`;
  }

  async function chatCompletions(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const { request, stream, includeUsage } = parseChatCompletionBody(await readJson(req));
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort(new Error('the client disconnected'));
    });
    const id = completionId();
    const now = Math.floor(Date.now() / 1000);
    const model = request.model ?? generator.model;
    if (!stream) {
      const r = await generator.complete(request, { signal: abort.signal });
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created: now,
        model: r.model,
        system_fingerprint: null,
        choices: [{ index: 0, message: { role: 'assistant', content: r.text }, logprobs: null, finish_reason: r.finishReason }],
        usage: usageJson(r),
      });
      return `200 ${r.usage.promptTokens}+${r.usage.completionTokens} tokens`;
    }
    const chunk = (choices: unknown[], usage?: unknown) => ({ id, object: 'chat.completion.chunk', created: now, model, system_fingerprint: null, choices, ...(includeUsage ? { usage: usage ?? null } : {}) });
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.write(sseEvent(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }])));
    };
    let r: ChatResult;
    try {
      r = await generator.complete(request, {
        signal: abort.signal,
        onText: (delta) => {
          start();
          res.write(sseEvent(chunk([{ index: 0, delta: { content: delta }, logprobs: null, finish_reason: null }])));
        },
      });
    } catch (e) {
      if (!started) throw e;
      // Headers are gone: the error travels as an event, as OpenAI's streams report errors.
      res.end(sseEvent(errorBody(errorFields(e))));
      return 'stream failed';
    }
    start();
    res.write(sseEvent(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: r.finishReason }])));
    if (includeUsage) res.write(sseEvent(chunk([], usageJson(r))));
    res.end(sseEvent('[DONE]'));
    return `200 stream ${r.usage.promptTokens}+${r.usage.completionTokens} tokens`;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const route = path.replace(/^\/v1(?=\/)/, '');
    if (path === '/health') {
      sendJson(res, 200, { status: 'ok' });
      return HEALTHY;
    }
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      throw new HttpError({ status: 401, message: 'missing or wrong API key (Authorization: Bearer <key>)', type: 'authentication_error', code: 'invalid_api_key' });
    }
    const method = (allowed: string) => {
      if (req.method !== allowed) throw new HttpError({ status: 405, message: `${req.method} is not allowed on ${path}; use ${allowed}`, type: 'invalid_request_error' });
    };
    if (route === '/chat/completions') {
      method('POST');
      return chatCompletions(req, res);
    }
    if (route === '/embeddings') {
      method('POST');
      return embeddings(req, res);
    }
    if (route === '/models') {
      method('GET');
      sendJson(res, 200, { object: 'list', data: [modelJson] });
      return '200';
    }
    if (route.startsWith('/models/')) {
      method('GET');
      const name = decodeURIComponent(route.slice('/models/'.length));
      if (name !== generator.model) throw modelNotFound(name);
      sendJson(res, 200, modelJson);
      return '200';
    }
    const routes = `POST /v1/chat/completions, ${opts.embeddings ? 'POST /v1/embeddings, ' : ''}GET /v1/models`;
    throw new HttpError({ status: 404, message: `unknown route ${req.method} ${path} (this server answers ${routes})`, type: 'invalid_request_error', code: 'unknown_url' });
  }

  return createServer((req, res) => {
    const t0 = Date.now();
    handle(req, res)
      .catch((e: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return 'failed after the headers';
        }
        if (e instanceof GenerationError && e.kind === 'aborted') {
          res.destroy();
          return 'client gone';
        }
        const f = errorFields(e);
        sendJson(res, f.status, errorBody(f));
        return `${f.status} ${f.message}`;
      })
      // A health check that passed is not logged: clients and supervisors poll it, and one line per poll buries the requests.
      .then((outcome) => void (outcome !== HEALTHY && opts.log?.(`${req.method} ${req.url} ${outcome} ${((Date.now() - t0) / 1000).toFixed(2)} s`)));
  });
}

/** What `handle` returns for a passed health check (not logged). */
const HEALTHY = '200 (health)';

export interface RunningChatServer {
  server: Server;
  /** The API root for clients, e.g. http://127.0.0.1:8080/v1. */
  baseURL: string;
  port: number;
  close(): Promise<void>;
}

/** Starts a chat server on host:port (port 0: any free port) and says where it listens. */
export async function startChatServer(opts: ChatServerOptions & { port?: number; host?: string }): Promise<RunningChatServer> {
  const server = createChatServer(opts);
  // Idle keep-alive connections stay open 30 s (Node's default is 5 s): a client that embeds or
  // generates in bursts with pauses between them reuses its connection instead of racing the
  // server's close of it (undici then sees the socket die under a new request).
  server.keepAliveTimeout = 30_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8080, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    port,
    baseURL: `http://${shown}:${port}/v1`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}
