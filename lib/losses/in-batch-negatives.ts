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
import { eyeMask, softTargetCrossEntropy } from './cross-entropy.js';
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

/** The batch's size (P pairs, 2P rows) and the options with their defaults, the duplicates mode checked. */
function batchSetting(labels: Float64Array, opts: Pick<InBatchNegativesOptions, 'positives' | 'duplicates'>): { pairs: number; n: number; positives: IbnPositives; duplicates: DuplicateHandling } {
  const duplicates = opts.duplicates ?? 'ignore';
  if (!DUPLICATE_HANDLINGS.includes(duplicates)) {
    throw new UnknownNameError(`${IBN_OBJECTIVE} duplicates mode`, String(duplicates), DUPLICATE_HANDLINGS);
  }
  return { pairs: labels.length, n: 2 * labels.length, positives: opts.positives ?? 'binary', duplicates };
}

/** The other row of row r's pair (rows 2i and 2i + 1 are pair i's two sentences). */
const partner = (r: number) => r + 1 - (r % 2) * 2;

/**
 * The target matrix T (row-major 2P × 2P) and the extra logit mask (1 where a column is removed
 * from a row's softmax, self included) for the given labels and options.
 */
export function inBatchTargets(
  labels: Float64Array,
  opts: Pick<InBatchNegativesOptions, 'positives' | 'duplicates' | 'keys'> = {},
): { targets: Float32Array; removed: Float32Array } {
  const { pairs, n, positives, duplicates } = batchSetting(labels, opts);
  const rowLabel = (r: number) => labels[Math.floor(r / 2)];
  const targets = new Float32Array(n * n);

  if (positives === 'angle-int') {
    const t = (r: number) => Math.trunc(rowLabel(r));
    const col = (c: number) => (t(c) !== 0 ? c * t(c) : -2);
    const row = (r: number) => (t(r) !== 0 ? partner(r) * t(r) : -1);
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (col(c) === row(r)) targets[r * n + c] = 1;
  } else {
    const isPositive = positivePredicate(positives);
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

/** Whether pair k with label y is positive, for every `positives` mode but 'angle-int'; throws on a non-binary label in 'binary' mode. */
function positivePredicate(positives: Exclude<IbnPositives, 'angle-int'>): (y: number, k: number) => boolean {
  if (positives === 'binary') {
    return (y, k) => {
      if (y !== 0 && y !== 1) {
        throw new InputError(
          `${IBN_OBJECTIVE}: pair ${k} has label ${y}; in-batch negatives needs binary 0/1 labels ` +
            "(pass positives: { threshold: t } to binarise graded labels, or positives: 'angle-int' to reproduce AnglE's int cast)",
        );
      }
      return y === 1;
    };
  }
  if (typeof positives === 'function') return (y) => positives(y) === true;
  if (typeof positives === 'object' && positives !== null && Number.isFinite(positives.threshold)) {
    const t = positives.threshold;
    return (y) => y >= t;
  }
  throw new UnknownNameError(`${IBN_OBJECTIVE} positives mode`, JSON.stringify(positives) ?? String(positives), ['binary', 'angle-int', '{ threshold: number }', '(a function)']);
}

/**
 * What inBatchTargets reads of a batch's labels and keys, as int32 vectors of the batch's shape, so
 * that the target and mask matrices can be built on the device (inBatchNegativesLossByCodes) and a
 * step graph can feed them (lib/train/step-graphs.ts): T[r][c] = 1 exactly when
 * targetCols[c] === targetRows[r] (before the duplicates' handling), and rows r, c hold the same
 * sentence when keyIds[r] === keyIds[c] (given unless duplicates is 'ignore').
 */
export interface InBatchTargetCodes {
  targetRows: Int32Array;
  targetCols: Int32Array;
  keyIds?: Int32Array;
}

/** The codes of inBatchTargets(labels, opts) (same checks, same errors); O(rows) host work. */
export function inBatchTargetCodes(labels: Float64Array, opts: Pick<InBatchNegativesOptions, 'positives' | 'duplicates' | 'keys'> = {}): InBatchTargetCodes {
  const { pairs, n, positives, duplicates } = batchSetting(labels, opts);
  const targetRows = new Int32Array(n);
  const targetCols = new Int32Array(n);
  if (positives === 'angle-int') {
    // inBatchTargets' row and column numbers, renamed densely (they can pass 2^31; equality is all that is read).
    const t = (r: number) => Math.trunc(labels[Math.floor(r / 2)]);
    const ids = new Map<number, number>();
    const id = (v: number) => {
      let k = ids.get(v);
      if (k === undefined) ids.set(v, (k = ids.size));
      return k;
    };
    for (let r = 0; r < n; r++) targetRows[r] = id(t(r) !== 0 ? partner(r) * t(r) : -1);
    for (let c = 0; c < n; c++) targetCols[c] = id(t(c) !== 0 ? c * t(c) : -2);
  } else {
    const isPositive = positivePredicate(positives);
    for (let k = 0; k < pairs; k++) {
      const pos = isPositive(labels[k], k);
      targetRows[2 * k] = pos ? 2 * k + 1 : -1;
      targetRows[2 * k + 1] = pos ? 2 * k : -1;
    }
    for (let c = 0; c < n; c++) targetCols[c] = c;
  }
  if (duplicates === 'ignore') return { targetRows, targetCols };
  const keys = opts.keys;
  if (!keys) throw new InputError(`${IBN_OBJECTIVE}: duplicates '${duplicates}' needs keys (one per row identifying its sentence)`);
  if (keys.length !== n) throw new InputError(`${IBN_OBJECTIVE}: got ${keys.length} keys for ${n} rows (expected one key per row)`);
  const byKey = new Map<string | number, number>();
  const keyIds = Int32Array.from(keys, (k) => {
    let id = byKey.get(k);
    if (id === undefined) byKey.set(k, (id = byKey.size));
    return id;
  });
  return { targetRows, targetCols, keyIds };
}

/** The device tensors of InBatchTargetCodes (int32). */
export interface InBatchTargetCodeTensors {
  targetRows: tf.Tensor1D;
  targetCols: tf.Tensor1D;
  keyIds?: tf.Tensor1D;
}

/**
 * inBatchNegativesLoss with its target and mask matrices built on the device from `codes`
 * (inBatchTargetCodes of the labels, uploaded): the same values bit for bit (0/1 entries, and in
 * 'positive' mode 1/s as float32 division gives it), and no host upload that depends on the labels
 * but the codes.
 */
export function inBatchNegativesLossByCodes(emb: tf.Tensor2D, codes: InBatchTargetCodeTensors, opts: Pick<InBatchNegativesOptions, 'tau' | 'duplicates'> = {}): tf.Scalar {
  const tau = checkPositive(opts.tau ?? 20, 'tau', IBN_OBJECTIVE);
  const duplicates = opts.duplicates ?? 'ignore';
  assertEmbeddings(emb, IBN_OBJECTIVE);
  const n = 2 * pairCount(emb.shape[0], IBN_OBJECTIVE);
  if (codes.targetRows.shape[0] !== n || codes.targetCols.shape[0] !== n) throw new InputError(`${IBN_OBJECTIVE}: target codes for ${codes.targetRows.shape[0]} rows, embeddings of ${n}`);
  if (duplicates !== 'ignore' && codes.keyIds?.shape[0] !== n) throw new InputError(`${IBN_OBJECTIVE}: duplicates '${duplicates}' needs one key id per row (${n})`);
  return tf.tidy(() => {
    const equalPairs = (a: tf.Tensor1D, b: tf.Tensor1D) => tf.equal(tf.reshape(a, [n, 1]), tf.reshape(b, [1, n])) as tf.Tensor2D;
    const self = eyeMask(n);
    let targets: tf.Tensor2D = tf.cast(equalPairs(codes.targetRows, codes.targetCols), 'float32');
    let removed: tf.Tensor2D = tf.tensor2d(self, [n, n]);
    if (duplicates !== 'ignore') {
      const dup = tf.logicalAnd(equalPairs(codes.keyIds!, codes.keyIds!), tf.equal(removed, tf.scalar(0))) as tf.Tensor2D;
      if (duplicates === 'drop') {
        removed = tf.cast(tf.logicalOr(tf.equal(removed, tf.scalar(1)), tf.logicalAnd(dup, tf.equal(targets, tf.scalar(0)))), 'float32') as tf.Tensor2D;
      } else {
        targets = tf.cast(tf.logicalOr(tf.equal(targets, tf.scalar(1)), dup), 'float32') as tf.Tensor2D;
        const s = tf.sum(targets, 1, true);
        targets = tf.where(tf.greater(s, tf.scalar(1)), tf.div(targets, s), targets) as tf.Tensor2D;
      }
    }
    const e = l2Normalize(emb);
    const sim = tf.matMul(e, e, false, true);
    const penalty = tf.mul(removed, tf.scalar(MASKED));
    const logits = tf.mul(tf.sub(sim, penalty), tf.scalar(tau)) as tf.Tensor2D;
    return tf.mean(softTargetCrossEntropy(logits, targets)) as tf.Scalar;
  });
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
