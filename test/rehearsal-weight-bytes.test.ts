/**
 * The rehearsal's real-step peak (lib/experiments/rehearsal/train.ts) adds the bytes the model's
 * weights hold to what the step allocated; `weightBytes` counts a frozen base kept in NF4 or 16
 * bits at its real storage, not at 4 bytes a weight: it equals the bytes the cpu backend holds for
 * a LoRA model built over such a base, and the bytes the shape-only backend allocates for it.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { measurePeakBytes, shapeOnlyBackend } from '../lib/backend/shape-only/index.js';
import { weightBytes } from '../lib/experiments/rehearsal/train.js';
import { addLora } from '../lib/models/adapters/lora.js';
import type { AdaptableModel } from '../lib/models/adapters/types.js';
import type { FrozenBaseSpec } from '../lib/models/frozen-base.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

const TINY_LLAMA = { ...KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'], hidden_size: 64, num_attention_heads: 4, num_key_value_heads: 4, intermediate_size: 128, num_hidden_layers: 2, vocab_size: 128, max_position_embeddings: 32 };
const TINY_BERT = { ...KNOWN_CONFIGS['google-bert/bert-base-uncased'], hidden_size: 32, num_attention_heads: 2, intermediate_size: 64, num_hidden_layers: 1, vocab_size: 64, max_position_embeddings: 32 };

/** A LoRA LLaMA over a base stored as `frozenBase` (none: float32), as a QLoRA recipe's run builds it. */
function loraLlama(frozenBase?: FrozenBaseSpec): AdaptableModel {
  const model = modelFromConfig(TINY_LLAMA, { init: 'normal', seed: 1, frozenBase }) as AdaptableModel;
  addLora(model, { r: 4, alpha: 8, dropout: 0, targetModules: 'all-linear' }, 0);
  return model;
}

test('weightBytes is what the cpu backend holds for the model: float32, fp16 and NF4 (double quantisation) bases', () => {
  const sizes: Record<string, number> = {};
  for (const [name, spec] of [['fp32', undefined], ['fp16', { format: 'fp16' }], ['nf4-dq', { format: 'nf4', doubleQuant: true }]] as const) {
    const held = tf.memory().numBytes;
    const model = loraLlama(spec);
    try {
      assert.equal(weightBytes(model), tf.memory().numBytes - held, `${name}: the bytes the cpu backend holds`);
      sizes[name] = weightBytes(model);
      if (spec) assert.ok(sizes[name] < model.numParameters() * 4, `${name}: below 4 bytes a weight`);
      else assert.equal(sizes[name], model.numParameters() * 4);
    } finally {
      model.dispose();
    }
  }
  // The linear layers are most of the model: NF4 about a quarter of fp16's, fp16 about half of float32's.
  assert.ok(sizes['nf4-dq'] < sizes.fp16 && sizes.fp16 < sizes.fp32, JSON.stringify(sizes));
  const bert = modelFromConfig(TINY_BERT, { init: 'zeros' });
  try {
    assert.equal(weightBytes(bert), bert.numParameters() * 4, 'a model without a frozen base: 4 bytes a parameter');
  } finally {
    bert.dispose();
  }
});

test('weightBytes of an NF4 base is what the shape-only backend allocates for it', async () => {
  const backend = shapeOnlyBackend('cpu');
  const seen = await measurePeakBytes(
    () => {
      const model = loraLlama({ format: 'nf4', doubleQuant: true });
      try {
        return { counted: weightBytes(model), live: backend.memoryCounters().liveBytes };
      } finally {
        model.dispose();
      }
    },
    { mirrors: 'cpu' },
  );
  assert.equal(seen.result.counted, seen.result.live - seen.startBytes);
});
