/**
 * The one calibration of the rehearsal's memory projection (./projection.ts): the ratio of the
 * device peak on record — BERT-base, 128 pairs × 64 tokens, fp32, on the H100 — to what the
 * shape-only `meta` backend predicts for the step that run took, as that run took it: two steps of
 * bench/cuda-train-step.ts (random ids, [CLS], the cosine objective, AdamW on every parameter,
 * tf.variableGrads) and, as the code of that commit did, one stale initial copy kept by every
 * updated parameter (lib/models/parameters.ts frees it now). What the ratio carries beyond 1 is what
 * the shape-only backend does not model: the device allocator's caching and fragmentation.
 * bench/train-memory.ts's `calibration` section prints the same comparison.
 */
import { tf } from '../../backend/index.js';
import { deviceSizeClass, shapeOnlyBackend, withShapeOnlyBackend } from '../../backend/shape-only/index.js';
import { pool } from '../../embed/pooling.js';
import { cosineLoss } from '../../losses/cosine.js';
import { KNOWN_CONFIGS, modelFromConfig } from '../../models/model-from-config.js';
import { AdamW, gradientsByParameterName } from '../../train/adamw.js';
import { H100_CALIBRATION_PEAK_BYTES, H100_CALIBRATION_SHAPE } from './projection.js';

let cached: { ratio: number; predictedBytes: number } | undefined;

/**
 * bench/cuda-train-step.ts's step of BERT-base at `pairs` × `tokens` on the shape-only backend that
 * mirrors cuda: its peak device bytes, and the stale initial copies every updated parameter kept at
 * the recorded commit (their device size classes). bench/train-memory.ts's `calibration` section
 * runs it at each recorded shape.
 */
export async function predictCudaTrainStepPeak(pairs: number, tokens: number): Promise<{ peakDeviceBytes: number; stale: number }> {
  return withShapeOnlyBackend(async () => {
    const backend = shapeOnlyBackend('cuda');
    backend.resetPeak();
    const model = modelFromConfig(KNOWN_CONFIGS['google-bert/bert-base-uncased'], { dropoutSeed: 7 });
    const B = 2 * pairs;
    const batch = { inputIds: new Int32Array(B * tokens).fill(1000), tokenTypeIds: new Int32Array(B * tokens), attentionMask: new Int32Array(B * tokens).fill(1), batch: B, seqLen: tokens };
    const labels = Array.from({ length: pairs }, (_, i) => i % 6);
    const vars = [...model.params.values()];
    const opt = new AdamW(model.params, { weightDecay: 0.01, noDecay: () => false });
    let stale = 0;
    try {
      for (let s = 0; s < 2; s++) {
        // tf.variableGrads, as that benchmark's step does.
        const { value, grads } = tf.variableGrads(() => {
          const out = model.forward(batch, { training: true });
          const mask = tf.tensor2d(batch.attentionMask, [B, tokens], 'int32');
          return cosineLoss(pool('cls', { lastHiddenState: out.lastHiddenState, attentionMask: mask }), labels);
        }, vars);
        if (s === 0) for (const g of Object.values(grads)) stale += deviceSizeClass(4 * g.size);
        opt.step(gradientsByParameterName(model.params, grads), 2e-5);
        tf.dispose(grads);
        value.dispose();
      }
    } finally {
      opt.dispose();
      model.dispose();
    }
    return { peakDeviceBytes: backend.memoryCounters().peakDeviceBytes, stale };
  });
}

/** device peak on record / shape-only prediction of the same step (computed once per process, about a second). */
export async function h100Calibration(): Promise<{ ratio: number; predictedBytes: number }> {
  if (cached) return cached;
  const { pairs, tokens } = H100_CALIBRATION_SHAPE;
  const m = await predictCudaTrainStepPeak(pairs, tokens);
  const predicted = m.peakDeviceBytes + m.stale;
  cached = { ratio: H100_CALIBRATION_PEAK_BYTES / predicted, predictedBytes: predicted };
  return cached;
}
