/**
 * The `cls_pooler` pooling (lib/embed/pooling.ts): BERT's pooler output tanh(W h[:, 0] + b), the
 * vector SimCSE's evaluation.py takes for `--pooler cls` (its supervised checkpoints), checked
 * against the golden forward's `pooler_output` (PyTorch + transformers) through the sentence
 * encoder on both inference engines, and its alias and error:
 *
 * - encoding the golden 16 sentences at max length 48 gives `pooler_output` within 1e-5;
 * - SimCSE's `cls_before_pooler` is our `cls` (the [CLS] state before the pooler);
 * - a model without pooler weights fails with a message naming what is missing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { parsePooling, pool } from '../lib/embed/pooling.js';
import { loadModel, type LoadedModel } from '../lib/models/auto.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { InputError } from '../lib/util/errors.js';
import { goldenOrSkip } from './helpers/env.js';

interface Golden {
  model: LoadedModel;
  sentences: string[];
  maxLength: number;
  poolerOutput: Float32Array;
  cls: Float32Array;
}

let cached: Golden | undefined;
async function golden(t: TestContext): Promise<Golden | undefined> {
  const dir = goldenOrSkip(t);
  if (!dir) return undefined;
  await initBackend('cpu', { quiet: true });
  if (!cached) {
    const fwd = JSON.parse(readFileSync(join(dir, 'forward.json'), 'utf8')) as { sentences: string[]; max_length: number };
    const tensors = readSafetensors(join(dir, 'forward.safetensors')).tensors;
    cached = {
      model: await loadModel(join(dir, 'model')),
      sentences: fwd.sentences,
      maxLength: fwd.max_length,
      poolerOutput: tensors.get('pooler_output')!.data as Float32Array,
      cls: tensors.get('pool_cls')!.data as Float32Array,
    };
  }
  return cached;
}

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

for (const engine of ['tfjs', 'onnx'] as const) {
  test(`cls_pooler equals the golden pooler_output within 1e-5 (${engine} engine)`, async (t) => {
    const g = await golden(t);
    if (!g) return;
    let enc: PooledSentenceEncoder;
    try {
      enc = new PooledSentenceEncoder(g.model, { pooling: 'cls_pooler', maxLength: g.maxLength, batchSize: 5, engine });
      const e = await enc.encode(g.sentences);
      assert.equal(e.rows, g.sentences.length);
      const d = maxAbs(e.data, g.poolerOutput);
      t.diagnostic(`max |ours − pooler_output| = ${d.toExponential(2)}`);
      assert.ok(d < 1e-5, `max difference ${d}`);
      // Not the [CLS] state itself: the pooler's dense layer and tanh are applied.
      assert.ok(maxAbs(e.data, g.cls) > 1e-2);
      for (const v of e.data) assert.ok(Math.abs(v) <= 1, 'tanh output lies in [-1, 1]');
    } catch (err) {
      if (engine === 'onnx' && /unavailable/.test((err as Error).message)) return t.skip(`ONNX Runtime is not available here: ${(err as Error).message}`);
      throw err;
    }
  });
}

test("SimCSE's cls_before_pooler is our cls and gives the golden pool_cls", async (t) => {
  const g = await golden(t);
  if (!g) return;
  assert.equal(parsePooling('cls_before_pooler'), 'cls');
  const e = await new PooledSentenceEncoder(g.model, { pooling: 'cls_before_pooler', maxLength: g.maxLength, engine: 'tfjs' }).encode(g.sentences);
  assert.ok(maxAbs(e.data, g.cls) < 1e-5);
});

test('cls_pooler without a pooler output is an input error naming it', async (t) => {
  const g = await golden(t);
  if (!g) return;
  const batch = g.model.tokenizer.encodeBatch(['a man is playing a guitar .']);
  tf.tidy(() => {
    const o = g.model.model.forward(batch);
    const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
    assert.throws(() => pool('cls_pooler', { lastHiddenState: o.lastHiddenState, attentionMask: mask }), (e: Error) => e instanceof InputError && /needs the model's pooler output/.test(e.message));
  });
});
