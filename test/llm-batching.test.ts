/**
 * Continuous batching (lib/llm/continuous-batcher.ts over lib/models/llama/generate.ts
 * DecodingBatch) on the toy llama2.c model of the decoder golden set. References: run.c's greedy
 * continuations in golden.json (independent of this code) and `generate()` called on one prompt
 * alone. Requests join a running batch part-way, leave it when they end, are aborted in flight;
 * the event loop runs between decode steps.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { existsSync } from 'node:fs';
import { initBackend, tf } from '../lib/backend/index.js';
import { ContinuousBatcher, type BatchedRequest } from '../lib/llm/continuous-batcher.js';
import { GenerationError } from '../lib/llm/generation-error.js';
import { generate } from '../lib/models/llama/generate.js';
import { loadModel } from '../lib/models/auto.js';
import type { CausalLanguageModel } from '../lib/models/llama/generate.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import type { LoadedModel } from '../lib/models/types.js';
import { DECODER_GOLDEN_DIR, decoderGoldenOrSkip, readDecoderGolden, type DecoderGoldenPrompt } from './helpers/decoder.js';
import { SHARED_DIR } from './helpers/env.js';

/** The tiny random OPT of the OPT golden set (learned positions, another decoder behind the same interface). */
const OPT_DIR = SHARED_DIR ? join(SHARED_DIR, 'golden', 'opt-tiny-seed7', 'model') : undefined;

let m: LoadedModel<LlamaModel> | undefined;
let golden: DecoderGoldenPrompt[] = [];

before(async () => {
  await initBackend('cpu', { quiet: true });
  if (DECODER_GOLDEN_DIR) {
    m = await loadLlamaModel(join(DECODER_GOLDEN_DIR, 'model'));
    golden = readDecoderGolden(DECODER_GOLDEN_DIR).prompts;
  }
});
after(() => m?.model.dispose());

function greedy(p: DecoderGoldenPrompt, maxNewTokens: number, more: Partial<BatchedRequest> = {}): BatchedRequest {
  return { promptIds: p.ids, maxNewTokens, temperature: 0, topP: 1, seed: 0, stopStrings: [], ...more };
}

/** Resolves after `n` pieces of text were streamed through the returned onText. */
function textCounter(n: number): { onText: (d: string) => void; reached: Promise<void>; text: () => string } {
  let seen = 0;
  let text = '';
  let hit!: () => void;
  const reached = new Promise<void>((r) => (hit = r));
  return {
    onText: (d) => {
      text += d;
      if (++seen === n) hit();
    },
    reached,
    text: () => text,
  };
}

test("requests that join a running batch part-way and leave it early get run.c's greedy tokens, as generate() gives each prompt alone; the cache is freed", async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const tensorsBefore = tf.memory().numTensors;
  const batcher = new ContinuousBatcher(m, { maxBatchSize: 3 });
  const a = textCounter(6);
  const first = [batcher.submit(greedy(golden[1], 48, { onText: a.onText })), batcher.submit(greedy(golden[2], 10))];
  // Two more arrive while the first two are generating: one joins at once, one waits for a free row
  // (the batch holds 3), which prompt 2's early end (10 tokens) makes.
  await a.reached;
  const streamedLate = textCounter(1);
  const late = [batcher.submit(greedy(golden[3], 30, { onText: streamedLate.onText })), batcher.submit(greedy(golden[4], 48))];
  const results = await Promise.all([...first, ...late]);
  const cases: Array<[DecoderGoldenPrompt, number]> = [
    [golden[1], 48],
    [golden[2], 10],
    [golden[3], 30],
    [golden[4], 48],
  ];
  for (const [i, [p, n]] of cases.entries()) {
    assert.deepEqual(results[i].promptIds, p.ids);
    assert.deepEqual(results[i].ids, p.greedy_ids.slice(0, n), `request ${i}: run.c's greedy ids`);
    const [alone] = await generate(m, [p.ids], { maxNewTokens: n });
    assert.deepEqual(results[i].ids, alone.ids, `request ${i}: as generate() alone`);
    assert.equal(results[i].text, alone.text);
    assert.equal(results[i].finishReason, 'length');
  }
  assert.equal(a.text(), results[0].text, 'the streamed pieces add up to the text');
  assert.equal(streamedLate.text(), results[2].text);
  assert.equal(batcher.stats.requests, 4);
  assert.ok(batcher.stats.prefills >= 3, `the late requests were prefilled at later step boundaries (prefills ${batcher.stats.prefills})`);
  assert.equal(batcher.stats.largestBatch, 3, 'never more rows than maxBatchSize');
  assert.equal(tf.memory().numTensors, tensorsBefore, 'no tensor is left behind once the batch is empty');
});

