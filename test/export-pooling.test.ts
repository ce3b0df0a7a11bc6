/**
 * Which pooling `npm run export` writes when --pooling is not given (scripts/export/pooling.ts):
 * the model's own pooling module (a folder saved with avg exports avg, whatever a record says),
 * else a run's recorded pooling (a best/ from before pooling modules), else the architecture's
 * default (BERT cls); --pooling wins over all; a folder whose modules are none of our poolings is
 * refused with the reason. The golden tiny BERT, no export written (seconds).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import { saveSentenceTransformer } from '../lib/embed/sentence-transformer-export.js';
import { loadModel } from '../lib/models/auto.js';
import { exportPooling } from '../scripts/export/pooling.js';
import { goldenOrSkip } from './helpers/env.js';

test('export takes the pooling from the model: --pooling, else its module, else the recorded one, else the architecture default', async (t) => {
  const g = goldenOrSkip(t);
  if (!g) return;
  await initBackend('cpu', { quiet: true });
  const work = mkdtempSync(join(tmpdir(), 'export-pooling-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const golden = await loadModel(join(g, 'model'));
  try {
    assert.deepEqual(exportPooling(golden), { pooling: 'cls', from: "the bert architecture's default" });
    assert.equal(exportPooling(golden, undefined, 'max').pooling, 'max');
    assert.match(exportPooling(golden, undefined, 'max').from, /recorded/);
    assert.deepEqual(exportPooling(golden, 'first_last_avg', 'max'), { pooling: 'first_last_avg', from: '--pooling' });
    assert.throws(() => exportPooling(golden, undefined, 'cls_avg_legacy'), /depends on the batch a text is embedded with/);

    const folder = await saveSentenceTransformer(join(work, 'avg'), golden, { pooling: 'avg' });
    const saved = await loadModel(folder);
    try {
      assert.deepEqual(exportPooling(saved, undefined, 'max'), { pooling: 'avg', from: "the model's pooling module (its modules.json)" });
      assert.equal(exportPooling(saved, 'cls').pooling, 'cls');
      const foreign = { ...saved, sentenceEmbedding: { ...saved.sentenceEmbedding!, steps: [{ module: 'Pooling' as const, modes: ['mean' as const, 'max' as const], dim: saved.model.hiddenSize, includePrompt: true }] } };
      assert.throws(() => exportPooling(foreign), /modules are none of our poolings: name the pooling to export with --pooling/);
    } finally {
      saved.model.dispose();
    }
  } finally {
    golden.model.dispose();
  }
});
