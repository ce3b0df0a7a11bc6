/**
 * A results folder for the report tests, written by the real writer (lib/report/training-record.ts
 * writeTrainingRecord) from hand-made TrainResult-shaped objects: experiment 'table4' with
 * - config 'cls' (AnglE objective, all three terms, cls pooling): seeds 1, 2, 3;
 * - config 'last-avg' (same objective, last-avg pooling): seeds 1, 2;
 * - config 'w/o ibn' (ibn weight 0, cls pooling): seed 1;
 * every run with a predictions sidecar over the same 150 synthetic test pairs (its test Spearman is
 * the Spearman of its predictions, as the trainer's evaluator computes it), plus bad files:
 * a truncated record, a foreign JSON file, an orphan sidecar and a text file.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spearman } from '../../lib/eval/spearman.js';
import type { Provenance } from '../../lib/report/provenance.js';
import { writeTrainingRecord } from '../../lib/report/training-record.js';
import type { TrainResult } from '../../lib/train/trainer.js';
import { mulberry32Uniform } from '../../lib/util/mulberry32.js';

export const EXPERIMENT = 'table4';
export const PAIRS = 150;

export const PROVENANCE: Provenance = {
  gitCommit: '0123456789abcdef0123456789abcdef01234567',
  gitDirty: false,
  node: 'v20.0.0',
  platform: 'linux x64',
  cpu: 'Test CPU x 2',
  memoryGiB: 8,
  hostname: 'test',
  backend: 'cpu',
  device: 'Test CPU (2 cores, x64)',
  packages: { '@tensorflow/tfjs-core': '4.22.0' },
};

export const MODEL = { id: 'bert-base-uncased', commit: '86b5e0934494bd15c9632b12f734a8a67f723594', weightsSha256: 'ab'.repeat(32) };

/** mulberry32: a small seeded generator, so the fixture is the same on every machine. */
function generator(seed: number): () => number {
  return mulberry32Uniform(seed);
}

/** Gold scores 0..5 in steps of 0.2 (ties, as STS-B has). */
export function goldScores(): number[] {
  const rnd = generator(7);
  return Array.from({ length: PAIRS }, () => Math.round(rnd() * 25) / 5);
}

/** A run's cosine predictions: gold/5 plus noise of the given size (its own seed). */
export function predictionsFor(gold: readonly number[], noise: number, seed: number): number[] {
  const rnd = generator(seed);
  return gold.map((g) => g / 5 + noise * (rnd() - 0.5));
}

export interface FixtureRun {
  name: 'cls' | 'last-avg' | 'w/o ibn';
  seed: number;
  runId: string;
  predictions: number[];
  gold: number[];
  /** The test Spearman ρ (not × 100) the trainer would report. */
  testSpearman: number;
  devSpearman: number;
}

const CONFIGS = {
  cls: { pooling: 'cls', ibn: 1, noise: 0.6 },
  'last-avg': { pooling: 'last-avg', ibn: 1, noise: 0.9 },
  'w/o ibn': { pooling: 'cls', ibn: 0, noise: 0.75 },
} as const;

