/**
 * Espresso sentence embeddings (ESE, "2D Matryoshka"): angle_emb 0.6.1 `AngleESETrainer.compute_loss`
 * (angle.py:506-564, `compute_student_loss` 480-504), every layer and a leading width trained at once.
 * With o_i = pool(H[i]) (H[0] the embedding output, H[n] the last layer), k the compression size,
 * T the KL temperature, AngleLoss the base objective (the `angle` entry with `loss`) and
 * D_T = distillationLoss(·, ·, mse 1, T) (./distillation.ts), P = pcaCompress (./pca-compress.ts):
 *
 *   L = AngleLoss(o_n) + AngleLoss(o_n[:, :k]) + [pca] D_T(o_n[:, :k], P(o_n, k))
 *     + 1/(n−1) · Σ_{i=0}^{n−2} ( AngleLoss(o_i[:, :k]) + [pca] D_T(o_i[:, :k], P(o_i, k)) ) / (1 + ln(1 + i))
 *
 * As the code does (not as the paper describes): the students are H[0] .. H[n−2]; H[n−1], the layer
 * below the last, is never used and gets no gradient from this objective; the targets P are
 * constants. angle_emb's teacher term inside this trainer is computed under no_grad (value only) and
 * its MLM term needs a collator 0.6.1 does not ship; neither is part of this objective.
 *
 * The base objective's angle tau: the `angle` entry's `loss` is given as is (default preset 'paper',
 * angle tau 1, the loss function's own default); 0.6.1's `AngleLoss` class defaults it to 20, which
 * `loss: { preset: 'code' }` selects. A recipe says which one it uses.
 */
import { tf } from '../backend/index.js';
import { isShapeOnlyBackend } from '../backend/shape-only/index.js';
import { InputError } from '../util/errors.js';
import { ANGLE_LOSS_SCHEMA, angleObjective, type AngleLossConfigInput } from './angle-loss.js';
import { distillationLoss } from './distillation.js';
import { pcaCompress } from './pca-compress.js';
import { checkTeacher, TEACHER_SCHEMA, teacherAlignmentLoss, type TeacherOptions } from './teacher-alignment.js';
import { defineLoss, withoutParameters, type ObjectiveBatch, type ObjectiveValue } from './registry.js';

export const ESE_OBJECTIVE = 'ESE (Espresso)';

export interface EseOptions {
  /** The base objective's configuration (the `angle` entry's `loss`). */
  loss?: AngleLossConfigInput;
  /** k, the leading width every layer is trained at (library default 128; at most the hidden size). */
  compressionSize?: number;
  /** T of the compression term's KL part; 0 leaves only its MSE (library default 1.0). */
  klTemperature?: number;
  /** Whether the compression term is added (library `apply_ese_pca`, default true). */
  pca?: boolean;
  /** Seed of the Gaussian draws of the randomised SVD (torch's global RNG in the library). */
  seed?: number;
  /** A teacher to align the last layer to (./teacher-alignment.ts): its term adds to the loss value only, as AngleESETrainer computes it under no_grad. */
  teacher?: TeacherOptions;
}

/** The compression target of call `call` (0: the last layer, then layers 0..n−2) for pooled `m` [B, D]. */
export type CompressionTarget = (call: number, m: tf.Tensor2D, k: number) => tf.Tensor2D;

/**
 * The randomised-SVD target of ./pca-compress.ts, read back from `m` (a constant: no gradient).
 * On the shape-only backend (the rehearsal) there are no values to decompose: the target is a
 * constant of its shape, which is all the device holds of it (the SVD runs on the host in float64).
 */
export function pcaTarget(seed: number): CompressionTarget {
  let draws = 0;
  return (_call, m, k) => {
    const [rows, dim] = m.shape;
    if (isShapeOnlyBackend()) return tf.zeros([rows, k]) as tf.Tensor2D;
    const p = pcaCompress(m.dataSync(), rows, dim, k, { seed: seed * 1_000_003 + draws++ });
    return tf.tensor2d(Float32Array.from(p), [rows, k]);
  };
}

