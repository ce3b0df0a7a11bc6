/**
 * Replays the reference training runs of a golden `train.json` (the golden set's README) with this
 * trainer and compares every logged step: the learning rate exactly (1e-12 relative, i.e. float64
 * rounding), the loss and each objective term within 1e-3 relative, and the final dev Spearman
 * within 5e-3 absolute — the tolerances the reference itself supports (float rounding drifts).
 *
 * A run's fields: `weights` (objective name -> weight; a missing objective has weight 0), `taus`
 * [cosine, ibn, angle], `n_pairs` (the first rows of the training file, in file order),
 * `batch_pairs`, `lr`, `weight_decay`, `warmup_steps`, `steps`, `max_len`, `pooling`, `dropout`,
 * `log` [{ step, lr, loss, <term>... }], `dev_spearman`, and `data`, a description that names the
 * training set: "STS-B ..." (STS-B train, dev = STS-B dev) or "... MRPC ..." (GLUE MRPC train,
 * dev = MRPC dev). A run whose data cannot be recognised is a failed check, not a skipped one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMsrParaphrase } from '../data/msr-paraphrase.js';
import type { Evaluator } from '../eval/evaluator.js';
import { task } from '../experiments/tasks.js';
import { loadModel } from '../models/auto.js';
import { pairExamples, type TrainingExamples } from '../train/examples.js';
import { Trainer, type TrainerConfig } from '../train/trainer.js';
import { InputError } from '../util/errors.js';
import { check, type ParityCheck } from './check.js';

export const TRAIN_GOLDEN_TOLERANCE = { lrRelative: 1e-12, lossRelative: 1e-3, devSpearman: 5e-3 } as const;

/**
 * The tolerance of a 16-bit replay (`precision: 'bf16' | 'fp16'`: every matmul on inputs rounded to
 * 16 bits, float32 accumulation, weights/optimiser/statistics float32; emulated by rounding off
 * cuda, lib/backend/training-precision.ts), set from MEASURED_16BIT: the CPU emulation on
 * bert-tiny-seed1234 deviates from the float32 reference by at most 2.5e-4 relative in a loss term
 * (bf16, MRPC's in-batch-negatives term; the float32 replay of STS-B here: 1.6e-7) and 8.2e-4 in dev
 * Spearman (fp16, MRPC), so the 16-bit tolerance is about 8x and 6x those: 2e-3 and 5e-3 (the
 * latter the float32 one), room for the device's own summation order
 * and rounding (cuBLASLt). It cannot tell a matmul left in float32 from a rounded one (float32
 * deviates less): that the 16-bit path is taken is checked where it is made (test/bf16-rounding.test.ts).
 */
export const TRAIN_GOLDEN_TOLERANCE_16BIT = { lrRelative: 1e-12, lossRelative: 2e-3, devSpearman: 5e-3 } as const;

/**
 * What the CPU emulation measured when the tolerance was set (cpu backend, 2026-11-28, this
 * session's shared 2-core machine): per run, the worst relative deviation of the loss or any
 * objective term over the 16 logged steps, and |dev Spearman - reference|. The float32 replay of
 * stsb_cosine_angle on the same machine: 1.6e-7 and 1.2e-4.
 */
export const MEASURED_16BIT = {
  bf16: {
    stsb_cosine_angle: { term: 2.94e-6, devSpearman: 5.05e-5 },
    mrpc_cosine_ibn_angle: { term: 2.52e-4, devSpearman: 6.0e-4 },
  },
  fp16: {
    stsb_cosine_angle: { term: 8.51e-7, devSpearman: 1.19e-4 },
    mrpc_cosine_ibn_angle: { term: 3.75e-5, devSpearman: 8.24e-4 },
  },
} as const;

export const REPLAY_PRECISIONS = ['fp32', 'bf16', 'fp16'] as const;
export type ReplayPrecision = (typeof REPLAY_PRECISIONS)[number];

