/**
 * SimACE (angle-based InfoNCE with a subtractive angular margin; the SimACE paper in papers/,
 * Eq. 7 and 9), on a zigzag batch of two views `[x0, x0', x1, x1', ...]` (as unsupervised SimCSE).
 *
 *   θ_ij = π/2 − arccos(cos(h_i, h_j'))                          (radians, in [−π/2, π/2])
 *   L = −(1/N) Σ_i log( e^{(θ_ii' − m)/τ} / (e^{(θ_ii' − m)/τ} + Σ_{j≠i} e^{θ_ij'/τ}) )
 *
 * The margin m is subtracted from the positive's angle similarity (a harder positive). Defaults:
 * m = 10 degrees (`margin: 10, marginUnit: 'degrees'`; converted to radians since θ is in radians),
 * τ = 0.06 (SimACE Table 7, BERT-base; 0.05 for RoBERTa). m = 0 is plain angular InfoNCE (Eq. 8);
 * a negative m is the additive-margin variant of SimACE's Table 14. arccos is clipped (./angular.ts).
 */
import { tf } from '../backend/index.js';
import { splitPairs, pairCount } from './batch.js';
import { diagonalCrossEntropy, eyeMask } from './cross-entropy.js';
import { checkContrastiveInputs } from './info-nce.js';
import { cosineMatrix } from './similarity.js';
import { ARCCOS_CLIP_EPS, clippedAcos, toRadians, type AngleUnit } from './angular.js';
import { assertEmbeddings, checkPositive } from './validate.js';
import { defineLoss, positivesOnly, withoutParameters } from './registry.js';

export const SIMACE_OBJECTIVE = 'SimACE';
export const SIMACE_DEFAULT_TEMPERATURE = 0.06;
export const SIMACE_DEFAULT_MARGIN_DEGREES = 10;

export interface SimaceOptions {
  /** Softmax temperature τ; default 0.06. */
  temperature?: number;
  /** Angular margin m subtracted from the positive's similarity; default 10 (degrees). */
  margin?: number;
  /** Unit of `margin`; default 'degrees'. */
  marginUnit?: AngleUnit;
  /** arccos input clipping; default 1e-6. */
  clipEps?: number;
}

/** SimACE loss of anchors against their second views (separate [N, D] matrices). */
export function simaceInfoNceLoss(anchors: tf.Tensor2D, positives: tf.Tensor2D, opts: SimaceOptions = {}): tf.Scalar {
  const t = checkPositive(opts.temperature ?? SIMACE_DEFAULT_TEMPERATURE, 'temperature', SIMACE_OBJECTIVE);
  const m = toRadians(opts.margin ?? SIMACE_DEFAULT_MARGIN_DEGREES, opts.marginUnit ?? 'degrees', SIMACE_OBJECTIVE);
  const eps = opts.clipEps ?? ARCCOS_CLIP_EPS;
  checkContrastiveInputs(SIMACE_OBJECTIVE, anchors, positives);
  const n = anchors.shape[0];
  return tf.tidy(() => {
    const theta = tf.sub(tf.scalar(Math.PI / 2), clippedAcos(cosineMatrix(anchors, positives), eps));
    const margin = tf.mul(tf.tensor2d(eyeMask(n), [n, n]), tf.scalar(m));
    const logits = tf.div(tf.sub(theta, margin), tf.scalar(t)) as tf.Tensor2D;
    return diagonalCrossEntropy(logits);
  });
}

/** SimACE loss of a zigzag two-view batch `[x0, x0', x1, x1', ...]`. */
export function simaceLoss(emb: tf.Tensor2D, opts: SimaceOptions = {}): tf.Scalar {
  assertEmbeddings(emb, SIMACE_OBJECTIVE);
  pairCount(emb.shape[0], SIMACE_OBJECTIVE);
  return tf.tidy(() => {
    const { first, second } = splitPairs(emb, SIMACE_OBJECTIVE);
    return simaceInfoNceLoss(first, second, opts);
  });
}

/** The options schema (keys of SimaceOptions; the compiler checks the list). */
const SIMACE_SCHEMA = { temperature: true, margin: true, marginUnit: true, clipEps: true } as const satisfies Record<keyof SimaceOptions, true>;

/** Registration of objective `simace`: SimACE on two views or on pairs (positives only: every pair labelled 1). */
export const SIMACE_LOSS = defineLoss({
  name: 'simace',
  summary: 'SimACE: InfoNCE over angles with an additive margin (pairs: positives only; unsupervised)',
  options: { options: SIMACE_SCHEMA },
  kinds: ['pairs', 'unsupervised'],
  bind: (config: { options?: SimaceOptions }, kind) =>
    withoutParameters((emb, b) => {
      if (kind === 'pairs') positivesOnly('simace', b.labels);
      return { total: simaceLoss(emb, config.options), terms: {} };
    }),
});
