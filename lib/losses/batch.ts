/**
 * Batch layouts shared by the objectives and the trainer.
 *
 * | layout   | rows of the embedding matrix                  | labels             | used by |
 * |----------|-----------------------------------------------|--------------------|---------|
 * | zigzag   | `[a0, b0, a1, b1, ...]`: rows 2k, 2k+1 = pair k | one per pair       | cosine, angle, ibn, AnglE total, SimCSE/SimACE/ArcCon unsupervised (a = view 1, b = view 2) |
 * | triplets | `[q0, p0, n0, q1, p1, n1, ...]`: rows 3k..3k+2 | none               | contrastive with negative, SimCSE supervised |
 *
 * This is AnglE's layout (`y_pred[::2]`, `y_pred[1::2]`; format C `outputs[::3]` ...), so one
 * forward pass over the row list embeds the whole batch. AnglE's code stores the label on each row
 * and reads `labels[::2]`; here labels are given once per pair.
 *
 * The tensor helpers (`splitPairs`, `splitTriplets`, `interleavePairs`) are reshapes and slices,
 * so gradients flow through them.
 */
import { tf } from '../backend/index.js';
import { InputError } from '../util/errors.js';

/** One labelled pair of items (texts, token ids, ...). */
export interface LabelledPair<T> {
  first: T;
  second: T;
  label: number;
}

/** One (query, positive, negative) triplet. */
export interface Triplet<T> {
  query: T;
  positive: T;
  negative: T;
}

/** Number of pairs in a zigzag batch of `rows` rows; errors on an odd or zero row count. */
export function pairCount(rows: number, objective = 'zigzag batch'): number {
  if (!Number.isInteger(rows) || rows <= 0 || rows % 2 !== 0) {
    throw new InputError(
      `${objective}: a zigzag pair batch needs an even, non-zero number of rows [a0, b0, a1, b1, ...], got ${rows}`,
    );
  }
  return rows / 2;
}

/** Number of triplets in a `[q0, p0, n0, ...]` batch; errors unless rows is a positive multiple of 3. */
export function tripletCount(rows: number, objective = 'triplet batch'): number {
  if (!Number.isInteger(rows) || rows <= 0 || rows % 3 !== 0) {
    throw new InputError(
      `${objective}: a triplet batch needs a positive multiple of 3 rows [q0, p0, n0, q1, ...], got ${rows}`,
    );
  }
  return rows / 3;
}

/** Row list and label list of a zigzag batch built from pairs. */
export function zigzagPairs<T>(pairs: readonly LabelledPair<T>[]): { rows: T[]; labels: number[] } {
  if (pairs.length === 0) throw new InputError('zigzag batch: no pairs given');
  const rows: T[] = [];
  const labels: number[] = [];
  pairs.forEach((p, k) => {
    if (typeof p.label !== 'number' || !Number.isFinite(p.label)) {
      throw new InputError(`zigzag batch: pair ${k} has label ${String(p.label)} (expected a finite number)`);
    }
    rows.push(p.first, p.second);
    labels.push(p.label);
  });
  return { rows, labels };
}

/** Row list of a triplet batch `[q0, p0, n0, q1, ...]`. */
export function tripletRows<T>(triplets: readonly Triplet<T>[]): T[] {
  if (triplets.length === 0) throw new InputError('triplet batch: no triplets given');
  const rows: T[] = [];
  for (const t of triplets) rows.push(t.query, t.positive, t.negative);
  return rows;
}

/** The two halves of a zigzag embedding matrix: `first` = rows 0, 2, 4, ...; `second` = rows 1, 3, 5, ... */
export function splitPairs(emb: tf.Tensor2D, objective = 'zigzag batch'): { first: tf.Tensor2D; second: tf.Tensor2D } {
  const [rows, dim] = emb.shape;
  const pairs = pairCount(rows, objective);
  return tf.tidy(() => {
    const wide = tf.reshape(emb, [pairs, 2 * dim]);
    return {
      first: tf.slice(wide, [0, 0], [pairs, dim]) as tf.Tensor2D,
      second: tf.slice(wide, [0, dim], [pairs, dim]) as tf.Tensor2D,
    };
  });
}

