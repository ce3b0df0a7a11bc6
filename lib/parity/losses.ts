/**
 * Parity of the AnglE objectives with a golden `losses.json` (the golden set's README, shared/golden/README.md): float64
 * `y_pred` (zigzag pairs), `binary_pair_labels`, `sts_pair_labels`, `triplets` ([q, p, n] rows),
 * and `cases`: `{ name, loss, grad }` computed by AnglE v0.6.1's `angle_emb/loss.py`.
 *
 * For every case the loss and its gradient w.r.t. the input rows are computed here in float32 on
 * the active backend and compared with the reference at 1e-4 relative (`maxRelDiff`: the largest
 * absolute difference over the reference's largest magnitude). Case names are parsed, not looked
 * up in a fixed list, so another golden set (other seed, shape, taus) works:
 *
 * | name                                         | function                                         | input |
 * |----------------------------------------------|--------------------------------------------------|-------|
 * | `cosine_tau<T>_<labels>`                     | cosineLoss(tau T)                                | y_pred |
 * | `angle[_sum or _mean]_tau<T>_<labels>`       | angleLoss(tau T, pooling; default sum)           | y_pred |
 * | `ibn_tau<T>_<labels>`                        | inBatchNegativesLoss(tau T, duplicates 'ignore')  | y_pred |
 * | `contrastive_with_negative_tau<T>`           | contrastiveWithNegativeLoss(q, p, n, tau T)      | triplets |
 *
 * `<labels>` is `binary` or `sts`. ibn uses the default 'binary' positives when the labels are 0/1
 * and AnglE's int cast ('angle-int') otherwise, i.e. always the reference's behaviour. A case
 * whose name does not parse, whose data is missing or whose shape disagrees is a FAILED check, so
 * a golden set cannot pass by omission; an empty case list fails too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { registerGradients } from '../backend/gradients.js';
import { check, maxRelDiff, type ParityCheck } from './check.js';
import { InputError } from '../util/errors.js';
import { angleLoss, type AnglePooling } from '../losses/angle.js';
import { splitTriplets } from '../losses/batch.js';
import { contrastiveWithNegativeLoss } from '../losses/contrastive-with-negative.js';
import { cosineLoss } from '../losses/cosine.js';
import { inBatchNegativesLoss } from '../losses/in-batch-negatives.js';

export const LOSS_GOLDEN_TOLERANCE = 1e-4;

interface GoldenCase {
  name: string;
  loss: number;
  grad: number[][];
}

type LossOfInput = (x: tf.Tensor2D) => tf.Scalar;

interface ResolvedCase {
  input: number[][];
  inputName: string;
  fn: LossOfInput;
}

const PAIR_CASE = /^(cosine|angle|ibn)(?:_(sum|mean))?_tau([0-9]+(?:\.[0-9]+)?)_(binary|sts)$/;
const TRIPLET_CASE = /^contrastive_with_negative_tau([0-9]+(?:\.[0-9]+)?)$/;

function isMatrix(v: unknown): v is number[][] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((r) => Array.isArray(r) && r.length === (v[0] as unknown[]).length && r.every((x) => typeof x === 'number'))
  );
}

function isVector(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'number');
}

/** Maps a golden case name to the function and input it checks, or says why it cannot. */
function resolveCase(name: string, file: Record<string, unknown>): ResolvedCase | string {
  const pair = PAIR_CASE.exec(name);
  if (pair) {
    const [, objective, pooling, tauText, labelKind] = pair;
    const tau = Number(tauText);
    if (pooling !== undefined && objective !== 'angle') return `pooling suffix '_${pooling}' is only defined for angle`;
    const input = file.y_pred;
    if (!isMatrix(input)) return "losses.json has no 'y_pred' matrix";
    const labelKey = `${labelKind}_pair_labels`;
    const labels = file[labelKey];
    if (!isVector(labels)) return `losses.json has no '${labelKey}' array`;
    let fn: LossOfInput;
    if (objective === 'cosine') fn = (x) => cosineLoss(x, labels, { tau });
    else if (objective === 'angle') fn = (x) => angleLoss(x, labels, { tau, pooling: (pooling ?? 'sum') as AnglePooling });
    else {
      const binary = labels.every((y) => y === 0 || y === 1);
      fn = (x) => inBatchNegativesLoss(x, labels, { tau, duplicates: 'ignore', positives: binary ? 'binary' : 'angle-int' });
    }
    return { input, inputName: 'y_pred', fn };
  }
  const trip = TRIPLET_CASE.exec(name);
  if (trip) {
    const tau = Number(trip[1]);
    const input = file.triplets;
    if (!isMatrix(input)) return "losses.json has no 'triplets' matrix";
    const fn: LossOfInput = (x) =>
      tf.tidy(() => {
        const { query, positive, negative } = splitTriplets(x, 'contrastive with negative');
        return contrastiveWithNegativeLoss(query, positive, negative, { tau });
      });
    return { input, inputName: 'triplets', fn };
  }
  return 'unknown golden loss case: no objective here maps to this name (add it to lib/parity/losses.ts)';
}

