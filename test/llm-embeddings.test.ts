/**
 * Embeddings over the OpenAI-compatible API: the client (lib/llm/openai-embeddings-client.ts)
 * against the real serve-llm (scripts/serve-llm.ts in a child process, POST /v1/embeddings over the
 * toy llama2.c decoder), compared with the in-process encoders on the same weights; and against a
 * fault-injecting local server (test/helpers/fault-server.ts) for retries, dropped connections,
 * wrong widths, counts and model names, bounded concurrency and the cache.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { PromptSentenceEncoder } from '../lib/embed/prompt-encoder.js';
import { EmbeddingCache } from '../lib/llm/embedding-cache.js';
import { base64ToFloat32 } from '../lib/llm/embeddings-wire.js';
import { GenerationError } from '../lib/llm/generation-error.js';
import { OpenAIEmbeddingsClient, type OpenAIEmbeddingsClientOptions } from '../lib/llm/openai-embeddings-client.js';
import { ANGLE_LLAMA_TEMPLATE, PROMPTEOL_TEMPLATE, promptFor } from '../lib/llm/prompt-template.js';
import { loadModel } from '../lib/models/auto.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import type { LoadedModel } from '../lib/models/types.js';
import { DECODER_GOLDEN_DIR } from './helpers/decoder.js';
import { SHARED_DIR } from './helpers/env.js';
import { delay, sendEmbeddings, sendError, startFaultServer, type FaultServer } from './helpers/fault-server.js';
import { startServeLlm, type ServeLlm } from './helpers/serve-llm.js';

const MODEL_NAME = 'stories260K';
let server: ServeLlm | undefined;
let m: LoadedModel<LlamaModel> | undefined;
const tmp: string[] = [];

const SENTENCES = [
  'A man is playing a guitar.',
  'A woman is slicing an onion.',
  'Lily and Tom went to the park.',
  'He said "hi" and left?',
  '  Héllo wörld — “quotes” 🙂  ',
  'A man is playing a guitar.',
];

before(async () => {
  if (!DECODER_GOLDEN_DIR) return;
  const modelDir = join(DECODER_GOLDEN_DIR, 'model');
  [server] = await Promise.all([
    startServeLlm(['--model', modelDir, '--served-model-name', MODEL_NAME]),
    (async () => {
      await initBackend('cpu', { quiet: true });
      m = await loadLlamaModel(modelDir);
    })(),
  ]);
});

after(async () => {
  m?.model.dispose();
  if (server) assert.equal(await server.stop(), 0);
  await Promise.all(tmp.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'llm-embeddings-'));
  tmp.push(d);
  return d;
}

function ready(t: { skip: (msg: string) => void }): boolean {
  if (!server || !m) t.skip('no decoder golden set: set ANGLE_DECODER_GOLDEN_DIR or ANGLE_SHARED_DIR (../shared/golden/llama2c-stories260K)');
  return Boolean(server && m);
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

const client = (o: Partial<OpenAIEmbeddingsClientOptions> = {}) => new OpenAIEmbeddingsClient({ baseURL: server!.baseURL, model: MODEL_NAME, env: {}, retry: { maxRetries: 0 }, ...o });

test('PromptEOL and AnglE-LLaMA prompts through serve-llm (last token) equal the in-process prompt encoder to 1e-5; base64 and float carry the same vectors', async (t) => {
  if (!ready(t)) return;
  for (const template of [PROMPTEOL_TEMPLATE, ANGLE_LLAMA_TEMPLATE]) {
    const prompt = { template, prepareText: 'prompteol' as const };
    const local = await new PromptSentenceEncoder(m!, prompt).encode(SENTENCES);
    const c = client({ prompt, pooling: 'last', batchSize: 2, dimensions: 64 });
    const remote = await c.encode(SENTENCES);
    assert.equal(remote.rows, SENTENCES.length);
    assert.equal(remote.dim, 64);
    const d = maxAbsDiff(remote.data, local.data);
    assert.ok(d <= 1e-5, `${template}: max |endpoint − in-process| = ${d}`);
    assert.equal(c.stats.textsSent, 5, 'the repeated sentence is sent once');
    assert.equal(c.stats.requests, 3, 'five texts, two per request');
    // The same requests (same batches: padding changes the order of float sums) answered as floats.
    const asFloats = await client({ prompt, pooling: 'last', batchSize: 2, encodingFormat: 'float' }).encode(SENTENCES);
    assert.deepEqual(asFloats.data, remote.data, 'a float32 printed as JSON reads back as the same float32');
  }
});

test('mean pooling through serve-llm equals the in-process avg-pooled encoder to 1e-5; the server default pooling is last', async (t) => {
  if (!ready(t)) return;
  const local = await new PooledSentenceEncoder(m!, { pooling: 'avg', engine: 'tfjs' }).encode(SENTENCES);
  const remote = await client({ pooling: 'mean' }).encode(SENTENCES);
  const d = maxAbsDiff(remote.data, local.data);
  assert.ok(d <= 1e-5, `max |endpoint − in-process| = ${d}`);
  // Without `pooling`, the server's default (last token) answers.
  const lastLocal = await new PromptSentenceEncoder(m!, { template: '{text}' }).encode(SENTENCES);
  const lastRemote = await client().encode(SENTENCES);
  assert.ok(maxAbsDiff(lastRemote.data, lastLocal.data) <= 1e-5);
});

test('the cache: a rerun sends nothing, keys differ by template and pooling, a damaged entry is asked again', async (t) => {
  if (!ready(t)) return;
  const dir = await tempDir();
  const prompt = { template: PROMPTEOL_TEMPLATE };
  const first = client({ prompt, cache: dir, revision: 'toy-1' });
  const a = await first.encode(SENTENCES);
  assert.equal(first.stats.textsSent, 5);
  const cache = new EmbeddingCache(dir);
  assert.equal((await cache.keys()).length, 5);
  const again = client({ prompt, cache: dir, revision: 'toy-1' });
  const b = await again.encode(SENTENCES);
  assert.deepEqual(b.data, a.data);
  assert.equal(again.stats.requests, 0, 'a rerun asks the endpoint for nothing');
  assert.equal(again.stats.cacheHits, 5);
  // Another template, revision or pooling is another key.
  const other = client({ prompt: { template: ANGLE_LLAMA_TEMPLATE }, cache: dir, revision: 'toy-1' });
  await other.encode(SENTENCES.slice(0, 2));
  const newer = client({ prompt, cache: dir, revision: 'toy-2' });
  await newer.encode(SENTENCES.slice(0, 2));
  assert.equal(other.stats.textsSent + newer.stats.textsSent, 4);
  assert.equal((await cache.keys()).length, 9);
  // A damaged entry is a miss, asked again and rewritten.
  const key = (await cache.keys())[0];
  const { writeFile } = await import('node:fs/promises');
  await writeFile(cache.pathOf(key), '{"format":"angle-embedding-cache/1","vector":"AAAA"}');
  const third = client({ prompt, cache: dir, revision: 'toy-1' });
  await third.encode(SENTENCES);
  const fourth = client({ prompt: { template: ANGLE_LLAMA_TEMPLATE }, cache: dir, revision: 'toy-1' });
  await fourth.encode(SENTENCES.slice(0, 2));
  const fifth = client({ prompt, cache: dir, revision: 'toy-2' });
  await fifth.encode(SENTENCES.slice(0, 2));
  assert.equal(third.stats.textsSent + fourth.stats.textsSent + fifth.stats.textsSent, 1, 'only the damaged entry is asked again');
});

test("the raw /v1/embeddings answer has OpenAI's shape and usage; bad requests get OpenAI's error JSON", async (t) => {
  if (!ready(t)) return;
  const post = async (body: unknown, method = 'POST') => {
    const res = await fetch(`${server!.baseURL}/embeddings`, { method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const texts = ['A man is playing a guitar.', 'Once upon a time'];
  const ok = await post({ model: MODEL_NAME, input: texts, encoding_format: 'base64' });
  assert.equal(ok.status, 200);
  assert.equal(ok.json.object, 'list');
  assert.equal(ok.json.model, MODEL_NAME);
  assert.deepEqual(
    ok.json.data.map((d: any) => [d.object, d.index, base64ToFloat32(d.embedding)!.length]),
    [
      ['embedding', 0, 64],
      ['embedding', 1, 64],
    ],
  );
  const tokens = texts.reduce((s, x) => s + m!.tokenizer.encode(x).ids.length, 0);
  assert.deepEqual(ok.json.usage, { prompt_tokens: tokens, total_tokens: tokens });
  const one = await post({ input: 'Once upon a time' });
  assert.equal(one.status, 200);
  assert.equal(one.json.data.length, 1);
  assert.ok(Array.isArray(one.json.data[0].embedding), 'floats by default');
  assert.deepEqual(Float32Array.from(one.json.data[0].embedding), base64ToFloat32(ok.json.data[1].embedding));

  // `dimensions` below the width: each vector's first components (angle_emb's embedding_size).
  const short = await post({ input: texts, dimensions: 16, encoding_format: 'base64' });
  assert.equal(short.status, 200);
  short.json.data.forEach((d: any, i: number) => assert.deepEqual(base64ToFloat32(d.embedding), base64ToFloat32(ok.json.data[i].embedding)!.subarray(0, 16)));

  const errors: Array<[unknown, number, string | null, RegExp]> = [
    [{ model: 'gpt-4', input: 'x' }, 404, 'model', /the model 'gpt-4' does not exist here; this server has 'stories260K'/],
    [{ input: [[1, 2, 3]] }, 400, 'input', /holds token ids .* send strings/],
    [{ input: [] }, 400, 'input', /'input' must be a string or a non-empty list of strings, got an empty list/],
    [{ input: 'x', encoding_format: 'binary' }, 400, 'encoding_format', /'encoding_format' must be one of float, base64/],
    [{ input: 'x', dimensions: 65 }, 400, 'dimensions', /'dimensions' is 65, but this model's embeddings have 64 dimensions/],
    [{ input: 'x', pooling: 'cls' }, 400, 'pooling', /'pooling' must be one of last, mean/],
  ];
  for (const [body, status, param, message] of errors) {
    const r = await post(body);
    assert.equal(r.status, status, JSON.stringify(body));
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.equal(r.json.error.param, param);
    assert.match(r.json.error.message, message);
  }
  assert.equal((await post(undefined, 'GET')).status, 405);

  // The client: a model the server does not have is a 404, not retried.
  const wrong = new OpenAIEmbeddingsClient({ baseURL: server!.baseURL, model: 'no-such-model', env: {}, retry: { maxRetries: 3, initialDelayMs: 1 } });
  const err = await wrong.encode(['x']).catch((e: unknown) => e as GenerationError);
  assert.ok(err instanceof GenerationError && err.kind === 'http' && err.status === 404, String(err));
  assert.equal(wrong.attemptsSent, 1);
});

test('an OPT decoder through serve-llm: last-token and mean embeddings equal the in-process encoders to 1e-5', async (t) => {
  const dir = SHARED_DIR ? join(SHARED_DIR, 'golden', 'opt-tiny-seed7', 'model') : undefined;
  if (!dir || !existsSync(dir)) return t.skip('no OPT golden set (../shared/golden/opt-tiny-seed7)');
  const [opt, s] = await Promise.all([loadModel(dir), startServeLlm(['--model', dir, '--served-model-name', 'opt-tiny'])]);
  try {
    const texts = SENTENCES.slice(0, 4);
    const prompt = { template: PROMPTEOL_TEMPLATE };
    const c = (o: Partial<OpenAIEmbeddingsClientOptions>) => new OpenAIEmbeddingsClient({ baseURL: s.baseURL, model: 'opt-tiny', env: {}, ...o });
    const last = await c({ prompt, pooling: 'last' }).encode(texts);
    const lastLocal = await new PromptSentenceEncoder(opt, prompt).encode(texts);
    assert.equal(last.dim, opt.model.hiddenSize);
    assert.ok(maxAbsDiff(last.data, lastLocal.data) <= 1e-5, `last: ${maxAbsDiff(last.data, lastLocal.data)}`);
    const mean = await c({ pooling: 'mean' }).encode(texts);
    const meanLocal = await new PooledSentenceEncoder(opt, { pooling: 'avg', engine: 'tfjs' }).encode(texts);
    assert.ok(maxAbsDiff(mean.data, meanLocal.data) <= 1e-5, `mean: ${maxAbsDiff(mean.data, meanLocal.data)}`);
  } finally {
    opt.model.dispose();
    assert.equal(await s.stop(), 0);
  }
});

// ---- against the fault-injecting server -------------------------------------------------------

/** A deterministic 4-wide vector of a text. */
const vec = (s: string) => [s.length, s.charCodeAt(0) || 0, s.charCodeAt(s.length - 1) || 0, 0.5];

