/**
 * The LLM pieces notebook 08 uses: `serve-llm` started as a real child process on a free port
 * (lib/llm/serve-llm-process.ts) answers through the OpenAI-compatible client exactly as the
 * decoder in this process answers (greedy), reports token usage, and stops on SIGTERM with exit
 * code 0; a server that cannot start is an error with its last lines. Endpoints from environment
 * variables (lib/llm/endpoint-from-env.ts), and the tables of a supervision run
 * (lib/llm/supervision-report.ts) on a hand-made result.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { endpointFromEnv } from '../lib/llm/endpoint-from-env.js';
import type { LlmSupervisionResult } from '../lib/llm/llm-supervision.js';
import { LocalChatGenerator } from '../lib/llm/local-generator.js';
import { OpenAIChatClient } from '../lib/llm/openai-client.js';
import { UsageTally } from '../lib/llm/pricing.js';
import { serveLlmCommand, startServeLlm } from '../lib/llm/serve-llm-process.js';
import { pairExamplesTable, rejectExamplesTable, rejectReasonsTable, supervisionTable } from '../lib/llm/supervision-report.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import type { LoadedModel } from '../lib/models/types.js';
import { UnavailableError } from '../lib/util/errors.js';
import { SHARED_DIR } from './helpers/env.js';

const MODEL = SHARED_DIR && join(SHARED_DIR, 'models', 'llama2c-stories260K');
let m: LoadedModel<LlamaModel> | undefined;
before(async () => {
  await initBackend('cpu', { quiet: true });
  if (MODEL) m = await loadLlamaModel(MODEL);
});
after(() => m?.model.dispose());

test('serve-llm as a child process: the client gets the in-process answers, the usage, and the server stops with 0', { timeout: 180_000 }, async (t) => {
  if (!m || !MODEL) return t.skip('no toy llama2.c model (shared/models/llama2c-stories260K)');
  const lines: string[] = [];
  const served = await startServeLlm({ model: MODEL, servedModelName: 'toy', backend: 'cpu', log: (l) => lines.push(l) });
  try {
    assert.match(served.baseURL, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.notEqual(served.pid, process.pid);
    const client = new OpenAIChatClient({ baseURL: served.baseURL, model: served.model });
    const local = new LocalChatGenerator({ model: m.model, tokenizer: m.tokenizer, dir: m.dir, id: 'toy' });
    for (const content of ['Once upon a time', 'You are a highly smart same-meaning sentence-generating system. Input sentence: a cat sits. Output:']) {
      const req = { messages: [{ role: 'user', content }], temperature: 0, max_tokens: 24 };
      const [remote, here] = await Promise.all([client.complete(req), local.complete(req)]);
      assert.equal(remote.text, here.text);
      assert.deepEqual(remote.usage, here.usage);
      assert.equal(remote.finishReason, here.finishReason);
    }
    assert.equal(client.usage.paid.requests, 2);
  } finally {
    assert.equal(await served.stop(), 0);
  }
  assert.ok(lines.some((l) => /POST \/v1\/chat\/completions 200/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /stopped \(SIGTERM\)/.test(l)), lines.join('\n'));
  assert.equal(await served.stop(), 0, 'stopping twice returns the same exit');
});

test('a server that cannot start is an UnavailableError carrying its own message', { timeout: 60_000 }, async () => {
  await assert.rejects(
    () => startServeLlm({ model: '/nonexistent/model/dir', backend: 'cpu' }),
    (e: Error) => e instanceof UnavailableError && /exited \(2\) before it listened/.test(e.message) && /neither an existing directory nor a Hugging Face Hub id|model/.test(e.message),
  );
  const cmd = serveLlmCommand({ model: 'x', servedModelName: 'y', maxBatchSize: 3, apiKey: 'k' });
  assert.deepEqual(cmd.slice(1, 3), ['--import', 'tsx']);
  assert.match(cmd[3], /scripts[/\\]serve-llm\.ts$/);
  assert.deepEqual(cmd.slice(4), ['--model', 'x', '--port', '0', '--host', '127.0.0.1', '--served-model-name', 'y', '--max-batch-size', '3', '--api-key', 'k']);
});

test('endpoints from the environment: configured, missing (with what to set), another prefix never falls back to OPENAI_*', () => {
  const none = endpointFromEnv({ defaultModel: 'gpt-3.5-turbo', env: {} });
  assert.equal(none.generator, undefined);
  assert.match(none.why!, /set OPENAI_API_KEY \(OpenAI\) or OPENAI_BASE_URL/);
  const openai = endpointFromEnv({ defaultModel: 'gpt-3.5-turbo', env: { OPENAI_API_KEY: 'sk-test' } });
  assert.equal(openai.generator!.baseURL, 'https://api.openai.com/v1');
  assert.equal(openai.generator!.model, 'gpt-3.5-turbo');
  const local = endpointFromEnv({ defaultModel: 'gpt-3.5-turbo', env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/', OPENAI_MODEL: 'llama' } });
  assert.equal(local.generator!.baseURL, 'http://127.0.0.1:9/v1');
  assert.equal(local.generator!.model, 'llama');
  const glmMissing = endpointFromEnv({ prefix: 'CHATGLM', defaultModel: 'chatglm3-6b', env: { OPENAI_API_KEY: 'sk-test', CHATGLM_API_KEY: 'k' } });
  assert.match(glmMissing.why!, /set CHATGLM_BASE_URL/);
  const glm = endpointFromEnv({ prefix: 'CHATGLM', defaultModel: 'chatglm3-6b', env: { OPENAI_BASE_URL: 'http://wrong/v1', CHATGLM_BASE_URL: 'http://127.0.0.1:8000/v1' } });
  assert.equal(glm.generator!.baseURL, 'http://127.0.0.1:8000/v1');
  assert.equal(glm.generator!.model, 'chatglm3-6b');
  assert.deepEqual(glm.variables, ['CHATGLM_BASE_URL', 'CHATGLM_API_KEY', 'CHATGLM_MODEL']);
});

test('supervision tables: pairs, rejects by reason, paid and cached requests, tokens and cost', () => {
  const usage = new UsageTally();
  usage.add({ usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 }, costUsd: 0.001, cached: false });
  usage.add({ usage: { promptTokens: 90, completionTokens: 10, totalTokens: 100 }, costUsd: 0.0005, cached: true });
  const r: LlmSupervisionResult = {
    generator: 'g',
    pairs: [
      { a: 'x', b: 'y', score: 1, polarity: 'positive', promptId: 'p-0:positive', generator: 'g' },
      { a: 'x', b: 'z', score: 0, polarity: 'negative', promptId: 'p-0:negative', generator: 'g' },
    ],
    rejects: [
      { promptId: 'p-0:positive', polarity: 'positive', input: 'x', line: 'Here are 1 sentences:', reason: 'preamble', generator: 'g' },
      { promptId: 'p-0:positive', polarity: 'positive', input: 'x', line: 'x', reason: 'echo', generator: 'g' },
      { promptId: 'p-0:negative', polarity: 'negative', input: 'x', line: 'x.', reason: 'echo', generator: 'g' },
      { promptId: 'p-1:positive', polarity: 'positive', input: 'w', line: 'prompt p-1:positive: HTTP 500', reason: 'failed', generator: 'g' },
    ],
    failures: [{ id: 'p-1:positive', index: 2, kind: 'http', message: 'prompt p-1:positive: HTTP 500', attempts: 3 }],
    notStarted: ['p-1:negative'],
    usage,
    prompts: 4,
    stopped: true,
  };
  assert.deepEqual(supervisionTable([r]).rows[0], ['g', 4, 2, 1, 1, 3, 1, 1, 1, 1, 120, 100, '$0.0010']);
  const reasons = rejectReasonsTable([r]);
  assert.equal(reasons.rows[0][reasons.columns.indexOf('echo')], 2);
  assert.equal(reasons.rows[0][reasons.columns.indexOf('failed')], 1);
  assert.equal(reasons.rows[0][reasons.columns.indexOf('too-long')], 0);
  assert.deepEqual(rejectExamplesTable(r.rejects, 1).rows.map((x) => x[0]), ['preamble', 'echo', 'failed']);
  assert.deepEqual(pairExamplesTable(r.pairs, 1).rows, [['p-0:positive', 'g', 'x', 'y', 1]]);
});
