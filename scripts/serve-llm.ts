/**
 * npm run serve-llm -- --model <dir|hub id> [--port 8080] [--host 127.0.0.1] [--served-model-name <name>]
 *                      [--max-batch-size 8] [--prompt auto|chat-template|plain] [--embedding-pooling last|mean]
 *                      [--api-key <key>] [--backend cpu] [--generation-thread worker|main]
 *
 * An OpenAI-compatible server (POST /v1/chat/completions, streaming included; POST /v1/embeddings;
 * GET /v1/models) over the project's decoder (lib/llm/server.ts over lib/llm/local-generator.ts,
 * whose continuous batching decodes up to --max-batch-size requests together, and
 * lib/embed/decoder-embedding-model.ts for embeddings), so other tools, other machines and this
 * library's own clients can generate and embed with a model this project loads — e.g. AnglE Table
 * 5's data from LLaMA-2-7B-chat on a GPU host, or PromptEOL embeddings. Prints
 * `serve-llm: listening on <base URL>` once it accepts requests (with --port 0, on a free port),
 * then one line per request on stderr; Ctrl-C or SIGTERM stops it.
 *
 * The model runs on a worker thread by default (./serve-llm-worker.ts, lib/llm/worker-generator.ts):
 * the HTTP thread only parses, routes and streams, so `/health` answers while a forward pass runs.
 * `--generation-thread main` runs it on the HTTP thread, as before the worker existed.
 */
import { envConfig } from '../lib/config.js';
import { EMBEDDING_POOLINGS, type EmbeddingModel, type EmbeddingPooling } from '../lib/llm/embedding-model.js';
import type { GenerationWorkerInfo } from '../lib/llm/generation-worker-protocol.js';
import { startChatServer } from '../lib/llm/server.js';
import type { ChatGenerator } from '../lib/llm/types.js';
import { GenerationWorker } from '../lib/llm/worker-generator.js';
import { UnknownNameError } from '../lib/util/errors.js';
import { EXIT, helpText, parseOptions, runCommand, UsageError, type OptionSpecs } from './cli/command.js';
import { loadServedModel, PROMPT_STYLES, type ServedModelSettings } from './serve-llm-model.js';

const GENERATION_THREADS = ['worker', 'main'] as const;

