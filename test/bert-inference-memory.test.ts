/**
 * BERT's inference forward holds one layer at a time (lib/models/bert/model.ts inferenceForward,
 * lib/models/bert/inference-weights.ts) and the tfjs engine splits a batch that would not fit
 * (lib/embed/engines/tfjs-engine.ts), on the cpu backend:
 * - live tensors after layer k are no more than after layer 1 (a 6-layer BERT of the golden's
 *   width), and the peak stays near one layer's activations while the one-tidy training pass
 *   grows with depth;
 * - the inference forward equals the training-path forward (dropout 0) bit for bit, so parity does
 *   not move; its transposed weight copies are made once and follow an assign;
 * - the activation estimate the split uses is an upper bound of the measured peak;
 * - a batch forced into chunks by a small padded-token bound embeds exactly as in one pass.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { TfjsEngine } from '../lib/embed/engines/tfjs-engine.js';
import { POOLING_STRATEGIES } from '../lib/embed/pooling.js';
import { loadModel } from '../lib/models/auto.js';
import { parseBertConfig } from '../lib/models/bert/config.js';
import { BertModel } from '../lib/models/bert/model.js';
import { bertParameterShapes, type RawTensor } from '../lib/models/bert/weights.js';
import type { TokenBatch } from '../lib/models/types.js';
import { goldenOrSkip } from './helpers/env.js';

before(async () => {
  await initBackend('cpu', { quiet: true });
});

/** A random BERT with the golden tiny model's width, `layers` deep and a small vocabulary. */
function randomBert(layers: number, seed = 7): BertModel {
  const cfg = parseBertConfig({ model_type: 'bert', vocab_size: 300, hidden_size: 64, num_hidden_layers: layers, num_attention_heads: 4, intermediate_size: 256, max_position_embeddings: 64 });
  let s = seed >>> 0;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
  const weights = new Map<string, RawTensor>();
  for (const [name, shape] of bertParameterShapes(cfg, true)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const one = name.endsWith('LayerNorm.weight') ? 1 : 0;
    for (let i = 0; i < data.length; i++) data[i] = one + 0.1 * rand();
    weights.set(name, { shape, data });
  }
  return new BertModel(cfg, weights);
}

/** A right-padded batch of `rows` rows up to `seqLen` tokens with ids in [1, 300). */
function randomBatch(rows: number, seqLen: number): TokenBatch {
  const n = rows * seqLen;
  const inputIds = new Int32Array(n);
  const attentionMask = new Int32Array(n);
  const tokenTypeIds = new Int32Array(n);
  for (let r = 0; r < rows; r++) {
    const len = seqLen - (r % Math.max(1, seqLen - 2));
    for (let t = 0; t < seqLen; t++) {
      const i = r * seqLen + t;
      if (t < len) {
        inputIds[i] = 1 + ((r * 31 + t * 17) % 299);
        attentionMask[i] = 1;
        tokenTypeIds[i] = t >= len / 2 ? 1 : 0;
      }
    }
  }
  return { inputIds, attentionMask, tokenTypeIds, batch: rows, seqLen };
}

function outputs(o: { lastHiddenState: tf.Tensor; hiddenStates: tf.Tensor[]; poolerOutput?: tf.Tensor }): Float32Array[] {
  return [o.lastHiddenState, ...o.hiddenStates, ...(o.poolerOutput ? [o.poolerOutput] : [])].map((t) => t.dataSync() as Float32Array);
}

function disposeOutput(o: { lastHiddenState: tf.Tensor; hiddenStates: tf.Tensor[]; poolerOutput?: tf.Tensor }): void {
  tf.dispose([o.lastHiddenState, ...o.hiddenStates, ...(o.poolerOutput ? [o.poolerOutput] : [])]);
}

test('inference forward: live tensors after layer k are no more than after layer 1, and the peak does not grow with depth', async () => {
  const model = randomBert(6);
  const batch = randomBatch(8, 24);
  try {
    disposeOutput(model.forward(batch)); // the transposed weight copies are made on first use
    const after: Array<{ tensors: number; bytes: number }> = [];
    model.onLayerDone = () => after.push({ tensors: tf.memory().numTensors, bytes: tf.memory().numBytes });
    const beforeInference = tf.memory().numBytes;
    // tf.profile returns the engine's one profile object, which the next profile overwrites: keep numbers.
    const inference = await tf.profile(() => {
      const o = model.forward(batch);
      if (o.poolerOutput) o.poolerOutput.dispose();
      return o.lastHiddenState;
    });
    const grownInference = inference.peakBytes - beforeInference;
    tf.dispose(inference.result as tf.Tensor);
    model.onLayerDone = undefined;
    assert.equal(after.length, 6);
    for (let k = 1; k < after.length; k++) {
      assert.ok(after[k].tensors <= after[0].tensors, `layer ${k + 1}: ${after[k].tensors} live tensors, layer 1: ${after[0].tensors}`);
      assert.ok(after[k].bytes <= after[0].bytes, `layer ${k + 1}: ${after[k].bytes} live bytes, layer 1: ${after[0].bytes}`);
    }
    // A pass recorded for gradients (tfjs's tape, dropout 0) keeps every layer's saved activations to its end.
    model.setDropout(0);
    const beforeTraining = tf.memory().numBytes;
    const training = await tf.profile(() => {
      const { value, grads } = tf.variableGrads(() => tf.sum(model.forward(batch, { training: true }).lastHiddenState) as tf.Scalar, [...model.params.values()]);
      tf.dispose(Object.values(grads));
      return value;
    });
    const layerBytes = model.inferenceActivationBytes(batch.batch, batch.seqLen);
    const grownTraining = training.peakBytes - beforeTraining;
    assert.ok(grownInference <= layerBytes, `inference peak ${grownInference} B above live memory exceeds the one-layer estimate ${layerBytes} B`);
    assert.ok(grownTraining > 3 * layerBytes, `the pass recorded for gradients grew only ${grownTraining} B over 6 layers (one layer: ${layerBytes} B): the test would not see a leak`);
    tf.dispose(training.result as tf.Tensor);
  } finally {
    model.dispose();
  }
});

