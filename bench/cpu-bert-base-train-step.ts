/**
 * Benchmark: one training step of BERT-base on the CPU backends (`wasm`, `cpu`), the step of
 * ./cuda-train-step.ts so the numbers compare with the H100 ones in docs/gpu.md: random init
 * (HF bert-base-uncased config, lib/models/model-from-config.ts), forward with dropout, [CLS]
 * pooling, the cosine (CoSENT) objective on random token ids and random 0..5 labels, backward,
 * AdamW on every parameter. A small shape (2 pairs × 16 tokens by default, far below any recipe's
 * batch), because even there a step takes a minute or more on this project's 2-core machine: the
 * point is the order of magnitude a user would wait.
 *
 *   node --import tsx bench/cpu-bert-base-train-step.ts [--backends wasm,cpu] [--config 2x16]
 *        [--steps 2] [--warmup 1] [--results-dir bench/results]
 *
 * tokens/s = pairs · 2 · tokens · steps / seconds (padded tokens, as the cuda benchmark counts). The
 * machine's 1-minute load average before and after each backend is recorded: on a shared machine it
 * says how much of the time was other processes'.
 * Writes bench/results/cpu-bert-base-train-step-<date>.json; lib/notebook/paper-backend-warning.ts
 * quotes it in the warning the `paper` preset prints on a CPU backend.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { arch, cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend, tf } from '../lib/backend/index.js';
import { pool } from '../lib/embed/pooling.js';
import { cosineLoss } from '../lib/losses/index.js';
import type { BertModel } from '../lib/models/bert/model.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import { AdamW, gradientsByParameterName } from '../lib/train/adamw.js';
import { mulberry32 } from '../lib/util/mulberry32.js';
import { packageRoot } from '../lib/util/package-root.js';

const { values: opts } = parseArgs({
  options: {
    backends: { type: 'string', default: 'wasm,cpu' },
    config: { type: 'string', default: '2x16' },
    steps: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '1' },
    'results-dir': { type: 'string' },
  },
});
const m = /^(\d+)x(\d+)$/.exec(opts.config);
if (!m) {
  console.error(`bench: --config expects <pairs>x<tokens> (e.g. 2x16), got ${opts.config}`);
  process.exit(2);
}
const pairs = Number(m[1]);
const tokens = Number(m[2]);
const steps = Number(opts.steps);
const warmup = Number(opts.warmup);
const backends = opts.backends.split(',').map((b) => b.trim());

/** A batch of 2·pairs rows of random ids ([CLS] first, [SEP] last), all `tokens` long, and random 0..5 labels. */
function randomBatch(seed: number) {
  const next = mulberry32(seed);
  const rows = 2 * pairs;
  const inputIds = new Int32Array(rows * tokens);
  for (let r = 0; r < rows; r++) {
    for (let t = 0; t < tokens; t++) inputIds[r * tokens + t] = t === 0 ? 101 : t === tokens - 1 ? 102 : 1000 + (next() % 29000);
  }
  const labels = Array.from({ length: pairs }, () => next() % 6);
  return { batch: { inputIds, tokenTypeIds: new Int32Array(rows * tokens), attentionMask: new Int32Array(rows * tokens).fill(1), batch: rows, seqLen: tokens }, labels };
}

interface Row {
  backend: string;
  /** os.loadavg()[0] before the warm-up and after the timed steps. */
  loadAverage1m: { before: number; after: number };
  device: string;
  pairs: number;
  tokens: number;
  steps: number;
  secondsPerStep: number;
  tokensPerSecond: number;
  finalLoss: number;
}

const rows: Row[] = [];
for (const name of backends) {
  const loadBefore = loadavg()[0]!;
  const info = await initBackend(name, { quiet: true });
  const model = modelFromConfig(KNOWN_CONFIGS['google-bert/bert-base-uncased'], { init: 'normal', seed: 1234, dropoutSeed: 7 }) as BertModel;
  const vars = [...model.params.values()];
  const opt = new AdamW(model.params, { weightDecay: 0.01 });
  const step = (b: ReturnType<typeof randomBatch>): number => {
    const { value, grads } = tf.variableGrads(() => {
      const out = model.forward(b.batch, { training: true });
      const mask = tf.tensor2d(b.batch.attentionMask, [b.batch.batch, b.batch.seqLen], 'int32');
      return cosineLoss(pool('cls', { lastHiddenState: out.lastHiddenState, attentionMask: mask }), b.labels);
    }, vars);
    opt.step(gradientsByParameterName(model.params, grads), 2e-5);
    tf.dispose(grads);
    const loss = value.dataSync()[0]!;
    value.dispose();
    return loss;
  };
  console.log(`${name}: BERT-base ${(model.numParameters() / 1e6).toFixed(1)} M parameters on ${info.device}; ${pairs} pairs x ${tokens} tokens`);
  for (let i = 0; i < warmup; i++) step(randomBatch(100 + i));
  const t0 = performance.now();
  let loss = NaN;
  for (let i = 0; i < steps; i++) loss = step(randomBatch(200 + i));
  const seconds = (performance.now() - t0) / 1000;
  const row: Row = {
    backend: name,
    loadAverage1m: { before: loadBefore, after: loadavg()[0]! },
    device: info.device,
    pairs,
    tokens,
    steps,
    secondsPerStep: seconds / steps,
    tokensPerSecond: (pairs * 2 * tokens * steps) / seconds,
    finalLoss: loss,
  };
  rows.push(row);
  console.log(`${name}: ${row.secondsPerStep.toFixed(2)} s/step, ${row.tokensPerSecond.toFixed(1)} tokens/s (${steps} steps after ${warmup} warm-up)`);
  opt.dispose();
  model.dispose();
}

const when = new Date().toISOString();
const record = {
  benchmark: 'cpu-bert-base-train-step',
  when,
  model: 'google-bert/bert-base-uncased config, random init (lib/models/model-from-config.ts)',
  step: 'forward (dropout 0.1) + [CLS] + cosine (CoSENT) loss + backward + AdamW (lr 2e-5, wd 0.01), as bench/cuda-train-step.ts',
  machine: { cpu: cpus()[0]?.model?.trim(), cores: cpus().length, arch: arch(), memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  tfjsCore: tf.version_core,
  warmup,
  rows,
  ratios: rows.length === 2 ? { [`${rows[0]!.backend}_over_${rows[1]!.backend}_speed`]: rows[0]!.tokensPerSecond / rows[1]!.tokensPerSecond } : {},
};
const dir = opts['results-dir'] ?? join(packageRoot(), 'bench', 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `cpu-bert-base-train-step-${when.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
console.log(`wrote ${file}`);
