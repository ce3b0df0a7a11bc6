/**
 * Benchmark: one AnglE training step of BERT-base (random init, HF bert-base-uncased config in
 * ./cuda-bert-base.json) on the `cuda` backend — forward with dropout, [CLS] pooling, the cosine
 * (CoSENT) objective on a zigzag batch with random token ids and random 0..5 labels, backward,
 * AdamW on every parameter — at pairs × tokens configurations, fp32 and TF32 matmuls. Reports
 * tokens/s = pairs · 2 · tokens · steps / seconds, and with --torch the PyTorch eager numbers of
 * bench/torch_train_step.py measured in the same device run, with the ratio.
 *
 *   node --import tsx bench/cuda-train-step.ts [--configs 32x64,128x64,256x32] [--precisions fp32,tf32]
 *        [--steps 20] [--warmup 3] [--torch torch.json] [--out bench.json] [--results-dir bench/results] [--profile]
 *
 * --profile adds, per configuration: the host time to dispatch one step (queueing only) against its
 * wall time with the device, and the device time per kernel name, measured by synchronising around
 * every kernel of one step (which serialises the step, so the per-kernel times include one launch
 * each; they rank the kernels, they do not add up to the step time).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { initBackend, tf } from '../lib/backend/index.js';
import { pool } from '../lib/embed/pooling.js';
import { cosineLoss } from '../lib/losses/index.js';
import { parseBertConfig } from '../lib/models/bert/config.js';
import { BertModel } from '../lib/models/bert/model.js';
import { AdamW, gradientsByParameterName } from '../lib/train/adamw.js';
import { bertParameterShapes, type RawTensor } from '../lib/models/bert/weights.js';
import { mulberry32 } from '../lib/util/mulberry32.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    configs: { type: 'string', default: '32x64,128x64,256x32' },
    precisions: { type: 'string', default: 'fp32,tf32' },
    steps: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '3' },
    torch: { type: 'string' },
    out: { type: 'string' },
    'results-dir': { type: 'string' },
    /** After the timed steps of each configuration: host/device split of one step and per-kernel device time. */
    profile: { type: 'boolean', default: false },
  },
});

const info = await initBackend('cuda');
const cuda = await import('../lib/backend/cuda/index.js');
const config = parseBertConfig(JSON.parse(readFileSync(join(here, 'cuda-bert-base.json'), 'utf8')), 'bench/cuda-bert-base.json');

