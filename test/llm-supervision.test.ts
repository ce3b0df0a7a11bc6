/**
 * AnglE Table 5's data generation (lib/llm/llm-supervision.ts and its parts): Figure 4's prompt
 * against the paper's text, the parse rules on hand-written answers, the authors' near-copy filter
 * against Python's semantics (values computed with python3: len(set(a.split()) - set(b.split())) < 5),
 * the JSON lines their training script reads, and a whole run with the local decoder (the toy
 * llama2.c model: its sentences are nonsense, the code path is real) resumed from the cache, and
 * an ensemble of two generators.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { loadStsbSentence1 } from '../lib/data/domain.js';
import { figure4Prompt, FIGURE4_TEMPLATE } from '../lib/llm/figure4-prompt.js';
import { GenerationError } from '../lib/llm/generation-error.js';
import { angleJsonl, dropNearCopyNegatives, generateEnsemble, generateSupervisedPairs } from '../lib/llm/llm-supervision.js';
import { LocalChatGenerator } from '../lib/llm/local-generator.js';
import { parseGeneratedSentences } from '../lib/llm/parse-answer.js';
import type { ChatResult } from '../lib/llm/types.js';
import { generate } from '../lib/models/llama/generate.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import type { LoadedModel } from '../lib/models/types.js';
import { DECODER_GOLDEN_DIR } from './helpers/decoder.js';
import { DATA_DIR, PAPERS_DIR } from './helpers/env.js';

let m: LoadedModel<LlamaModel> | undefined;
const tmp: string[] = [];

before(async () => {
  await initBackend('cpu', { quiet: true });
  if (DECODER_GOLDEN_DIR && existsSync(join(DECODER_GOLDEN_DIR, 'model'))) m = await loadLlamaModel(join(DECODER_GOLDEN_DIR, 'model'));
});
after(async () => {
  m?.model.dispose();
  for (const d of tmp) await rm(d, { recursive: true, force: true });
});

async function tempDir(prefix: string): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  tmp.push(d);
  return d;
}

test("Figure 4's prompt is the paper's, word for word, with the slashes resolved per polarity", (t) => {
  const file = PAPERS_DIR && join(PAPERS_DIR, '000_c0fdd0968b088fcd.txt');
  if (!file || !existsSync(file)) return t.skip('no papers folder (ANGLE_PAPERS_DIR or ../shared/papers)');
  const lines = readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.startsWith('Figure 4:'));
  assert.equal(i + 1, 232, 'Figure 4 is on line 232');
  const quoted = /we use the prompt "([^"]+)" to generate/.exec(lines[i]);
  assert.ok(quoted, 'the prompt is quoted on that line');
  assert.equal(FIGURE4_TEMPLATE, quoted[1]);

  assert.equal(
    figure4Prompt('positive', 'A plane is taking off.', 3),
    'You are a highly smart same-meaning sentence-generating system. Your job is to generate 3 synonymous sentences of a given input sentence. Input sentence: A plane is taking off.. Output:',
  );
  assert.equal(
    figure4Prompt('negative', 'costs $1 and $& more', 1),
    'You are a highly smart opposite-meaning sentence-generating system. Your job is to generate 1 antonym sentences of a given input sentence. Input sentence: costs $1 and $& more. Output:',
  );
  assert.throws(() => figure4Prompt('positive', 'x', 0), /\{size\} must be an integer >= 1, got 0/);
});

test('parse rules: sentences taken in order; every other line kept with its reason', () => {
  const input = 'A plane is taking off.';
  const answer = [
    'Here are 3 synonymous sentences:',
    '',
    '1. An aircraft is departing.',
    '2) "A jet takes off."',
    '(3) ',
    '- A plane is taking off.',
    '4. An aircraft is departing!',
    'Sentence 5: The airplane lifts off the runway, climbing steadily into the cloudy grey sky above the busy international airport while passengers watch from the terminal.',
    '6. A plane leaves the ground.',
    '7. One more than asked for.',
  ].join('\n');
  const p = parseGeneratedSentences(answer, input, { size: 3 });
  assert.deepEqual(p.sentences, ['An aircraft is departing.', 'A jet takes off.', 'A plane leaves the ground.']);
  assert.deepEqual(
    p.rejects.map((r) => [r.reason, r.text]),
    [
      ['preamble', 'Here are 3 synonymous sentences:'],
      ['numbering-only', ''],
      ['echo', 'A plane is taking off.'],
      ['duplicate', 'An aircraft is departing!'],
      ['too-long', 'The airplane lifts off the runway, climbing steadily into the cloudy grey sky above the busy international airport while passengers watch from the terminal.'],
      ['beyond-size', 'One more than asked for.'],
    ],
  );
  assert.equal(p.rejects[1].line, '(3) ');

  // Cut off by max_tokens: the last line may be half a sentence.
  const cut = parseGeneratedSentences('1. A jet departs.\n2. The plane is lea', input, { size: 2, finishReason: 'length' });
  assert.deepEqual(cut.sentences, ['A jet departs.']);
  assert.deepEqual(cut.rejects.map((r) => r.reason), ['truncated']);
  assert.deepEqual(parseGeneratedSentences('1. A jet departs.\n2. The plane is lea', input, { size: 2, finishReason: 'stop' }).sentences, ['A jet departs.', 'The plane is lea']);

  assert.deepEqual(parseGeneratedSentences('  \n \n', input, { size: 1 }).rejects.map((r) => r.reason), ['empty']);
  assert.deepEqual(parseGeneratedSentences('1. A jet departs. 2. An aircraft leaves. 3. The plane lifts off.', input, { size: 3 }).sentences, ['A jet departs.', 'An aircraft leaves.', 'The plane lifts off.']);
  assert.deepEqual(parseGeneratedSentences('Output: A jet departs.', input, { size: 1 }).sentences, ['A jet departs.']);
  assert.deepEqual(parseGeneratedSentences('2.5 km of runway were used. -5 degrees outside.', input, { size: 1 }).sentences, ['2.5 km of runway were used. -5 degrees outside.']);
  assert.deepEqual(parseGeneratedSentences('Input sentence: a plane is taking off', input, { size: 1 }).rejects.map((r) => r.reason), ['echo']);
  assert.deepEqual(parseGeneratedSentences('Sure, here you go.\nA jet departs.', input, { size: 1 }).rejects.map((r) => r.reason), ['preamble']);
  assert.deepEqual(parseGeneratedSentences('He said "go" to the pilot.', input, { size: 1 }).sentences, ['He said "go" to the pilot.']);
  assert.deepEqual(parseGeneratedSentences('The jet is leaving."\n"An aircraft departs', input, { size: 2 }).sentences, ['The jet is leaving.', 'An aircraft departs']);
  assert.deepEqual(parseGeneratedSentences('one two three four five six', 'a b', { size: 1, maxWords: 5 }).rejects.map((r) => r.reason), ['too-long']);
});

test("the authors' near-copy negative filter (skip_neg) and JSON lines as load_stsb_llm reads them", () => {
  const pairs = [
    { a: 'a man is playing a flute .', b: 'a man is not playing a flute .', score: 0 }, // python: skipped
    { a: 'A plane is taking off.', b: 'No aircraft has ever left the ground.', score: 0 }, // kept (5 words missing)
    { a: 'A plane is taking off.', b: 'A plane is landing.', score: 0 }, // skipped (2 missing)
    { a: 'A plane is taking off.', b: 'A plane is taking off.', score: 1 }, // positives are kept
    { a: 'a\x1cb c d e', b: 'x', score: 0 }, // python splits at U+001C: 5 words missing, kept
    { a: 'a\ufeffb c d e', b: 'x', score: 0 }, // python does not split at U+FEFF: 4 words, skipped
  ];
  assert.deepEqual(
    dropNearCopyNegatives(pairs).map((p) => pairs.indexOf(p)),
    [1, 3, 4],
  );
  const jsonl = angleJsonl([
    { a: 'A "quoted" text', b: 'Ünïcode ✓', score: 1 },
    { a: 'x', b: 'y', score: 0 },
  ]);
  assert.equal(jsonl, '{"sentence1":"A \\"quoted\\" text","sentence2":"Ünïcode ✓","score":1}\n{"sentence1":"x","sentence2":"y","score":0}\n');
});

test('the local generator: greedy answers equal generate(), queued greedy requests decode together, a seed reproduces a sample, checks refuse what does not fit', async (t) => {
  if (!m) return t.skip('no decoder golden set (ANGLE_DECODER_GOLDEN_DIR or ../shared/golden/llama2c-stories260K)');
  const gen = new LocalChatGenerator(m, { modelName: 'toy', maxBatchSize: 4 });
  assert.equal(gen.promptStyle, 'plain');
  const prompts = ['Once upon a time', 'Lily and Tom went to the park.', 'The dog', 'A big red ball'];
  const answers = await Promise.all(prompts.map((p, i) => gen.complete({ id: `g${i}`, messages: [{ role: 'user', content: p }], temperature: 0, max_tokens: 10 })));
  const direct = await Promise.all(prompts.map(async (p) => (await generate(m!, [p], { maxNewTokens: 10 }))[0]));
  assert.deepEqual(
    answers.map((a) => a.text),
    direct.map((d) => d.text),
  );
  assert.deepEqual(
    answers.map((a) => a.usage.completionTokens),
    direct.map((d) => d.ids.length),
  );
  // Requests that arrive together are prefilled together and decoded together (continuous batching).
  assert.deepEqual({ ...gen.stats, decodeSteps: undefined }, { requests: 4, prefills: 1, largestBatch: 4, decodeSteps: undefined }, 'the four requests in one batch');
  assert.ok(gen.stats.decodeSteps >= 1 && gen.stats.decodeSteps <= 9, `10 tokens: the first from the prefill, at most 9 decode steps (got ${gen.stats.decodeSteps})`);

  const sampled = await gen.complete({ messages: [{ role: 'user', content: prompts[0] }], temperature: 1.1, top_p: 0.95, seed: 99, max_tokens: 10 });
  const [s] = await generate(m, [prompts[0]], { maxNewTokens: 10, temperature: 1.1, topP: 0.95, seed: 99 });
  assert.equal(sampled.text, s.text);

  // A request aborted while queued is dropped; one that cannot fit is refused before queueing.
  const stop = new AbortController();
  const running = gen.complete({ messages: [{ role: 'user', content: 'x' }], temperature: 0, max_tokens: 4 });
  const queued = gen.complete({ id: 'q-aborted', messages: [{ role: 'user', content: 'y' }], temperature: 0.5, max_tokens: 4 }, { signal: stop.signal });
  stop.abort();
  const outcome = queued.then(
    () => assert.fail('expected abort'),
    (e: unknown) => e as GenerationError,
  );
  await running;
  const aborted = await outcome;
  assert.equal(aborted.kind, 'aborted');
  assert.equal(aborted.id, 'q-aborted');
  const long = await gen.complete({ id: 'q-long', messages: [{ role: 'user', content: 'x' }], max_tokens: 600 }).catch((e: GenerationError) => e);
  assert.ok(long instanceof GenerationError && long.kind === 'input');
  assert.match(long.message, /^prompt q-long: the prompt \(3 tokens\) and max_tokens \(600\) exceed the model's context of 512 tokens/);
  const other = await gen.complete({ id: 'q-model', model: 'gpt-4', messages: [{ role: 'user', content: 'x' }] }).catch((e: GenerationError) => e);
  assert.match((other as Error).message, /^prompt q-model: the model 'gpt-4' does not exist here; this server has 'toy'$/);
});

test("the local generator renders a model's chat template (tokenizer_config.json) when it has one", async (t) => {
  if (!m) return t.skip('no decoder golden set');
  const dir = await tempDir('chat-template-');
  await writeFile(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ chat_template: "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}" }),
  );
  const gen = new LocalChatGenerator({ ...m, dir }, { modelName: 'toy-chat' });
  assert.equal(gen.promptStyle, 'chat-template');
  const r = await gen.complete({ messages: [{ role: 'user', content: 'Once upon a time' }], temperature: 0, max_tokens: 8 });
  // The rendered conversation, tokenised without the BOS the tokenizer adds (the template writes none).
  const ids = m.tokenizer.encode('user: Once upon a time\nassistant:').ids.slice(1);
  const [g] = await generate(m, [ids], { maxNewTokens: 8 });
  assert.equal(r.text, g.text);
  assert.equal(r.usage.promptTokens, ids.length);
});

test('Table 5 data from the local decoder on STS-B train sentence1: every answer line is a pair or a reject; a rerun is served by the cache; an ensemble concatenates its members', async (t) => {
  if (!m) return t.skip('no decoder golden set');
  if (!DATA_DIR || !existsSync(join(DATA_DIR, 'stsb', 'sts-train.csv'))) return t.skip('no STS-B train (ANGLE_DATA_DIR or ../shared/data)');
  const texts = loadStsbSentence1({ dataDir: DATA_DIR }).texts.slice(0, 3);
  assert.equal(texts[0], 'a plane is taking off .');
  const cacheDir = await tempDir('llm-supervision-');
  const toyA = new LocalChatGenerator(m, { modelName: 'toy-a' });
  const answers: ChatResult[] = [];
  const opts = { size: 2, max_tokens: 24, cacheDir, concurrency: 4 };
  const run = await generateSupervisedPairs(toyA, texts, { ...opts, onResult: (r) => answers.push(r) });
  assert.equal(run.prompts, 6);
  assert.deepEqual(run.failures, []);
  assert.equal(run.usage.paid.requests, 6);
  assert.equal(run.usage.paid.completionTokens, answers.reduce((s, a) => s + a.usage.completionTokens, 0));

  // The answers are the decoder's greedy continuations of Figure 4's prompts.
  const ids = texts.flatMap((_, i) => [`stsb-train-${i}:positive`, `stsb-train-${i}:negative`]);
  const byId = new Map(answers.map((a) => [a.id!, a]));
  const direct = await generate(
    m,
    texts.flatMap((x) => [figure4Prompt('positive', x, 2), figure4Prompt('negative', x, 2)]),
    { maxNewTokens: 24 },
  );
  assert.deepEqual(
    ids.map((id) => byId.get(id)!.text),
    direct.map((d) => d.text),
  );

  // Every non-blank line of every answer is accounted for, as a pair (label by polarity) or a reject.
  for (const id of ids) {
    const lines = byId.get(id)!.text.split(/\r\n|\r|\n/).filter((l) => l.trim() !== '');
    const pairs = run.pairs.filter((p) => p.promptId === id);
    const rejects = run.rejects.filter((r) => r.promptId === id);
    assert.ok(pairs.length + rejects.length >= Math.max(1, lines.length), `${id}: ${lines.length} lines, ${pairs.length} pairs, ${rejects.length} rejects`);
    assert.ok(pairs.length <= 2);
    const i = Number(/-(\d+):/.exec(id)![1]);
    for (const p of pairs) {
      assert.equal(p.a, texts[i]);
      assert.equal(p.score, id.endsWith(':positive') ? 1 : 0);
    }
  }

  const rerun = await generateSupervisedPairs(toyA, texts, opts);
  assert.equal(rerun.usage.paid.requests, 0);
  assert.equal(rerun.usage.cached.requests, 6);
  assert.deepEqual(rerun.pairs, run.pairs);
  assert.deepEqual(rerun.rejects, run.rejects);

  // An ensemble: toy-a comes from the cache, toy-b (the same decoder under another name) is generated.
  const toyB = new LocalChatGenerator(m, { modelName: 'toy-b' });
  const ens = await generateEnsemble([toyA, toyB], texts, opts);
  assert.deepEqual(
    ens.members.map((x) => [x.generator, x.usage.paid.requests, x.usage.cached.requests]),
    [
      ['local:toy-a', 0, 6],
      ['local:toy-b', 6, 0],
    ],
  );
  assert.deepEqual(ens.pairs, [...ens.members[0].pairs, ...ens.members[1].pairs]);
  assert.deepEqual(
    ens.members[1].pairs.map(({ generator: _, ...p }) => p),
    run.pairs.map(({ generator: _, ...p }) => p),
    'the same greedy decoder gives the same pairs under either name',
  );
  await assert.rejects(generateEnsemble([toyA, new LocalChatGenerator(m, { modelName: 'toy-a' })], texts, opts), /two generators of the ensemble have the model name 'toy-a'/);
});
