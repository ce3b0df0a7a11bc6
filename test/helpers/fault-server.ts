/**
 * A small real HTTP server for the clients' failure paths: each request's behaviour is chosen by a
 * handler from the request's content — a chat request's last message, an embeddings request's
 * inputs joined by newlines — so a test scripts 429s, 500s, garbled bodies, dropped connections,
 * slow answers, wrong widths and wrong model names per prompt; the server counts what reached it —
 * requests, requests per content (to find paid duplicates), requests in flight and their peak.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FaultCall {
  /** 1-based count of requests with this same last-message content so far (this one included). */
  attempt: number;
  body: { model?: string; messages: Array<{ role: string; content: string }>; input?: string | string[]; stream?: boolean; [k: string]: unknown };
  /** The last message's content (chat), or the inputs joined by '\n' (embeddings). */
  content: string;
  /** The request's path, e.g. /v1/embeddings. */
  path: string;
  req: IncomingMessage;
}

export type FaultHandler = (call: FaultCall, res: ServerResponse) => void | Promise<void>;

export interface FaultServer {
  baseURL: string;
  /** Every request body's text, in arrival order. */
  bodies: string[];
  /** Requests per last-message content. */
  perContent: Map<string, number>;
  inFlight: number;
  peak: number;
  close(): Promise<void>;
}

/** A chat.completion answer with `text`. */
export function completionJson(text: string, model = 'fake-llm', usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }): string {
  return JSON.stringify({
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: 'stop' }],
    usage,
  });
}

export function sendCompletion(res: ServerResponse, text: string, model?: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(completionJson(text, model));
}

export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_error' : 'invalid_request_error', param: null, code: null } }));
}

/** An embeddings answer (OpenAI's list shape) with these vectors as float lists. */
export function embeddingsJson(vectors: ArrayLike<number>[], model = 'fake-embedder'): string {
  return JSON.stringify({
    object: 'list',
    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: Array.from(v) })),
    model,
    usage: { prompt_tokens: vectors.length, total_tokens: vectors.length },
  });
}

export function sendEmbeddings(res: ServerResponse, vectors: ArrayLike<number>[], model?: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(embeddingsJson(vectors, model));
}

export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFaultServer(handler: FaultHandler): Promise<FaultServer> {
  const state = { bodies: [] as string[], perContent: new Map<string, number>(), inFlight: 0, peak: 0 };
  const server = createServer(async (req, res) => {
    state.inFlight++;
    state.peak = Math.max(state.peak, state.inFlight);
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        state.inFlight--;
      }
    };
    res.on('close', finish);
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      state.bodies.push(text);
      const body = JSON.parse(text) as FaultCall['body'];
      const content = Array.isArray(body.messages) ? body.messages.at(-1)!.content : Array.isArray(body.input) ? body.input.join('\n') : String(body.input);
      const attempt = (state.perContent.get(content) ?? 0) + 1;
      state.perContent.set(content, attempt);
      await handler({ attempt, body, content, req, path: new URL(req.url ?? '/', 'http://x').pathname }, res);
    } catch (e) {
      if (!res.headersSent) sendError(res, 500, `fault server: ${(e as Error).message}`);
      else res.destroy();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get bodies() {
      return state.bodies;
    },
    get perContent() {
      return state.perContent;
    },
    get inFlight() {
      return state.inFlight;
    },
    get peak() {
      return state.peak;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