/** One case's loss and gradient checks. */
function checkCase(c: GoldenCase, file: Record<string, unknown>): ParityCheck[] {
  const base = `loss/${c.name}`;
  const resolved = resolveCase(c.name, file);
  if (typeof resolved === 'string') return [{ name: base, ok: false, detail: resolved }];
  if (typeof c.loss !== 'number' || !isMatrix(c.grad)) {
    return [{ name: base, ok: false, detail: 'case lacks a numeric loss or a grad matrix' }];
  }
  const rows = resolved.input.length;
  const dim = resolved.input[0].length;
  if (c.grad.length !== rows || c.grad[0].length !== dim) {
    return [
      {
        name: `${base}/grad`,
        ok: false,
        detail: `grad shape [${c.grad.length}, ${c.grad[0].length}] differs from ${resolved.inputName} [${rows}, ${dim}]`,
      },
    ];
  }
  let value: number;
  let grad: Float32Array;
  const x = tf.tensor2d(resolved.input.flat(), [rows, dim], 'float32');
  try {
    const out = tf.valueAndGrad((t: tf.Tensor) => resolved.fn(t as tf.Tensor2D))(x);
    value = out.value.dataSync()[0];
    grad = out.grad.dataSync() as Float32Array;
    tf.dispose([out.value, out.grad]);
  } catch (e) {
    return [{ name: base, ok: false, detail: `computing the loss failed: ${(e as Error).message}` }];
  } finally {
    x.dispose();
  }
  return [
    check(`${base}/value`, maxRelDiff([value], [c.loss]), LOSS_GOLDEN_TOLERANCE, 'rel diff'),
    check(`${base}/grad`, maxRelDiff(grad, c.grad.flat()), LOSS_GOLDEN_TOLERANCE, 'max rel diff'),
  ];
}

/**
 * Checks every case of `<goldenDir>/losses.json`. Throws InputError when the file is missing or
 * not JSON; everything else is reported as checks. Starts no backend: call initBackend first
 * (gradients are registered here if they are not yet).
 */
export async function checkLossesGolden(goldenDir: string): Promise<ParityCheck[]> {
  const path = join(goldenDir, 'losses.json');
  let file: Record<string, unknown>;
  try {
    file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new InputError(`cannot read the golden losses: ${(e as Error).message}`, { file: path });
  }
  registerGradients();
  const cases = file.cases;
  if (!Array.isArray(cases) || cases.length === 0) {
    return [{ name: 'loss/cases', ok: false, detail: `${path} has no cases` }];
  }
  const checks: ParityCheck[] = [];
  const seen = new Set<string>();
  cases.forEach((raw, i) => {
    const c = raw as Partial<GoldenCase>;
    if (!c || typeof c.name !== 'string') {
      checks.push({ name: `loss/case-${i}`, ok: false, detail: `case ${i} of ${path} has no name` });
      return;
    }
    if (seen.has(c.name)) {
      checks.push({ name: `loss/${c.name}`, ok: false, detail: `case name '${c.name}' occurs twice in ${path}` });
      return;
    }
    seen.add(c.name);
    checks.push(...checkCase(c as GoldenCase, file));
  });
  return checks;
}
