/**
 * Issue 38: `npm run serve-llm` logged `GET /health 200` on every call, so a client or supervisor
 * polling it buried the requests in the log. A passed health check is not logged; every other
 * request still is (lib/llm/server.ts). No model is needed: /health and /v1/models never generate.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startChatServer } from '../lib/llm/server.js';
import type { ChatGenerator } from '../lib/llm/types.js';

test('a passed /health is not logged; other requests are, one line each', async () => {
  const generator: ChatGenerator = {
    name: 'test:no-generation',
    model: 'no-generation',
    complete: () => Promise.reject(new Error('this test never generates')),
  };
  const lines: string[] = [];
  const server = await startChatServer({ generator, port: 0, log: (l) => lines.push(l) });
  try {
    const root = server.baseURL.replace(/\/v1$/, '');
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${root}/health`)).status, 200);
    assert.equal((await fetch(`${server.baseURL}/models`)).status, 200);
    assert.equal((await fetch(`${server.baseURL}/nothing-here`)).status, 404);
    // The log line is written when the response has gone out: wait for the last request's.
    for (let i = 0; i < 200 && lines.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[0]!, /^GET \/v1\/models 200 /);
    assert.match(lines[1]!, /^GET \/v1\/nothing-here 404 /);
    assert.ok(!lines.some((l) => l.includes('/health')));
  } finally {
    await server.close();
  }
});
