/**
 * AnglE's in-batch negatives objective (ibn) on a zigzag pair batch (see ./batch.ts).
 *
 * All 2P rows are compared with each other: logits = tau · cos(e_r, e_c) with the diagonal
 * (self-similarity) masked out (−1e12 before scaling, as AnglE). Row r's target is its partner
 * row (r xor 1) when its pair is positive; rows of negative pairs have no target, contribute 0
 * and still count in the mean over all 2P rows (as AnglE's code: `CE(...).mean()`).
 *
 *   L = −(1 / 2P) Σ_r Σ_c T_rc · log softmax_c(logits_r)
 *
 * Which pairs are positive (`positives`):
 * - 'binary' (default): labels must be 0 or 1; label 1 = positive. Anything else is an error.
 * - 'angle-int': AnglE v0.6.1's target matrix exactly. It casts labels to int (truncation) and
 *   matches `c·int(y_c)` against `partner(r)·int(y_r)`, which for 0/1 labels is the rule above
 *   but for graded labels (STS 0..5) marks every pair with int(y) ≥ 1 as positive (0.5 -> negative)
 *   and can add spurious extra targets where two index×label products collide (e.g. c = 2,
 *   y_c = 3 and partner(r) = 3, y_r = 2). Use only to reproduce AnglE.
 * - `{ threshold: t }`: label >= t is positive (graded labels binarised explicitly; serialisable,
 *   so a recipe or a results file can record it).
 * - a predicate `(label) => boolean`, e.g. `y => y >= 4`, for anything else.
 *
 * Identical sentences in a batch (the paper's ISP case) — `duplicates`, needs `keys` (one per
 * row: the text, or its token ids joined) unless 'ignore':
 * - 'ignore' (default): nothing special; a duplicate of row r is one more negative of r. This is
 *   what AnglE's `in_batch_negative_loss` does (golden-checked). AnglE handles ISP before the loss
 *   instead: its data collator drops every example whose text (token ids) already occurs earlier in
 *   the batch (`filter_duplicate=True`); ./batch.ts `filterDuplicateExamples` reproduces that.
 * - 'drop': duplicates of row r are removed from r's softmax (masked like self), so they are
 *   neither pushed away nor pulled in (a duplicate that is r's own target stays the target).
 * - 'positive': duplicates of row r become targets of r, in addition to the partner; each row's
 *   targets are then normalised to sum to 1 (cross-entropy against a distribution), so a row with
 *   several positives weighs as much as a row with one.
 *
 * Edge cases: all labels 0 -> 0 (no targets); a single positive pair -> 0 (the partner is the only
 * candidate left after masking self).
 */
import { tf } from '../backend/index.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import { duplicateRows, pairCount } from './batch.js';
import { softTargetCrossEntropy } from './cross-entropy.js';
import { l2Normalize } from './similarity.js';
import { assertEmbeddings, checkLabels, checkPositive } from './validate.js';

export const IBN_OBJECTIVE = 'in-batch negatives (ibn)';

/** How identical sentences inside one batch are treated; see the module comment. */
export type DuplicateHandling = 'ignore' | 'drop' | 'positive';
export const DUPLICATE_HANDLINGS: readonly DuplicateHandling[] = ['ignore', 'drop', 'positive'];

/** Which pair labels count as positive; see the module comment. */
export type IbnPositives = 'binary' | 'angle-int' | { threshold: number } | ((label: number) => boolean);

export interface InBatchNegativesOptions {
  /** Scale applied to the cosines (AnglE: 20). */
  tau?: number;
  /** Default 'binary'. */
  positives?: IbnPositives;
  /** ISP handling, default 'ignore' (AnglE's loss). */
  duplicates?: DuplicateHandling;
  /** One key per row identifying its sentence; required when `duplicates` is not 'ignore'. */
  keys?: readonly (string | number)[];
}

const MASKED = 1e12;

/**
 * The target matrix T (row-major 2P × 2P) and the extra logit mask (1 where a column is removed
 * from a row's softmax, self included) for the given labels and options.
 */