/** The three parts of a triplet embedding matrix `[q0, p0, n0, ...]`. */
export function splitTriplets(
  emb: tf.Tensor2D,
  objective = 'triplet batch',
): { query: tf.Tensor2D; positive: tf.Tensor2D; negative: tf.Tensor2D } {
  const [rows, dim] = emb.shape;
  const n = tripletCount(rows, objective);
  return tf.tidy(() => {
    const wide = tf.reshape(emb, [n, 3 * dim]);
    return {
      query: tf.slice(wide, [0, 0], [n, dim]) as tf.Tensor2D,
      positive: tf.slice(wide, [0, dim], [n, dim]) as tf.Tensor2D,
      negative: tf.slice(wide, [0, 2 * dim], [n, dim]) as tf.Tensor2D,
    };
  });
}

/** Zigzag matrix `[first0, second0, first1, second1, ...]` from two equally shaped matrices. */
export function interleavePairs(first: tf.Tensor2D, second: tf.Tensor2D): tf.Tensor2D {
  if (first.shape[0] !== second.shape[0] || first.shape[1] !== second.shape[1]) {
    throw new InputError(
      `zigzag batch: the two sides must have equal shapes, got [${first.shape.join(', ')}] and [${second.shape.join(', ')}]`,
    );
  }
  const [n, dim] = first.shape;
  return tf.tidy(() => tf.reshape(tf.concat([first, second], 1), [2 * n, dim]) as tf.Tensor2D);
}

/** Triplet matrix `[q0, p0, n0, ...]` from three equally shaped matrices. */
export function interleaveTriplets(query: tf.Tensor2D, positive: tf.Tensor2D, negative: tf.Tensor2D): tf.Tensor2D {
  const s = query.shape.join(', ');
  if (positive.shape.join(', ') !== s || negative.shape.join(', ') !== s) {
    throw new InputError(
      `triplet batch: query, positive and negative must have equal shapes, got [${s}], [${positive.shape.join(', ')}], [${negative.shape.join(', ')}]`,
    );
  }
  const [n, dim] = query.shape;
  return tf.tidy(() => tf.reshape(tf.concat([query, positive, negative], 1), [3 * n, dim]) as tf.Tensor2D);
}

/**
 * Batch-level duplicate filtering as AnglE's data collator does it (`filter_duplicate=True`, the
 * default of `AnglE.fit`): examples are visited in order; each text's key (AnglE uses the token
 * ids after truncation) is looked up in the keys seen so far in this batch; at the first key
 * already seen the whole example is dropped. Keys of an example's texts that come before the
 * duplicate one are still recorded (AnglE registers them before it breaks), so they can cause
 * later examples to be dropped too. This is the reference's ISP handling; the loss functions
 * themselves do not see duplicates unless `inBatchNegativesLoss`'s `duplicates` option says so.
 *
 * Returns the kept examples and the indices of the dropped ones. An empty result is an error,
 * as in AnglE.
 */
export function filterDuplicateExamples<T>(
  examples: readonly T[],
  keysOf: (example: T) => readonly (string | number)[],
): { kept: T[]; dropped: number[] } {
  const seen = new Set<string | number>();
  const kept: T[] = [];
  const dropped: number[] = [];
  examples.forEach((ex, i) => {
    let duplicate = false;
    for (const key of keysOf(ex)) {
      if (seen.has(key)) {
        duplicate = true;
        break;
      }
      seen.add(key);
    }
    if (duplicate) dropped.push(i);
    else kept.push(ex);
  });
  if (kept.length === 0) throw new InputError('duplicate filtering: every example of the batch was dropped');
  return { kept, dropped };
}

/**
 * For each row, the other rows with the same key (identical sentences), from one key per row.
 * Used by in-batch negatives' ISP switch.
 */
export function duplicateRows(keys: readonly (string | number)[]): number[][] {
  const byKey = new Map<string | number, number[]>();
  keys.forEach((k, i) => {
    const list = byKey.get(k);
    if (list) list.push(i);
    else byKey.set(k, [i]);
  });
  return keys.map((k, i) => (byKey.get(k) as number[]).filter((j) => j !== i));
}
