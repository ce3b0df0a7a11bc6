/**
 * Training-step throughput on the CPU backends, measured in one run: `cpu` vs `wasm`, the golden
 * runs' setting (AnglE cosine + angle objective on [CLS], AdamW, batches of 32 STS-B train pairs in
 * file order, max length 32, dropout as the model config says). Reports steps/s and (real) tokens/s
 * per backend and the wasm/cpu ratio; writes JSON to bench/results/. Not a test.
 *
 *   npx tsx bench/train-step.ts [--model <dir or hub id>] [--steps 6]
 */
import { arch, cpus, hostname } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend, tf } from '../lib/backend/index.js';
import { loadStsBenchmark } from '../lib/data/sts.js';
import { loadModel } from '../lib/models/auto.js';
import { pairExamples } from '../lib/train/examples.js';
import { Trainer } from '../lib/train/trainer.js';
import { writeFileAtomic } from '../lib/util/atomic-write.js';
import { packageRoot } from '../lib/util/package-root.js';
import { portableModelRef } from '../lib/report/training-record.js';

const { values } = parseArgs({ options: { model: { type: 'string' }, steps: { type: 'string' } } });
const modelId = values.model ?? process.env.ANGLE_MODEL;
if (!modelId) {
  console.error('bench: pass --model <dir or hub id> or set ANGLE_MODEL');
  process.exit(2);
}
const steps = Number(values.steps ?? 6);
const warmup = 1;
const pairs = loadStsBenchmark('train', {}).pairs.slice(0, 32 * (steps + warmup));

const rows: Array<{ backend: string; secondsPerStep: number; stepsPerSecond: number; tokensPerSecond: number }> = [];
for (const backend of ['cpu', 'wasm']) {
  await initBackend(backend, { quiet: true });
  const m = await loadModel(modelId);
  const times: number[] = [];
  const tokens: number[] = [];
  const trainer = new Trainer({
    model: m,
    train: pairExamples('STS-B train', pairs),
    progress: false,
    config: { objective: { name: 'angle', loss: { weights: { cosine: 1, ibn: 0, angle: 1 } } }, maxLength: 32, batchSize: 32, maxSteps: steps + warmup, lr: 5e-4, shuffle: false },
    onStep: (l) => {
      times.push(l.seconds);
      tokens.push(l.tokens);
    },
  });
  await trainer.run();
  const t = times.slice(warmup).reduce((a, b) => a + b, 0);
  const k = tokens.slice(warmup).reduce((a, b) => a + b, 0);
  rows.push({ backend, secondsPerStep: t / steps, stepsPerSecond: steps / t, tokensPerSecond: k / t });
  console.log(`${backend}: ${(t / steps).toFixed(3)} s/step, ${(k / t).toFixed(0)} tokens/s (${steps} steps after ${warmup} warm-up)`);
  m.model.dispose();
}
const ratio = rows[1].stepsPerSecond / rows[0].stepsPerSecond;
console.log(`wasm / cpu: ${ratio.toFixed(1)}x`);
const when = new Date().toISOString();
const out = {
  benchmark: 'train-step',
  when,
  model: portableModelRef(modelId),
  setting: { pairsPerStep: 32, maxLength: 32, objective: 'cosine + angle (taus 20, 1), cls', optimizer: 'AdamW (fused kernel)', steps, warmup },
  machine: { host: hostname(), cpu: cpus()[0]?.model, cores: cpus().length, arch: arch(), node: process.version, tfjsCore: tf.version_core },
  results: rows,
  ratio_wasm_over_cpu: ratio,
};
const file = join(packageRoot(), 'bench', 'results', `train-step-${when.replace(/[:.]/g, '-')}.json`);
await writeFileAtomic(file, JSON.stringify(out, null, 2) + '\n');
console.log(`wrote ${file}`);