test('inference forward equals the training-path forward bit for bit; weight copies are made once and follow an assign', () => {
  const model = randomBert(3, 11);
  model.setDropout(0);
  const batch = randomBatch(5, 17);
  try {
    const reference = () => {
      const o = model.forward(batch, { training: true, outputHiddenStates: true });
      const r = outputs(o);
      disposeOutput(o);
      return r;
    };
    const inference = () => {
      const o = model.forward(batch, { outputHiddenStates: true });
      const r = outputs(o);
      disposeOutput(o);
      return r;
    };
    const want = reference();
    const first = inference();
    assert.equal(first.length, want.length);
    first.forEach((a, i) => assert.deepEqual(a, want[i], `output ${i} differs from the training path`));
    const tensorsAfterFirst = tf.memory().numTensors;
    inference();
    assert.equal(tf.memory().numTensors, tensorsAfterFirst, 'a second inference forward made new weight copies (or leaked)');

    const w = model.params.get('encoder.layer.1.intermediate.dense.weight')!;
    tf.tidy(() => w.assign(tf.mul(w, -0.5)));
    const changed = inference();
    const wantChanged = reference();
    changed.forEach((a, i) => assert.deepEqual(a, wantChanged[i], `after assign, output ${i} differs from the training path`));
    assert.notDeepEqual(changed[0], first[0], 'the assign changed nothing');
  } finally {
    model.dispose();
  }
});

test('the activation estimate the split uses bounds the measured peak (with and without hidden states)', async () => {
  const model = randomBert(2, 3);
  try {
    for (const [rows, T, hidden] of [
      [4, 32, false],
      [16, 8, false],
      [6, 20, true],
    ] as const) {
      const batch = randomBatch(rows, T);
      disposeOutput(model.forward(batch, { outputHiddenStates: hidden }));
      const before = tf.memory().numBytes;
      const p = await tf.profile(() => {
        const o = model.forward(batch, { outputHiddenStates: hidden });
        return [o.lastHiddenState, ...o.hiddenStates, ...(o.poolerOutput ? [o.poolerOutput] : [])];
      });
      const estimate = model.inferenceActivationBytes(rows, T, hidden);
      const measured = p.peakBytes - before;
      assert.ok(measured <= estimate, `${rows}x${T}${hidden ? ' with hidden states' : ''}: peak ${measured} B over the weights, estimate ${estimate} B`);
      assert.ok(estimate <= 2 * measured, `${rows}x${T}: estimate ${estimate} B is far above the measured ${measured} B`);
      tf.dispose(p.result as tf.Tensor[]);
    }
  } finally {
    model.dispose();
  }
});

test('a batch split by a small padded-token bound embeds exactly as one batch, every pooling', async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  const m = await loadModel(join(g, 'model'));
  const bert = m.model as BertModel;
  const texts = [
    'a man is playing a guitar .',
    'short',
    '',
    'a much longer sentence with many more words than the others in this list , to pad the batch .',
    'two dogs run across the snow',
    'short',
    'the cat sat on the mat and looked at the window for a long time',
  ];
  try {
    let forwards = 0;
    bert.onLayerDone = (l: number) => {
      if (l === 0) forwards++;
    };
    for (const pooling of POOLING_STRATEGIES) {
      const whole = new PooledSentenceEncoder(m, { pooling, batchSize: 64, engine: new TfjsEngine(m.model) });
      const split = new PooledSentenceEncoder(m, { pooling, batchSize: 64, engine: new TfjsEngine(m.model, { maxPaddedTokens: 1 }) });
      forwards = 0;
      const a = await whole.encode(texts);
      assert.equal(forwards, 1, 'one batch, one forward pass');
      forwards = 0;
      const b = await split.encode(texts);
      assert.equal(forwards, texts.length, `${pooling}: a bound below one row splits into one forward per row`);
      assert.deepEqual(b.data, a.data, `${pooling}: split and whole batch differ`);
    }
    // The bound from the memory budget: rows of 48 tokens of this model fit many to a pass.
    const engine = new TfjsEngine(m.model);
    const bound = engine.maxPaddedTokens(48);
    assert.ok(bound >= 48 * 64, `default bound ${bound} padded tokens would split the tiny model's batches`);
    assert.throws(() => new TfjsEngine(m.model, { maxPaddedTokens: 0 }), /maxPaddedTokens must be a positive integer/);
  } finally {
    bert.onLayerDone = undefined;
    m.model.dispose();
  }
});