test('sampling requests in a batch draw from their own seed: each equals generate() of its prompt alone with that seed', async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const batcher = new ContinuousBatcher(m, { maxBatchSize: 8 });
  const reqs: BatchedRequest[] = [
    { promptIds: golden[1].ids, maxNewTokens: 20, temperature: 1, topP: 0.9, seed: 42, stopStrings: [] },
    { promptIds: golden[2].ids, maxNewTokens: 12, temperature: 0.7, topP: 1, seed: 7, stopStrings: [] },
    greedy(golden[5], 16),
  ];
  const out = await Promise.all(reqs.map((r) => batcher.submit(r)));
  for (const [i, r] of reqs.entries()) {
    const [alone] = await generate(m, [r.promptIds], { maxNewTokens: r.maxNewTokens, temperature: r.temperature, topP: r.topP, seed: r.seed });
    assert.deepEqual(out[i].ids, alone.ids, `request ${i}`);
  }
  assert.equal(batcher.stats.prefills, 1, 'requests arriving together are prefilled together');
  assert.equal(batcher.stats.largestBatch, 3);
});

test('stop strings and end-of-sequence ids end a row inside a batch as they end it alone', async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const batcher = new ContinuousBatcher(m, { maxBatchSize: 4 });
  const p = golden[1]; // "Once upon a time" -> ", there was a little girl named Lily. ..."
  const q = golden[2];
  let streamed = '';
  const [stopped, ended, full] = await Promise.all([
    batcher.submit(greedy(p, 48, { stopStrings: ['Lily'], onText: (d) => (streamed += d) })),
    batcher.submit(greedy(q, 48, { eosTokenIds: [13] })),
    batcher.submit(greedy(golden[3], 48)),
  ]);
  const [stopAlone] = await generate(m, [p.ids], { maxNewTokens: 48, stopStrings: ['Lily'] });
  const [eosAlone] = await generate(m, [q.ids], { maxNewTokens: 48, eosTokenIds: [13] });
  assert.deepEqual(stopped, stopAlone);
  assert.equal(stopped.finishReason, 'stop');
  assert.equal(streamed, stopped.text, 'the held-back tail of a stop string is never streamed');
  assert.deepEqual(ended, eosAlone);
  assert.equal(ended.finishReason, 'eos');
  assert.deepEqual(full.ids, golden[3].greedy_ids);
});

test('a request aborted while generating leaves the batch at the next step; the others go on unchanged', async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const batcher = new ContinuousBatcher(m, { maxBatchSize: 4 });
  const stop = new AbortController();
  const c = textCounter(3);
  const doomed = batcher.submit(greedy(golden[2], 48, { id: 'doomed', onText: c.onText, signal: stop.signal }));
  const outcome = doomed.then(
    () => assert.fail('expected an abort'),
    (e: unknown) => e as GenerationError,
  );
  const survivor = batcher.submit(greedy(golden[1], 40));
  await c.reached;
  stop.abort(new Error('the client went away'));
  const err = await outcome;
  assert.ok(err instanceof GenerationError);
  assert.equal(err.kind, 'aborted');
  assert.equal(err.id, 'doomed');
  assert.match(err.message, /aborted while generating \(after \d+ tokens\)/);
  assert.deepEqual((await survivor).ids, golden[1].greedy_ids.slice(0, 40));
  // An onText that throws fails its own request only.
  const bad = batcher.submit(
    greedy(golden[3], 10, {
      onText: () => {
        throw new Error('the socket is gone');
      },
    }),
  );
  const good = batcher.submit(greedy(golden[4], 10));
  await assert.rejects(bad, /the socket is gone/);
  assert.deepEqual((await good).ids, golden[4].greedy_ids.slice(0, 10));
});

