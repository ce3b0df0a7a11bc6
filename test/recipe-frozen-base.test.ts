/**
 * A LoRA recipe's frozen base reached through the adaptable base's typed accessor
 * (lib/models/adaptable-transformer-model.ts `adaptableBaseOf`), not a cast: prepareRecipeModel
 * (lib/experiments/run-recipe.ts) stores AnglE-LLaMA's NF4 base on a tiny LLaMA and on a tiny OPT
 * (the decoders share one base), and refuses a base storage on a recipe without LoRA by name.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { angleLlamaNli } from '../lib/experiments/recipes/angle.js';
import { prepareRecipeModel } from '../lib/experiments/run-recipe.js';
import { adaptableBaseOf } from '../lib/models/adaptable-transformer-model.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import type { LoadedModel, TextModel } from '../lib/models/types.js';
import { InputError } from '../lib/util/errors.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

const TINY = { hidden_size: 16, num_attention_heads: 2, num_hidden_layers: 1, vocab_size: 64, max_position_embeddings: 32 };
const TINY_LLAMA = { ...KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'], ...TINY, num_key_value_heads: 2, intermediate_size: 32 };
const TINY_OPT = { ...KNOWN_CONFIGS['facebook/opt-125m'], ...TINY, ffn_dim: 32, word_embed_proj_dim: 16 };
const TINY_BERT = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], ...TINY, intermediate_size: 32, max_position_embeddings: 32 };

function loaded(model: TextModel, id: string): LoadedModel {
  return { id, dir: id, source: 'local', model, tokenizer: undefined as never, weightsSha256: '', weightFiles: [] } as LoadedModel;
}

test('prepareRecipeModel stores the recipe NF4 base through the typed accessor, on LLaMA and OPT alike', () => {
  const recipe = angleLlamaNli();
  assert.deepEqual(recipe.baseStorage, { format: 'nf4', doubleQuant: true });
  for (const [id, config] of [['tiny-llama', TINY_LLAMA], ['tiny-opt', TINY_OPT]] as const) {
    const model = modelFromConfig(config, { init: 'normal', seed: 1 });
    try {
      const base = adaptableBaseOf(model);
      assert.ok(base, `${id}: a decoder is an adaptable base`);
      assert.equal(base.storedBaseBytes(), 0);
      const prepared = prepareRecipeModel(recipe, loaded(model, id), 0);
      assert.match(prepared?.label ?? '', /nf4 \(double quantisation\) base/);
      assert.ok(base.storedBaseBytes() > 0, `${id}: the base is stored in NF4`);
      assert.equal(base.frozenBaseWeights().size, base.linearModules().size, `${id}: every linear module of the layers stored`);
    } finally {
      model.dispose();
    }
  }
});

test('BERT is no adaptable base; a base storage without LoRA is refused by name', () => {
  const bert = modelFromConfig(TINY_BERT, { init: 'zeros' });
  try {
    assert.equal(adaptableBaseOf(bert), undefined);
    const recipe = { ...angleLlamaNli(), lora: undefined };
    assert.throws(() => prepareRecipeModel(recipe, loaded(bert, 'tiny-bert'), 0), (e: unknown) => e instanceof InputError && /a base storage \(nf4\) applies to the frozen base of a LoRA run/.test(e.message));
  } finally {
    bert.dispose();
  }
});
