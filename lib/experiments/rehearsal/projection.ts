/**
 * Projecting a rehearsed run onto one H100 80 GB: its peak memory from the bytes measured on the
 * shape-only backend that mirrors `cuda` (lib/backend/shape-only), and its time from the tokens it
 * processes at the speed measured on the H100.
 *
 * Memory. The shape-only `meta` backend counts every live buffer of a step, in the cuda
 * allocator's size classes (`peakDeviceBytes`). What it does not see is the device allocator's
 * caching and fragmentation; that is calibrated against the one device peak on record — BERT-base,
 * 128 pairs × 64 tokens, fp32, 41,285 MiB (`bench/results/cuda-train-step-2026-11-22T16-20-29Z.json`,
 * an H100 run of bench/cuda-train-step.ts) — by measuring the same step on `meta` with the gradient
 * tape of that run (tfjs's `variableGrads`, before lib/backend/lean-tape.ts): the ratio of the two is
 * the allocator's share, applied to every projected peak. It is one calibration point, for one
 * model family and one batch shape, and the projection says so.
 *
 * Time. BERT-base: the tokens per second measured on the H100 in the same record (TF32, padded
 * tokens): 117k at 4,096 tokens per micro-batch, 194k at 16,384 (128×64), 201k at 16,384 (256×32),
 * interpolated in log-tokens and held flat beyond. Other models have no measured speed: their time
 * is their floating-point work at the model FLOPs utilisation (MFU) BERT-base reached there —
 * 6·P FLOPs per token for full training, 4·P for LoRA over a frozen base (no weight gradients of
 * the base), 2·P for encoding — and is labelled a FLOPs projection.
 */

/** The H100 record both projections read (bench/results/cuda-train-step-2026-11-22T16-20-29Z.json). */
export const H100_RECORD = 'bench/results/cuda-train-step-2026-11-22T16-20-29Z.json';

/** The device peak of that record at 128 pairs × 64 tokens, fp32 (MiB → bytes). */
export const H100_CALIBRATION_PEAK_BYTES = 41285.4091796875 * 2 ** 20;

/** The calibration shape: BERT-base, 128 pairs × 64 tokens (both sides of each pair). */
export const H100_CALIBRATION_SHAPE = { pairs: 128, tokens: 64 } as const;

/** One H100 80GB HBM3 (SXM, 132 SMs), as `nvidia-smi` reported its memory in that record: 81,559 MiB. */
export const H100_BYTES = 81559 * 2 ** 20;

/** The budget a recipe's projected peak must stay under (issue 27: ≤ 72 GB, headroom for the CUDA context and fragmentation). */
export const FIT_BUDGET_BYTES = 72 * 1e9;

/** BERT-base training tokens per second on the H100, TF32 (the record's three shapes: tokens per micro-batch → tokens/s). */
export const BERT_BASE_H100_TOKENS_PER_SECOND: ReadonlyArray<readonly [number, number]> = [
  [4096, 116988.43854472865],
  [16384, 197548.07], // mean of 128×64 (194,302) and 256×32 (200,794): the same tokens per micro-batch
];

/** H100 SXM dense TF32 peak (NVIDIA's datasheet: 494.7 TFLOP/s; the MFU below is against it). */
export const H100_TF32_PEAK_FLOPS = 494.7e12;

/** BERT-base parameters (HF bert-base-uncased: 109,482,240 in the encoder and embeddings). */
export const BERT_BASE_PARAMETERS = 109_482_240;

/** Tokens/s of BERT-base training on the H100 for a micro-batch of `tokens` tokens (see the file comment). */
export function bertBaseH100TokensPerSecond(tokens: number): number {
  const pts = BERT_BASE_H100_TOKENS_PER_SECOND;
  if (tokens <= pts[0][0]) return pts[0][1];
  if (tokens >= pts[pts.length - 1][0]) return pts[pts.length - 1][1];
  const [[x0, y0], [x1, y1]] = [pts[0], pts[1]];
  const f = (Math.log(tokens) - Math.log(x0)) / (Math.log(x1) - Math.log(x0));
  return y0 + f * (y1 - y0);
}

/** The MFU of BERT-base training at the record's largest shape: 6·P FLOPs per token against the TF32 peak. */
export function h100Mfu(): number {
  const [, tps] = BERT_BASE_H100_TOKENS_PER_SECOND[BERT_BASE_H100_TOKENS_PER_SECOND.length - 1];
  return (6 * BERT_BASE_PARAMETERS * tps) / H100_TF32_PEAK_FLOPS;
}

export type WorkKind = 'train' | 'lora' | 'encode';

/** FLOPs per token of a model with `parameters` parameters (see the file comment); activation checkpointing recomputes the forward pass in backward: 2·P more. */
export function flopsPerToken(parameters: number, kind: WorkKind, recompute = false): number {
  return ((kind === 'train' ? 6 : kind === 'lora' ? 4 : 2) + (recompute && kind !== 'encode' ? 2 : 0)) * parameters;
}

export interface TimeProjection {
  seconds: number;
  /** How it was projected, in a few words (shown beside the number). */
  basis: string;
}

/**
 * Seconds on one H100 for `tokens` tokens of work in micro-batches of `tokensPerMicroBatch`: the
 * measured BERT-base speed where the model is BERT-base sized and trains every weight, else the
 * FLOPs at BERT-base's MFU.
 */
export function projectH100Seconds(o: { tokens: number; tokensPerMicroBatch: number; parameters: number; kind: WorkKind; recompute?: boolean }): TimeProjection {
  const bertBase = Math.abs(o.parameters - BERT_BASE_PARAMETERS) / BERT_BASE_PARAMETERS < 0.05;
  if (bertBase && o.kind === 'train' && !o.recompute) {
    const tps = bertBaseH100TokensPerSecond(o.tokensPerMicroBatch);
    return { seconds: o.tokens / tps, basis: `BERT-base on the H100 at ${Math.round(tps / 1000)}k tokens/s (TF32, measured)` };
  }
  const mfu = h100Mfu();
  return {
    seconds: (o.tokens * flopsPerToken(o.parameters, o.kind, o.recompute)) / (mfu * H100_TF32_PEAK_FLOPS),
    basis: `FLOPs (${flopsPerToken(1, o.kind, o.recompute)}·P per token${o.recompute && o.kind !== 'encode' ? ', checkpointing included' : ''}) at BERT-base's measured H100 MFU ${(mfu * 100).toFixed(0)}%`,
  };
}
