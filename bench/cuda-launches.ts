/**
 * Host dispatches and device kernel launches of one training step on the `cuda` backend, counted
 * on the shape-only backend that mirrors it (lib/backend/shape-only: no GPU, no values), for the
 * configurations of issue 39: BERT-base at 32 × 64 and 128 × 64 (pairs × tokens, [CLS], the angle
 * objective, AdamW on every parameter) and a LLaMA-2-7B LoRA step (r 32, all linear layers, 4 pairs
 * × 128 tokens, last-token pooling, checkpointing), and an AnglE BERT-base training step at 32 × 64
 * whose batch and labels change every step, as in training (the objective's labels fed as device
 * inputs, ObjectiveBatch.labelInputs); the step is bench/pair-step.ts's, which the tests share. Counted twice: op by op (the second step; the first also creates the optimiser
 * state) and as a replayed step graph (lib/train/step-graphs.ts: the fourth step, after two eager
 * ones and the capture). A launch is a CUDA kernel (or graph) the host starts; a dispatch is a
 * tfjs kernel call reaching the backend (a JavaScript → N-API round trip on cuda, launch or not)
 * or, for a replay, a host upload of a feed.
 *
 *   node --import tsx bench/cuda-launches.ts [--out <file>] [--before <file> | --baseline <file>] [--configs a,b] [--help]
 *
 * Writes bench/results/cuda-launches-<date>.json: rows { config, launchesBefore, launchesNow,
 * dispatchesBefore, dispatchesNow, launchesEager, dispatchesEager, graphKernels, ... }. "Before" comes from --before (an earlier file of
 * this script: its "now" counts), --baseline (an earlier file: its own "before" counts, i.e. the
 * baseline it kept) or, without either, is this run's count (the file is then the baseline). A row
 * the earlier file lacks takes the row of the same model and shape (`beforeOf`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initBackend } from '../lib/backend/index.js';
import { shapeOnlyBackend, withShapeOnlyBackend, type DispatchCounts } from '../lib/backend/shape-only/index.js';
import { addLora } from '../lib/models/adapters/lora.js';
import type { LlamaModel } from '../lib/models/llama/model.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../lib/models/model-from-config.js';
import { StepGraphs, type StepGraphStats } from '../lib/train/step-graphs.js';
import { optimizerStep } from '../lib/train/training-step.js';
import { pairBatch, pairStepContext } from './pair-step.js';

export interface LaunchConfig {
  name: string;
  arch: 'bert' | 'llama';
  pairs: number;
  tokens: number;
  /** Every step a new batch with other labels (AnglE training), instead of the same batch each step. */
  varyBatches?: boolean;
  /** The earlier file's row this one's "before" counts come from when it has no row of this name (the same step op by op). */
  beforeOf?: string;
}

export const LAUNCH_CONFIGS: LaunchConfig[] = [
  { name: 'bert-base-32x64', arch: 'bert', pairs: 32, tokens: 64 },
  { name: 'bert-base-128x64', arch: 'bert', pairs: 128, tokens: 64 },
  { name: 'llama-2-7b-lora-r32-4x128', arch: 'llama', pairs: 4, tokens: 128 },
  { name: 'angle-bert-base-32x64', arch: 'bert', pairs: 32, tokens: 64, varyBatches: true, beforeOf: 'bert-base-32x64' },
];

/** What one counted step did: its counts, and with step graphs what the graph holds. */
export interface StepLaunchCount extends DispatchCounts {
  /** Kernels one replay of the step's graph runs on the device (step graphs only). */
  graphKernels?: number;
  graph?: StepGraphStats;
  /** How the counted step ran (with step graphs). */
  mode?: string;
}

/**
 * Dispatches and launches of one optimiser step of `c` on the shape-only cuda mirror. Eager
 * (`graphs` false): the second step (the first also creates the optimiser state). With step
 * graphs (lib/train/step-graphs.ts): a replayed step, after two eager steps and the captured one.
 */
