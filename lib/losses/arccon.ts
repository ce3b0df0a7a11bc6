/**
 * ArcCon, the additive angular margin contrastive loss of ArcCSE (Zhang et al., ACL 2022), the
 * SimACE paper's "ArcConLoss" baseline ("the modified cosine similarity inspired by ArcFace"; the
 * SimACE paper does not restate it, this is ArcCSE's pairwise objective). On a zigzag batch of two
 * views `[x0, x0', x1, x1', ...]`:
 *
 *   θ_ii' = arccos(cos(h_i, h_i'))
 *   L = −(1/N) Σ_i log( e^{cos(θ_ii' + m)/τ} / (e^{cos(θ_ii' + m)/τ} + Σ_{j≠i} e^{cos(h_i, h_j')/τ}) )
 *
 * The margin is added to the positive's angle (ArcFace-style), making the positive's logit
 * smaller; negatives keep the plain cosine. Defaults: m = 10 degrees (`marginUnit` explicit),
 * τ = 0.05 (SimACE's setting for ArcConLoss). Only the positive's angle needs arccos; its input is
 * clipped to keep the gradient finite (./angular.ts). cos(θ + m) is not monotonic once θ + m > π;
 * as in ArcCSE no fallback is applied (a positive pair that far apart is not a practical case).
 * ArcCSE's triplet (partial-order) objective is not part of this baseline.
 */
import { tf } from '../backend/index.js';
import { splitPairs, pairCount } from './batch.js';
import { diagonalCrossEntropy, eyeMask } from './cross-entropy.js';
import { checkContrastiveInputs } from './info-nce.js';
import { cosineMatrix } from './similarity.js';
import { ARCCOS_CLIP_EPS, clippedAcos, toRadians, type AngleUnit } from './angular.js';
import { assertEmbeddings, checkPositive } from './validate.js';
import { defineLoss, positivesOnly, withoutParameters } from './registry.js';

export const ARCCON_OBJECTIVE = 'ArcCon';
export const ARCCON_DEFAULT_TEMPERATURE = 0.05;
export const ARCCON_DEFAULT_MARGIN_DEGREES = 10;

export interface ArcconOptions {
  /** Softmax temperature τ; default 0.05. */
  temperature?: number;
  /** Additive angular margin m on the positive's angle; default 10 (degrees). */
  margin?: number;
  /** Unit of `margin`; default 'degrees'. */
  marginUnit?: AngleUnit;
  /** arccos input clipping; default 1e-6. */
  clipEps?: number;
}

/** ArcCon loss of anchors against their second views (separate [N, D] matrices). */
export function arcconInfoNceLoss(anchors: tf.Tensor2D, positives: tf.Tensor2D, opts: ArcconOptions = {}): tf.Scalar {
  const t = checkPositive(opts.temperature ?? ARCCON_DEFAULT_TEMPERATURE, 'temperature', ARCCON_OBJECTIVE);
  const m = toRadians(opts.margin ?? ARCCON_DEFAULT_MARGIN_DEGREES, opts.marginUnit ?? 'degrees', ARCCON_OBJECTIVE);
  const eps = opts.clipEps ?? ARCCOS_CLIP_EPS;
  checkContrastiveInputs(ARCCON_OBJECTIVE, anchors, positives);
  const n = anchors.shape[0];
  return tf.tidy(() => {
    const cos = cosineMatrix(anchors, positives);
    const eye = tf.tensor2d(eyeMask(n), [n, n]);
    const diagCos = tf.sum(tf.mul(cos, eye), 1, true);
    const positive = tf.cos(tf.add(clippedAcos(diagCos, eps), tf.scalar(m)));
    const offDiagonal = tf.mul(cos, tf.sub(tf.scalar(1), eye));
    const logits = tf.div(tf.add(offDiagonal, tf.mul(eye, positive)), tf.scalar(t)) as tf.Tensor2D;
    return diagonalCrossEntropy(logits);
  });
}

/** ArcCon loss of a zigzag two-view batch `[x0, x0', x1, x1', ...]`. */
export function arcconLoss(emb: tf.Tensor2D, opts: ArcconOptions = {}): tf.Scalar {
  assertEmbeddings(emb, ARCCON_OBJECTIVE);
  pairCount(emb.shape[0], ARCCON_OBJECTIVE);
  return tf.tidy(() => {
    const { first, second } = splitPairs(emb, ARCCON_OBJECTIVE);
    return arcconInfoNceLoss(first, second, opts);
  });
}

/** The options schema (keys of ArcconOptions; the compiler checks the list). */
const ARCCON_SCHEMA = { temperature: true, margin: true, marginUnit: true, clipEps: true } as const satisfies Record<keyof ArcconOptions, true>;

/** Registration of objective `arccon`: ArcCon on two views or on pairs (positives only: every pair labelled 1). */
export const ARCCON_LOSS = defineLoss({
  name: 'arccon',
  summary: 'ArcCon: InfoNCE over angles with an additive margin (pairs: positives only; unsupervised)',
  options: { options: ARCCON_SCHEMA },
  kinds: ['pairs', 'unsupervised'],
  bind: (config: { options?: ArcconOptions }, kind) =>
    withoutParameters((emb, b) => {
      if (kind === 'pairs') positivesOnly('arccon', b.labels);
      return { total: arcconLoss(emb, config.options), terms: {} };
    }),
});