test('the event loop runs between decode steps: callbacks queued during a generation run before it ends', async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const batcher = new ContinuousBatcher(m, { maxBatchSize: 2 });
  const events: string[] = [];
  let ticking = true;
  const tick = () => {
    if (!ticking) return;
    events.push('tick');
    setImmediate(tick);
  };
  const done = batcher.submit(greedy(golden[1], 12, { onText: () => events.push('text') }));
  setImmediate(tick);
  await done;
  ticking = false;
  const firstText = events.indexOf('text');
  const lastText = events.lastIndexOf('text');
  assert.ok(firstText >= 0 && lastText > firstText);
  const between = events.slice(firstText, lastText).filter((e) => e === 'tick').length;
  assert.ok(between >= 5, `ticks of the event loop between the first and the last streamed piece: ${between} (${events.join(' ')})`);
});

test('bad requests are refused before they are queued', async (t) => {
  if (!decoderGoldenOrSkip(t) || !m) return;
  const batcher = new ContinuousBatcher(m);
  await assert.rejects(batcher.submit(greedy(golden[1], -1)), /maxNewTokens must be an integer >= 0, got -1/);
  await assert.rejects(batcher.submit({ ...greedy(golden[1], 4), promptIds: [] }), /the prompt has no tokens/);
  await assert.rejects(batcher.submit({ ...greedy(golden[1], 4), promptIds: new Array(513).fill(5) }), /the prompt has 513 tokens, more than the context length 512/);
  await assert.rejects(batcher.submit({ ...greedy(golden[1], 4), topP: 0 }), /topP must be in \(0, 1\], got 0/);
  assert.throws(() => new ContinuousBatcher(m!, { maxBatchSize: 0 }), /maxBatchSize must be an integer >= 1, got 0/);
});

test('an OPT decoder (learned positions counted from the mask) batches the same way: late joiners get what generate() gives them alone', async (t) => {
  if (!OPT_DIR || !existsSync(OPT_DIR)) return t.skip('no OPT golden set (../shared/golden/opt-tiny-seed7)');
  const opt = await loadModel(OPT_DIR);
  try {
    const dec = opt as unknown as { model: CausalLanguageModel; tokenizer: typeof opt.tokenizer };
    const prompts = ['Hello there my friend', 'a b c', 'The quick brown fox jumps over the lazy dog again'].map((p) => opt.tokenizer.encode(p).ids);
    const batcher = new ContinuousBatcher(dec, { maxBatchSize: 2 });
    const first = textCounter(3);
    const req = (ids: number[], n: number, more: Partial<BatchedRequest> = {}): BatchedRequest => ({ promptIds: ids, maxNewTokens: n, temperature: 0, topP: 1, seed: 0, stopStrings: [], ...more });
    const a = batcher.submit(req(prompts[0], 12, { onText: first.onText }));
    await first.reached;
    const out = await Promise.all([a, batcher.submit(req(prompts[1], 5)), batcher.submit(req(prompts[2], 12))]);
    for (const [i, n] of [12, 5, 12].entries()) {
      const [alone] = await generate(dec, [prompts[i]], { maxNewTokens: n });
      assert.deepEqual(out[i].ids, alone.ids, `OPT request ${i}`);
    }
    assert.ok(batcher.stats.prefills >= 2 && batcher.stats.largestBatch === 2);
  } finally {
    opt.model.dispose();
  }
});
