/**
 * The official `openai` npm client (v6, a dev dependency nobody here wrote) against the real
 * serve-llm (scripts/serve-llm.ts in a child process, the toy llama2.c decoder of the decoder golden
 * set): chat completions plain and streamed — several at once, which the server batches — and
 * embeddings (the SDK asks for base64 unless told otherwise, and decodes it), with errors in the
 * shape the SDK turns into its typed exceptions. References: run.c's greedy continuations
 * (golden.json) and the in-process prompt encoder on the same weights.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { initBackend } from '../lib/backend/index.js';
import { PromptSentenceEncoder } from '../lib/embed/prompt-encoder.js';
import { OpenAIEmbeddingsClient } from '../lib/llm/openai-embeddings-client.js';
import { PROMPTEOL_TEMPLATE, promptFor } from '../lib/llm/prompt-template.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import type { LoadedModel } from '../lib/models/types.js';
import { DECODER_GOLDEN_DIR, readDecoderGolden, type DecoderGoldenPrompt } from './helpers/decoder.js';
import { startServeLlm, type ServeLlm } from './helpers/serve-llm.js';

const MODEL_NAME = 'stories260K';
let server: ServeLlm | undefined;
let m: LoadedModel<LlamaModel> | undefined;
let golden: DecoderGoldenPrompt[] = [];

before(async () => {
  if (!DECODER_GOLDEN_DIR) return;
  const modelDir = join(DECODER_GOLDEN_DIR, 'model');
  [server] = await Promise.all([
    startServeLlm(['--model', modelDir, '--served-model-name', MODEL_NAME, '--max-batch-size', '4']),
    (async () => {
      await initBackend('cpu', { quiet: true });
      m = await loadLlamaModel(modelDir);
      golden = readDecoderGolden(DECODER_GOLDEN_DIR!).prompts;
    })(),
  ]);
});

after(async () => {
  m?.model.dispose();
  if (server) assert.equal(await server.stop(), 0);
});

function ready(t: { skip: (msg: string) => void }): boolean {
  if (!server || !m) t.skip('no decoder golden set: set ANGLE_DECODER_GOLDEN_DIR or ANGLE_SHARED_DIR (../shared/golden/llama2c-stories260K)');
  return Boolean(server && m);
}

const sdk = () => new OpenAI({ baseURL: server!.baseURL, apiKey: 'not-needed-locally', maxRetries: 0 });

test("chat through the openai SDK, plain and streamed, four at once: run.c's greedy continuations, usage, finish reasons", async (t) => {
  if (!ready(t)) return;
  const client = sdk();
  const p = golden[1];
  const plain = await client.chat.completions.create({ model: MODEL_NAME, messages: [{ role: 'user', content: p.text }], temperature: 0, max_tokens: 12 });
  assert.equal(plain.object, 'chat.completion');
  assert.equal(plain.model, MODEL_NAME);
  assert.equal(plain.choices[0].message.role, 'assistant');
  assert.equal(plain.choices[0].message.content, p.greedy_text.slice(0, plain.choices[0].message.content!.length));
  assert.equal(plain.choices[0].finish_reason, 'length');
  assert.deepEqual(plain.usage && [plain.usage.prompt_tokens, plain.usage.completion_tokens, plain.usage.total_tokens], [p.ids.length, 12, p.ids.length + 12]);

  // Four streams at once (the server decodes them in one batch); each is run.c's continuation.
  const prompts = [golden[0], golden[1], golden[2], golden[4]];
  const streamed = await Promise.all(
    prompts.map(async (q) => {
      const stream = await client.chat.completions.create({ model: MODEL_NAME, messages: [{ role: 'user', content: q.text }], temperature: 0, max_tokens: q.greedy_ids.length, stream: true, stream_options: { include_usage: true } });
      let text = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined | null;
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        assert.equal(chunk.object, 'chat.completion.chunk');
        text += chunk.choices[0]?.delta?.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      return { text, finish, usage, chunks };
    }),
  );
  streamed.forEach((s, i) => {
    const q = prompts[i];
    assert.equal(s.text, q.greedy_text, `stream ${i}`);
    assert.equal(s.finish, 'length');
    assert.equal(s.usage?.completion_tokens, q.greedy_ids.length);
    assert.equal(s.usage?.prompt_tokens, q.ids.length);
    assert.ok(s.chunks > 5, `streamed in ${s.chunks} chunks`);
  });
});

test('embeddings through the openai SDK (base64 by default, and float) equal our client and the in-process prompt encoder', async (t) => {
  if (!ready(t)) return;
  const client = sdk();
  const texts = ['A man is playing a guitar.', 'A woman is slicing an onion.', 'Once upon a time'];
  const prompts = texts.map((x) => promptFor(x, { template: PROMPTEOL_TEMPLATE }));
  const viaSdk = await client.embeddings.create({ model: MODEL_NAME, input: prompts });
  assert.equal(viaSdk.object, 'list');
  assert.equal(viaSdk.model, MODEL_NAME);
  assert.equal(viaSdk.data.length, 3);
  assert.ok(viaSdk.data.every((d, i) => d.index === i && d.embedding.length === 64));
  const tokens = prompts.reduce((s, x) => s + m!.tokenizer.encode(x).ids.length, 0);
  assert.equal(viaSdk.usage.prompt_tokens, tokens);
  const asFloats = await client.embeddings.create({ model: MODEL_NAME, input: prompts, encoding_format: 'float' });
  assert.deepEqual(
    asFloats.data.map((d) => d.embedding),
    viaSdk.data.map((d) => d.embedding),
    'the SDK decodes base64 to the very floats the float format prints',
  );
  // OpenAI's `dimensions`: the first components of the same vectors (angle_emb's embedding_size).
  const shortened = await client.embeddings.create({ model: MODEL_NAME, input: prompts, dimensions: 8 });
  assert.deepEqual(
    shortened.data.map((d) => d.embedding),
    viaSdk.data.map((d) => d.embedding.slice(0, 8)),
  );
  const ours = await new OpenAIEmbeddingsClient({ baseURL: server!.baseURL, model: MODEL_NAME, env: {}, prompt: { template: PROMPTEOL_TEMPLATE } }).encode(texts);
  const local = await new PromptSentenceEncoder(m!, { template: PROMPTEOL_TEMPLATE }).encode(texts);
  let fromOurs = 0;
  let fromLocal = 0;
  viaSdk.data.forEach((d, i) =>
    d.embedding.forEach((x, k) => {
      fromOurs = Math.max(fromOurs, Math.abs(x - ours.data[i * 64 + k]));
      fromLocal = Math.max(fromLocal, Math.abs(x - local.data[i * 64 + k]));
    }),
  );
  assert.equal(fromOurs, 0, 'the same request through two clients gives the same floats');
  assert.ok(fromLocal <= 1e-5, `max |SDK − in-process| = ${fromLocal}`);
});

test("errors reach the SDK as its typed exceptions with OpenAI's fields", async (t) => {
  if (!ready(t)) return;
  const client = sdk();
  const notFound = await client.chat.completions.create({ model: 'gpt-4', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
  assert.ok(notFound instanceof OpenAI.NotFoundError, String(notFound));
  assert.equal(notFound.status, 404);
  assert.equal(notFound.code, 'model_not_found');
  assert.equal(notFound.param, 'model');
  const tooLong = await client.chat.completions.create({ model: MODEL_NAME, messages: [{ role: 'user', content: 'x' }], max_tokens: 600 }).catch((e: unknown) => e);
  assert.ok(tooLong instanceof OpenAI.BadRequestError, String(tooLong));
  assert.equal(tooLong.code, 'context_length_exceeded');
  const badEmbedding = await client.embeddings.create({ model: MODEL_NAME, input: 'x', dimensions: 100_000 }).catch((e: unknown) => e);
  assert.ok(badEmbedding instanceof OpenAI.BadRequestError, String(badEmbedding));
  assert.equal(badEmbedding.param, 'dimensions');
  const models = await client.models.list();
  assert.deepEqual(
    models.data.map((x) => x.id),
    [MODEL_NAME],
  );
});
