import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import {
  ANGLE_LLAMA_TEMPLATE,
  inContextTemplate,
  prepareTextPromptEol,
  promptFor,
  PromptSentenceEncoder,
  PROMPTEOL_TEMPLATE,
} from '../lib/embed/prompt-encoder.js';
import { readLlama2cCheckpoint } from '../lib/models/llama/llama2c-checkpoint.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import { LlamaModel } from '../lib/models/llama/model.js';
import { Llama2cTokenizer } from '../lib/models/tokenizers/llama2c.js';
import type { LoadedModel } from '../lib/models/types.js';
import { maxAbsDiff } from '../lib/parity/check.js';
import { DECODER_GOLDEN_DIR, decoderGoldenOrSkip, readDecoderGolden } from './helpers/decoder.js';

let m: LoadedModel<LlamaModel> | undefined;

before(async () => {
  await initBackend('cpu', { quiet: true });
  if (DECODER_GOLDEN_DIR) m = await loadLlamaModel(join(DECODER_GOLDEN_DIR, 'model'));
});
after(() => m?.model.dispose());

test("templates: PromptEOL's and AnglE-LLaMA's prompts, in-context demonstrations as in PromptEOL's README, PromptEOL's text clean-up", () => {
  assert.equal(promptFor('A man plays.'), 'This sentence : "A man plays." means in one word:"');
  assert.equal(promptFor('A man plays.', { template: ANGLE_LLAMA_TEMPLATE }), 'Summarize sentence "A man plays." in one word:"');
  // kongds/scaling_sentemb README: 'This_sentence_:_"A_jockey_riding_a_horse."_means_in_one_word:"Equestrian".This_sentence_:_"*sent_0*"_means_in_one_word:"' with _ as spaces.
  assert.equal(
    inContextTemplate(PROMPTEOL_TEMPLATE, [{ text: 'A jockey riding a horse.', word: 'Equestrian' }]),
    'This sentence : "A jockey riding a horse." means in one word:"Equestrian".This sentence : "{text}" means in one word:"',
  );
  assert.equal(promptFor('  x $& y ', { template: '{text}' }), 'x $& y');
  // evaluation.py: '.' appended unless the text ends in . ? " ', double quotes become single, a final ? becomes '.'.
  assert.equal(prepareTextPromptEol('A man plays'), 'A man plays.');
  assert.equal(prepareTextPromptEol('Is it raining?'), 'Is it raining.');
  assert.equal(prepareTextPromptEol('He said "hi"'), "He said 'hi'");
  assert.equal(prepareTextPromptEol("It's done'"), "It's done'");
  assert.equal(prepareTextPromptEol(''), '');
  assert.throws(() => promptFor('x', { template: 'no text field' }), /needs '\{text\}' exactly once, found 0/);
});

test("a PromptEOL embedding is the final hidden state at the prompt's last token: run.c's number for the golden PromptEOL prompt", async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g || !m) return;
  const golden = readDecoderGolden(g).prompts.find((p) => p.text.startsWith('This sentence : "'))!;
  const text = /^This sentence : "(.*)" means in one word:"$/.exec(golden.text)![1];
  const enc = new PromptSentenceEncoder(m);
  const e = await enc.encode([text]);
  assert.equal(e.dim, 64);
  const diff = maxAbsDiff(e.data, golden.hidden[golden.hidden.length - 1]);
  t.diagnostic(`embedding vs run.c hidden state: max |diff| ${diff.toExponential(2)}`);
  assert.ok(diff <= 1e-4, String(diff));
});

test('batched, left-padded, length-sorted encoding equals one-by-one encoding and keeps input order; in-context and AnglE templates', async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const loaded = m;
  const texts = ['A girl plays with a ball.', 'Tom', 'The dog ran to the park and saw a big red ball in the tree.', '', 'Tom', 'Lily is happy?'];
  for (const opts of [
    { batchSize: 4, prepareText: 'prompteol' as const },
    { batchSize: 3, template: ANGLE_LLAMA_TEMPLATE },
    { batchSize: 6, demonstrations: [{ text: 'A jockey riding a horse.', word: 'Equestrian' }] },
  ]) {
    const enc = new PromptSentenceEncoder(loaded, opts);
    const all = await enc.encode(texts);
    assert.equal(all.rows, texts.length);
    let worst = 0;
    for (let i = 0; i < texts.length; i++) {
      const one = await enc.encode([texts[i]]);
      worst = Math.max(worst, maxAbsDiff(one.data, all.data.subarray(i * 64, (i + 1) * 64)));
    }
    t.diagnostic(`batch ${opts.batchSize}: batched vs single max |diff| ${worst.toExponential(2)}`);
    assert.ok(worst <= 1e-5, String(worst));
    // The two 'Tom's may sit in batches of different lengths: equal up to summation order.
    assert.ok(maxAbsDiff(all.data.subarray(64, 128), all.data.subarray(4 * 64, 5 * 64)) <= 1e-5);
  }
});

test('prompt length: an error beyond the context, or the first maxLength tokens (transformers truncation) when asked', async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g || !m) return;
  const ckpt = readLlama2cCheckpoint(join(g, 'model', 'stories260K.bin'));
  const small = { model: new LlamaModel({ ...ckpt.config, maxPositions: 32 }, ckpt.weights), tokenizer: Llama2cTokenizer.fromFile(join(g, 'model', 'tok512.bin'), ckpt.config.vocabSize) };
  try {
    const text = 'Lily and Tom went to the park. They saw a big dog.';
    await assert.rejects(new PromptSentenceEncoder(small).encode(['short', text]), /the prompt of text 1 has \d+ tokens, more than the model's context 32; pass maxLength to truncate/);
    const cut = await new PromptSentenceEncoder(small, { maxLength: 24 }).encode([text]);
    // Truncation keeps the prompt's first 24 tokens: the embedding is the state at the 24th.
    const ids = small.tokenizer.encode(promptFor(text)).ids.slice(0, 24);
    const h = small.model.forward(small.tokenizer.pad([{ ids, typeIds: ids.map(() => 0) }]));
    const want = h.lastHiddenState.dataSync().subarray(23 * 64, 24 * 64);
    h.lastHiddenState.dispose();
    assert.equal(maxAbsDiff(cut.data, want), 0);
  } finally {
    small.model.dispose();
  }
});
