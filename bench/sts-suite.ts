/**
 * Wall time of the whole SentEval-style STS suite (STS12-16 all subsets, STS-B and SICK-R test)
 * for one encoder, per backend, in one run: how long "evaluate this model on STS" takes on a CPU.
 * Also reports the non-model overhead with a model-free hashing encoder. Writes JSON to
 * bench/results/. Not a test: nothing asserts a time.
 *
 *   npx tsx bench/sts-suite.ts [--model <dir or hub id>] [--backends wasm,cpu] [--pooling cls]
 */
import { arch, cpus, hostname } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { hashingBowEncoder } from '../lib/eval/baselines.js';
import { evaluateStsSuite } from '../lib/eval/senteval-sts.js';
import { loadModel } from '../lib/models/auto.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';
import { packageRoot } from '../lib/util/package-root.js';
import { portableModelRef } from '../lib/report/training-record.js';

const { values } = parseArgs({ options: { model: { type: 'string' }, backends: { type: 'string' }, pooling: { type: 'string' } } });
const modelId = values.model ?? process.env.ANGLE_MODEL;
if (!modelId) {
  console.error('bench: pass --model <dir or hub id> or set ANGLE_MODEL');
  process.exit(2);
}
const pooling = values.pooling ?? 'cls';
const backends = (values.backends ?? 'wasm,cpu').split(',');

const t0 = performance.now();
const overhead = await evaluateStsSuite(hashingBowEncoder(64), {});
const overheadSeconds = (performance.now() - t0) / 1000;
console.log(`no model (hashing bag of words): ${overheadSeconds.toFixed(1)} s for ${overhead.sentences} sentences`);

const rows: Array<{ backend: string; seconds: number; sentences: number; averagePercent?: number }> = [];
for (const backend of backends) {
  await initBackend(backend, { quiet: true });
  const m = await loadModel(modelId);
  const enc = new PooledSentenceEncoder(m, { pooling, maxLength: 64, batchSize: 128 });
  const t = performance.now();
  const r = await evaluateStsSuite(enc, {});
  const seconds = (performance.now() - t) / 1000;
  rows.push({ backend, seconds, sentences: r.sentences, averagePercent: r.averagePercent });
  console.log(`${backend}: STS suite (${pooling}) in ${seconds.toFixed(1)} s, ${r.sentences} sentences, average ρ×100 ${r.averagePercent?.toFixed(2)}`);
  m.model.dispose();
}
const when = new Date().toISOString();
const out = {
  benchmark: 'sts-suite',
  when,
  model: portableModelRef(modelId),
  pooling,
  maxLength: 64,
  machine: { host: hostname(), cpu: cpus()[0]?.model, cores: cpus().length, arch: arch(), node: process.version, tfjsCore: tf.version_core },
  overheadSecondsWithoutModel: overheadSeconds,
  results: rows,
  ratios: rows.length === 2 ? { [`${rows[1].backend}_over_${rows[0].backend}_time`]: rows[1].seconds / rows[0].seconds } : {},
};
const file = join(packageRoot(), 'bench', 'results', `sts-suite-${when.replace(/[:.]/g, '-')}.json`);
await writeFileAtomic(file, JSON.stringify(out, null, 2) + '\n');
console.log(`wrote ${file}`);