export function trainResult(run: FixtureRun): TrainResult {
  const c = CONFIGS[run.name];
  const config = {
    objective: { name: 'angle' as const, loss: { preset: 'paper' as const, weights: { cosine: 1, ibn: c.ibn, angle: 1 } } },
    pooling: c.pooling,
    maxLength: 64,
    batchSize: 32,
    epochs: 1,
    lr: 2e-5,
    schedule: 'linear' as const,
    warmupFraction: 0.1,
    seed: run.seed,
    evalEvery: 10,
  };
  const log = Array.from({ length: 20 }, (_, step) => ({ step, epoch: 0, lr: 2e-5, loss: 10 - step * 0.1, terms: {}, tokens: 900, seconds: 0.5 }));
  return {
    steps: 20,
    log,
    evals: [{ step: 10, metrics: { spearman: run.devSpearman }, seconds: 1 }],
    best: { metric: 'spearman', value: run.devSpearman, step: 10 },
    final: { spearman: run.devSpearman },
    test: {
      metrics: { spearman: run.testSpearman },
      predictions: Float64Array.from(run.predictions),
      gold: Float64Array.from(run.gold),
      weights: 'best dev spearman (step 10)',
      evaluator: 'synthetic test',
      rows: PAIRS,
    },
    startedAt: `2026-01-01T00:00:${String(run.seed + (run.name === 'cls' ? 0 : run.name === 'last-avg' ? 10 : 20)).padStart(2, '0')}.000Z`,
    wallSeconds: 12.5,
    tokensSeen: 18000,
    complete: true,
    interrupted: false,
    identity: {
      config,
      resolved: { pooling: c.pooling as 'cls', accumulation: 1, totalSteps: 20, stepsPerEpoch: 20, schedule: { name: 'linear', lr: 2e-5, warmupSteps: 2, totalSteps: 20 }, seed: run.seed },
      train: { id: 'STSBenchmark train', rows: 640, sha256: 'cd'.repeat(32) },
      dev: { id: 'STSBenchmark dev', rows: 100 },
      test: { id: 'synthetic test', rows: PAIRS },
      trainableParameters: 10,
      frozenParameters: 0,
      decayedParameters: 5,
    },
  } as unknown as TrainResult;
}

export interface ResultsFixture {
  resultsDir: string;
  runs: FixtureRun[];
  /** Paths of the bad files. */
  truncated: string;
  foreign: string;
  orphanSidecar: string;
}

/** Writes the fixture folder under `resultsDir`. */
export function writeResultsFixture(resultsDir: string): ResultsFixture {
  const gold = goldScores();
  const runs: FixtureRun[] = [];
  const plan: [FixtureRun['name'], number][] = [['cls', 1], ['cls', 2], ['cls', 3], ['last-avg', 1], ['last-avg', 2], ['w/o ibn', 1]];
  plan.forEach(([name, seed], i) => {
    const predictions = predictionsFor(gold, CONFIGS[name].noise, 100 + i);
    const run: FixtureRun = {
      name,
      seed,
      runId: `2026-01-01T00-00-0${i}Z-${name === 'cls' ? 'c1' : name === 'last-avg' ? 'la' : 'wi'}0${seed}`,
      predictions,
      gold,
      testSpearman: spearman(predictions, gold),
      devSpearman: 0.8 + 0.01 * i,
    };
    runs.push(run);
    writeTrainingRecord(trainResult(run), {
      experiment: EXPERIMENT,
      resultsDir,
      provenance: PROVENANCE,
      model: MODEL,
      runId: run.runId,
      paper: { test_spearman: { value: name === 'last-avg' ? 84.15 : name === 'cls' ? 86.26 : 86.0, source: '000_c0fdd0968b088fcd.txt, Table 4' } },
    });
  });
  const dir = join(resultsDir, EXPERIMENT);
  // A record cut off mid-write (what a crash without atomic writes leaves).
  const whole = readFileSync(join(dir, `${runs[0]!.runId}.json`), 'utf8');
  const truncated = join(dir, '2026-01-02T00-00-00Z-trnc.json');
  writeFileSync(truncated, whole.slice(0, Math.floor(whole.length / 3)));
  const foreign = join(dir, 'package.json');
  writeFileSync(foreign, JSON.stringify({ name: 'something-else', version: '1.0.0', dependencies: {} }, null, 2));
  const orphanSidecar = join(dir, '2026-01-03T00-00-00Z-orph.predictions.json');
  writeFileSync(orphanSidecar, JSON.stringify({ runId: '2026-01-03T00-00-00Z-orph', evaluator: 'x', weights: 'x', predictions: [1, 2, 3], gold: [1, 2, 3] }));
  writeFileSync(join(dir, 'notes.txt'), 'not a results file');
  mkdirSync(join(dir, 'runs', 'some-run'), { recursive: true });
  writeFileSync(join(dir, 'runs', 'some-run', 'trainer-state.json'), '{"not": "read"}');
  return { resultsDir, runs, truncated, foreign, orphanSidecar };
}