export async function countStepLaunches(c: LaunchConfig, opts: { graphs?: boolean; labelInputs?: boolean } = {}): Promise<StepLaunchCount> {
  return withShapeOnlyBackend(async () => {
    const backend = shapeOnlyBackend('cuda');
    const model = c.arch === 'bert' ? modelFromConfig(KNOWN_CONFIGS['google-bert/bert-base-uncased'], { dropoutSeed: 7 }) : modelFromConfig(KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf']);
    if (c.arch === 'llama') addLora(model as LlamaModel, { r: 32, alpha: 32, dropout: 0.1, targetModules: 'all-linear' }, 1);
    // labelInputs false: the objective builds its label masks on the host (as before they were device inputs).
    const step = pairStepContext(model, { pooling: c.arch === 'bert' ? 'cls' : 'last', checkpointing: c.arch === 'llama', labelInputs: opts.labelInputs });
    const graphs = opts.graphs ? new StepGraphs() : undefined;
    try {
      // Variant i: other token ids, and labels that alternate from step to step.
      const batch = (i: number) => pairBatch(c.pairs, c.tokens, c.varyBatches ? { variant: i } : {});
      const run = (i: number) => (graphs ? graphs.step(step.ctx, [batch(i)], 1e-4) : optimizerStep(step.ctx, [batch(i)], 1e-4));
      const warm = graphs ? 3 : 1;
      for (let i = 0; i < warm; i++) await run(i);
      backend.resetDispatchCounts();
      const r = await run(warm);
      const mode = (r as { mode?: string }).mode;
      if (graphs && opts.labelInputs !== false && mode !== 'replayed') throw new Error(`${c.name}: the counted step was ${mode}, not a replay: ${JSON.stringify(graphs.stats().refused)}`);
      const counts: StepLaunchCount = backend.dispatchCounts();
      if (mode) counts.mode = mode;
      if (graphs) {
        counts.graph = graphs.stats();
        counts.graphKernels = Object.values(counts.graph.kernels)[0];
      }
      return counts;
    } finally {
      graphs?.dispose();
      step.dispose();
      model.dispose();
    }
  });
}

const HELP = `node --import tsx bench/cuda-launches.ts [options]

  --out <file>       where the JSON goes (default bench/results/cuda-launches-<date>.json)
  --before <file>    an earlier output of this script: its launchesNow/dispatchesNow become launchesBefore/dispatchesBefore
  --baseline <file>  an earlier output of this script: its launchesBefore/dispatchesBefore (the baseline it kept) stay the "before"
                     (a config it lacks takes the row of its beforeOf config, the same step)
  --configs <names>  comma-separated subset of: ${LAUNCH_CONFIGS.map((c) => c.name).join(', ')}
  --help             this text

launchesNow/dispatchesNow: a replayed step graph (lib/train/step-graphs.ts); launchesEager/
dispatchesEager: the same step run op by op (multi-tensor AdamW included); graphKernels: the kernels
one replay runs on the device. A config whose batches change every step (angle-bert-base-32x64) is also
counted with its label masks built on the host (launchesHostMasks/dispatchesHostMasks, modeHostMasks):
what a step graph did with it before the labels were device inputs.`;

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
  for (const a of argv) if (a.startsWith('--') && !['--out', '--before', '--baseline', '--configs'].includes(a)) throw new Error(`unknown option ${a} (see --help)`);
  const names = opt('--configs')?.split(',');
  const configs = names ? names.map((n) => LAUNCH_CONFIGS.find((c) => c.name === n) ?? (() => { throw new Error(`unknown config ${n}: expected ${LAUNCH_CONFIGS.map((c) => c.name).join(', ')}`); })()) : LAUNCH_CONFIGS;
  const baselineFile = opt('--baseline');
  const beforeFile = opt('--before') ?? baselineFile;
  if (baselineFile && opt('--before')) throw new Error('give --before or --baseline, not both (see --help)');
  type EarlierRow = { config: string; launchesNow: number; dispatchesNow: number; launchesBefore: number; dispatchesBefore: number };
  const earlier = beforeFile ? (JSON.parse(readFileSync(beforeFile, 'utf8')) as { rows: EarlierRow[] }).rows : undefined;
  const before = earlier?.map((r) => (baselineFile ? { ...r, launchesNow: r.launchesBefore, dispatchesNow: r.dispatchesBefore } : r));
  await initBackend('cpu', { quiet: true });
  const rows = [];
  for (const c of configs) {
    const t0 = performance.now();
    const eager = await countStepLaunches(c);
    const n = await countStepLaunches(c, { graphs: true });
    const hostMasks = c.varyBatches ? await countStepLaunches(c, { graphs: true, labelInputs: false }) : undefined;
    const b = before?.find((r) => r.config === c.name) ?? before?.find((r) => r.config === c.beforeOf);
    const topKernels = Object.entries(eager.byKernel).sort((x, y) => y[1].dispatches - x[1].dispatches).slice(0, 12).map(([kernel, v]) => ({ kernel, ...v }));
    const row = {
      config: c.name,
      launchesBefore: b?.launchesNow ?? eager.launches,
      launchesNow: n.launches,
      dispatchesBefore: b?.dispatchesNow ?? eager.dispatches,
      dispatchesNow: n.dispatches,
      launchesEager: eager.launches,
      dispatchesEager: eager.dispatches,
      graphKernels: n.graphKernels,
      ...(hostMasks ? { launchesHostMasks: hostMasks.launches, dispatchesHostMasks: hostMasks.dispatches, modeHostMasks: hostMasks.mode, refusedHostMasks: Object.values(hostMasks.graph?.refused ?? {})[0] } : {}),
      replayByKernel: n.byKernel,
      topKernelsEager: topKernels,
    };
    rows.push(row);
    console.log(`${c.name}: replayed ${n.dispatches} dispatches, ${n.launches} launches (graph of ${n.graphKernels} kernels); eager ${eager.dispatches} dispatches, ${eager.launches} launches (${((performance.now() - t0) / 1000).toFixed(1)} s to count)`);
  }
  const here = dirname(fileURLToPath(import.meta.url));
  const out = opt('--out') ?? join(here, 'results', `cuda-launches-${new Date().toISOString().slice(0, 10)}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const doc = {
    what: 'host dispatches and device kernel launches per training step of the cuda backend, counted on the shape-only backend that mirrors it (bench/cuda-launches.ts)',
    measuredOn: 'shape-only backend (no GPU): a model of native/src, see lib/backend/shape-only/backend.ts',
    how: 'launchesNow/dispatchesNow: one replayed step graph (lib/train/step-graphs.ts: one cudaGraphLaunch, one host upload per feed slot counted as a dispatch); launchesEager/dispatchesEager: the step op by op with multi-tensor AdamW; graphKernels: device kernels in the graph. The bert-base and llama rows feed the same batch every step; angle-bert-base-32x64 feeds a new batch with other labels every step (AnglE training): the angle objective takes its labels as device inputs (label ranks and in-batch target codes, fed like the token ids), so such steps replay; launchesHostMasks/dispatchesHostMasks count the same step with the label masks built on the host, which a step graph refuses (modeHostMasks eager, refusedHostMasks why): what AnglE training ran before. Token ids, masks, labels, the learning rate and dropout seeds vary freely',
    before: baselineFile ? `the baseline kept by ${baselineFile} as it was before this run (its launchesBefore/dispatchesBefore)` : beforeFile ?? 'this run (baseline)',
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