export function inBatchTargets(
  labels: Float64Array,
  opts: Pick<InBatchNegativesOptions, 'positives' | 'duplicates' | 'keys'> = {},
): { targets: Float32Array; removed: Float32Array } {
  const pairs = labels.length;
  const n = 2 * pairs;
  const positives = opts.positives ?? 'binary';
  const duplicates = opts.duplicates ?? 'ignore';
  if (!DUPLICATE_HANDLINGS.includes(duplicates)) {
    throw new UnknownNameError(`${IBN_OBJECTIVE} duplicates mode`, String(duplicates), DUPLICATE_HANDLINGS);
  }
  const partner = (r: number) => r + 1 - (r % 2) * 2;
  const rowLabel = (r: number) => labels[Math.floor(r / 2)];
  const targets = new Float32Array(n * n);

  if (positives === 'angle-int') {
    const t = (r: number) => Math.trunc(rowLabel(r));
    const col = (c: number) => (t(c) !== 0 ? c * t(c) : -2);
    const row = (r: number) => (t(r) !== 0 ? partner(r) * t(r) : -1);
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (col(c) === row(r)) targets[r * n + c] = 1;
  } else {
    let isPositive: (y: number, k: number) => boolean;
    if (positives === 'binary') {
      isPositive = (y, k) => {
        if (y !== 0 && y !== 1) {
          throw new InputError(
            `${IBN_OBJECTIVE}: pair ${k} has label ${y}; in-batch negatives needs binary 0/1 labels ` +
              "(pass positives: { threshold: t } to binarise graded labels, or positives: 'angle-int' to reproduce AnglE's int cast)",
          );
        }
        return y === 1;
      };
    } else if (typeof positives === 'function') {
      isPositive = (y) => positives(y) === true;
    } else if (typeof positives === 'object' && positives !== null && Number.isFinite(positives.threshold)) {
      const t = positives.threshold;
      isPositive = (y) => y >= t;
    } else {
      throw new UnknownNameError(`${IBN_OBJECTIVE} positives mode`, JSON.stringify(positives) ?? String(positives), ['binary', 'angle-int', '{ threshold: number }', '(a function)']);
    }
    for (let k = 0; k < pairs; k++) {
      if (isPositive(labels[k], k)) {
        targets[2 * k * n + 2 * k + 1] = 1;
        targets[(2 * k + 1) * n + 2 * k] = 1;
      }
    }
  }

  const removed = new Float32Array(n * n);
  for (let r = 0; r < n; r++) removed[r * n + r] = 1;

  if (duplicates !== 'ignore') {
    const keys = opts.keys;
    if (!keys) {
      throw new InputError(`${IBN_OBJECTIVE}: duplicates '${duplicates}' needs keys (one per row identifying its sentence)`);
    }
    if (keys.length !== n) {
      throw new InputError(`${IBN_OBJECTIVE}: got ${keys.length} keys for ${n} rows (expected one key per row)`);
    }
    const dups = duplicateRows(keys);
    for (let r = 0; r < n; r++) {
      for (const c of dups[r]) {
        if (duplicates === 'drop') {
          if (targets[r * n + c] === 0) removed[r * n + c] = 1;
        } else {
          targets[r * n + c] = 1;
        }
      }
    }
    if (duplicates === 'positive') {
      for (let r = 0; r < n; r++) {
        let s = 0;
        for (let c = 0; c < n; c++) s += targets[r * n + c];
        if (s > 1) for (let c = 0; c < n; c++) targets[r * n + c] /= s;
      }
    }
  }
  return { targets, removed };
}

/** In-batch negatives loss of a zigzag batch `emb` [2P, D] with one label per pair. */
export function inBatchNegativesLoss(
  emb: tf.Tensor2D,
  labels: ArrayLike<number>,
  opts: InBatchNegativesOptions = {},
): tf.Scalar {
  const tau = checkPositive(opts.tau ?? 20, 'tau', IBN_OBJECTIVE);
  assertEmbeddings(emb, IBN_OBJECTIVE);
  const pairs = pairCount(emb.shape[0], IBN_OBJECTIVE);
  const y = checkLabels(labels, pairs, IBN_OBJECTIVE);
  const { targets, removed } = inBatchTargets(y, opts);
  const n = 2 * pairs;
  return tf.tidy(() => {
    const e = l2Normalize(emb);
    const sim = tf.matMul(e, e, false, true);
    const penalty = tf.mul(tf.tensor2d(removed, [n, n]), tf.scalar(MASKED));
    const logits = tf.mul(tf.sub(sim, penalty), tf.scalar(tau)) as tf.Tensor2D;
    return tf.mean(softTargetCrossEntropy(logits, targets)) as tf.Scalar;
  });
}