const OPTIONS = {
  model: { type: 'string', value: '<dir|hub id>', help: 'the decoder to serve: a local directory (HF layout or a llama2.c folder) or a Hub id', default: 'ANGLE_MODEL' },
  port: { type: 'string', value: '<n>', help: 'TCP port (0: any free port, printed)', default: '8080' },
  host: { type: 'string', value: '<address>', help: 'address to listen on (0.0.0.0 to accept other machines)', default: '127.0.0.1' },
  'served-model-name': { type: 'string', value: '<name>', help: "the model name clients send and /v1/models lists", default: 'the --model argument' },
  'max-batch-size': { type: 'string', value: '<n>', help: 'requests decoded together at most (continuous batching: a request joins the running batch at the next decode step)', default: '8' },
  prompt: { type: 'string', value: '<style>', help: `${PROMPT_STYLES.join(', ')}: the chat template of tokenizer_config.json, or the messages' text joined by blank lines`, default: 'auto (the template where the model has one)' },
  'embedding-pooling': { type: 'string', value: '<pooling>', help: `${EMBEDDING_POOLINGS.join(', ')}: the pooling of /v1/embeddings requests that name none (a request may send "pooling")`, default: 'last (PromptEOL, AnglE-LLaMA)' },
  'api-key': { type: 'string', value: '<key>', help: 'require Authorization: Bearer <key>', default: 'none (no key needed)' },
  backend: { type: 'string', value: '<name>', help: 'tfjs backend: cpu, wasm, cuda, tensorflow (started on the generation thread)', default: 'ANGLE_BACKEND, else cpu' },
  'generation-thread': { type: 'string', value: '<thread>', help: `${GENERATION_THREADS.join(', ')}: where the model runs — a worker thread, so /health, request parsing and streaming never wait for a forward pass, or the HTTP thread itself (one forward pass at a time holds it; for a backend that cannot run in a worker)`, default: 'worker' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} satisfies OptionSpecs;

const USAGE = 'usage: npm run serve-llm -- --model <dir|hub id> [--port 8080] [--host 127.0.0.1] [options]';
const FOOTER = `Endpoints: POST /v1/chat/completions (OpenAI's JSON; "stream": true for server-sent events), POST /v1/embeddings (input, encoding_format float|base64, dimensions: the first n components, and "pooling": last|mean), GET /v1/models, GET /health.
Clients: new llm.OpenAIChatClient({ baseURL: 'http://127.0.0.1:8080/v1', model: '<served model name>' }), new llm.OpenAIEmbeddingsClient({ baseURL, model, prompt: { template } }), or any OpenAI client.
Exit codes: 0 stopped by SIGTERM, 130 stopped by Ctrl-C, 1 the generation worker ended on its own, 2 usage or input error, 3 backend unavailable.`;

function integer(name: string, v: string | undefined, fallback: number, min: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}, got '${v}'`);
  return n;
}

async function main(): Promise<number> {
  const { values } = parseOptions(OPTIONS, process.argv.slice(2));
  if (values.help) {
    console.log(helpText(USAGE, OPTIONS, FOOTER));
    return EXIT.ok;
  }
  const modelId = values.model ?? envConfig().model;
  if (!modelId) throw new UsageError('no model: pass --model <dir|hub id> or set ANGLE_MODEL');
  const port = integer('port', values.port, 8080, 0);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const maxBatchSize = integer('max-batch-size', values['max-batch-size'], 8, 1);
  const prompt = values.prompt ?? 'auto';
  if (!(PROMPT_STYLES as readonly string[]).includes(prompt)) throw new UnknownNameError('prompt style', prompt, PROMPT_STYLES);
  const embeddingPooling = values['embedding-pooling'] ?? 'last';
  if (!(EMBEDDING_POOLINGS as readonly string[]).includes(embeddingPooling)) throw new UnknownNameError('embedding pooling', embeddingPooling, EMBEDDING_POOLINGS);

  const generationThread = values['generation-thread'] ?? 'worker';
  if (!(GENERATION_THREADS as readonly string[]).includes(generationThread)) throw new UnknownNameError('generation thread', generationThread, GENERATION_THREADS);

  const settings: ServedModelSettings = {
    modelId,
    backend: values.backend,
    servedModelName: values['served-model-name'],
    maxBatchSize,
    prompt: prompt as (typeof PROMPT_STYLES)[number],
    embeddingPooling: embeddingPooling as EmbeddingPooling,
  };
  let generator: ChatGenerator;
  let embeddings: EmbeddingModel;
  let info: GenerationWorkerInfo;
  let release: () => Promise<void> | void;
  /** Resolves with the reason if the model's thread ends on its own (the server cannot answer then). */
  let died: Promise<string> = new Promise<string>(() => {});
  if (generationThread === 'worker') {
    // The worker's module sits beside this one (.ts from source, .js when compiled).
    const entry = new URL(`./serve-llm-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
    const worker = await GenerationWorker.start(entry, settings);
    ({ generator, embeddings, info } = worker);
    release = () => worker.close();
    died = worker.died;
  } else {
    const served = await loadServedModel(settings, (l) => console.error(`serve-llm: ${l}`));
    ({ generator, embeddings, info } = served);
    release = () => served.dispose();
  }
  const server = await startChatServer({
    generator,
    port,
    host: values.host ?? '127.0.0.1',
    apiKey: values['api-key'],
    embeddings,
    log: (line) => console.error(`serve-llm: ${line}`),
  });
  console.error(
    `serve-llm: model ${info.model} (${info.numParameters.toLocaleString('en-US')} parameters, context ${info.maxPositions}, prompt: ${info.promptStyle}, up to ${maxBatchSize} requests decoded together, embeddings: ${embeddingPooling} pooling by default; backend ${info.backend} on the ${generationThread === 'worker' ? 'generation worker thread' : 'HTTP thread'})`,
  );
  console.log(`serve-llm: listening on ${server.baseURL}`);

  const signal = await Promise.race([
    new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    }),
    died.then((why) => ({ died: why })),
  ]);
  await server.close();
  await release();
  if (typeof signal !== 'string') {
    console.error(`serve-llm: stopped: ${signal.died}`);
    return EXIT.failed;
  }
  console.error(`serve-llm: stopped (${signal})`);
  return signal === 'SIGINT' ? EXIT.interrupted : EXIT.ok;
}

await runCommand('serve-llm', main);
