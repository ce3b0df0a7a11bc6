/**
 * The chat client's failure paths, bounded concurrency and the answer cache, against small real
 * HTTP servers written here (test/helpers/fault-server.ts): 429 with Retry-After, 5xx, garbled
 * JSON, dropped connections, answers slower than the timeout, 4xx that must not be retried; a run
 * stopped after k answers, and a process killed after k answers, then resumed: the server counts
 * every request, so a duplicate paid request cannot hide.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { backoffMs, DEFAULT_RETRY_POLICY, retryAfterMs } from '../lib/llm/backoff.js';
import { CachedGenerator } from '../lib/llm/cached-generator.js';
import { completeMany } from '../lib/llm/complete-many.js';
import { GenerationError } from '../lib/llm/generation-error.js';
import { generateSupervisedPairs, supervisionRequests } from '../lib/llm/llm-supervision.js';
import { OpenAIChatClient, type OpenAIClientOptions } from '../lib/llm/openai-client.js';
import { ResponseCache } from '../lib/llm/response-cache.js';
import { sseData, sseEvent } from '../lib/llm/sse.js';
import { delay, sendCompletion, sendError, startFaultServer, type FaultServer } from './helpers/fault-server.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

function clientOf(s: FaultServer, opts: OpenAIClientOptions = {}): OpenAIChatClient {
  return new OpenAIChatClient({ baseURL: s.baseURL, model: 'fake-llm', env: {}, random: () => 0, ...opts, retry: { initialDelayMs: 5, ...opts.retry } });
}

const ask = (c: OpenAIChatClient, id: string, content: string) => c.complete({ id, messages: [{ role: 'user', content }] });

async function failure(p: Promise<unknown>): Promise<GenerationError> {
  const e = await p.then(
    () => assert.fail('expected the request to fail'),
    (err: unknown) => err,
  );
  assert.ok(e instanceof GenerationError, `a GenerationError, got ${String(e)}`);
  return e;
}

test('Retry-After (seconds, HTTP date, retry-after-ms) and the backoff formula', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  assert.equal(retryAfterMs(h({ 'retry-after': '3' })), 3000);
  assert.equal(retryAfterMs(h({ 'retry-after': '0.5' })), 500);
  assert.equal(retryAfterMs(h({ 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' }), Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 10_000);
  assert.equal(retryAfterMs(h({ 'retry-after-ms': '250', 'retry-after': '9' })), 250);
  assert.equal(retryAfterMs(h({ 'retry-after': 'soon' })), undefined);
  assert.equal(retryAfterMs(h({})), undefined);
  const p = { ...DEFAULT_RETRY_POLICY, initialDelayMs: 100, maxDelayMs: 1000, jitter: 0.25 };
  // min(max, initial * 2^(n-1)) * (1 - jitter * u)
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, p, 0)), [100, 200, 400, 800, 1000, 1000]);
  assert.equal(backoffMs(2, p, 0.5), 200 * (1 - 0.25 * 0.5));
});

test('server-sent events: LF, CR and CRLF line ends split anywhere between chunks, comments, multi-line data, an event cut off at the end', async () => {
  const text = ': keep-alive\r\ndata: {"a":1}\r\n\r\ndata: line one\rdata: line two\r\rdata:no-space\n\nevent: x\ndata: [DONE]\n\ndata: cut off';
  const enc = new TextEncoder().encode(text);
  for (const size of [1, 2, 3, 7, enc.length]) {
    const chunks = async function* () {
      for (let i = 0; i < enc.length; i += size) yield enc.slice(i, i + size);
    };
    const events: string[] = [];
    for await (const d of sseData(chunks())) events.push(d);
    assert.deepEqual(events, ['{"a":1}', 'line one\nline two', 'no-space', '[DONE]'], `chunks of ${size} bytes`);
  }
  assert.equal(sseEvent({ a: 1 }), 'data: {"a":1}\n\n');
  assert.equal(sseEvent('two\nlines'), 'data: two\ndata: lines\n\n');
});

test('429 waits what Retry-After says, then succeeds; 5xx retries with exponential backoff; a garbled 2xx body is retried', async () => {
  const s = await startFaultServer(async ({ attempt, content }, res) => {
    if (content === 'rate-limited' && attempt === 1) return sendError(res, 429, 'Rate limit reached', { 'retry-after': '1' });
    if (content === 'rate-limited-ms' && attempt === 1) return sendError(res, 429, 'Rate limit reached', { 'retry-after-ms': '120' });
    if (content === 'flaky' && attempt <= 3) return sendError(res, [500, 502, 503][attempt - 1], 'The server had an error');
    if (content === 'garbled' && attempt === 1) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"choices": [{"message": {"content": "trunc');
    }
    if (content === 'no-usage') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ model: 'fake-llm', choices: [{ index: 0, message: { role: 'assistant', content: 'twelve chars' }, finish_reason: 'stop' }] }));
    }
    if (content === 'not-a-completion' && attempt === 1) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"object": "list", "data": []}');
    }
    sendCompletion(res, `answer to ${content}`);
  });
  try {
    const retries: Array<{ id?: string; retry: number; delayMs: number; kind: string }> = [];
    const c = clientOf(s, { retry: { initialDelayMs: 20, maxRetries: 3 }, onRetry: (e) => retries.push({ id: e.id, retry: e.retry, delayMs: e.delayMs, kind: e.error.kind }) });

    const t0 = Date.now();
    const r = await ask(c, 'p-429', 'rate-limited');
    const waited = Date.now() - t0;
    assert.equal(r.text, 'answer to rate-limited');
    assert.equal(r.attempts, 2);
    assert.ok(waited >= 990, `waited ${waited} ms for Retry-After: 1`);
    assert.deepEqual(retries.shift(), { id: 'p-429', retry: 1, delayMs: 1000, kind: 'http' });
    assert.equal((await ask(c, 'p-429ms', 'rate-limited-ms')).attempts, 2);
    assert.equal(retries.shift()!.delayMs, 120);

    const flaky = await ask(c, 'p-5xx', 'flaky');
    assert.equal(flaky.attempts, 4);
    assert.equal(s.perContent.get('flaky'), 4);
    // Backoff with u = 0: 20, 40, 80 ms.
    assert.deepEqual(
      retries.splice(0).map((x) => x.delayMs),
      [20, 40, 80],
    );

    assert.equal((await ask(c, 'p-garbled', 'garbled')).attempts, 2);
    assert.equal((await ask(c, 'p-shape', 'not-a-completion')).attempts, 2);
    assert.deepEqual(
      retries.map((x) => [x.id, x.kind]),
      [
        ['p-garbled', 'malformed'],
        ['p-shape', 'malformed'],
      ],
    );
    assert.equal(c.usage.paid.requests, 5);
    assert.equal(c.usage.paid.totalTokens, 5 * 18);
    assert.equal(c.attemptsSent, 2 + 2 + 4 + 2 + 2);

    // A server that reports no usage: estimated at 4 characters a token, and flagged.
    const est = await ask(c, 'p-no-usage', 'no-usage');
    assert.deepEqual(est.usage, { promptTokens: Math.ceil('no-usage'.length / 4), completionTokens: Math.ceil('twelve chars'.length / 4), totalTokens: 2 + 3, estimated: true });
    assert.equal(c.usage.paid.estimated, 1);

    // A request the server would refuse is not sent.
    const invalid = await failure(c.complete({ id: 'p-invalid', messages: [{ role: 'user', content: 'x' }], temperature: 5 }));
    assert.equal(invalid.kind, 'input');
    assert.match(invalid.message, /^prompt p-invalid: 'temperature' must be a number in \[0, 2\], got number 5$/);
    assert.equal(c.attemptsSent, 13);
  } finally {
    await s.close();
  }
});

test('a dropped connection and an answer slower than the timeout are retried; when they persist, the error names the prompt and says why', async () => {
  const s = await startFaultServer(async ({ attempt, content }, res) => {
    if ((content === 'drop-once' && attempt === 1) || content === 'always-drop') return void res.socket?.destroy();
    if (content === 'drop-mid-body' && attempt === 1) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"choices": [');
      await delay(20);
      return void res.socket?.destroy();
    }
    if ((content === 'slow-once' && attempt === 1) || content === 'always-slow') await delay(2000);
    if (!res.destroyed) sendCompletion(res, `answer to ${content}`);
  });
  try {
    const c = clientOf(s, { timeoutMs: 600, retry: { maxRetries: 2 } });
    assert.equal((await ask(c, 'p-drop', 'drop-once')).attempts, 2);
    assert.equal((await ask(c, 'p-drop-body', 'drop-mid-body')).attempts, 2);
    const slow = await ask(c, 'p-slow', 'slow-once');
    assert.equal(slow.attempts, 2);
    assert.equal(slow.text, 'answer to slow-once');

    const dropped = await failure(ask(c, 'p-always-drop', 'always-drop'));
    assert.equal(dropped.kind, 'connection');
    assert.equal(dropped.attempts, 3);
    assert.match(dropped.message, /^prompt p-always-drop: connection to http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions failed before an answer: .+ \(after 3 attempts\)$/);

    const timedOut = await failure(ask(c, 'p-always-slow', 'always-slow'));
    assert.equal(timedOut.kind, 'timeout');
    assert.equal(timedOut.attempts, 3);
    assert.match(timedOut.message, /^prompt p-always-slow: no complete answer from .* within 600 ms .*\(after 3 attempts\)$/);
    assert.equal(s.perContent.get('always-slow'), 3);
  } finally {
    await s.close();
  }
});

test('other 4xx are not retried (one request at the server); x-should-retry overrides; a Retry-After beyond the limit fails at once', async () => {
  const s = await startFaultServer(({ attempt, content }, res) => {
    const m = /^status-(\d+)$/.exec(content);
    if (m) return sendError(res, Number(m[1]), `refused with ${m[1]}`);
    if (content === 'no-retry-503') return sendError(res, 503, 'overloaded, do not retry', { 'x-should-retry': 'false' });
    if (content === 'retry-409' && attempt === 1) return sendError(res, 409, 'conflict', { 'x-should-retry': 'true' });
    if (content === 'wait-long') return sendError(res, 429, 'come back in two minutes', { 'retry-after': '120' });
    sendCompletion(res, 'ok');
  });
  try {
    const c = clientOf(s, { retry: { maxRetries: 4 } });
    for (const status of [400, 401, 403, 404, 422]) {
      const e = await failure(ask(c, `p-${status}`, `status-${status}`));
      assert.equal(e.kind, 'http');
      assert.equal(e.status, status);
      assert.equal(e.attempts, 1);
      assert.equal(e.retryable, false);
      assert.equal(e.message, `prompt p-${status}: HTTP ${status} from ${s.baseURL}/chat/completions: refused with ${status}`);
      assert.equal(s.perContent.get(`status-${status}`), 1, `${status} sent once`);
    }
    assert.equal((await failure(ask(c, 'p-503', 'no-retry-503'))).attempts, 1);
    assert.equal(s.perContent.get('no-retry-503'), 1);
    assert.equal((await ask(c, 'p-409', 'retry-409')).attempts, 2, 'x-should-retry: true retries a 409');
    const long = await failure(ask(c, 'p-long', 'wait-long'));
    assert.equal(s.perContent.get('wait-long'), 1);
    assert.match(long.message, /asks to retry after 120\.0 s, more than the 60 s allowed/);
  } finally {
    await s.close();
  }
});

test('a stream dropped half way is retried and continues after what was already delivered (nothing twice)', async () => {
  const chunk = (content: string) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', model: 'fake-llm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  const s = await startFaultServer(async ({ attempt, body, content }, res) => {
    assert.equal(body.stream, true);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const pieces = content === 'diverge' && attempt === 2 ? ['Goodbye', ', world', '!'] : ['Hello', ', wor', 'ld', '!'];
    for (const piece of pieces) {
      res.write(chunk(piece));
      await delay(5);
      if (attempt === 1 && piece === ', wor') return void res.socket?.destroy();
    }
    res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  try {
    const pieces: string[] = [];
    const r = await clientOf(s).complete({ id: 'p-stream', messages: [{ role: 'user', content: 'hi' }] }, { onText: (d) => pieces.push(d) });
    assert.equal(r.text, 'Hello, world!');
    assert.equal(pieces.join(''), 'Hello, world!');
    assert.equal(r.attempts, 2);
    assert.deepEqual(r.usage, { promptTokens: 3, completionTokens: 4, totalTokens: 7 });

    // A retry that answers differently (sampling without a seed) cannot be stitched to what was shown.
    const shown: string[] = [];
    const e = await failure(clientOf(s).complete({ id: 'p-diverge', messages: [{ role: 'user', content: 'diverge' }] }, { onText: (d) => shown.push(d) }));
    assert.equal(e.kind, 'connection');
    assert.equal(e.attempts, 2);
    assert.match(e.message, /^prompt p-diverge: the retried stream differs from the text already streamed/);
    assert.equal(shown.join(''), 'Hello, wor');
  } finally {
    await s.close();
  }
});

test("concurrency is bounded: the server never sees more requests at once than the batch's or the client's limit", async () => {
  const s = await startFaultServer(async (_, res) => {
    await delay(60);
    sendCompletion(res, 'ok');
  });
  try {
    const requests = Array.from({ length: 10 }, (_, i) => ({ id: `q${i}`, messages: [{ role: 'user', content: `question ${i}` }] }));
    const run = await completeMany(clientOf(s), requests, { concurrency: 3 });
    assert.equal(run.results.filter(Boolean).length, 10);
    assert.equal(s.peak, 3);

    const s2 = await startFaultServer(async (_, res) => {
      await delay(60);
      sendCompletion(res, 'ok');
    });
    try {
      const c = clientOf(s2, { maxConcurrency: 2 });
      await completeMany(c, requests, { concurrency: 6 });
      assert.equal(s2.peak, 2, "the client's own limit holds whatever the callers do");
      assert.equal(c.limiter.peak, 2);
    } finally {
      await s2.close();
    }
  } finally {
    await s.close();
  }
});

test('a batch goes on past failures and reports every one with its prompt id', async () => {
  const s = await startFaultServer(({ content }, res) => {
    if (content.startsWith('bad')) return sendError(res, 400, `cannot answer ${content}`);
    if (content.startsWith('down')) return sendError(res, 500, 'internal');
    if (content.startsWith('garbled')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('<html>proxy error</html>');
    }
    sendCompletion(res, `answer to ${content}`);
  });
  try {
    const contents = ['fine 1', 'bad 2', 'fine 3', 'down 4', 'garbled 5', 'fine 6'];
    const run = await completeMany(
      clientOf(s, { retry: { maxRetries: 1 } }),
      contents.map((content, i) => ({ id: `stsb-train-${i}:positive`, messages: [{ role: 'user', content }] })),
      { concurrency: 2 },
    );
    assert.deepEqual(
      run.results.map((r) => r?.text),
      ['answer to fine 1', undefined, 'answer to fine 3', undefined, undefined, 'answer to fine 6'],
    );
    assert.deepEqual(
      run.failures.map((f) => [f.id, f.kind, f.status, f.attempts]),
      [
        ['stsb-train-1:positive', 'http', 400, 1],
        ['stsb-train-3:positive', 'http', 500, 2],
        ['stsb-train-4:positive', 'malformed', undefined, 2],
      ],
    );
    for (const f of run.failures) assert.ok(f.message.startsWith(`prompt ${f.id}: `), f.message);
    assert.match(run.failures[2].message, /is not JSON: <html>proxy error<\/html> \(after 2 attempts\)$/);
    assert.equal(run.usage.paid.requests, 3);
  } finally {
    await s.close();
  }
});

/** A fake LLM for Figure 4's prompts: two numbered sentences built from the input, plus a preamble. */
function fakeLlm(): Promise<FaultServer> {
  return startFaultServer(async ({ content }, res) => {
    const input = /Input sentence: (.*)\. Output:$/s.exec(content)![1];
    await delay(15);
    sendCompletion(res, content.includes('same-meaning') ? `Here are 2 synonymous sentences:\n1. In other words, ${input}\n2. Put differently, ${input}` : `1. It is false that ${input}\n2. Nobody says ${input}`);
  });
}

