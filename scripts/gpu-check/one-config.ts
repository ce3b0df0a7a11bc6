/**
 * One configuration of the GPU check's memory, speed or rehearsal step (./steps.ts), in this
 * process: on the GPU each runs in a fresh process so the cuda allocator's peak belongs to it alone.
 *
 *   node --import tsx scripts/gpu-check/one-config.ts --step memory|speed|rehearsal --index <i>
 *        [--backend cuda] [--tiny] [--rehearsal-summary <file>] [--rehearsal-steps <n>] --result <file.json>
 *
 * Writes { name, result } or { name, error } to --result; exit 0 either way (the step reads the
 * file), 2 on a usage error.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { initBackend, tf } from '../../lib/backend/index.js';
import { FIT_BUDGET_BYTES, projectH100Seconds } from '../../lib/experiments/rehearsal/projection.js';
import { rehearsalModel, rehearsalTokenizer, type RehearsalModelSpec } from '../../lib/experiments/rehearsal/models.js';
import { readRehearsalSummary, type RehearsalRow } from '../../lib/experiments/rehearsal/summary.js';
import { rehearseTraining } from '../../lib/experiments/rehearsal/train.js';
import { RECIPE_NAMES, recipe as recipeNamed } from '../../lib/experiments/recipes/index.js';
import { task } from '../../lib/experiments/tasks.js';
import { KNOWN_CONFIGS, parameterCountOfConfig } from '../../lib/models/model-from-config.js';
import { dirname } from 'node:path';
import { measureMemory, measureSpeed, memoryConfigs, shrinkConfig, speedConfigs, tiny as tinyConfig } from './train-config.js';

export interface OneConfigOptions {
  step: 'memory' | 'speed' | 'rehearsal';
  index: number;
  /** Dry-run size (./train-config.ts `tiny`). */
  tiny: boolean;
  rehearsalSummary: string;
  rehearsalSteps: number;
}

/**
 * The rehearsal rows the check runs for real: per notebook, its first training row that is ok, is
 * projected to fit one 80 GB GPU, and names a registered recipe (a plan's variant, e.g. one
 * notebook's pooling ablation, may carry a name of its own).
 */
export function rehearsalRowsToRun(summaryFile: string): RehearsalRow[] {
  if (!existsSync(summaryFile)) throw new Error(`${summaryFile}: no rehearsal summary (npm run notebooks -- --preset rehearsal writes it; --rehearsal-summary)`);
  const rows = readRehearsalSummary(dirname(summaryFile)).rows;
  const picked = new Map<string, RehearsalRow>();
  for (const r of rows) {
    if (r.kind === 'encode' || r.status !== 'ok' || r.projectedPeakBytesH100 > FIT_BUDGET_BYTES || picked.has(r.notebook)) continue;
    if (!RECIPE_NAMES.includes(recipeNameOf(r))) continue;
    picked.set(r.notebook, r);
  }
  return [...picked.values()];
}

const GB = 1e9;

/** The recipe a rehearsal row ran: the run's name ends with it ('AnglE-BERT: angle-stsb'). */
function recipeNameOf(r: RehearsalRow): string {
  return r.run.split(': ').pop()!;
}

