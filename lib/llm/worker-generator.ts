/**
 * The HTTP thread's view of a generation worker (./generation-worker-protocol.ts): a Node
 * `worker_threads` Worker holds the model, and this object stands in for its generator and its
 * embedding model — `generator` is a ChatGenerator and `embeddings` an EmbeddingModel, the very
 * interfaces ./server.ts serves — so the server is the same whichever thread generates, and the
 * HTTP thread never runs a forward pass: `/health`, request parsing, streaming of text already
 * generated and client disconnects are handled while the worker decodes.
 *
 * Streaming: each `text` message of a request calls its `onText` in order. Cancellation: when a
 * request's signal aborts, the worker is told (`abort`) and its batcher drops the request at the
 * next step; the request's promise then rejects with the worker's GenerationError('aborted').
 * Errors come back as the classes the worker threw (deserializeError), so the server answers the
 * same status codes and OpenAI error bodies as with an in-thread generator. If the worker dies,
 * every pending and later request fails with a GenerationError('connection') naming why (the
 * server answers 502 server_error).
 *
 * Starting: `entry` is the worker's module. From source it is a .ts file, which a bare Worker
 * cannot load (Node 20 does not apply `--import tsx` from a worker's execArgv to its main
 * module), so a two-line bootstrap registers tsx's loader (tsx/esm/api) in the worker and then
 * imports the entry; a compiled .js entry is started directly.
 */
import { Worker } from 'node:worker_threads';
import type { EmbeddedTexts, EmbeddingModel, EmbeddingPooling } from './embedding-model.js';
import { deserializeError, type FromWorker, type GenerationWorkerInfo, type ToWorker } from './generation-worker-protocol.js';
import { GenerationError } from './generation-error.js';
import type { ChatGenerator, ChatRequest, ChatResult, CompleteOptions } from './types.js';

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  onText?: (delta: string) => void;
}

/** A Worker running `entry` with `workerData`; a .ts entry gets tsx's loader first. */
function spawnWorker(entry: URL, workerData: unknown): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

export class GenerationWorker {
  /** The chat generator whose requests the worker decodes. */
  readonly generator: ChatGenerator;
  /** The embedding model whose forward passes run in the worker. */
  readonly embeddings: EmbeddingModel;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Why the worker is gone, once it is. */
  private dead?: string;
  private announceDeath!: (why: string) => void;
  /**
   * Resolves with the reason when the worker ends without close() (an uncaught error, an exit):
   * the server cannot answer any more, so the command stops instead of answering 502 forever.
   */
  readonly died = new Promise<string>((resolve) => (this.announceDeath = resolve));

  private constructor(
    private readonly worker: Worker,
    /** What the worker said about its model. */
    readonly info: GenerationWorkerInfo,
  ) {
    worker.on('message', (m: FromWorker) => this.receive(m));
    worker.on('error', (e) => this.die(`the generation worker failed: ${e.message}`));
    worker.on('exit', (code) => this.die(`the generation worker exited (code ${code})`));
    this.generator = {
      name: info.name,
      model: info.model,
      complete: (request, opts) => this.complete(request, opts),
    };
    this.embeddings = {
      dim: info.dim,
      defaultPooling: info.defaultPooling,
      embed: (texts, pooling) => this.embed(texts, pooling),
    };
  }

  /**
   * Starts the worker and resolves once its model is loaded (its `ready` message); rejects with
   * the worker's own error (an InputError for a model that cannot generate, say) when it fails.
   */
  static start(entry: URL, workerData: unknown): Promise<GenerationWorker> {
    const worker = spawnWorker(entry, workerData);
    return new Promise<GenerationWorker>((resolve, reject) => {
      const fail = (e: unknown) => {
        cleanup();
        void worker.terminate();
        reject(e);
      };
      const onMessage = (m: FromWorker) => {
        if (m.type === 'ready') {
          cleanup();
          resolve(new GenerationWorker(worker, m.info));
        } else if (m.type === 'failed') fail(deserializeError(m.error));
      };
      const onError = (e: Error) => fail(e);
      const onExit = (code: number) => fail(new Error(`the generation worker exited (code ${code}) before its model was loaded`));
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
  }

  /** Stops the worker (requests still pending fail). */
  async close(): Promise<void> {
    this.die('the server is stopping', false);
    await this.worker.terminate();
  }

  private send(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  private call<T>(make: (id: number) => ToWorker, onText?: (delta: string) => void): { id: number; done: Promise<T> } {
    const id = this.nextId++;
    const done = new Promise<T>((resolve, reject) => {
      if (this.dead) return reject(new GenerationError('connection', this.dead, { retryable: false }));
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, onText });
      this.send(make(id));
    });
    return { id, done };
  }

  private async complete(request: ChatRequest, opts: CompleteOptions = {}): Promise<ChatResult> {
    const { signal, onText } = opts;
    const { id, done } = this.call<ChatResult>((id) => ({ type: 'complete', id, request, stream: onText !== undefined, aborted: signal?.aborted ?? false }), onText);
    const onAbort = () => this.send({ type: 'abort', id, reason: String((signal?.reason as Error | undefined)?.message ?? signal?.reason ?? 'aborted') });
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await done;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private embed(texts: string[], pooling: EmbeddingPooling): Promise<EmbeddedTexts> {
    return this.call<EmbeddedTexts>((id) => ({ type: 'embed', id, texts, pooling })).done;
  }

  private receive(m: FromWorker): void {
    if (m.type === 'ready' || m.type === 'failed') return;
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'text') {
      try {
        p.onText?.(m.delta);
      } catch (e) {
        // The caller's onText failed (a closed socket, say): that request fails, the worker stops it.
        this.pending.delete(m.id);
        this.send({ type: 'abort', id: m.id, reason: (e as Error)?.message ?? String(e) });
        p.reject(e);
      }
      return;
    }
    this.pending.delete(m.id);
    if (m.type === 'completed') p.resolve(m.result);
    else if (m.type === 'embedded') p.resolve({ data: m.data, tokens: m.tokens });
    else p.reject(deserializeError(m.error));
  }

  private die(why: string, unexpected = true): void {
    if (this.dead) return;
    this.dead = why;
    if (unexpected) this.announceDeath(why);
    for (const p of this.pending.values()) p.reject(new GenerationError('connection', why, { retryable: false }));
    this.pending.clear();
  }
}