async function withFaults(handler: Parameters<typeof startFaultServer>[0], f: (s: FaultServer) => Promise<void>): Promise<void> {
  const s = await startFaultServer(handler);
  try {
    await f(s);
  } finally {
    await s.close();
  }
}

const faultClient = (s: FaultServer, o: Partial<OpenAIEmbeddingsClientOptions> = {}) =>
  new OpenAIEmbeddingsClient({ baseURL: s.baseURL, model: 'fake-embedder', env: {}, random: () => 0, ...o, retry: { initialDelayMs: 5, ...o.retry } });

const inputs = (call: { body: { input?: string | string[] } }) => (Array.isArray(call.body.input) ? call.body.input : [call.body.input!]);

test("retries: 429 waits what Retry-After says, 5xx, a dropped connection and a garbled body are retried; the prompt template is filled on our side", async () => {
  const retries: number[] = [];
  await withFaults(
    (call, res) => {
      const texts = inputs(call);
      if (call.content.includes('limited') && call.attempt === 1) return sendError(res, 429, 'slow down', { 'retry-after': '0.05' });
      if (call.content.includes('broken') && call.attempt <= 2) return sendError(res, 503, 'overloaded');
      if (call.content.includes('dropped') && call.attempt === 1) return void res.socket!.destroy();
      if (call.content.includes('garbled') && call.attempt === 1) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"object":"list","data":[{"embed');
      }
      sendEmbeddings(res, texts.map(vec));
    },
    async (s) => {
      const prompt = { template: PROMPTEOL_TEMPLATE, prepareText: 'prompteol' as const };
      const c = faultClient(s, { prompt, batchSize: 1, onRetry: (e) => retries.push(e.delayMs) });
      const texts = ['limited', 'broken', 'dropped', 'garbled', 'fine'];
      const out = await c.encode(texts);
      texts.forEach((t, i) => assert.deepEqual(Array.from(out.data.subarray(i * 4, i * 4 + 4)), vec(promptFor(t, prompt)), t));
      assert.equal(s.perContent.get(promptFor('limited', prompt)), 2);
      assert.equal(s.perContent.get(promptFor('broken', prompt)), 3);
      assert.equal(s.perContent.get(promptFor('dropped', prompt)), 2);
      assert.equal(s.perContent.get(promptFor('garbled', prompt)), 2);
      assert.ok(retries.includes(50), `Retry-After 0.05 s is a 50 ms wait (waits: ${retries.join(', ')})`);
      // What the endpoint saw is exactly the filled prompt of each text.
      const seen = s.bodies.map((b) => (JSON.parse(b) as { input: string[] }).input[0]);
      assert.ok(seen.includes('This sentence : "limited." means in one word:"'));
      assert.equal(c.attemptsSent, 2 + 3 + 2 + 2 + 1);
    },
  );
});

test('wrong width, wrong count or another model name: an error naming it, not retried, nothing cached', async () => {
  const dir = await tempDir();
  const cache = new EmbeddingCache(dir);
  await withFaults(
    (call, res) => {
      const texts = inputs(call);
      if (call.content.includes('narrow')) return sendEmbeddings(res, texts.map((t) => vec(t).slice(0, 3)));
      if (call.content.includes('short')) return sendEmbeddings(res, texts.slice(1).map(vec));
      if (call.content.includes('other')) return sendEmbeddings(res, texts.map(vec), 'some-other-model');
      if (call.content.includes('nan')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        const bad = Buffer.alloc(16);
        [1, NaN, 3, 4].forEach((x, i) => bad.writeFloatLE(x, i * 4));
        return void res.end(JSON.stringify({ object: 'list', model: 'fake-embedder', data: [{ object: 'embedding', index: 0, embedding: bad.toString('base64') }] }));
      }
      sendEmbeddings(res, texts.map(vec));
    },
    async (s) => {
      const cases: Array<[string[], Partial<OpenAIEmbeddingsClientOptions>, RegExp]> = [
        [['narrow one', 'narrow two'], { dimensions: 4 }, /the embedding of input 0 has 3 dimensions, expected 4/],
        [['short a', 'short b'], {}, /1 embeddings for 2 inputs/],
        [['other model'], {}, /it names the model 'some-other-model', but 'fake-embedder' was asked for/],
        [['nan here'], {}, /the embedding of input 0 has NaN at dimension 1/],
        [['fine but declared wider'], { dimensions: 5 }, /has 4 dimensions, expected 5/],
      ];
      for (const [texts, o, message] of cases) {
        const before = s.bodies.length;
        const c = faultClient(s, { cache, retry: { maxRetries: 3 }, ...o });
        const err = await c.encode(texts).catch((e: unknown) => e as GenerationError);
        assert.ok(err instanceof GenerationError, `${texts[0]}: ${String(err)}`);
        assert.equal(err.kind, 'malformed');
        assert.match(err.message, message);
        assert.match(err.message, /nothing of it was cached/);
        assert.equal(s.bodies.length - before, 1, `${texts[0]}: not retried`);
        assert.deepEqual(await cache.keys(), [], 'nothing cached');
      }
      // Widths that differ between two answers of one client: the later answer is refused.
      const c = faultClient(s, { cache, batchSize: 1, maxConcurrency: 1 });
      await c.encode(['fine']);
      const err = await c.encode(['narrow']).catch((e: unknown) => e as GenerationError);
      assert.match(String(err), /has 3 dimensions, expected 4/);
      assert.equal((await cache.keys()).length, 1, 'only the good answer was cached');
    },
  );
});

test('bounded concurrency and batches; repeated texts, also across concurrent calls, are sent once', async () => {
  await withFaults(
    async (call, res) => {
      await delay(15);
      sendEmbeddings(res, inputs(call).map(vec));
    },
    async (s) => {
      const c = faultClient(s, { batchSize: 3, maxConcurrency: 2 });
      const texts = Array.from({ length: 20 }, (_, i) => `sentence number ${i}`);
      const [a, b] = await Promise.all([c.encode([...texts, ...texts.slice(0, 5)]), c.encode(texts.slice(10))]);
      assert.equal(a.rows, 25);
      assert.equal(b.rows, 10);
      assert.deepEqual(Array.from(a.data.subarray(20 * 4, 21 * 4)), vec(texts[0]));
      assert.deepEqual(Array.from(b.data.subarray(0, 4)), vec(texts[10]));
      const sent = s.bodies.flatMap((x) => (JSON.parse(x) as { input: string[] }).input);
      assert.equal(sent.length, 20, 'each distinct text once');
      assert.equal(new Set(sent).size, 20);
      assert.ok(s.bodies.every((x) => (JSON.parse(x) as { input: string[] }).input.length <= 3), 'at most batchSize texts a request');
      assert.ok(s.peak <= 2, `at most 2 requests in flight (peak ${s.peak})`);
      assert.equal(s.peak, 2);
    },
  );
});