async function rehearsalOne(o: OneConfigOptions): Promise<{ name: string; result: Record<string, unknown> }> {
  const row = rehearsalRowsToRun(o.rehearsalSummary)[o.index];
  if (!row) throw new Error(`rehearsal row ${o.index}: the summary has fewer runnable rows`);
  const name = `${row.notebook}: ${row.run}`;
  const full = recipeNamed(recipeNameOf(row));
  const known = (KNOWN_CONFIGS as Record<string, Readonly<Record<string, unknown>>>)[row.model];
  let spec: RehearsalModelSpec;
  let recipe = full;
  if (o.tiny) {
    if (!known) throw new Error(`${row.model}: not a known config, cannot shrink it for the dry run`);
    const config = shrinkConfig(known);
    spec = { id: row.model, config, tokenizer: rehearsalTokenizer(config).tokenizer, parameters: parameterCountOfConfig(config), shapeOnly: false, instantiated: 'dry run: 2 layers of width 64' };
    // An ESE row compresses to k dimensions, k at most the hidden size (ESE refuses more): the
    // paper's k = 128 cannot be at width 64, so the dry run takes a quarter of the shrunk width, as
    // the smoke preset does (recipes/espresso.ts).
    const objective = full.config.objective as { compressionSize?: number } | undefined;
    const width = Number(config.hidden_size ?? config.dim ?? 64);
    const shrunkObjective = objective?.compressionSize !== undefined && objective.compressionSize > width ? { objective: { ...objective, compressionSize: Math.max(1, Math.floor(width / 4)) } } : {};
    recipe = { ...full, config: { ...full.config, batchSize: 2, maxLength: 16, gradAccumulation: 1, ...shrunkObjective } as typeof full.config };
  } else {
    spec = await rehearsalModel(row.model);
  }
  const steps = o.tiny ? 1 : o.rehearsalSteps;
  const r = await rehearseTraining({ notebook: row.notebook, run: row.run, recipe, spec, calibration: 1, backend: tf.getBackend(), realSteps: steps });
  if (r.status === 'failed') throw new Error(r.why);
  let measuredPeakBytes = r.peakBytes;
  let measuredPeakKind = 'tfjs buffers at the step peak + the weights';
  if (tf.getBackend() === 'cuda') {
    const cuda = await import('../../lib/backend/cuda/index.js');
    measuredPeakBytes = cuda.cudaMemoryStats().peakInUse;
    measuredPeakKind = 'device peak in use over the process: build, prepare and steps';
  }
  // The committed row's projection of one optimiser step at the paper's shapes.
  const texts = task(full.task).labels === 'triplets' ? 3 : 2;
  const parameters = known ? parameterCountOfConfig(known) : spec.parameters;
  const micro = row.batch * texts * row.length;
  const projected = projectH100Seconds({ tokens: micro * row.accumulation, tokensPerMicroBatch: micro, parameters, kind: row.kind === 'lora' ? 'lora' : 'train', recompute: full.config.checkpointing === true });
  return {
    name,
    result: {
      backend: tf.getBackend(),
      steps,
      stepSeconds: r.stepSeconds,
      measuredPeakBytes,
      measuredPeakKind,
      shape: o.tiny ? '2 examples x 16 tokens, 2 layers of width 64 (dry run)' : `${row.batch} x ${row.length} x ${row.accumulation}`,
      projectedStepSeconds: projected.seconds,
      projectedBasis: projected.basis,
      projectedPeakBytes: row.projectedPeakBytesH100,
      projectedStepPeakBytes: row.projectedStepPeakBytesH100 ?? row.projectedPeakBytesH100,
      projectedLoadPeakBytes: row.projectedLoadPeakBytesH100 ?? row.projectedPeakBytesH100,
      rowProvenance: row.provenance,
      ratioToProjectedStepPeak: o.tiny ? undefined : measuredPeakBytes / (row.projectedStepPeakBytesH100 ?? row.projectedPeakBytesH100),
      fitsBudgetGB: FIT_BUDGET_BYTES / GB,
    },
  };
}

/** Runs configuration `o.index` of `o.step` on the active backend. */
export async function runOneConfig(o: OneConfigOptions): Promise<{ name: string; result: Record<string, unknown> }> {
  if (o.step === 'rehearsal') return rehearsalOne(o);
  const list = o.step === 'memory' ? memoryConfigs() : speedConfigs();
  const c0 = list[o.index];
  if (!c0) throw new Error(`${o.step} configuration ${o.index}: there are ${list.length}`);
  const c = o.tiny ? tinyConfig(c0) : c0;
  const name = o.tiny ? `${c0.name} (dry run: 2 layers of width 64, 2 x 16)` : c0.name;
  if (o.step === 'memory') return { name, result: { ...(await measureMemory(c, o.tiny)) } };
  return { name, result: { ...(await measureSpeed(c, o.tiny, o.tiny ? 1 : 2, o.tiny ? 2 : 10)) } };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      step: { type: 'string' },
      index: { type: 'string' },
      backend: { type: 'string', default: 'cuda' },
      tiny: { type: 'boolean', default: false },
      'rehearsal-summary': { type: 'string', default: 'results/rehearsal/summary.json' },
      'rehearsal-steps': { type: 'string', default: '3' },
      result: { type: 'string' },
    },
  });
  const step = values.step as OneConfigOptions['step'];
  if (!['memory', 'speed', 'rehearsal'].includes(step) || !/^\d+$/.test(values.index ?? '') || !values.result) {
    console.error('usage: one-config.ts --step memory|speed|rehearsal --index <i> [--backend cuda] [--tiny] [--rehearsal-summary <file>] [--rehearsal-steps <n>] --result <file.json>');
    process.exit(2);
  }
  let out: Record<string, unknown>;
  try {
    await initBackend(values.backend);
    out = await runOneConfig({ step, index: Number(values.index), tiny: values.tiny!, rehearsalSummary: values['rehearsal-summary']!, rehearsalSteps: Number(values['rehearsal-steps']) });
  } catch (e) {
    out = { name: `${step} #${values.index}`, error: (e as Error).message.split('\n')[0] };
  }
  writeFileSync(values.result, JSON.stringify(out));
}