/** HF's init: normal(0, 0.02) for embeddings and Linear weights, zero biases, LayerNorm 1 / 0. */
function randomWeights(seed: number): Map<string, RawTensor> {
  const next = mulberry32(seed);
  const uniform = () => (next() + 0.5) / 4294967296;
  const out = new Map<string, RawTensor>();
  for (const [name, shape] of bertParameterShapes(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (name.endsWith('LayerNorm.weight')) data.fill(1);
    else if (!name.endsWith('.bias') && !name.endsWith('LayerNorm.bias')) {
      for (let i = 0; i < n; i += 2) {
        const r = Math.sqrt(-2 * Math.log(uniform())) * 0.02;
        const a = 2 * Math.PI * uniform();
        data[i] = r * Math.cos(a);
        if (i + 1 < n) data[i + 1] = r * Math.sin(a);
      }
    }
    out.set(name, { shape, data });
  }
  return out;
}

interface Row {
  config: string;
  pairs: number;
  tokens: number;
  precision: 'fp32' | 'tf32';
  steps: number;
  seconds: number;
  tokensPerSecond: number;
  kernelsPerStep: number;
  peakDeviceMiB: number;
  finalLoss: number;
  profile?: Profile;
}

const weights = randomWeights(1234);
const model = new BertModel(config, weights, 7);
weights.clear();
const vars = [...model.params.values()];
console.log(`BERT-base: ${(model.numParameters() / 1e6).toFixed(1)} M parameters on ${info.device}`);

// The trainer's optimiser (lib/train/adamw.ts, one fused kernel per parameter). Weight decay on every
// parameter, as torch.optim.AdamW(model.parameters()) in the peer script; parameters without a
// gradient (the pooler, unused with [CLS] pooling) are skipped in both.
function step(batch: { inputIds: Int32Array; tokenTypeIds: Int32Array; attentionMask: Int32Array; batch: number; seqLen: number }, labels: number[], opt: AdamW): tf.Scalar {
  const { value, grads } = tf.variableGrads(() => {
    const out = model.forward(batch, { training: true });
    const mask = tf.tensor2d(batch.attentionMask, [batch.batch, batch.seqLen], 'int32');
    return cosineLoss(pool('cls', { lastHiddenState: out.lastHiddenState, attentionMask: mask }), labels);
  }, vars);
  opt.step(gradientsByParameterName(model.params, grads), 2e-5);
  tf.dispose(grads);
  return value;
}

interface Profile {
  hostMs: number;
  wallMs: number;
  kernels: Array<{ name: string; calls: number; ms: number }>;
  /** BatchMatMul by operand shapes and transpose flags, with its TFLOP/s. */
  matmuls: Array<{ name: string; calls: number; ms: number; tflops: number }>;
}

function profileStep(batch: Parameters<typeof step>[0], labels: number[], opt: AdamW): Profile {
  cuda.cudaSynchronize();
  const t0 = performance.now();
  const loss = step(batch, labels, opt);
  const hostMs = performance.now() - t0;
  cuda.cudaSynchronize();
  const wallMs = performance.now() - t0;
  loss.dispose();
  const byName = new Map<string, { calls: number; ms: number }>();
  const byShape = new Map<string, { calls: number; ms: number; flop: number }>();
  const engine = tf.engine() as unknown as { runKernel: (n: string, ...r: unknown[]) => unknown };
  const original = engine.runKernel;
  engine.runKernel = function (n: string, ...r: unknown[]) {
    cuda.cudaSynchronize();
    const k0 = performance.now();
    const out = original.call(engine, n, ...r);
    cuda.cudaSynchronize();
    const ms = performance.now() - k0;
    const e = byName.get(n) ?? { calls: 0, ms: 0 };
    e.calls += 1;
    e.ms += ms;
    byName.set(n, e);
    if (n === tf.BatchMatMul) {
      const { a, b } = r[0] as { a: tf.TensorInfo; b: tf.TensorInfo };
      const { transposeA, transposeB } = r[1] as { transposeA: boolean; transposeB: boolean };
      const key = `[${a.shape}]${transposeA ? 'T' : ''} x [${b.shape}]${transposeB ? 'T' : ''}`;
      const ra = a.shape.length;
      const m = transposeA ? a.shape[ra - 1] : a.shape[ra - 2];
      const k = transposeA ? a.shape[ra - 2] : a.shape[ra - 1];
      const nCols = transposeB ? b.shape[b.shape.length - 2] : b.shape[b.shape.length - 1];
      const batch = Math.max(a.shape.slice(0, -2).reduce((x, y) => x * y, 1), b.shape.slice(0, -2).reduce((x, y) => x * y, 1));
      const f = byShape.get(key) ?? { calls: 0, ms: 0, flop: 0 };
      f.calls += 1;
      f.ms += ms;
      f.flop += 2 * batch * m * k * nCols;
      byShape.set(key, f);
    }
    return out;
  };
  try {
    step(batch, labels, opt).dispose();
  } finally {
    engine.runKernel = original;
  }
  const kernels = [...byName].map(([name, e]) => ({ name, ...e })).sort((a, b) => b.ms - a.ms);
  const matmuls = [...byShape].map(([name, e]) => ({ name, calls: e.calls, ms: e.ms, tflops: e.flop / (e.ms / 1000) / 1e12 })).sort((a, b) => b.ms - a.ms);
  return { hostMs, wallMs, kernels, matmuls };
}

const rows: Row[] = [];
const steps = Number(opts.steps);
const warmup = Number(opts.warmup);
for (const cfg of opts.configs!.split(',')) {
  const [pairs, tokens] = cfg.split('x').map(Number);
  const B = 2 * pairs;
  let seed = 99;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  const batch = {
    inputIds: Int32Array.from({ length: B * tokens }, () => 1000 + Math.floor(rand() * (config.vocabSize - 1000))),
    tokenTypeIds: new Int32Array(B * tokens),
    attentionMask: new Int32Array(B * tokens).fill(1),
    batch: B,
    seqLen: tokens,
  };
  const labels = Array.from({ length: pairs }, () => Math.floor(rand() * 6));
  for (const precision of opts.precisions!.split(',') as Array<'fp32' | 'tf32'>) {
    cuda.setCudaMatmulPrecision(precision);
    const opt = new AdamW(model.params, { weightDecay: 0.01, noDecay: () => false });
    for (let i = 0; i < warmup; i++) step(batch, labels, opt).dispose();
    // one counted step: how many kernels the tfjs engine dispatches per training step
    const names: string[] = [];
    const engine = tf.engine() as unknown as { runKernel: (n: string, ...r: unknown[]) => unknown };
    const original = engine.runKernel;
    engine.runKernel = function (n: string, ...r: unknown[]) {
      names.push(n);
      return original.call(engine, n, ...r);
    };
    step(batch, labels, opt).dispose();
    engine.runKernel = original;
    cuda.cudaSynchronize();
    const t0 = performance.now();
    let last: tf.Scalar | undefined;
    for (let i = 0; i < steps; i++) {
      last?.dispose();
      last = step(batch, labels, opt);
    }
    const finalLoss = last!.dataSync()[0];
    cuda.cudaSynchronize();
    const seconds = (performance.now() - t0) / 1000;
    last!.dispose();
    let profile: Profile | undefined;
    if (opts.profile) {
      try {
        profile = profileStep(batch, labels, opt);
      } catch (e) {
        console.log(`  profile ${cfg} ${precision} failed: ${(e as Error).stack ?? e}`);
      }
    }
    opt.dispose();
    const row: Row = {
      config: cfg, pairs, tokens, precision, steps, seconds,
      tokensPerSecond: (pairs * 2 * tokens * steps) / seconds,
      kernelsPerStep: names.length,
      peakDeviceMiB: cuda.cudaMemoryStats().peakInUse / 2 ** 20,
      finalLoss,
      ...(profile ? { profile } : {}),
    };
    rows.push(row);
    if (profile) {
      console.log(`  profile ${cfg} ${precision}: host dispatch ${profile.hostMs.toFixed(1)} ms of a ${profile.wallMs.toFixed(1)} ms step; serialised per-kernel device time (top 15):`);
      for (const k of profile.kernels.slice(0, 15)) console.log(`    ${k.name.padEnd(28)} ${String(k.calls).padStart(5)} calls ${k.ms.toFixed(2).padStart(8)} ms`);
      console.log('    BatchMatMul by shape (serialised, so each includes one launch and one synchronisation):');
      for (const k of profile.matmuls.slice(0, 12)) console.log(`      ${k.name.padEnd(40)} ${String(k.calls).padStart(4)} calls ${k.ms.toFixed(2).padStart(8)} ms ${k.tflops.toFixed(0).padStart(5)} TFLOP/s`);
    }
    console.log(`config ${cfg} ${precision}: ${row.tokensPerSecond.toFixed(0)} tokens/s (${((seconds / steps) * 1000).toFixed(1)} ms/step, ${names.length} kernels/step, peak ${row.peakDeviceMiB.toFixed(0)} MiB, loss ${finalLoss.toFixed(4)})`);
  }
}

interface TorchRow { config: string; precision: string; tokensPerSecond: number; msPerStep: number }
const torch = opts.torch && existsSync(opts.torch) ? (JSON.parse(readFileSync(opts.torch, 'utf8')) as { rows: TorchRow[]; versions?: Record<string, string>; attention?: string; model?: string }) : undefined;
const table = rows.map((r) => {
  const p = torch?.rows.find((x) => x.config === r.config && x.precision === r.precision);
  return { ...r, torchTokensPerSecond: p?.tokensPerSecond ?? null, ratio: p ? r.tokensPerSecond / p.tokensPerSecond : null };
});
console.log('\nconfig     precision  ours tok/s  torch tok/s  ratio');
for (const r of table) console.log(`  ${r.config.padEnd(9)}${r.precision.padEnd(11)}${r.tokensPerSecond.toFixed(0).padStart(10)}  ${(r.torchTokensPerSecond?.toFixed(0) ?? '-').padStart(11)}  ${r.ratio?.toFixed(2) ?? '-'}`);

// The commit: from the bundle's MANIFEST.json when running from a GPU bundle (a .git above the
// bundle may be a stale copy on the host), else from git.
const git = (() => {
  const manifest = join(here, '..', '..', 'MANIFEST.json');
  if (existsSync(manifest)) {
    const m = JSON.parse(readFileSync(manifest, 'utf8')) as { commit: string | null; dirty?: boolean };
    return m.commit ? `${m.commit}${m.dirty ? ' (dirty)' : ''}` : null;
  }
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: here, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
})();
const smi = (() => {
  try {
    return execFileSync('nvidia-smi', ['--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
})();
const result = {
  benchmark: 'cuda-train-step',
  date: new Date().toISOString(),
  commit: git,
  device: { nvidiaSmi: smi, backend: info.device },
  versions: { node: process.version, tfjsCore: tf.version_core, ...(torch?.versions ?? {}) },
  torch: torch ? { model: torch.model, attention: torch.attention } : null,
  method: `warmup ${warmup} steps + 1 counted step, then ${steps} timed steps between device synchronisations; tokens/s = pairs*2*tokens*steps/seconds; AdamW lr 2e-5 wd 0.01; dropout 0.1`,
  rows: table,
};
if (opts.out) writeFileSync(opts.out, JSON.stringify(result, null, 2) + '\n');
const resultsDir = opts['results-dir'] ?? join(here, 'results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `cuda-train-step-${result.date.slice(0, 10)}.json`);
writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
console.log(`wrote ${file}`);
model.dispose();
