/**
 * Sentence-encoder throughput on the CPU backends, measured in one run:
 * `cpu` (tfjs-backend-cpu, plain JS) vs `wasm` (tfjs-backend-wasm, XNNPACK SIMD), same model,
 * same sentences (STS-B test, first N sentence1 texts), max length 64, batch 64, cls pooling.
 * Reports sentences/s and tokens/s per backend and the wasm/cpu ratio; writes JSON to
 * bench/results/. Not a test: nothing asserts a time.
 *
 *   npx tsx bench/encode-throughput.ts [--model <dir or hub id>] [--n 1000]
 */
import { arch, cpus, hostname } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend, tf } from '../lib/backend/index.js';
import { PooledSentenceEncoder } from '../lib/embed/encoder.js';
import { loadModel } from '../lib/models/auto.js';
import { loadStsBenchmark } from '../lib/data/sts.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';
import { packageRoot } from '../lib/util/package-root.js';
import { portableModelRef } from '../lib/report/training-record.js';

const { values } = parseArgs({ options: { model: { type: 'string' }, n: { type: 'string' } } });
const modelId = values.model ?? process.env.ANGLE_MODEL;
if (!modelId) {
  console.error('bench: pass --model <dir or hub id> or set ANGLE_MODEL');
  process.exit(2);
}
const n = Number(values.n ?? 1000);
const texts = loadStsBenchmark('test', {}).pairs.slice(0, n).map((p) => p.a);

const rows: Array<{ backend: string; seconds: number; sentencesPerSecond: number; tokensPerSecond: number }> = [];
for (const backend of ['cpu', 'wasm']) {
  await initBackend(backend, { quiet: true });
  const m = await loadModel(modelId);
  const enc = new PooledSentenceEncoder(m, { pooling: 'cls', maxLength: 64, batchSize: 64, progressThreshold: Infinity });
  const tokens = texts.reduce((s, t) => s + m.tokenizer.encode(t, null, 64).ids.length, 0);
  await enc.encode(texts.slice(0, 64)); // warm-up: kernels, wasm compile
  const t0 = performance.now();
  await enc.encode(texts);
  const seconds = (performance.now() - t0) / 1000;
  rows.push({ backend, seconds, sentencesPerSecond: texts.length / seconds, tokensPerSecond: tokens / seconds });
  console.log(`${backend}: ${texts.length} sentences (${tokens} tokens) in ${seconds.toFixed(2)} s = ${(texts.length / seconds).toFixed(0)} sentences/s, ${(tokens / seconds).toFixed(0)} tokens/s`);
  m.model.dispose();
}
const ratio = rows[1].sentencesPerSecond / rows[0].sentencesPerSecond;
console.log(`wasm / cpu: ${ratio.toFixed(1)}x`);
const when = new Date().toISOString();
const out = {
  benchmark: 'encode-throughput',
  when,
  model: portableModelRef(modelId),
  sentences: texts.length,
  maxLength: 64,
  batchSize: 64,
  pooling: 'cls',
  machine: { host: hostname(), cpu: cpus()[0]?.model, cores: cpus().length, arch: arch(), node: process.version, tfjsCore: tf.version_core },
  results: rows,
  ratio_wasm_over_cpu: ratio,
};
const file = join(packageRoot(), 'bench', 'results', `encode-throughput-${when.replace(/[:.]/g, '-')}.json`);
await writeFileAtomic(file, JSON.stringify(out, null, 2) + '\n');
console.log(`wrote ${file}`);