/**
 * The ESE loss of `layers` (o_0 .. o_n, pooled) with `base` the per-matrix objective (AngleLoss);
 * `target` supplies the compression targets (default: pcaTarget(seed)).
 */
export function eseLoss(layers: readonly tf.Tensor2D[], base: (x: tf.Tensor2D) => tf.Scalar, opts: EseOptions = {}, target?: CompressionTarget): ObjectiveValue {
  const n = layers.length - 1;
  if (n < 2) throw new InputError(`${ESE_OBJECTIVE}: needs the pooled output of the embedding layer and of at least 2 transformer layers, got ${layers.length} matrices`);
  const dim = layers[n].shape[1];
  const k = opts.compressionSize ?? 128;
  if (!Number.isInteger(k) || k < 1 || k > dim) throw new InputError(`${ESE_OBJECTIVE}: compressionSize must be an integer in 1..${dim} (the hidden size; torch.svd_lowrank refuses more), got ${k}`);
  const T = opts.klTemperature ?? 1;
  const withPca = opts.pca ?? true;
  const targetOf = target ?? pcaTarget(opts.seed ?? 0);
  let call = 0;
  const head = (x: tf.Tensor2D) => tf.slice(x, [0, 0], [x.shape[0], k]) as tf.Tensor2D;
  const compression = (x: tf.Tensor2D): tf.Scalar => {
    const t = targetOf(call++, x, k);
    return distillationLoss(head(x), t, { mseWeight: 1, klTemperature: T });
  };
  const terms: Record<string, tf.Scalar> = {};
  const last = layers[n];
  terms.last = base(last);
  terms.lastHead = base(head(last));
  let total = tf.add(terms.last, terms.lastHead) as tf.Scalar;
  if (withPca) {
    terms.compression = compression(last);
    total = tf.add(total, terms.compression);
  }
  let students: tf.Scalar = tf.scalar(0);
  for (let i = 0; i <= n - 2; i++) {
    let s = base(head(layers[i]));
    if (withPca) s = tf.add(s, compression(layers[i]));
    students = tf.add(students, tf.div(s, 1 + Math.log(1 + i)));
  }
  terms.students = tf.div(students, n - 1) as tf.Scalar;
  total = tf.add(total, terms.students);
  return { total, terms };
}

/**
 * Registration of objective `ese`: Espresso over every layer's pooled embedding (the trainer feeds
 * them: `inputs: ['layers']`), on pairs (format A) or triplets (format C).
 */
export const ESE_LOSS = defineLoss({
  name: 'ese',
  summary: 'Espresso (ESE): AnglE on the last layer and on every layer up to n-2 at width k, with PCA compression targets',
  options: { loss: ANGLE_LOSS_SCHEMA, compressionSize: true, klTemperature: true, pca: true, seed: true, teacher: TEACHER_SCHEMA } as const satisfies Record<keyof EseOptions, unknown>,
  kinds: ['pairs', 'triplets'],
  inputs: ['layers'],
  bind: (config: EseOptions, kind, ctx) => {
    const angle = angleObjective(config.loss, kind);
    const teacher = checkTeacher(config.teacher, ESE_OBJECTIVE);
    let step = 0;
    return withoutParameters((emb, b: ObjectiveBatch) => {
      if (!b.layers) throw new InputError(`${ESE_OBJECTIVE}: the trainer gave no per-layer embeddings (the entry asks for inputs 'layers')`);
      // A fresh stream of draws per step, reproducible from the seed.
      const seed = (config.seed ?? 0) * 65_537 + step++;
      const r = eseLoss(b.layers, (x) => angle(x, b).total, config, pcaTarget(seed));
      if (!teacher) return r;
      // AngleESETrainer computes the teacher term under no_grad: its value joins the loss, no gradient.
      const value = teacherAlignmentLoss(emb, b.keys, ctx.teacher, ESE_OBJECTIVE).dataSync()[0]!;
      const term = tf.scalar(value);
      return { total: tf.add(r.total, term) as tf.Scalar, terms: { ...r.terms, teacher: term } };
    });
  },
});
