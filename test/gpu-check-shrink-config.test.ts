/**
 * The GPU check's dry-run shrink (scripts/gpu-check/train-config.ts `shrinkConfig`) asks the
 * architecture registry whether a config's vocabulary may shrink (the entry's
 * `rehearsalTokenizerFolds`), instead of switching on model_type: the decoders' rehearsal
 * tokenizers fold their ids into 512, BERT's keeps its own vocabulary, and an architecture
 * registered at run time is shrunk by what its entry says. No model is built (milliseconds).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { architectureOfConfig, registerArchitecture } from '../lib/models/architectures.js';
import { KNOWN_CONFIGS } from '../lib/models/model-from-config.js';
import { shrinkConfig } from '../scripts/gpu-check/train-config.js';
import { TOY_ARCHITECTURE, TOY_CONFIG } from './helpers/toy-architecture.js';

test('shrinkConfig: the vocabulary shrinks where the registry entry says its rehearsal tokenizer folds ids', () => {
  for (const [id, config] of Object.entries(KNOWN_CONFIGS) as Array<[string, Record<string, unknown>]>) {
    const shrunk = shrinkConfig(config);
    assert.equal(shrunk.hidden_size, 64, id);
    assert.equal(shrunk.num_hidden_layers, 2, id);
    const folds = architectureOfConfig(config).rehearsalTokenizerFolds === true;
    assert.equal(shrunk.vocab_size, folds ? 512 : config.vocab_size, id);
    assert.equal(shrinkConfig(config, { vocab: true }).vocab_size, 512, `${id} with vocab`);
  }
  assert.equal(shrinkConfig(KNOWN_CONFIGS['google-bert/bert-base-uncased']).vocab_size, 30522, 'BERT keeps its vocabulary');
  assert.equal(shrinkConfig(KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf']).vocab_size, 512, 'LLaMA folds');
  assert.equal(shrinkConfig(KNOWN_CONFIGS['facebook/opt-125m']).vocab_size, 512, 'OPT folds');

  // Two toy entries that differ only in the field: the shrink follows the entry, not a name.
  registerArchitecture(TOY_ARCHITECTURE);
  registerArchitecture({ ...TOY_ARCHITECTURE, name: 'toy-folded', modelTypes: ['toy-folded'], rehearsalTokenizerFolds: true });
  assert.equal(shrinkConfig(TOY_CONFIG).vocab_size, TOY_CONFIG.vocab_size);
  assert.equal(shrinkConfig({ ...TOY_CONFIG, model_type: 'toy-folded' }).vocab_size, 512);
});
