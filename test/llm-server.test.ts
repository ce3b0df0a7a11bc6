/**
 * The OpenAI-compatible chat client (lib/llm/openai-client.ts) against the real serve-llm server
 * (scripts/serve-llm.ts, started on 127.0.0.1 in a child process) serving the toy llama2.c model of
 * the decoder golden set. References: run.c's greedy continuations in golden.json (independent of
 * this code), and `generate()` called directly in this process for sampling and stop strings.
 * The toy model's sentences are nonsense; the code path is the real one.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { GenerationError } from '../lib/llm/generation-error.js';
import { OpenAIChatClient } from '../lib/llm/openai-client.js';
import { plainPrompt } from '../lib/llm/local-generator.js';
import { sseData } from '../lib/llm/sse.js';
import { generate } from '../lib/models/llama/generate.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import type { LoadedModel } from '../lib/models/types.js';
import { DECODER_GOLDEN_DIR, readDecoderGolden, type DecoderGoldenPrompt } from './helpers/decoder.js';
import { runServeLlm, startServeLlm, type ServeLlm } from './helpers/serve-llm.js';

const MODEL_NAME = 'stories260K';
let server: ServeLlm | undefined;
let m: LoadedModel<LlamaModel> | undefined;
let golden: DecoderGoldenPrompt[] = [];
let skipReason: string | undefined;

before(async () => {
  if (!DECODER_GOLDEN_DIR) {
    skipReason = 'no decoder golden set: set ANGLE_DECODER_GOLDEN_DIR or ANGLE_SHARED_DIR (../shared/golden/llama2c-stories260K)';
    return;
  }
  const modelDir = join(DECODER_GOLDEN_DIR, 'model');
  [server] = await Promise.all([
    startServeLlm(['--model', modelDir, '--served-model-name', MODEL_NAME, '--max-batch-size', '8']),
    (async () => {
      await initBackend('cpu', { quiet: true });
      m = await loadLlamaModel(modelDir);
      golden = readDecoderGolden(DECODER_GOLDEN_DIR!).prompts;
    })(),
  ]);
});

after(async () => {
  m?.model.dispose();
  if (server) assert.equal(await server.stop(), 0, 'serve-llm exits 0 on SIGTERM');
});

function ready(t: { skip: (msg: string) => void }): boolean {
  if (skipReason) t.skip(skipReason);
  return !skipReason;
}

const client = () => new OpenAIChatClient({ baseURL: server!.baseURL, model: MODEL_NAME, apiKey: '', env: {}, retry: { maxRetries: 0 } });

test("greedy answers through HTTP equal run.c's continuations (golden) and generate()'s, for concurrent requests batched together; usage counts the tokens", async (t) => {
  if (!ready(t)) return;
  const c = client();
  const prompts = [golden[0], golden[1], golden[2], golden[4]];
  const answers = await Promise.all(prompts.map((p, i) => c.complete({ id: `golden-${i}`, messages: [{ role: 'user', content: p.text }], temperature: 0, max_tokens: p.greedy_ids.length })));
  prompts.forEach((p, i) => {
    const a = answers[i];
    assert.equal(a.text, p.greedy_text, `prompt ${JSON.stringify(p.text)}`);
    assert.equal(a.id, `golden-${i}`);
    assert.equal(a.finishReason, 'length');
    assert.equal(a.model, MODEL_NAME);
    assert.deepEqual(a.usage, { promptTokens: p.ids.length, completionTokens: p.greedy_ids.length, totalTokens: p.ids.length + p.greedy_ids.length });
    assert.equal(a.cached, false);
    assert.equal(a.attempts, 1);
  });
  assert.equal(c.usage.paid.requests, 4);
  assert.equal(c.usage.paid.costUsd, undefined, 'no price table: cost unknown, not zero');

  // Two messages: the plain prompt joins their contents with a blank line.
  const messages = [
    { role: 'system', content: 'Lily and Tom' },
    { role: 'user', content: 'went to the park.' },
  ];
  const [direct] = await generate(m!, [plainPrompt(messages)], { maxNewTokens: 12 });
  const viaHttp = await c.complete({ messages, temperature: 0, max_tokens: 12 });
  assert.equal(viaHttp.text, direct.text);
  assert.equal(viaHttp.usage.promptTokens, direct.promptIds.length);
});

test('the raw response has OpenAI’s chat.completion shape; /v1/models lists the served name', async (t) => {
  if (!ready(t)) return;
  const res = await fetch(`${server!.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL_NAME, messages: [{ role: 'user', content: [{ type: 'text', text: 'Once upon ' }, { type: 'text', text: 'a time' }] }], max_completion_tokens: 6, temperature: 0 }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const j = (await res.json()) as Record<string, any>;
  assert.match(j.id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.equal(j.object, 'chat.completion');
  assert.ok(Number.isInteger(j.created) && Math.abs(j.created - Date.now() / 1000) < 600);
  assert.equal(j.model, MODEL_NAME);
  assert.equal(j.choices.length, 1);
  assert.deepEqual(Object.keys(j.choices[0]).sort(), ['finish_reason', 'index', 'logprobs', 'message']);
  assert.equal(j.choices[0].index, 0);
  assert.equal(j.choices[0].message.role, 'assistant');
  assert.equal(j.choices[0].message.content, golden[1].greedy_text.slice(0, j.choices[0].message.content.length));
  assert.equal(j.choices[0].finish_reason, 'length');
  assert.equal(j.usage.completion_tokens, 6);
  assert.equal(j.usage.prompt_tokens, golden[1].ids.length);
  assert.equal(j.usage.total_tokens, j.usage.prompt_tokens + j.usage.completion_tokens);

  const models = (await (await fetch(`${server!.baseURL}/models`)).json()) as Record<string, any>;
  assert.equal(models.object, 'list');
  assert.deepEqual(
    models.data.map((d: Record<string, unknown>) => [d.id, d.object]),
    [[MODEL_NAME, 'model']],
  );
  assert.equal((await fetch(`${server!.baseURL}/models/${MODEL_NAME}`)).status, 200);
});

test('stop strings, sampling with a seed (top-p) and streaming give what generate() gives', async (t) => {
  if (!ready(t)) return;
  const c = client();
  const prompt = golden[1].text; // "Once upon a time" -> ", there was a little girl named Lily. ..."
  const stopped = await c.complete({ messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: 24, stop: ['Lily', 'zzz'] });
  const [g] = await generate(m!, [prompt], { maxNewTokens: 24, stopStrings: ['Lily', 'zzz'] });
  assert.equal(stopped.text, g.text);
  assert.equal(stopped.text, ', there was a little girl named ');
  assert.equal(stopped.finishReason, 'stop');

  const sampled = await c.complete({ messages: [{ role: 'user', content: prompt }], temperature: 0.9, top_p: 0.8, seed: 1234, max_tokens: 16 });
  const [s] = await generate(m!, [prompt], { maxNewTokens: 16, temperature: 0.9, topP: 0.8, seed: 1234 });
  assert.equal(sampled.text, s.text);
  assert.notEqual(s.text, golden[1].greedy_text.slice(0, s.text.length), 'the sample differs from the greedy continuation (else this checks nothing)');

  // Streaming through the client: the pieces add up to the text, which equals the non-streamed answer.
  const pieces: string[] = [];
  const streamed = await c.complete({ messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: 20 }, { onText: (d) => pieces.push(d) });
  assert.ok(pieces.length > 3, `streamed in ${pieces.length} pieces`);
  assert.equal(pieces.join(''), streamed.text);
  assert.equal(streamed.text, golden[1].greedy_text.slice(0, streamed.text.length));
  assert.equal(streamed.usage.completionTokens, 20);
  assert.ok(!streamed.usage.estimated, 'stream_options.include_usage gave the real usage');

  // The raw event stream: role first, content deltas, the finish reason, the usage chunk, [DONE].
  const res = await fetch(`${server!.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: 8, stream: true, stream_options: { include_usage: true } }),
  });
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events: string[] = [];
  for await (const d of sseData(res.body as unknown as AsyncIterable<Uint8Array>)) events.push(d);
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as Record<string, any>);
  assert.ok(chunks.every((ch) => ch.object === 'chat.completion.chunk' && ch.id === chunks[0].id));
  assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
  const finish = chunks.at(-2)!;
  assert.equal(finish.choices[0].finish_reason, 'length');
  assert.deepEqual(chunks.at(-1)!.choices, []);
  assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: golden[1].ids.length, completion_tokens: 8, total_tokens: golden[1].ids.length + 8 });
  const text = chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('');
  assert.equal(text, golden[1].greedy_text.slice(0, text.length));
  assert.ok(text.length > 10);
});

test("bad requests get OpenAI's error JSON with the right status, and the client does not retry them", async (t) => {
  if (!ready(t)) return;
  const post = async (body: string) => {
    const res = await fetch(`${server!.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: res.status, json: (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } } };
  };
  const badJson = await post('{"messages": [');
  assert.equal(badJson.status, 400);
  assert.equal(badJson.json.error.type, 'invalid_request_error');
  assert.match(badJson.json.error.message, /not valid JSON/);

  const empty = await post(JSON.stringify({ messages: [] }));
  assert.equal(empty.status, 400);
  assert.equal(empty.json.error.param, 'messages');

  const badTemp = await post(JSON.stringify({ messages: [{ role: 'user', content: 'x' }], temperature: 3 }));
  assert.equal(badTemp.status, 400);
  assert.equal(badTemp.json.error.param, 'temperature');

  const badRole = await post(JSON.stringify({ messages: [{ role: 'robot', content: 'x' }] }));
  assert.equal(badRole.json.error.param, 'messages[0].role');

  const tooLong = await post(JSON.stringify({ messages: [{ role: 'user', content: 'x' }], max_tokens: 100000 }));
  assert.equal(tooLong.status, 400);
  assert.equal(tooLong.json.error.code, 'context_length_exceeded');

  const twoChoices = await post(JSON.stringify({ messages: [{ role: 'user', content: 'x' }], n: 2 }));
  assert.equal(twoChoices.json.error.param, 'n');

  const unknownRoute = await fetch(`${server!.baseURL}/completions`, { method: 'POST', body: '{}' });
  assert.equal(unknownRoute.status, 404);
  assert.equal(((await unknownRoute.json()) as { error: { code: string } }).error.code, 'unknown_url');
  assert.equal((await fetch(`${server!.baseURL}/chat/completions`)).status, 405);

  // Through the client: an unknown model is a 404 with the prompt's id, after one attempt.
  const c = new OpenAIChatClient({ baseURL: server!.baseURL, model: 'no-such-model', env: {}, retry: { maxRetries: 3, initialDelayMs: 1 } });
  const err = await c.complete({ id: 'p-unknown-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }).then(
    () => assert.fail('expected a 404'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof GenerationError);
  assert.equal(err.kind, 'http');
  assert.equal(err.status, 404);
  assert.equal(err.attempts, 1);
  assert.equal(c.attemptsSent, 1);
  assert.match(err.message, /^prompt p-unknown-model: HTTP 404 from .*: the model 'no-such-model' does not exist here; this server has 'stories260K' \(model_not_found\)$/);
  await server!.waitForLog(/POST \/v1\/chat\/completions 404/);
});

test('serves many: /health and a short request are answered while a long generation streams; a client that disconnects frees its row', async (t) => {
  if (!ready(t)) return;
  const prompt = golden[1];
  const events: string[] = [];
  const long = (async () => {
    const res = await fetch(`${server!.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: prompt.text }], temperature: 0, max_tokens: 200, stream: true }),
    });
    let first = true;
    for await (const d of sseData(res.body as unknown as AsyncIterable<Uint8Array>)) {
      if (first && d !== '[DONE]' && (JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> }).choices[0].delta.content) {
        first = false;
        events.push('long: first text');
      }
    }
    events.push('long: done');
  })();
  while (!events.includes('long: first text')) await new Promise((r) => setTimeout(r, 10));
  const health = await fetch(`${server!.baseURL.replace(/\/v1$/, '')}/health`);
  assert.equal(health.status, 200);
  events.push('health');
  // A short request sent now joins the running batch and ends first.
  const short = await client().complete({ messages: [{ role: 'user', content: golden[2].text }], temperature: 0, max_tokens: 5 });
  events.push('short: done');
  assert.equal(short.text, golden[2].greedy_text.slice(0, short.text.length));
  await long;
  assert.deepEqual(events, ['long: first text', 'health', 'short: done', 'long: done']);

  // A streaming client that goes away: its request is dropped at the next step (the server logs it).
  const gone = new AbortController();
  const res = await fetch(`${server!.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: prompt.text }], temperature: 0, max_tokens: 300, stream: true }),
    signal: gone.signal,
  });
  const reader = res.body!.getReader();
  await reader.read();
  gone.abort();
  await server!.waitForLog(/POST \/v1\/chat\/completions (client gone|stream failed)/, 10_000);
});

test('serve-llm --help lists every option; a bad flag value is a one-line usage error (exit 2)', async () => {
  const help = await runServeLlm(['--help']);
  assert.equal(help.code, 0);
  for (const flag of ['--model', '--port', '--host', '--served-model-name', '--max-batch-size', '--prompt', '--embedding-pooling', '--api-key', '--backend', '--generation-thread', '--help']) assert.ok(help.stdout.includes(flag), `--help mentions ${flag}`);
  const bad = await runServeLlm(['--model', 'x', '--port', 'eighty']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr.trim(), /^serve-llm: --port must be an integer >= 0, got 'eighty'( \(see --help\))?$/);
  const pooling = await runServeLlm(['--model', 'x', '--embedding-pooling', 'cls']);
  assert.equal(pooling.code, 2);
  assert.match(pooling.stderr, /embedding pooling/);
  assert.match(pooling.stderr, /cls/);
});
