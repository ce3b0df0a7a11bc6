/**
 * Host dispatches and device kernel launches of one training step on the `cuda` backend, counted
 * on the shape-only backend that mirrors it (lib/backend/shape-only: no GPU, no values), for the
 * configurations of issue 39: BERT-base at 32 × 64 and 128 × 64 (pairs × tokens, [CLS], the angle
 * objective, AdamW on every parameter) and a LLaMA-2-7B LoRA step (r 32, all linear layers, 4 pairs
 * × 128 tokens, last-token pooling, checkpointing). The second step is counted (the first also
 * creates the optimiser state). A launch is a CUDA kernel the backend would start; a dispatch is a
 * tfjs kernel call reaching the backend (a JavaScript → N-API round trip on cuda, launch or not).
 *
 *   node --import tsx bench/cuda-launches.ts [--out <file>] [--before <file>] [--configs a,b] [--help]
 *
 * Writes bench/results/cuda-launches-<date>.json: rows { config, launchesBefore, launchesNow,
 * dispatchesBefore, dispatchesNow, topKernels }. "Before" comes from --before (an earlier file of
 * this script, the baseline) or, without one, is this run's count (the file is then the baseline).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initBackend } from '../lib/backend/index.js';
import { shapeOnlyBackend, withShapeOnlyBackend, type DispatchCounts } from '../lib/backend/shape-only/index.js';
import { addLora } from '../lib/models/adapters/lora.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import { AdamW } from '../lib/train/adamw.js';
import type { TrainingBatch } from '../lib/train/batching.js';
import { bindObjective } from '../lib/train/objective.js';
import { optimizerStep, type StepContext } from '../lib/train/training-step.js';

export interface LaunchConfig {
  name: string;
  arch: 'bert' | 'llama';
  pairs: number;
  tokens: number;
}

export const LAUNCH_CONFIGS: LaunchConfig[] = [
  { name: 'bert-base-32x64', arch: 'bert', pairs: 32, tokens: 64 },
  { name: 'bert-base-128x64', arch: 'bert', pairs: 128, tokens: 64 },
  { name: 'llama-2-7b-lora-r32-4x128', arch: 'llama', pairs: 4, tokens: 128 },
];

function pairBatch(pairs: number, T: number): TrainingBatch {
  const B = 2 * pairs;
  return {
    epoch: 0,
    index: 0,
    examples: new Uint32Array(pairs),
    tokens: { inputIds: new Int32Array(B * T).fill(1000), tokenTypeIds: new Int32Array(B * T), attentionMask: new Int32Array(B * T).fill(1), batch: B, seqLen: T },
    labels: Array.from({ length: pairs }, (_, i) => i % 2),
    keys: Array.from({ length: B }, (_, i) => `text ${i}`),
    realTokens: B * T,
  };
}

/** Dispatches and launches of the second optimiser step of `c` on the shape-only cuda mirror. */
export async function countStepLaunches(c: LaunchConfig): Promise<DispatchCounts> {
  return withShapeOnlyBackend(async () => {
    const backend = shapeOnlyBackend('cuda');
    const model = c.arch === 'bert' ? modelFromConfig(KNOWN_CONFIGS['google-bert/bert-base-uncased'], { dropoutSeed: 7 }) : modelFromConfig(KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf']);
    if (c.arch === 'llama') addLora(model as LlamaModel, { r: 32, alpha: 32, dropout: 0.1, targetModules: 'all-linear' }, 1);
    const trainable = model.trainableParameters();
    const optimizer = new AdamW(trainable);
    const objective = bindObjective({ name: 'angle' }, 'pairs');
    const ctx: StepContext = {
      model,
      trainable,
      pooling: c.arch === 'bert' ? 'cls' : 'last',
      padSide: 'right',
      objective: objective.loss,
      optimizer,
      checkpointing: c.arch === 'llama',
    };
    try {
      const batch = pairBatch(c.pairs, c.tokens);
      await optimizerStep(ctx, [batch], 1e-4);
      backend.resetDispatchCounts();
      await optimizerStep(ctx, [batch], 1e-4);
      return backend.dispatchCounts();
    } finally {
      optimizer.dispose();
      objective.dispose();
      model.dispose();
    }
  });
}

const HELP = `node --import tsx bench/cuda-launches.ts [options]

  --out <file>       where the JSON goes (default bench/results/cuda-launches-<date>.json)
  --before <file>    an earlier output of this script: its counts become launchesBefore/dispatchesBefore
  --configs <names>  comma-separated subset of: ${LAUNCH_CONFIGS.map((c) => c.name).join(', ')}
  --help             this text`;

async function main(argv: string[]): Promise<void> {
  const opt = (name: string) => {
    const i = argv.indexOf(name);
    if (i < 0) return undefined;
    if (i + 1 >= argv.length) throw new Error(`${name} needs a value (see --help)`);
    return argv[i + 1];
  };
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(HELP);
    return;
  }
  for (const a of argv) if (a.startsWith('--') && !['--out', '--before', '--configs'].includes(a)) throw new Error(`unknown option ${a} (see --help)`);
  const names = opt('--configs')?.split(',');
  const configs = names ? names.map((n) => LAUNCH_CONFIGS.find((c) => c.name === n) ?? (() => { throw new Error(`unknown config ${n}: expected ${LAUNCH_CONFIGS.map((c) => c.name).join(', ')}`); })()) : LAUNCH_CONFIGS;
  const beforeFile = opt('--before');
  const before = beforeFile ? (JSON.parse(readFileSync(beforeFile, 'utf8')) as { rows: Array<{ config: string; launchesNow: number; dispatchesNow: number }> }).rows : undefined;
  await initBackend('cpu', { quiet: true });
  const rows = [];
  for (const c of configs) {
    const t0 = performance.now();
    const n = await countStepLaunches(c);
    const b = before?.find((r) => r.config === c.name);
    const topKernels = Object.entries(n.byKernel).sort((x, y) => y[1].dispatches - x[1].dispatches).slice(0, 12).map(([kernel, v]) => ({ kernel, ...v }));
    const row = { config: c.name, launchesBefore: b?.launchesNow ?? n.launches, launchesNow: n.launches, dispatchesBefore: b?.dispatchesNow ?? n.dispatches, dispatchesNow: n.dispatches, topKernels };
    rows.push(row);
    console.log(`${c.name}: ${n.dispatches} dispatches, ${n.launches} launches per step (${((performance.now() - t0) / 1000).toFixed(1)} s to count)`);
  }
  const here = dirname(fileURLToPath(import.meta.url));
  const out = opt('--out') ?? join(here, 'results', `cuda-launches-${new Date().toISOString().slice(0, 10)}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const doc = {
    what: 'host dispatches and device kernel launches per training step of the cuda backend, counted on the shape-only backend that mirrors it (bench/cuda-launches.ts)',
    measuredOn: 'shape-only backend (no GPU): a model of native/src, see lib/backend/shape-only/backend.ts',
    before: beforeFile ?? 'this run (baseline)',
    createdAt: new Date().toISOString(),
    rows,
  };
  writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
  console.log(`wrote ${out}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((e: Error) => {
    console.error(`cuda-launches: ${e.message}`);
    process.exit(1);
  });
}