export interface GoldenTrainRun {
  weights: Record<string, number>;
  n_pairs: number;
  batch_pairs: number;
  lr: number;
  weight_decay: number;
  warmup_steps: number;
  steps: number;
  max_len: number;
  taus: [number, number, number];
  pooling: string;
  dropout: number;
  log: Array<{ step: number; lr: number; loss: number } & Record<string, number>>;
  dev_spearman: number;
  data: string;
}

export interface GoldenReplay {
  name: string;
  steps: number;
  worst: { lr: number; loss: number; terms: Record<string, number>; lossStep: number };
  devSpearman: number;
  devReference: number;
  devDiff: number;
  seconds: number;
  checks: ParityCheck[];
}

export function readGoldenTrainRuns(goldenDir: string): Map<string, GoldenTrainRun> {
  const file = join(goldenDir, 'train.json');
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const runs = new Map<string, GoldenTrainRun>();
  for (const [name, v] of Object.entries(raw)) {
    if (v && typeof v === 'object' && Array.isArray((v as GoldenTrainRun).log)) runs.set(name, v as GoldenTrainRun);
  }
  if (runs.size === 0) throw new InputError('no training runs (objects with a "log" list) found', { file });
  return runs;
}

/** The golden run's training pairs (its first n_pairs, in file order) and dev evaluator, from the task table. */
function goldenData(run: GoldenTrainRun, dataDir: string, name: string): { train: TrainingExamples; dev: Evaluator } {
  const opts = { dataDir };
  const firstPairs = (t: TrainingExamples): TrainingExamples => {
    if (t.kind !== 'pairs') throw new InputError(`training run '${name}': expected pair data, the task gives ${t.kind}`);
    return { ...t, items: t.items.slice(0, run.n_pairs) };
  };
  if (/MRPC/i.test(run.data)) {
    const mrpc = task('mrpc').load(opts);
    // The reference read the train.tsv it names, in file order. Where that copy differs from the
    // full GLUE split (shared/data's lacks one pair, at row 91), its first rows are what it trained on.
    const tsv = join(dataDir, 'mrpc', 'train.tsv');
    const train = /train\.tsv/.test(run.data) && existsSync(tsv) ? pairExamples('GLUE MRPC train', readMsrParaphrase(tsv).map((r) => r.pair)) : mrpc.train;
    return { train: firstPairs({ ...train, name: 'GLUE MRPC train' }), dev: mrpc.dev };
  }
  if (/STS-?B/i.test(run.data)) {
    const stsb = task('stsb').load(opts);
    return { train: firstPairs(stsb.train), dev: stsb.dev };
  }
  throw new InputError(`training run '${name}': cannot tell its data from "${run.data}" (expected it to name STS-B or MRPC)`);
}

/** The trainer configuration that reproduces a golden run. */
export function goldenTrainerConfig(run: GoldenTrainRun): TrainerConfig {
  const [tauCos, tauIbn, tauAngle] = run.taus;
  return {
    objective: {
      name: 'angle',
      loss: {
        preset: 'paper',
        weights: { cosine: run.weights.cosine ?? 0, ibn: run.weights.ibn ?? 0, angle: run.weights.angle ?? 0 },
        taus: { cosine: tauCos, ibn: tauIbn, angle: tauAngle },
      },
    },
    pooling: run.pooling,
    maxLength: run.max_len,
    batchSize: run.batch_pairs,
    maxSteps: run.steps,
    lr: run.lr,
    schedule: 'linear',
    warmupSteps: run.warmup_steps,
    warmupStart: 'one-step',
    weightDecay: run.weight_decay,
    shuffle: false,
    dropout: run.dropout,
    evalAtEnd: true,
  };
}

const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);

