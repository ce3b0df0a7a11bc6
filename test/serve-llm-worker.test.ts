/**
 * serve-llm with its model on a worker thread (`--generation-thread worker`, the default;
 * scripts/serve-llm-worker.ts, lib/llm/worker-generator.ts), the real command in a child process
 * on 127.0.0.1 with the toy llama2.c decoder of the decoder golden set:
 * - `/health` is answered, again and again, while a long streamed generation is still sending
 *   tokens (ordering: every probe's answer comes between the stream's first text and its end;
 *   nothing here asserts a time);
 * - the answers equal run.c's greedy continuations (golden), streamed or not, and the errors keep
 *   OpenAI's shape and status codes when they are raised in the worker;
 * - a client that disconnects is cancelled in the worker, and the server goes on answering;
 * - a model that cannot generate fails the worker's start with the command's usage exit (2), and
 *   an unknown --generation-thread is a usage error before anything loads.
 * The other server tests (llm-server, llm-openai-sdk, llm-embeddings) run in either mode with
 * ANGLE_TEST_GENERATION_THREAD=worker|main.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sseData } from '../lib/llm/sse.js';
import { DECODER_GOLDEN_DIR, readDecoderGolden, type DecoderGoldenPrompt } from './helpers/decoder.js';
import { GOLDEN_DIR } from './helpers/env.js';
import { runServeLlm, startServeLlm, type ServeLlm } from './helpers/serve-llm.js';

const MODEL_NAME = 'stories260K';
let server: ServeLlm | undefined;
let golden: DecoderGoldenPrompt[] = [];

before(async () => {
  if (!DECODER_GOLDEN_DIR) return;
  golden = readDecoderGolden(DECODER_GOLDEN_DIR).prompts;
  server = await startServeLlm(['--model', join(DECODER_GOLDEN_DIR, 'model'), '--served-model-name', MODEL_NAME, '--max-batch-size', '4', '--generation-thread', 'worker']);
});

after(async () => {
  if (server) assert.equal(await server.stop(), 0, 'serve-llm exits 0 on SIGTERM');
});

function ready(t: { skip: (msg: string) => void }): boolean {
  if (!server) t.skip('no decoder golden set: set ANGLE_DECODER_GOLDEN_DIR or ANGLE_SHARED_DIR (../shared/golden/llama2c-stories260K)');
  return Boolean(server);
}

const root = () => server!.baseURL.replace(/\/v1$/, '');

function chat(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${server!.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
}

test('the model runs on the generation worker thread (the start line says so)', (t) => {
  if (!ready(t)) return;
  assert.match(server!.stderr(), /backend cpu on the generation worker thread/);
});

test('/health answers while a long streamed generation is still sending tokens', async (t) => {
  if (!ready(t)) return;
  const events: string[] = [];
  let texts = 0;
  let text = '';
  const res = await chat({ messages: [{ role: 'user', content: golden[1].text }], temperature: 0, max_tokens: 200, stream: true });
  assert.equal(res.status, 200);
  const stream = (async () => {
    for await (const d of sseData(res.body as unknown as AsyncIterable<Uint8Array>)) {
      if (d === '[DONE]') continue;
      const delta = (JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content;
      if (delta) {
        text += delta;
        texts++;
        // One event per text piece only around the probes: the first piece, and the first piece after each probe.
        if (texts === 1 || events.at(-1)?.startsWith('health')) events.push('text');
      }
    }
    events.push('done');
  })();
  while (texts === 0) await new Promise((r) => setTimeout(r, 5));
  for (let i = 0; i < 5; i++) {
    const health = await fetch(`${root()}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    events.push(`health ${i}`);
    // The next probe goes out once a new piece of text has arrived: each probe is answered mid-stream.
    while (events.at(-1) === `health ${i}` && !events.includes('done')) await new Promise((r) => setTimeout(r, 5));
  }
  await stream;
  assert.deepEqual(events, ['text', 'health 0', 'text', 'health 1', 'text', 'health 2', 'text', 'health 3', 'text', 'health 4', 'text', 'done']);
  // The streamed text is run.c's greedy continuation (the golden one is its first tokens).
  assert.equal(text.slice(0, golden[1].greedy_text.length), golden[1].greedy_text);
});

test("answers through the worker equal run.c's greedy continuations; usage counts the tokens", async (t) => {
  if (!ready(t)) return;
  const prompts = [golden[0], golden[2], golden[4]];
  const answers = await Promise.all(
    prompts.map(async (p) => {
      const res = await chat({ messages: [{ role: 'user', content: p.text }], temperature: 0, max_tokens: p.greedy_ids.length });
      assert.equal(res.status, 200);
      return (await res.json()) as { choices: Array<{ message: { content: string }; finish_reason: string }>; usage: { completion_tokens: number } };
    }),
  );
  answers.forEach((a, i) => {
    assert.equal(a.choices[0].message.content, prompts[i].greedy_text);
    assert.equal(a.usage.completion_tokens, prompts[i].greedy_ids.length);
  });
});

test('errors raised in the worker keep their OpenAI shape and status', async (t) => {
  if (!ready(t)) return;
  const tooLong = await chat({ messages: [{ role: 'user', content: 'Once' }], max_tokens: 5000 });
  assert.equal(tooLong.status, 400);
  const e = (await tooLong.json()) as { error: Record<string, unknown> };
  assert.equal(e.error.type, 'invalid_request_error');
  assert.equal(e.error.param, 'max_tokens');
  assert.equal(e.error.code, 'context_length_exceeded');
  const unknown = await chat({ model: 'gpt-4', messages: [{ role: 'user', content: 'Once' }] });
  assert.equal(unknown.status, 404);
  assert.equal(((await unknown.json()) as { error: Record<string, unknown> }).error.code, 'model_not_found');
  const badField = await chat({ messages: [{ role: 'user', content: 'Once' }], temperature: 'hot' });
  assert.equal(badField.status, 400);
  assert.equal(((await badField.json()) as { error: Record<string, unknown> }).error.param, 'temperature');
  const badPooling = await fetch(`${server!.baseURL}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: ['a'], pooling: 'cls' }) });
  assert.equal(badPooling.status, 400);
});

test('embeddings computed in the worker come back whole, float and base64 alike', async (t) => {
  if (!ready(t)) return;
  const ask = async (encoding_format: string) => {
    const res = await fetch(`${server!.baseURL}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: ['Once upon a time', 'a cat'], encoding_format }) });
    assert.equal(res.status, 200);
    return (await res.json()) as { data: Array<{ embedding: number[] | string }>; usage: { prompt_tokens: number } };
  };
  const float = await ask('float');
  const b64 = await ask('base64');
  assert.equal(float.data.length, 2);
  for (let i = 0; i < 2; i++) {
    const v = float.data[i].embedding as number[];
    const bytes = Buffer.from(b64.data[i].embedding as string, 'base64');
    const w = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    assert.equal(v.length, w.length);
    assert.ok(v.every((x, j) => Math.fround(x) === w[j] && Number.isFinite(x)));
  }
  assert.ok(float.usage.prompt_tokens > 0);
});

test('a streaming client that disconnects is cancelled in the worker; the server answers the next request', async (t) => {
  if (!ready(t)) return;
  const gone = new AbortController();
  const res = await chat({ messages: [{ role: 'user', content: golden[1].text }], temperature: 0, max_tokens: 450, stream: true }, gone.signal);
  const reader = res.body!.getReader();
  await reader.read();
  gone.abort();
  await server!.waitForLog(/POST \/v1\/chat\/completions (client gone|stream failed)/, 10_000);
  const next = await chat({ messages: [{ role: 'user', content: golden[2].text }], temperature: 0, max_tokens: golden[2].greedy_ids.length });
  assert.equal(((await next.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content, golden[2].greedy_text);
});

test('a model that cannot generate fails the worker start with exit 2; an unknown --generation-thread is a usage error', async (t) => {
  const bad = await runServeLlm(['--model', 'x', '--generation-thread', 'gpu']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown generation thread 'gpu': expected one of worker, main/);
  if (!GOLDEN_DIR) return t.skip('no encoder golden set (ANGLE_GOLDEN_DIR or ../shared/golden)');
  const encoder = await runServeLlm(['--model', join(GOLDEN_DIR, 'model'), '--port', '0', '--generation-thread', 'worker']);
  assert.equal(encoder.code, 2, encoder.stderr);
  assert.match(encoder.stderr, /serve-llm serves causal decoders .* is a bert model/);
});
