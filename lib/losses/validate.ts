/**
 * Input checks shared by every objective. Each error names the objective, so a failing training
 * step says which loss saw the bad batch, and what was expected instead.
 *
 * The finiteness check reads back one scalar (the sum of the embeddings): NaN or ±Inf anywhere
 * makes the sum non-finite. Only then is the whole matrix read to say which row is bad. A tensor
 * found finite is remembered (tfjs tensors are immutable; variables, which can be reassigned, are
 * not remembered), so the AnglE total and the terms it calls read back once, not once each. While a
 * training step is recorded as a graph (lib/backend/step-graph.ts) the check is skipped.
 */
import { tf } from '../backend/index.js';
import { capturingStep } from '../backend/step-graph.js';
import { InputError } from '../util/errors.js';

/** Tensors already checked finite. */
const knownFinite = new WeakSet<tf.Tensor>();

/** Checks that `emb` is a float 2-D tensor with at least one row and column and only finite values. */
export function assertEmbeddings(emb: tf.Tensor, objective: string): asserts emb is tf.Tensor2D {
  if (!(emb instanceof tf.Tensor)) {
    throw new InputError(`${objective}: embeddings must be a tf.Tensor2D, got ${typeof emb}`);
  }
  if (emb.rank !== 2) {
    throw new InputError(`${objective}: embeddings must be 2-D [rows, dim], got shape [${emb.shape.join(', ')}]`);
  }
  if (emb.dtype !== 'float32') {
    throw new InputError(`${objective}: embeddings must be float32, got ${emb.dtype}`);
  }
  const [rows, dim] = emb.shape as [number, number];
  if (rows === 0 || dim === 0) {
    throw new InputError(`${objective}: embeddings are empty (shape [${rows}, ${dim}])`);
  }
  if (knownFinite.has(emb)) return;
  // While a step graph is recorded nothing has run yet: the step's loss, read after the launch, shows a NaN (lib/train/step-graphs.ts).
  if (capturingStep()) return;
  const total = readScalar(tf.tidy(() => tf.sum(emb)));
  if (Number.isFinite(total)) {
    if (!(emb instanceof tf.Variable)) knownFinite.add(emb);
    return;
  }
  const data = emb.dataSync();
  for (let i = 0; i < data.length; i++) {
    if (!Number.isFinite(data[i])) {
      const r = Math.floor(i / dim);
      throw new InputError(
        `${objective}: embeddings row ${r}, column ${i % dim} is ${data[i]} (expected finite values; ` +
          'a NaN/Inf embedding usually means the forward pass diverged)',
      );
    }
  }
  throw new InputError(`${objective}: embedding values are too large (their float32 sum overflows)`);
}

/** The value of a scalar tensor, disposing it. */
export function readScalar(t: tf.Tensor): number {
  const v = t.dataSync()[0];
  t.dispose();
  return v;
}

/** Checks that the labels are `expected` finite numbers; returns them as a Float64Array copy. */
export function checkLabels(labels: ArrayLike<number>, expected: number, objective: string, what = 'pair'): Float64Array {
  if (labels === null || labels === undefined || typeof labels.length !== 'number') {
    throw new InputError(`${objective}: labels must be an array of numbers (one per ${what})`);
  }
  if (labels.length !== expected) {
    throw new InputError(
      `${objective}: got ${labels.length} labels for ${expected} ${what}s (expected one label per ${what})`,
    );
  }
  const out = new Float64Array(expected);
  for (let i = 0; i < expected; i++) {
    const y = Number(labels[i]);
    if (!Number.isFinite(y)) throw new InputError(`${objective}: label ${i} is ${labels[i]} (expected a finite number)`);
    out[i] = y;
  }
  return out;
}

/** Checks that a scale/temperature-like option is a finite positive number. */
export function checkPositive(value: number, name: string, objective: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InputError(`${objective}: ${name} must be a finite positive number, got ${value}`);
  }
  return value;
}

/** Checks that an option is a finite number (any sign). */
export function checkFinite(value: number, name: string, objective: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InputError(`${objective}: ${name} must be a finite number, got ${value}`);
  }
  return value;
}