const TEXTS = ['A plane is taking off.', 'A man is playing a flute.', 'A plane is taking off.', 'Three men are playing chess.', 'A cat sits.', 'A dog runs.', 'Two birds sing.', 'A woman cuts onions.'];
const DISTINCT_TEXTS = [...new Set(TEXTS)];
/** Distinct prompts: 7 distinct texts × 2 polarities (text 2 repeats text 0). */
const DISTINCT_PROMPTS = 14;

test('a run stopped after k answers and rerun pays for nothing twice; the third run pays nothing; repeated texts are paid once', async () => {
  const s = await fakeLlm();
  const dir = await mkdtemp(join(tmpdir(), 'llm-cache-'));
  try {
    const stop = new AbortController();
    let answers = 0;
    const first = await generateSupervisedPairs(clientOf(s), TEXTS, {
      cacheDir: dir,
      size: 2,
      concurrency: 3,
      signal: stop.signal,
      onResult: () => {
        if (++answers === 5) stop.abort();
      },
    });
    assert.equal(first.stopped, true);
    assert.ok(first.notStarted.length > 0, 'the stop left prompts unsent');
    const paidFirst = s.bodies.length;
    assert.ok(paidFirst >= 5 && paidFirst <= 5 + 3, `${paidFirst} requests before the stop took effect`);
    const cache = new ResponseCache(dir);
    assert.equal((await cache.keys()).length, paidFirst, 'every answer the server gave (in flight at the stop included) is on disk');

    // With a price table: $0.5 and $1.5 per million prompt and completion tokens (11 and 7 a request here).
    const priced = clientOf(s, { prices: { 'fake-llm': { inputPerMTok: 0.5, outputPerMTok: 1.5 } } });
    const second = await generateSupervisedPairs(priced, TEXTS, { cacheDir: dir, size: 2, concurrency: 3 });
    assert.equal(second.stopped, false);
    assert.deepEqual(second.failures, []);
    assert.equal(s.bodies.length, DISTINCT_PROMPTS, 'each distinct prompt reached the server exactly once over both runs');
    assert.equal(new Set(s.bodies).size, s.bodies.length, 'no request body was sent twice');
    assert.equal(second.usage.paid.requests, DISTINCT_PROMPTS - paidFirst);
    assert.equal(second.usage.cached.requests, TEXTS.length * 2 - second.usage.paid.requests);
    const perRequest = (11 * 0.5 + 7 * 1.5) / 1e6;
    assert.ok(Math.abs(second.usage.paid.costUsd! - second.usage.paid.requests * perRequest) < 1e-12);
    assert.equal(second.usage.cached.costUsd, undefined, 'answers of the first run were paid without a price table: their cost is unknown');
    assert.match(String(second.usage), /^\d+ requests, [\d,]+ tokens, \$0\.000\d+ \(from the cache: \d+ requests, [\d,]+ tokens, cost unknown \(no price for the model\) not paid again\)$/);

    const third = await generateSupervisedPairs(clientOf(s), TEXTS, { cacheDir: dir, size: 2, concurrency: 3 });
    assert.equal(s.bodies.length, DISTINCT_PROMPTS, 'the third run sent nothing');
    assert.equal(third.usage.paid.requests, 0);
    assert.equal(third.usage.cached.requests, 16);
    assert.deepEqual(third.pairs, second.pairs);
    // 8 texts x (2 positives + 2 negatives), labels 1 and 0; the preamble line is a reject.
    assert.equal(third.pairs.length, 32);
    assert.deepEqual(third.pairs.slice(0, 4), [
      { a: TEXTS[0], b: `In other words, ${TEXTS[0]}`, score: 1, polarity: 'positive', promptId: 'stsb-train-0:positive', generator: third.generator },
      { a: TEXTS[0], b: `Put differently, ${TEXTS[0]}`, score: 1, polarity: 'positive', promptId: 'stsb-train-0:positive', generator: third.generator },
      { a: TEXTS[0], b: `It is false that ${TEXTS[0]}`, score: 0, polarity: 'negative', promptId: 'stsb-train-0:negative', generator: third.generator },
      { a: TEXTS[0], b: `Nobody says ${TEXTS[0]}`, score: 0, polarity: 'negative', promptId: 'stsb-train-0:negative', generator: third.generator },
    ]);
    assert.deepEqual(new Set(third.rejects.map((r) => r.reason)), new Set(['preamble']));
    assert.equal(third.rejects.length, 8);
  } finally {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a process killed after k answers (requests in flight) resumes from the cache: only the answers it never stored are asked again', async () => {
  const s = await fakeLlm();
  const dir = await mkdtemp(join(tmpdir(), 'llm-crash-'));
  const concurrency = 3;
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/llm-crash-child.ts', s.baseURL, dir, '4', JSON.stringify(DISTINCT_TEXTS), String(concurrency)], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
      child.on('error', reject);
      child.on('exit', resolve);
    });
    assert.equal(code, 7, 'the child died in the middle of the run');
    const sentBeforeCrash = s.bodies.length;
    const stored = (await new ResponseCache(dir).keys()).length;
    assert.ok(stored >= 4, `${stored} answers on disk`);
    const lost = sentBeforeCrash - stored;
    assert.ok(lost >= 0 && lost <= concurrency - 1, `${lost} answers were paid but in flight when the process died (at most concurrency - 1)`);

    const resumed = await generateSupervisedPairs(clientOf(s), DISTINCT_TEXTS, { cacheDir: dir, size: 2, concurrency });
    assert.deepEqual(resumed.failures, []);
    assert.equal(resumed.usage.paid.requests, DISTINCT_PROMPTS - stored);
    assert.equal(resumed.usage.cached.requests, stored);
    assert.equal(s.bodies.length - new Set(s.bodies).size, lost, 'the only duplicates are the requests in flight at the crash');
    assert.equal(resumed.pairs.length, 4 * DISTINCT_TEXTS.length);
  } finally {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('the cache: key = (model, messages, parameters); an unreadable entry is a miss and is rewritten; identical requests in flight make one call', async () => {
  const s = await fakeLlm();
  const dir = await mkdtemp(join(tmpdir(), 'llm-cache-'));
  try {
    const gen = new CachedGenerator(clientOf(s), dir);
    const [req] = supervisionRequests(['A cat sits.'], { polarities: ['positive'] });
    const same = await Promise.all([gen.complete({ ...req, id: 'x' }), gen.complete({ ...req, id: 'y' }), gen.complete({ ...req, id: 'z' })]);
    assert.equal(s.bodies.length, 1, 'three identical requests in flight, one call');
    assert.deepEqual(
      same.map((r) => [r.id, r.cached]),
      [
        ['x', false],
        ['y', true],
        ['z', true],
      ],
    );
    // Another parameter or model is another key.
    await gen.complete({ ...req, temperature: 0.5 });
    await gen.complete({ ...req, model: 'other-model' });
    await gen.complete({ ...req, stop: '\n' });
    assert.equal(s.bodies.length, 4);
    assert.equal(gen.keyOf({ ...req, stop: '\n' }), gen.keyOf({ ...req, stop: ['\n'] }), 'stop as a string or a list of one: the same key');
    assert.equal(gen.keyOf({ ...req, id: 'another id' }), gen.keyOf(req), 'the id is not part of the key');

    const path = gen.cache.pathOf(gen.keyOf(req));
    const entry = JSON.parse(await readFile(path, 'utf8'));
    assert.equal(entry.request.model, 'fake-llm');
    assert.equal(entry.request.messages[0].content, req.messages[0].content);
    assert.deepEqual(entry.request.params, { temperature: 0, max_tokens: 80, seed: 0 });
    assert.equal(entry.id, 'x');
    await writeFile(path, '{"format": "angle-llm-cache/1", "key": "truncated');
    const again = await gen.complete(req);
    assert.equal(again.cached, false, 'the unreadable entry was not served');
    assert.equal(s.bodies.length, 5);
    assert.equal(gen.cache.stats.unreadable, 1);
    assert.equal((await gen.complete(req)).cached, true, 'and it was rewritten');
  } finally {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  }
});
