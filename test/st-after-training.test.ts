/**
 * A model trained here, out as a sentence-transformers folder and back (what test/
 * sentence-transformers.test.ts checks on the untouched golden weights, here after a Trainer run,
 * the way AnglE Table 2's trained rows leave the notebook):
 *
 * - the golden tiny BERT trained a few AnglE steps on SICK's entailment pairs (the smoke stand-in
 *   for NLI); its best dev checkpoint (`<run>/best/`, a loadable model folder) is the model;
 * - saved with every exportable pooling, the folder holds the trained weights bit for bit (not the
 *   golden ones) and `loadModel(folder)` embeds as our encoder does on the trained model (1e-6);
 * - `cls_pooler` (BERT's pooler output) is refused with a message naming the modules it would need.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { loadSickEntailment } from '../lib/data/sick-entailment.js';
import { loadStsBenchmark } from '../lib/data/sts.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { saveSentenceTransformer } from '../lib/embed/sentence-transformer-export.js';
import { stsEvaluator } from '../lib/eval/pair-evaluators.js';
import { loadModel } from '../lib/models/auto.js';
import { readSafetensors } from '../lib/models/safetensors.js';
import { bestModelDir } from '../lib/train/best-model.js';
import { pairExamples } from '../lib/train/examples.js';
import { Trainer } from '../lib/train/trainer.js';
import { DATA_DIR, goldenOrSkip } from './helpers/env.js';

const TEXTS = ['A man is playing a guitar on the stage tonight with his friends .', 'Someone plays music .', 'Dogs run', ''];

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

test('a trained model saved as a sentence-transformers folder loads back to the same embeddings, every pooling', async (t) => {
  const g = goldenOrSkip(t);
  if (!g || !DATA_DIR) return t.skip('needs the golden set and the data folder');
  await initBackend('cpu', { quiet: true });
  const work = mkdtempSync(join(tmpdir(), 'st-after-training-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const golden = await loadModel(join(g, 'model'));
  const goldenWeights = readSafetensors(join(g, 'model', 'model.safetensors')).tensors;
  const sick = loadSickEntailment('train', { dataDir: DATA_DIR });
  const dev = loadStsBenchmark('dev', { dataDir: DATA_DIR });
  const runDir = join(work, 'run');
  const trainer = new Trainer({
    model: golden,
    train: pairExamples(sick.name, sick.pairs.slice(0, 48)),
    dev: stsEvaluator({ name: 'STSBenchmark dev (first 64 pairs)', pairs: dev.pairs.slice(0, 64) }),
    runDir,
    config: { objective: { name: 'angle', loss: { ibnPositives: 'binary' } }, pooling: 'cls', maxLength: 32, batchSize: 16, maxSteps: 3, lr: 1e-3, evalEvery: 1, shuffle: false },
    progress: false,
  });
  await trainer.run();
  golden.model.dispose();
  const trained = await loadModel(bestModelDir(runDir));
  try {
    const trainedWeights = readSafetensors(join(bestModelDir(runDir), 'model.safetensors')).tensors;
    const name = 'encoder.layer.0.attention.self.query.weight';
    assert.ok(maxAbs(trainedWeights.get(name)!.data as Float32Array, goldenWeights.get(name)!.data as Float32Array) > 1e-6, 'training changed the weights');
    for (const pooling of ['cls', 'avg', 'max', 'last', 'cls_avg', 'first_last_avg']) {
      const dir = await saveSentenceTransformer(join(work, `st-${pooling}`), trained, { pooling, maxLength: 48 });
      const saved = readSafetensors(join(dir, 'model.safetensors')).tensors;
      for (const [n, tensor] of trainedWeights) assert.ok(Buffer.from(saved.get(n)!.data.buffer).equals(Buffer.from(tensor.data.buffer)), `${pooling}: ${n} holds the trained bytes`);
      const back = await loadModel(dir);
      try {
        assert.ok(back.sentenceEmbedding, `${pooling}: loaded as a sentence-transformers folder`);
        // One text per batch: sentence-transformers' max ignores padding, ours counts it as 0 (lib/embed/pooling.ts).
        const ours = await new PooledSentenceEncoder(trained, { pooling, maxLength: 48, batchSize: 1, engine: 'tfjs' }).encode(TEXTS);
        const theirs = await new PooledSentenceEncoder(back, { batchSize: 1, engine: 'tfjs' }).encode(TEXTS);
        const d = maxAbs(ours.data, theirs.data);
        assert.ok(d < 1e-6, `${pooling}: max difference ${d}`);
      } finally {
        back.model.dispose();
      }
    }
    await assert.rejects(saveSentenceTransformer(join(work, 'st-pooler'), trained, { pooling: 'cls_pooler' }), /'cls_pooler' \(BERT's pooler output\) is not exported here; it would be Pooling\(cls\) then Dense with the checkpoint's pooler\.dense weights and Tanh/);
  } finally {
    trained.model.dispose();
  }
});
