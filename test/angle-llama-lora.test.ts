/**
 * AnglE-LLaMA's training path on the toy llama2.c decoder (stories260K; its sentences are
 * nonsense, the code path is the real one): LoRA on every linear layer of the decoder, the training
 * texts in AnglE's prompt `Summarize sentence "{text}" in one word:"` cut so the template survives
 * (AnglE's AngleDataTokenizer), last-token pooling with left padding, AnglE's objective with
 * in-batch weight 35 (lib/experiments/recipes/angle.ts `angle-llama-nli`):
 *
 * - a text too long for max length 45 is cut, never the template: every prompt ends in the
 *   template's last tokens and fits in 45;
 * - the loss falls over steps on a repeated batch, the LoRA matrices change, and every base weight
 *   is bit for bit what was loaded;
 * - embeddings of prompted texts through the trainer's encoder (`last` pooling over prompts) equal
 *   PromptSentenceEncoder's (an independent implementation) within 1e-6;
 * - the tested weights exported in PEFT's layout (lib/experiments/trained-evaluation.ts
 *   exportTrainedAdapter: config keys, tensor names) and loaded onto a fresh base embed as the
 *   trained model does (1e-6).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { ANGLE_LLAMA_TEMPLATE, PromptSentenceEncoder } from '../lib/embed/prompt-encoder.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { recipe as namedRecipe } from '../lib/experiments/recipes/index.js';
import { promptedEncoder, promptedTaskData } from '../lib/experiments/prompted-task.js';
import { exportTrainedAdapter } from '../lib/experiments/trained-evaluation.js';
import { addLora, isLoraParameter } from '../lib/models/adapters/lora.js';
import { loadLoraAdapter } from '../lib/models/adapters/peft.js';
import type { AdaptableModel } from '../lib/models/adapters/types.js';
import { loadModel } from '../lib/models/auto.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { pairExamples } from '../lib/train/examples.js';
import { Trainer } from '../lib/train/trainer.js';
import { SHARED_DIR } from './helpers/env.js';

const LLAMA = SHARED_DIR ? join(SHARED_DIR, 'models', 'llama2c-stories260K') : undefined;
const LONG = 'Once upon a time there was a little girl named Lily who loved to play in the park with her big red ball and her friend Tom, and every day they ran and laughed until the sun went down behind the hills';
const PAIRS: Array<[string, string, number]> = [
  ['Lily played with the ball.', 'The girl played with a ball.', 1],
  ['Tom ran to the park.', 'A boy ran to the park.', 1],
  ['The cat sat on the mat.', 'The dog barked at the moon.', 0],
  ['She was very happy.', 'She was very sad.', 0],
  [LONG, 'Lily and Tom played in the park all day.', 1],
  ['The sun was warm.', 'It was a cold and dark night.', 0],
  ['Mom baked a cake.', 'A cake was baked by mom.', 1],
  ['The bird flew away.', 'The fish swam in the pond.', 0],
];

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

test('LoRA on the toy decoder with AnglE\'s prompt: loss falls, base weights untouched, PEFT adapter saved and reloaded', async (t) => {
  if (!LLAMA || !existsSync(LLAMA)) return t.skip('no toy llama2.c model: keep ../shared beside the repository (models/llama2c-stories260K)');
  await initBackend('wasm', { quiet: true });
  const work = mkdtempSync(join(tmpdir(), 'angle-llama-lora-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const recipe = namedRecipe('angle-llama-nli');
  const maxLength = recipe.config.maxLength;
  const m = await loadModel(LLAMA);
  try {
    const model = m.model as AdaptableModel;
    const base = new Map([...model.params].map(([n, v]) => [n, Buffer.from(((v.dataSync() as Float32Array).slice()).buffer)]));

    // Prompted data, cut as AngleDataTokenizer cuts: the template keeps its tokens.
    const templateTokens = m.tokenizer.encode(ANGLE_LLAMA_TEMPLATE.replace('{text}', '')).ids.length;
    const scored = PAIRS.map(([a, b, score], i) => ({ a, b, score, source: { file: 'hand-made', line: i + 1 } }));
    const dev = stsEvaluator({ name: 'toy dev', pairs: scored });
    const data = promptedTaskData(
      { train: pairExamples('toy pairs', scored), dev, test: dev },
      { train: { template: ANGLE_LLAMA_TEMPLATE }, evaluate: recipe.evaluation!.prompt!, sentenceMaxTokens: maxLength - templateTokens, tokenizer: m.tokenizer },
    );
    const tail = m.tokenizer.encode('in one word:"').ids.slice(2);
    assert.ok(tail.length >= 2);
    assert.equal(data.train.kind, 'pairs');
    for (const e of data.train.kind === 'pairs' ? data.train.items : []) {
      for (const text of [e.a, e.b]) {
        const ids = m.tokenizer.encode(text).ids;
        assert.ok(ids.length <= maxLength, `prompt of ${ids.length} tokens: ${text}`);
        assert.deepEqual(ids.slice(-tail.length), tail, `the template's end survives: ${text}`);
      }
    }
    const long = data.train.kind === 'pairs' ? data.train.items[4].a : '';
    assert.ok(long.startsWith('Summarize sentence "') && long.includes('Once upon a time') && !long.includes('behind the hills'), `the long text was cut: ${long}`);

    const modules = addLora(model, recipe.lora!, 42);
    assert.equal(modules.length, 35, 'all-linear: 7 projections × 5 layers');
    const runDir = join(work, 'run');
    const trainer = new Trainer({
      model: m,
      train: data.train,
      dev: data.dev,
      test: data.test,
      runDir,
      config: { ...recipe.config, batchSize: 8, gradAccumulation: 1, maxSteps: 6, lr: 5e-3, warmupSteps: 0, shuffle: false, evalEvery: 3, checkpointEvery: 6 },
      progress: false,
    });
    const r = await trainer.run();
    const losses = r.log.map((l) => l.loss);
    t.diagnostic(`losses ${losses.map((x) => x.toFixed(3)).join(' ')}`);
    assert.ok(losses[losses.length - 1] < losses[0], `the loss falls: ${losses.join(', ')}`);
    for (const [name, v] of model.params) {
      if (isLoraParameter(name)) continue;
      assert.ok(Buffer.from((v.dataSync() as Float32Array).buffer).equals(base.get(name)!), `base weight ${name} changed`);
    }
    const loraB = [...model.params].filter(([n]) => /lora_B/.test(n));
    assert.ok(loraB.some(([, v]) => (v.dataSync() as Float32Array).some((x) => x !== 0)), 'the adapters trained (B left zero)');
    // The best checkpoint holds the adapter alone.
    const best = readSafetensors(join(runDir, 'best', 'model.safetensors')).tensors;
    assert.ok([...best.keys()].every(isLoraParameter) && best.size === 70);

    // The trainer's evaluation encoder over prompts = PromptSentenceEncoder.
    const texts = ['Lily played with the ball.', 'The sun was warm.', LONG];
    const prompt = recipe.evaluation!.prompt!;
    const viaPool = await promptedEncoder(new PooledSentenceEncoder(m, { pooling: 'last', batchSize: 3 }), prompt).encode(texts);
    const direct = await new PromptSentenceEncoder(m, { template: prompt.template, prepareText: prompt.prepareText, batchSize: 3 }).encode(texts);
    assert.ok(maxAbs(viaPool.data, direct.data) < 1e-6, `last-token pooling vs PromptSentenceEncoder: ${maxAbs(viaPool.data, direct.data)}`);

    // PEFT export of the tested weights, and back onto a fresh base.
    const adapterDir = await exportTrainedAdapter(runDir, LLAMA, recipe, 42);
    const cfg = JSON.parse(readFileSync(join(adapterDir, 'adapter_config.json'), 'utf8'));
    assert.deepEqual([cfg.peft_type, cfg.r, cfg.lora_alpha, cfg.lora_dropout, cfg.bias], ['LORA', 32, 32, 0.1, 'none']);
    assert.deepEqual([...cfg.target_modules].sort(), ['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj']);
    const tensors = readSafetensors(join(adapterDir, 'adapter_model.safetensors')).tensors;
    assert.equal(tensors.size, 70);
    assert.ok(tensors.has('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight'), [...tensors.keys()].slice(0, 3).join(', '));
    assert.deepEqual(tensors.get('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')!.shape, [32, 64]);
    const fresh = await loadModel(LLAMA);
    try {
      loadLoraAdapter(adapterDir, fresh.model as AdaptableModel);
      const reloaded = await new PromptSentenceEncoder(fresh, { template: prompt.template, prepareText: prompt.prepareText }).encode(texts);
      assert.ok(maxAbs(reloaded.data, direct.data) < 1e-6, `reloaded adapter embeds as the trained model: ${maxAbs(reloaded.data, direct.data)}`);
    } finally {
      fresh.model.dispose();
    }
  } finally {
    m.model.dispose();
  }
});
