/**
 * Prompt-based training pieces (lib/experiments/prompted-task.ts, run-lora-recipe.ts) on the toy
 * llama2.c decoder: a prompted evaluator under the trainer's own encoder (`last` pooling, the
 * tokenizer's padding) embeds exactly as the independent PromptSentenceEncoder (which pads left
 * itself and gathers the last real token by the mask); sentences are cut to a token count before
 * they fill the template, as the reference's cutoff_len; a LoRA run trains the adapters only (its
 * record counts them, its best model holds nothing else), is keyed by its LoRA settings and is
 * reused on a second call.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { PromptSentenceEncoder, promptFor, PROMPTEOL_TEMPLATE } from '../lib/embed/prompt-encoder.js';
import type { Evaluator } from '../lib/eval/evaluator.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { promptedEvaluator, promptedExamples, promptedTaskData, truncateSentence } from '../lib/experiments/prompted-task.js';
import { runKey, runRecipe } from '../lib/experiments/run-recipe.js';
import type { Recipe } from '../lib/experiments/recipes/index.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import type { LoadedModel } from '../lib/models/types.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { bestModelDir } from '../lib/train/best-model.js';
import { SHARED_DIR } from './helpers/env.js';

const MODEL = SHARED_DIR && join(SHARED_DIR, 'models', 'llama2c-stories260K');
let m: LoadedModel<LlamaModel> | undefined;
const tmp = mkdtempSync(join(tmpdir(), 'angle-prompted-'));

before(async () => {
  await initBackend('cpu', { quiet: true });
  if (MODEL) m = await loadLlamaModel(MODEL);
});
after(() => {
  m?.model.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

const PAIRS = [
  { a: 'a man is playing a guitar .', b: 'a man plays the guitar .', score: 4.6 },
  { a: 'a woman is slicing an onion', b: 'the stock market fell sharply today', score: 0.2 },
  { a: 'Is it raining?', b: 'He said "hi" to the dog.', score: 1.0 },
  { a: 'a cat sleeps .', b: 'a cat is sleeping on the sofa .', score: 3.8 },
].map((p, i) => ({ ...p, source: { file: 'test', line: i + 1 } }));

/** Sixteen pairs with distinct scores (a bootstrap interval needs more than a handful). */
const WORDS = ['dog', 'cat', 'bird', 'fish', 'horse', 'lion', 'tiger', 'bear'];
const EVAL_PAIRS = Array.from({ length: 16 }, (_, i) => ({
  a: `the ${WORDS[i % 8]} runs in the park .`,
  b: i % 2 ? `a ${WORDS[(i * 3) % 8]} sleeps at home .` : `the ${WORDS[i % 8]} is running in a park .`,
  score: (i * 0.31) % 5,
  source: { file: 'test', line: i + 1 },
}));

