/**
 * The decoder base (lib/models/decoder/decoder-model.ts) scopes every layer, for every decoder:
 * a forward pass's peak grows per layer by one hidden state (the layer's output), not by the
 * layer's activations, and a checkpointed training step's by the layer's gradients and at most two
 * hidden states (before the base, OPT held every layer's activations until a rehearsal of OPT-13B
 * caught 135 GB; without the scoping LLaMA here grows by 5.2 MB a layer instead of 0.5 MB).
 * Measured on the shape-only backend, so it takes no time whatever the size: LLaMA and OPT at 2
 * and 8 layers, the same width and batch.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { leanVariableGrads } from '../lib/backend/lean-tape.js';
import { measurePeakBytes, shapeOnlyBackend } from '../lib/backend/shape-only/index.js';
import { DecoderModel } from '../lib/models/decoder/decoder-model.js';
import { KNOWN_CONFIGS, modelFromConfig, parameterCountOfConfig } from '../lib/models/model-from-config.js';
import type { TokenBatch } from '../lib/models/types.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

const WIDTH = { hidden_size: 256, num_attention_heads: 4, vocab_size: 512, max_position_embeddings: 128 };
const CONFIGS = {
  llama: { ...KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'], ...WIDTH, num_key_value_heads: 4, intermediate_size: 512 },
  opt: { ...KNOWN_CONFIGS['facebook/opt-125m'], ...WIDTH, ffn_dim: 512, word_embed_proj_dim: 256 },
};

function batch(B: number, T: number): TokenBatch {
  return { inputIds: new Int32Array(B * T).fill(5), tokenTypeIds: new Int32Array(B * T), attentionMask: new Int32Array(B * T).fill(1), batch: B, seqLen: T };
}

/** Peak bytes above the model's weights while `run` works on a fresh `layers`-layer model, shape-only. */
async function activationPeak(config: Record<string, unknown>, layers: number, run: (model: DecoderModel<never>) => void): Promise<number> {
  const backend = shapeOnlyBackend('cpu');
  const seen = await measurePeakBytes(
    () => {
      const model = modelFromConfig({ ...config, num_hidden_layers: layers }, { init: 'zeros' });
      assert.ok(model instanceof DecoderModel, 'every decoder extends the decoder base');
      try {
        const weights = backend.memoryCounters().liveBytes;
        backend.resetPeak();
        run(model as DecoderModel<never>);
        return backend.memoryCounters().peakBytes - weights;
      } finally {
        model.dispose();
      }
    },
    { mirrors: 'cpu' },
  );
  return seen.result;
}

const inference = (m: DecoderModel<never>) => tf.dispose(Object.values(m.forward(batch(8, 64))));
const checkpointedStep = (m: DecoderModel<never>) => {
  const vars = [...m.trainableParameters().values()];
  const { value, grads } = leanVariableGrads(() => tf.sum(m.forward(batch(8, 64), { training: true, checkpointing: true }).lastHiddenState) as tf.Scalar, vars);
  tf.dispose([value, ...Object.values(grads)]);
};

/** Bytes of one hidden state of the batch: what each scoped layer may leave behind (its output, or a checkpointed layer's input). */
const HIDDEN_BYTES = 8 * 64 * WIDTH.hidden_size * 4;

test('per layer, the activation peak grows by one hidden state, not by the layer activations: inference, LLaMA and OPT', async () => {
  for (const [name, config] of Object.entries(CONFIGS)) {
    const [i2, i8] = [await activationPeak(config, 2, inference), await activationPeak(config, 8, inference)];
    const perLayer = (i8 - i2) / 6;
    assert.ok(perLayer <= HIDDEN_BYTES, `${name} inference: ${perLayer} bytes more a layer, above one hidden state (${HIDDEN_BYTES}); a 2-layer forward peaks at ${i2}`);
  }
});

test('a checkpointed training step grows per layer by its gradients and at most two hidden states, LLaMA and OPT', async () => {
  for (const [name, config] of Object.entries(CONFIGS)) {
    const layerParameters = parameterCountOfConfig({ ...config, num_hidden_layers: 3 }) - parameterCountOfConfig({ ...config, num_hidden_layers: 2 });
    const [s2, s8] = [await activationPeak(config, 2, checkpointedStep), await activationPeak(config, 8, checkpointedStep)];
    const perLayer = (s8 - s2) / 6;
    assert.ok(perLayer <= layerParameters * 4 + 2 * HIDDEN_BYTES, `${name} checkpointed step: ${perLayer} bytes more a layer, above its gradients (${layerParameters * 4}) and two hidden states`);
  }
});