/** Trains from the golden weights as the run says and compares with its log. */
export async function replayGoldenTrainRun(
  goldenDir: string,
  dataDir: string,
  name: string,
  run: GoldenTrainRun,
  opts: {
    onStep?: (line: string) => void;
    /** Training-memory settings to replay with (the numbers must not change). */
    memory?: Pick<TrainerConfig, 'checkpointing' | 'attention'>;
    /** 'bf16' / 'fp16': 16-bit matmuls (emulated off cuda), checked against TRAIN_GOLDEN_TOLERANCE_16BIT; default the backend's float32/TF32. */
    precision?: ReplayPrecision;
  } = {},
): Promise<GoldenReplay> {
  const t0 = performance.now();
  const { train, dev } = goldenData(run, dataDir, name);
  const m = await loadModel(join(goldenDir, 'model'));
  try {
    const precision = opts.precision ?? 'fp32';
    if (!REPLAY_PRECISIONS.includes(precision)) throw new InputError(`golden train replay: precision '${precision}': expected ${REPLAY_PRECISIONS.join(', ')}`);
    const tol = precision === 'fp32' ? TRAIN_GOLDEN_TOLERANCE : TRAIN_GOLDEN_TOLERANCE_16BIT;
    const config = { ...goldenTrainerConfig(run), ...opts.memory, ...(precision === 'fp32' ? {} : { precision }) };
    const trainer = new Trainer({ model: m, train, dev, config, progress: false });
    const result = await trainer.run();
    const checks: ParityCheck[] = [];
    const worst = { lr: 0, loss: 0, terms: {} as Record<string, number>, lossStep: -1 };
    if (result.log.length !== run.log.length) {
      checks.push({ name: `train/${name}/steps`, ok: false, detail: `ran ${result.log.length} steps, the reference logged ${run.log.length}` });
    }
    for (const ref of run.log) {
      const ours = result.log[ref.step];
      if (!ours) continue;
      worst.lr = Math.max(worst.lr, rel(ours.lr, ref.lr));
      const dl = rel(ours.loss, ref.loss);
      if (dl >= worst.loss) {
        worst.loss = dl;
        worst.lossStep = ref.step;
      }
      for (const k of Object.keys(ref)) {
        if (k === 'step' || k === 'lr' || k === 'loss') continue;
        const v = ours.terms[k];
        const d = v === undefined ? Number.POSITIVE_INFINITY : rel(v, ref[k]);
        worst.terms[k] = Math.max(worst.terms[k] ?? 0, d);
      }
      opts.onStep?.(`${name} step ${ref.step}: loss ${ours.loss.toFixed(6)} (ref ${ref.loss.toFixed(6)}), lr ${ours.lr}`);
    }
    checks.push(check(`train/${name}/lr`, worst.lr, TRAIN_GOLDEN_TOLERANCE.lrRelative, 'max rel diff'));
    checks.push(check(`train/${name}/loss`, worst.loss, tol.lossRelative, 'max rel diff'));
    for (const [k, d] of Object.entries(worst.terms)) checks.push(check(`train/${name}/${k}`, d, tol.lossRelative, 'max rel diff'));
    const devRho = result.final?.spearman ?? Number.NaN;
    const devDiff = Math.abs(devRho - run.dev_spearman);
    checks.push({
      ...check(`train/${name}/dev_spearman`, devDiff, tol.devSpearman, '|diff|'),
      detail: `ours ${devRho.toFixed(5)} ref ${run.dev_spearman.toFixed(5)} |diff| ${devDiff.toExponential(2)} (tol ${tol.devSpearman})`,
    });
    return { name, steps: result.log.length, worst, devSpearman: devRho, devReference: run.dev_spearman, devDiff, seconds: (performance.now() - t0) / 1000, checks };
  } finally {
    m.model.dispose();
  }
}

/** Every run of a golden train.json as parity checks. */
export async function checkTrainGolden(goldenDir: string, dataDir: string, opts: { log?: (line: string) => void; precision?: ReplayPrecision } = {}): Promise<ParityCheck[]> {
  const out: ParityCheck[] = [];
  for (const [name, run] of readGoldenTrainRuns(goldenDir)) {
    try {
      const r = await replayGoldenTrainRun(goldenDir, dataDir, name, run, { precision: opts.precision });
      opts.log?.(`train/${name}: ${r.steps} steps in ${r.seconds.toFixed(1)} s`);
      out.push(...r.checks);
    } catch (e) {
      out.push({ name: `train/${name}`, ok: false, detail: (e as Error).message });
    }
  }
  return out;
}
