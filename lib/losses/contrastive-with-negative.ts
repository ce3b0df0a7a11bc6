/**
 * AnglE's contrastive objectives for (query, positive, negative) data (AnglE dataset format C,
 * rows `[q0, p0, n0, q1, ...]`, see ./batch.ts).
 *
 * - `contrastiveWithNegativeLoss(q, p, n?)`: AnglE v0.6.1 `loss.py::contrastive_with_negative_loss`,
 *   one cross-entropy CE(tau · q̂[p̂; n̂]ᵀ, diag) (or CE(tau · q̂p̂ᵀ, diag) without n). This is what
 *   the golden case `contrastive_with_negative_tau20` checks.
 * - `tripletContrastiveLoss(rows)`: what AnglE's `AngleLoss` trains on format C (and DESIGN §5 gives),
 *   ½ (w_ibn · CE(tau · q̂p̂ᵀ, diag) + w_cln · CE(tau · q̂[p̂; n̂]ᵀ, diag)), weights 1 and 1 by default;
 *   a weight of 0 drops its term (AnglE skips terms whose weight is not > 0).
 *
 * tau is a multiplier (20 = temperature 0.05). A single triplet is defined (softmax over [p, n]).
 */
import { tf } from '../backend/index.js';
import { InputError } from '../util/errors.js';
import { splitTriplets, tripletCount } from './batch.js';
import { checkContrastiveInputs, cosineInfoNce } from './info-nce.js';
import { assertEmbeddings, checkPositive } from './validate.js';

export const CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE = 'contrastive with negative';

export interface ContrastiveWithNegativeOptions {
  /** Scale applied to the cosines (AnglE: 20). */
  tau?: number;
}

export interface TripletContrastiveOptions extends ContrastiveWithNegativeOptions {
  /** Weight of CE(q, p) (AnglE's `ibn_w`, default 1). */
  ibnWeight?: number;
  /** Weight of CE(q, [p; n]) (AnglE's `cln_w`, default 1). */
  clnWeight?: number;
}

/** AnglE's `contrastive_with_negative_loss(query, positive, negative?)`. */
export function contrastiveWithNegativeLoss(
  query: tf.Tensor2D,
  positive: tf.Tensor2D,
  negative?: tf.Tensor2D,
  opts: ContrastiveWithNegativeOptions = {},
): tf.Scalar {
  const tau = checkPositive(opts.tau ?? 20, 'tau', CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE);
  checkContrastiveInputs(CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE, query, positive, negative);
  return cosineInfoNce(query, positive, negative, tau);
}

function checkWeight(w: number, name: string): number {
  if (typeof w !== 'number' || !Number.isFinite(w) || w < 0) {
    throw new InputError(`${CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE}: ${name} must be a finite number >= 0, got ${w}`);
  }
  return w;
}

/** ½ (w_ibn · CE(q, p) + w_cln · CE(q, [p; n])) on a triplet batch `[q0, p0, n0, ...]`. */
export function tripletContrastiveLoss(emb: tf.Tensor2D, opts: TripletContrastiveOptions = {}): tf.Scalar {
  const tau = checkPositive(opts.tau ?? 20, 'tau', CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE);
  const wIbn = checkWeight(opts.ibnWeight ?? 1, 'ibnWeight');
  const wCln = checkWeight(opts.clnWeight ?? 1, 'clnWeight');
  assertEmbeddings(emb, CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE);
  tripletCount(emb.shape[0], CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE);
  return tf.tidy(() => {
    const { query, positive, negative } = splitTriplets(emb, CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE);
    let total: tf.Scalar = tf.scalar(0);
    if (wIbn > 0) total = tf.add(total, tf.mul(cosineInfoNce(query, positive, undefined, tau), tf.scalar(wIbn)));
    if (wCln > 0) total = tf.add(total, tf.mul(cosineInfoNce(query, positive, negative, tau), tf.scalar(wCln)));
    return tf.mul(total, tf.scalar(0.5)) as tf.Scalar;
  });
}
