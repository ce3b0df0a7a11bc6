import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { argmax, generate, sampleTopP } from '../lib/models/llama/generate.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import type { LoadedModel } from '../lib/models/types.js';
import { DECODER_GOLDEN_DIR, decoderGoldenOrSkip, readDecoderGolden, type DecoderGoldenPrompt } from './helpers/decoder.js';

let m: LoadedModel<LlamaModel> | undefined;
let prompts: DecoderGoldenPrompt[] = [];

before(async () => {
  await initBackend('cpu', { quiet: true });
  if (DECODER_GOLDEN_DIR) {
    m = await loadLlamaModel(join(DECODER_GOLDEN_DIR, 'model'));
    prompts = readDecoderGolden(DECODER_GOLDEN_DIR).prompts;
  }
});
after(() => m?.model.dispose());

test("greedy generation from the prompts' texts, all in one left-padded batch, reproduces run.c's continuations; streaming adds up to the text", async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const streamed = prompts.map(() => '');
  let events = 0;
  const out = await generate(
    m,
    prompts.map((p) => p.text),
    {
      maxNewTokens: Math.max(...prompts.map((p) => p.greedy_ids.length)),
      onToken: (e) => {
        streamed[e.row] += e.text;
        events++;
      },
    },
  );
  prompts.forEach((p, i) => {
    assert.deepEqual(out[i].promptIds, p.ids);
    assert.deepEqual(out[i].ids, p.greedy_ids, `prompt ${i} ids`);
    assert.equal(out[i].text, p.greedy_text, `prompt ${i} text`);
    assert.equal(out[i].finishReason, 'length');
    assert.equal(streamed[i], p.greedy_text, `prompt ${i} streamed`);
  });
  assert.equal(events, prompts.reduce((s, p) => s + p.greedy_ids.length, 0));
});

test('stop strings cut the text before them (never streamed); an end-of-sequence id ends a row; maxNewTokens 0', async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const p = prompts[1]; // "Once upon a time" -> ", there was a little girl named Lily. ..."
  let streamed = '';
  const [s] = await generate(m, [p.text], { maxNewTokens: 48, stopStrings: ['Lily', 'zzz'], onToken: (e) => (streamed += e.text) });
  const cut = p.greedy_text.slice(0, p.greedy_text.indexOf('Lily'));
  assert.equal(s.text, cut);
  assert.equal(s.finishReason, 'stop');
  assert.equal(streamed, cut);
  assert.deepEqual(s.ids, p.greedy_ids.slice(0, s.ids.length));
  // The token that completed "Lily" is the last one kept.
  assert.ok(m.tokenizer.decode!(s.ids).includes('Lily') && !m.tokenizer.decode!(s.ids.slice(0, -1)).includes('Lily'));

  // A newline (byte token 13) as end of sequence: prompt 2's continuation has one.
  const q = prompts[2];
  const nl = q.greedy_ids.indexOf(13);
  assert.ok(nl >= 0);
  const [e] = await generate(m, [q.text], { maxNewTokens: 48, eosTokenIds: [13] });
  assert.equal(e.finishReason, 'eos');
  assert.deepEqual(e.ids, q.greedy_ids.slice(0, nl + 1));
  assert.equal(e.text, q.greedy_text.slice(0, q.greedy_text.indexOf('\n') + 1));

  const [z] = await generate(m, [q.text], { maxNewTokens: 0 });
  assert.deepEqual(z.ids, []);
  await assert.rejects(generate(m, [q.text], { topP: 0 }), /topP must be in \(0, 1\], got 0/);
  await assert.rejects(generate(m, [[]]), /prompt 0 has no tokens/);
});

test('sampling: the nucleus and the inverse CDF by hand; seeded draws repeat; a vanishing temperature or nucleus is greedy', async (t) => {
  const z = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
  assert.equal(argmax([1, 3, 3, 2]), 1);
  // top-p 1: CDF 0.5, 0.8, 1.0.
  assert.deepEqual([0, 0.49, 0.5, 0.79, 0.81, 0.999].map((u) => sampleTopP(z, 1, 1, u)), [0, 0, 1, 1, 2, 2]);
  // top-p 0.7 keeps {0, 1} (mass 0.8), renormalised: CDF 0.625, 1.
  assert.deepEqual([0.6, 0.63, 0.99].map((u) => sampleTopP(z, 1, 0.7, u)), [0, 1, 1]);
  // top-p 0.5 keeps only the first token (its mass reaches 0.5).
  assert.equal(sampleTopP(z, 1, 0.5, 0.99), 0);
  // Temperature 2: p ∝ √p = 0.7071, 0.5477, 0.4472 (sum 1.7020) → CDF 0.4155, 0.7373, 1.
  assert.deepEqual([0.415, 0.416, 0.737, 0.738].map((u) => sampleTopP(z, 2, 1, u)), [0, 1, 1, 2]);

  if (!decoderGoldenOrSkip(t) || !m) return;
  const texts = prompts.slice(1, 4).map((p) => p.text);
  const a = await generate(m, texts, { maxNewTokens: 20, temperature: 1, topP: 0.9, seed: 42 });
  const b = await generate(m, texts, { maxNewTokens: 20, temperature: 1, topP: 0.9, seed: 42 });
  const c = await generate(m, texts, { maxNewTokens: 20, temperature: 1, topP: 0.9, seed: 43 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.map((g) => g.ids), c.map((g) => g.ids));
  const greedy = prompts.slice(1, 4).map((p) => p.greedy_ids.slice(0, 20));
  assert.deepEqual((await generate(m, texts, { maxNewTokens: 20, temperature: 1e-4, seed: 1 })).map((g) => g.ids), greedy);
  assert.deepEqual((await generate(m, texts, { maxNewTokens: 20, temperature: 1, topP: 1e-9, seed: 1 })).map((g) => g.ids), greedy);
});
