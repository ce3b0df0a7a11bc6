/**
 * The one line a notebook prints when the `paper` preset runs on a CPU backend: the papers train
 * BERT-base (and LLaMA), which on this project's CPU backends takes minutes per optimiser step,
 * so the user learns at the first cell — not hours into notebook 01 — that the run cannot finish
 * there, and what to do instead.
 *
 * The figures are measurements, not estimates: bench/cpu-bert-base-train-step.ts (BERT-base, random
 * init, the training step of bench/cuda-train-step.ts at a small shape) on the development machine,
 * and the H100 figures of docs/gpu.md (bench/results/cuda-train-step-2026-11-22T16-20-29Z.json).
 * test/backend-auto.test.ts checks these constants against the committed result files.
 */
import type { BackendInfo } from '../backend/index.js';

/**
 * The CPU measurement quoted: bench/cpu-bert-base-train-step.ts, two runs on the development machine
 * while other jobs ran on it (1-minute load average 10–14 on 2 cores in the second, which records
 * it). The warning quotes the fastest step of each backend over the runs: a lower bound.
 */
export const CPU_BERT_BASE_TRAIN_STEP = {
  sources: ['bench/results/cpu-bert-base-train-step-2026-11-25T20-34-24-422Z.json', 'bench/results/cpu-bert-base-train-step-2026-11-25T21-04-22-037Z.json'],
  where: 'the 2-core development machine',
  pairs: 2,
  tokens: 16,
  secondsPerStep: { wasm: 62.31, cpu: 133.98 } as Record<'wasm' | 'cpu', number>,
} as const;

/** BERT-base training throughput on one H100 with the cuda backend, slowest and fastest configuration (docs/gpu.md). */
export const H100_CUDA_TOKENS_PER_SECOND = {
  source: 'bench/results/cuda-train-step-2026-11-22T16-20-29Z.json',
  min: 59_077,
  max: 200_794,
} as const;

/** Backends that compute on the host CPU, for which the warning applies. */
const CPU_BACKENDS = ['cpu', 'wasm'] as const;

/**
 * The warning for `preset` on `backend`, or undefined when there is nothing to say (another preset,
 * or a device backend).
 */
export function paperBackendWarning(preset: string | undefined, backend: Pick<BackendInfo, 'name'>): string | undefined {
  if (preset !== 'paper') return undefined;
  const name = backend.name as string;
  if (!(CPU_BACKENDS as readonly string[]).includes(name)) return undefined;
  const m = CPU_BERT_BASE_TRAIN_STEP;
  const seconds = m.secondsPerStep[name as 'wasm' | 'cpu'];
  const tokensPerSecond = (m.pairs * 2 * m.tokens) / seconds;
  const h = H100_CUDA_TOKENS_PER_SECOND;
  return (
    `warning: the paper preset is running on the ${name} backend, where training BERT-base is infeasible: ` +
    `one training step at ${m.pairs} pairs × ${m.tokens} tokens took at best ${seconds.toFixed(0)} s on ${name} (${tokensPerSecond.toFixed(1)} tokens/s; measured on ${m.where}, bench/results/cpu-bert-base-train-step-*.json), ` +
    `against ${h.min.toLocaleString('en-US')}–${h.max.toLocaleString('en-US')} tokens/s on one H100 with the cuda backend (docs/gpu.md). ` +
    'Run it on a GPU host (`npm run build:cuda`, then ANGLE_BACKEND=auto picks cuda; docs/gpu.md), or use `--preset smoke` here.'
  );
}