test('a prompted evaluator under the trainer\'s `last`-pooling encoder embeds as PromptSentenceEncoder', async (t) => {
  if (!m) return t.skip('no toy llama2.c model (shared/models/llama2c-stories260K)');
  const spec = { template: PROMPTEOL_TEMPLATE, prepareText: 'prompteol' as const };
  // A capturing evaluator: returns the embeddings it was given, so both paths can be compared row by row.
  const texts = PAIRS.flatMap((p) => [p.a, p.b]);
  let seen: Float32Array | undefined;
  const capture: Evaluator = { name: 'capture', primaryMetric: 'x', higherIsBetter: true, rows: texts.length, evaluate: async (enc) => ((seen = (await enc.encode(texts)).data), { metrics: { x: 0 } }) };
  const trainerEncoder = new PooledSentenceEncoder(m, { pooling: 'last', batchSize: 3, engine: 'tfjs' });
  await promptedEvaluator(capture, spec).evaluate(trainerEncoder);
  const reference = await new PromptSentenceEncoder(m, { ...spec, batchSize: 8 }).encode(texts);
  let diff = 0;
  for (let i = 0; i < reference.data.length; i++) diff = Math.max(diff, Math.abs(reference.data[i] - seen![i]));
  t.diagnostic(`max |diff| ${diff.toExponential(2)} over ${texts.length} texts`);
  assert.ok(diff < 1e-5, String(diff));
  // The prompted evaluator's name says how it prompts; its metrics are the inner evaluator's.
  const sts = promptedEvaluator(stsEvaluator({ name: 'tiny', pairs: PAIRS }), spec);
  assert.match(sts.name, /^tiny, prompted "This sentence : \\"\{text\}\\" means in one word:\\"\"$/);
  assert.equal(sts.rows, 4);
});

test('sentences are cut to a token count before they fill the template (cutoff_len)', (t) => {
  if (!m) return t.skip('no toy llama2.c model');
  const tok = m.tokenizer;
  const long = 'the quick brown fox jumps over the lazy dog and keeps on running through the field';
  const prefix = tok.encode('').ids.length;
  const cut = truncateSentence(long, tok, 5);
  // ft_llm.py: tokenizer(text, add_special_tokens=False, truncation=True, max_length=5), then decode.
  assert.equal(cut, tok.decode!(tok.encode(long).ids.slice(prefix, prefix + 5)));
  assert.ok(long.startsWith(cut.trim()) && cut.trim().length < long.length, cut);
  assert.equal(truncateSentence('a cat .', tok, 50), 'a cat .');
  assert.throws(() => truncateSentence('x', tok, 0), /positive integer/);
  const ex = promptedExamples({ kind: 'triplets', name: 'nli', items: [{ anchor: long, positive: 'a cat .', negative: 'Is it?' }] }, { template: PROMPTEOL_TEMPLATE }, { sentenceMaxTokens: 5, tokenizer: tok });
  assert.equal(ex.kind, 'triplets');
  if (ex.kind !== 'triplets') return;
  assert.equal(ex.items[0].anchor, promptFor(cut));
  // Training prompts are not cleaned (ft_llm.py), evaluation prompts are (evaluation.py).
  assert.equal(ex.items[0].negative, 'This sentence : "Is it?" means in one word:"');
  assert.match(ex.name, /^nli, prompted .*, sentences cut to 5 tokens$/);
  assert.throws(() => promptedExamples(ex, {}, { sentenceMaxTokens: 3 }), /needs the tokenizer/);
});

const LORA = { r: 4, alpha: 8, dropout: 0.1, targetModules: 'all-linear' as const };

function loraRecipe(lora = LORA): Recipe {
  return {
    name: 'prompt-lora-test',
    title: 'test',
    task: 'stsb',
    config: { objective: { name: 'simcse', temperature: 0.05 }, pooling: 'last', maxLength: 48, batchSize: 4, maxSteps: 3, lr: 5e-3, schedule: 'linear', warmupSteps: 0, weightDecay: 0, seed: 1, evalEvery: 3, checkpointEvery: 3 },
    lora,
    sources: {},
  };
}

test('a LoRA run trains the adapters only, is keyed by its LoRA settings, and is reused the second time', async (t) => {
  if (!m || !MODEL) return t.skip('no toy llama2.c model');
  const positives = PAIRS.map((p) => ({ ...p, score: 1 }));
  const base = { train: { kind: 'pairs' as const, name: 'toy positives', items: [...positives, ...positives].map((p) => ({ a: p.a, b: p.b, label: 1 })) }, dev: stsEvaluator({ name: 'toy dev', pairs: EVAL_PAIRS }), test: stsEvaluator({ name: 'toy test', pairs: EVAL_PAIRS }) };
  const data = promptedTaskData(base, { train: { template: PROMPTEOL_TEMPLATE }, evaluate: { template: PROMPTEOL_TEMPLATE, prepareText: 'prompteol' } });
  const opts = { recipe: loraRecipe(), seed: 1, model: MODEL, data, experiment: 'lora-test', resultsDir: tmp };
  const first = await runRecipe(opts);
  assert.equal(first.status, 'trained');
  const rec = first.run.record;
  assert.equal(rec.config.trainableParameters, 5 * 7 * 2, 'lora_A and lora_B of 7 linear modules in 5 layers');
  assert.ok((rec.details as { lora: { modules: number } }).lora.modules === 35);
  assert.ok(Number.isFinite(rec.metrics.test_spearman));
  // The best model holds the adapter matrices only.
  const best = readSafetensors(join(bestModelDir(join(tmp, 'lora-test', 'runs', first.key)), 'model.safetensors'));
  const names = [...best.tensors.keys()];
  assert.ok(names.length === 70 && names.every((n) => /\.lora_[AB]\.weight$/.test(n)), names.slice(0, 3).join(', '));
  // The key depends on the LoRA settings; the same call again is reused, not retrained.
  const key = (recipe: Recipe, seed: number) => runKey({ recipe, seed, train: data.train, weightsSha256: 'w', dev: 'd', test: 't' });
  assert.notEqual(key(loraRecipe(), 1), key(loraRecipe({ ...LORA, r: 8 }), 1));
  assert.notEqual(key(loraRecipe(), 1), key(loraRecipe(), 2));
  assert.notEqual(key(loraRecipe(), 1), key({ ...loraRecipe(), lora: undefined }, 1));
  const again = await runRecipe(opts);
  assert.equal(again.status, 'reused');
  assert.equal(again.run.record.runId, rec.runId);
  // A BERT model has no adaptable layers: refused by name.
  await assert.rejects(() => runRecipe({ ...opts, model: join(SHARED_DIR!, 'golden', 'bert-tiny-seed1234', 'model') }), /LoRA needs a model with adaptable linear layers.*bert/);
});
