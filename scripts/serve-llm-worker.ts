/**
 * The generation worker of `npm run serve-llm` (`--generation-thread worker`, the default): a
 * Node worker_threads Worker started by lib/llm/worker-generator.ts with the command's
 * ServedModelSettings as its workerData. It starts its own tfjs backend, loads the decoder
 * (./serve-llm-model.ts), says `ready` with what it loaded, then answers the HTTP thread's
 * requests (lib/llm/generation-worker.ts) — every forward pass runs on this thread. A model that
 * cannot be loaded is reported as `failed` with the error, and the worker ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { answerGenerationRequests } from '../lib/llm/generation-worker.js';
import { serializeError, type FromWorker } from '../lib/llm/generation-worker-protocol.js';
import { loadServedModel, type ServedModelSettings } from './serve-llm-model.js';

if (!parentPort) throw new Error('scripts/serve-llm-worker.ts runs as a worker thread of serve-llm, not on its own');
const port = parentPort;
const post = (m: FromWorker) => port.postMessage(m);
try {
  const served = await loadServedModel(workerData as ServedModelSettings, (line) => console.error(`serve-llm: ${line}`));
  answerGenerationRequests(port, served.generator, served.embeddings);
  post({ type: 'ready', info: served.info });
} catch (e) {
  // The HTTP thread ends this worker when it reads this.
  post({ type: 'failed', error: serializeError(e) });
}
