/**
 * The worker side of `serve-llm`'s generation thread (./generation-worker-protocol.ts): answers the
 * HTTP thread's `complete`, `abort` and `embed` messages with a generator and an embedding model
 * that live in this worker, so their forward passes run here and never on the HTTP thread.
 *
 * Each `complete` runs `generator.complete` with its own AbortController (an `abort` message
 * fires it: the continuous batcher drops the request at its next step) and, for a streamed
 * request, posts every piece of text as it is generated; the answer or the error follows as the
 * last message of that id. Calls run concurrently — the generator batches them (./continuous-batcher.ts).
 *
 * The worker's entry (scripts/serve-llm-worker.ts: backend, model, generator, embedder) posts
 * `ready` and then calls `answerGenerationRequests`; the entry lives beside the command because
 * it builds the embedder of lib/embed, a layer above this folder.
 */
import type { MessagePort } from 'node:worker_threads';
import type { EmbeddingModel } from './embedding-model.js';
import { serializeError, type FromWorker, type ToWorker } from './generation-worker-protocol.js';
import type { ChatGenerator } from './types.js';

/** Answers the HTTP thread's messages on `port` until the worker ends. */
export function answerGenerationRequests(port: MessagePort, generator: ChatGenerator, embeddings: EmbeddingModel): void {
  const inFlight = new Map<number, AbortController>();
  const post = (m: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(m, transfer);

  port.on('message', (m: ToWorker) => {
    if (m.type === 'abort') {
      inFlight.get(m.id)?.abort(new Error(m.reason));
      return;
    }
    if (m.type === 'embed') {
      embeddings.embed(m.texts, m.pooling).then(
        (out) => {
          // A copy of the vectors' own bytes, handed over without another copy.
          const data = out.data.slice();
          post({ type: 'embedded', id: m.id, data, tokens: out.tokens }, [data.buffer as ArrayBuffer]);
        },
        (e: unknown) => post({ type: 'error', id: m.id, error: serializeError(e) }),
      );
      return;
    }
    const abort = new AbortController();
    if (m.aborted) abort.abort(new Error('the client disconnected'));
    inFlight.set(m.id, abort);
    generator
      .complete(m.request, { signal: abort.signal, onText: m.stream ? (delta) => post({ type: 'text', id: m.id, delta }) : undefined })
      .then(
        (result) => post({ type: 'completed', id: m.id, result }),
        (e: unknown) => post({ type: 'error', id: m.id, error: serializeError(e) }),
      )
      .finally(() => inFlight.delete(m.id));
  });
}
