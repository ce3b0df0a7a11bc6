/**
 * SimCSE's InfoNCE objectives (Gao et al. 2021), cosine similarity over a temperature:
 *
 *   L = −(1/N) Σ_i log( e^{cos(h_i, h_i⁺)/τ} / Σ_j (e^{cos(h_i, h_j⁺)/τ} + e^{cos(h_i, h_j⁻)/τ}) )
 *
 * - supervised (`simcseSupervisedLoss`): a triplet batch `[h0, h0⁺, h0⁻, h1, ...]` (NLI: premise,
 *   entailment, contradiction); every anchor sees all positives and all hard negatives of the batch.
 * - supervised without hard negatives / unsupervised (`simcsePairLoss`, `simcseUnsupervisedLoss`):
 *   a zigzag batch `[h0, h0⁺, h1, h1⁺, ...]`; the negative sum is empty. Unsupervised SimCSE
 *   encodes each sentence twice with dropout on, so row 2k+1 is the second view of row 2k's
 *   sentence (SimCSE lays the two views out the same way, `(bs, 2, hidden)`).
 *
 * Temperature τ = 0.05 by default (SimCSE). The loss is not symmetrised (as SimCSE's code). A
 * single pair gives 0 (the softmax has one candidate).
 */
import { tf } from '../backend/index.js';
import { splitPairs, splitTriplets, tripletCount, pairCount } from './batch.js';
import { checkContrastiveInputs, cosineInfoNce } from './info-nce.js';
import { assertEmbeddings, checkPositive } from './validate.js';
import { defineLoss, positivesOnly, withoutParameters } from './registry.js';

export const SIMCSE_OBJECTIVE = 'SimCSE';
export const SIMCSE_DEFAULT_TEMPERATURE = 0.05;

export interface SimcseOptions {
  /** Softmax temperature τ (logits are cos / τ); default 0.05. */
  temperature?: number;
}

/** InfoNCE of anchors against [positives; negatives] at temperature τ (separate matrices). */
export function infoNceLoss(
  anchors: tf.Tensor2D,
  positives: tf.Tensor2D,
  negatives?: tf.Tensor2D,
  opts: SimcseOptions = {},
): tf.Scalar {
  const t = checkPositive(opts.temperature ?? SIMCSE_DEFAULT_TEMPERATURE, 'temperature', SIMCSE_OBJECTIVE);
  checkContrastiveInputs(SIMCSE_OBJECTIVE, anchors, positives, negatives);
  return cosineInfoNce(anchors, positives, negatives, 1 / t);
}

/** Supervised SimCSE with hard negatives on a triplet batch `[h0, h0⁺, h0⁻, ...]`. */
export function simcseSupervisedLoss(emb: tf.Tensor2D, opts: SimcseOptions = {}): tf.Scalar {
  const t = checkPositive(opts.temperature ?? SIMCSE_DEFAULT_TEMPERATURE, 'temperature', SIMCSE_OBJECTIVE);
  assertEmbeddings(emb, SIMCSE_OBJECTIVE);
  tripletCount(emb.shape[0], SIMCSE_OBJECTIVE);
  return tf.tidy(() => {
    const { query, positive, negative } = splitTriplets(emb, SIMCSE_OBJECTIVE);
    return cosineInfoNce(query, positive, negative, 1 / t);
  });
}

/** SimCSE InfoNCE on a zigzag batch `[h0, h0⁺, h1, h1⁺, ...]` (positives only, in-batch negatives). */
export function simcsePairLoss(emb: tf.Tensor2D, opts: SimcseOptions = {}): tf.Scalar {
  const t = checkPositive(opts.temperature ?? SIMCSE_DEFAULT_TEMPERATURE, 'temperature', SIMCSE_OBJECTIVE);
  assertEmbeddings(emb, SIMCSE_OBJECTIVE);
  pairCount(emb.shape[0], SIMCSE_OBJECTIVE);
  return tf.tidy(() => {
    const { first, second } = splitPairs(emb, SIMCSE_OBJECTIVE);
    return cosineInfoNce(first, second, undefined, 1 / t);
  });
}

/** Unsupervised SimCSE: zigzag batch of two dropout views `[x0, x0', x1, x1', ...]`. */
export function simcseUnsupervisedLoss(emb: tf.Tensor2D, opts: SimcseOptions = {}): tf.Scalar {
  return simcsePairLoss(emb, opts);
}

/**
 * Registration of objective `simcse`: supervised SimCSE on triplets, unsupervised SimCSE on two
 * views, InfoNCE over positives on pairs (every pair must be labelled 1).
 */
export const SIMCSE_LOSS = defineLoss({
  name: 'simcse',
  summary: 'SimCSE InfoNCE (triplets: supervised; unsupervised: two dropout views; pairs: positives only)',
  options: { temperature: true },
  kinds: ['pairs', 'triplets', 'unsupervised'],
  bind: (config: { temperature?: number }, kind) => {
    const o = { temperature: config.temperature };
    if (kind === 'triplets') return withoutParameters((emb) => ({ total: simcseSupervisedLoss(emb, o), terms: {} }));
    if (kind === 'unsupervised') return withoutParameters((emb) => ({ total: simcseUnsupervisedLoss(emb, o), terms: {} }));
    return withoutParameters((emb, b) => {
      positivesOnly('simcse', b.labels);
      return { total: simcsePairLoss(emb, o), terms: {} };
    });
  },
});
