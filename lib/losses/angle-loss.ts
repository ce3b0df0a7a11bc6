/**
 * The AnglE training objective: a weighted sum of the cosine (CoSENT), in-batch negatives and
 * angle objectives, each with its own tau.
 *
 *   pairs (zigzag, one label per pair; AnglE format A):
 *     L = w_cos · cosine(tau_cos) + w_ibn · ibn(tau_ibn) + w_angle · angle(tau_angle)
 *   triplets ([q, p, n] rows; AnglE format C):
 *     L = ½ (w_ibn · CE(q, p) + w_cln · CE(q, [p; n]))   (tau_ibn)
 *         + w_angle · angle(Z) + w_cos · cosine(Z),  Z = zigzag (q_k, p_k) labelled 1, then (q_k, n_k) labelled 0
 *
 * As in AnglE's `AngleLoss`, a term whose weight is 0 is not computed at all (so e.g. graded STS
 * labels are fine when w_ibn = 0); negative weights are rejected here (AnglE silently skips them).
 *
 * Presets:
 * - `ANGLE_PAPER_CONFIG`: the paper (A.4): w = 1, 1, 1; taus 20 / 20 / 1 (what train.json uses).
 * - `ANGLE_CODE_CONFIG`: AnglE v0.6.1's `AngleLoss` defaults: w_cos 0, w_ibn 1, w_angle 0.02,
 *   w_cln 1, all taus 20, angle pooling 'sum'. Each term at these taus is golden-checked
 *   (`ibn_tau20_*`, `angle_tau20_*`, `cosine_tau20_*`); the weighted sum is plain arithmetic.
 */
import { tf } from '../backend/index.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import { interleavePairs, splitTriplets, tripletCount } from './batch.js';
import { angleLoss, angleLossByRank, type AnglePooling } from './angle.js';
import { cosineLoss, cosineLossByRank } from './cosine.js';
import { inBatchNegativesLoss, inBatchNegativesLossByCodes, inBatchTargetCodes, type DuplicateHandling, type IbnPositives } from './in-batch-negatives.js';
import { labelRanks } from './ranking.js';
import { cosineInfoNce } from './info-nce.js';
import { assertEmbeddings, checkLabels, checkPositive } from './validate.js';
import { defineLoss, withoutParameters, type LabelInputs, type ObjectiveFn } from './registry.js';
import { checkTeacher, TEACHER_SCHEMA, teacherAlignmentLoss, type TeacherOptions } from './teacher-alignment.js';

export const ANGLE_TOTAL_OBJECTIVE = 'AnglE loss';

export interface AngleLossWeights {
  cosine: number;
  ibn: number;
  angle: number;
  /** Contrastive-with-hard-negative weight; used by the triplet form only. */
  cln: number;
}

export interface AngleLossTaus {
  cosine: number;
  ibn: number;
  angle: number;
}

export interface AngleLossConfig {
  weights: AngleLossWeights;
  taus: AngleLossTaus;
  anglePooling: AnglePooling;
  /** In-batch negatives: which labels are positive (see ./in-batch-negatives.ts). */
  ibnPositives: IbnPositives;
  /** In-batch negatives: ISP handling (see ./in-batch-negatives.ts); 'ignore' = AnglE's loss. */
  duplicates: DuplicateHandling;
}

/** The paper's setting (AnglE A.4): all three objectives, taus 20 / 20 / 1. */
export const ANGLE_PAPER_CONFIG: Readonly<AngleLossConfig> = Object.freeze({
  weights: Object.freeze({ cosine: 1, ibn: 1, angle: 1, cln: 1 }),
  taus: Object.freeze({ cosine: 20, ibn: 20, angle: 1 }),
  anglePooling: 'sum',
  ibnPositives: 'binary',
  duplicates: 'ignore',
});

/** AnglE v0.6.1 `AngleLoss()` defaults: cosine 0, ibn 1, angle 0.02 (cln 1), all taus 20. */
export const ANGLE_CODE_CONFIG: Readonly<AngleLossConfig> = Object.freeze({
  weights: Object.freeze({ cosine: 0, ibn: 1, angle: 0.02, cln: 1 }),
  taus: Object.freeze({ cosine: 20, ibn: 20, angle: 20 }),
  anglePooling: 'sum',
  ibnPositives: 'binary',
  duplicates: 'ignore',
});

export const ANGLE_PRESETS = { paper: ANGLE_PAPER_CONFIG, code: ANGLE_CODE_CONFIG } as const;
export type AnglePresetName = keyof typeof ANGLE_PRESETS;

/** A configuration given as a preset (default 'paper') plus overrides. */
export interface AngleLossConfigInput {
  preset?: AnglePresetName;
  weights?: Partial<AngleLossWeights>;
  taus?: Partial<AngleLossTaus>;
  anglePooling?: AnglePooling;
  ibnPositives?: IbnPositives;
  duplicates?: DuplicateHandling;
}

/** Per-batch inputs that are not configuration. */
export interface AngleLossBatchOptions {
  /** One key per row identifying its sentence, for `duplicates` other than 'ignore'. */
  keys?: readonly (string | number)[];
  /**
   * angleLabelInputs of this batch's labels and keys: the label masks are then built on the device
   * from them (same values bit for bit), and `labels` is not read.
   */
  labelInputs?: AngleLabelInputs;
}

/**
 * What the AnglE objective reads of a pair batch's labels (and keys), as int32 host arrays whose
 * shapes depend only on the batch's: `ranks` (labelRanks, for the cosine and angle terms' pair
 * order) and in-batch negatives' target codes (inBatchTargetCodes). Made once per batch before the
 * step, they are the step's only label-dependent uploads, so a step graph feeds them like the token
 * ids and the whole AnglE step replays (lib/train/step-graphs.ts).
 */
export interface AngleLabelInputs {
  ranks?: Int32Array;
  targetRows?: Int32Array;
  targetCols?: Int32Array;
  /** Only when duplicates is not 'ignore'. */
  keyIds?: Int32Array;
}

/** The label inputs of a pair batch (checks the labels and keys as the terms it feeds would). */
export function angleLabelInputs(labels: ArrayLike<number>, config: AngleLossConfigInput = {}, batch: Pick<AngleLossBatchOptions, 'keys'> = {}): AngleLabelInputs {
  const c = resolveAngleLossConfig(config);
  const y = checkLabels(labels, labels?.length ?? 0, ANGLE_TOTAL_OBJECTIVE);
  const out: AngleLabelInputs = {};
  if (c.weights.cosine > 0 || c.weights.angle > 0) out.ranks = labelRanks(y);
  if (c.weights.ibn > 0) {
    const codes = inBatchTargetCodes(y, { positives: c.ibnPositives, duplicates: c.duplicates, keys: batch.keys });
    out.targetRows = codes.targetRows;
    out.targetCols = codes.targetCols;
    if (codes.keyIds) out.keyIds = codes.keyIds;
  }
  return out;
}

/** An int32 label input as a tensor (its array is what a step graph feeds). */
function labelInput(inputs: AngleLabelInputs, name: keyof AngleLabelInputs): tf.Tensor1D {
  const a = inputs[name];
  if (!a) throw new InputError(`${ANGLE_TOTAL_OBJECTIVE}: label input '${name}' is missing (make the batch's label inputs with angleLabelInputs and the same configuration)`);
  return tf.tensor1d(a, 'int32');
}

/** The weighted total and the unweighted terms that were computed (weight > 0). */
export interface AngleLossTerms {
  total: tf.Scalar;
  cosine?: tf.Scalar;
  ibn?: tf.Scalar;
  angle?: tf.Scalar;
  /** Triplet form only: ½ (w_ibn · CE(q, p) + w_cln · CE(q, [p; n])), weights already applied. */
  contrastive?: tf.Scalar;
}

/** Fills a config from its preset and checks weights (finite, >= 0) and taus (finite, > 0). */
export function resolveAngleLossConfig(input: AngleLossConfigInput = {}): AngleLossConfig {
  const presetName = input.preset ?? 'paper';
  const base = ANGLE_PRESETS[presetName];
  if (!base) {
    throw new UnknownNameError(`${ANGLE_TOTAL_OBJECTIVE} preset`, String(presetName), Object.keys(ANGLE_PRESETS));
  }
  const weights = { ...base.weights, ...(input.weights ?? {}) };
  const taus = { ...base.taus, ...(input.taus ?? {}) };
  for (const [k, w] of Object.entries(weights)) {
    if (typeof w !== 'number' || !Number.isFinite(w) || w < 0) {
      throw new InputError(`${ANGLE_TOTAL_OBJECTIVE}: weight '${k}' must be a finite number >= 0, got ${w}`);
    }
  }
  for (const [k, t] of Object.entries(taus)) checkPositive(t, `tau '${k}'`, ANGLE_TOTAL_OBJECTIVE);
  return {
    weights,
    taus,
    anglePooling: input.anglePooling ?? base.anglePooling,
    ibnPositives: input.ibnPositives ?? base.ibnPositives,
    duplicates: input.duplicates ?? base.duplicates,
  };
}

/** Runs `fn` in a tidy scope that keeps exactly the returned terms. */
function tidyTerms(fn: () => AngleLossTerms): AngleLossTerms {
  return tf.tidy(() => {
    const t = fn();
    const kept: Record<string, tf.Scalar> = {};
    for (const [k, v] of Object.entries(t)) if (v !== undefined) kept[k] = v;
    return kept;
  }) as unknown as AngleLossTerms;
}

function weighted(total: tf.Scalar, term: tf.Scalar, w: number): tf.Scalar {
  return tf.add(total, tf.mul(term, tf.scalar(w)));
}

/**
 * The AnglE objective of a zigzag batch, with its terms. The term tensors are new tensors; dispose
 * them (inside `tf.variableGrads`/`minimize`, `tf.keep` the ones you want to log).
 */
export function angleLossTerms(
  emb: tf.Tensor2D,
  labels: ArrayLike<number>,
  config: AngleLossConfigInput = {},
  batch: AngleLossBatchOptions = {},
): AngleLossTerms {
  const c = resolveAngleLossConfig(config);
  assertEmbeddings(emb, ANGLE_TOTAL_OBJECTIVE);
  if (batch.labelInputs) return angleLossTermsOnDevice(emb, batch.labelInputs, c);
  return tidyTerms(() => {
    const out: Partial<AngleLossTerms> = {};
    let total: tf.Scalar = tf.scalar(0);
    if (c.weights.cosine > 0) {
      out.cosine = cosineLoss(emb, labels, { tau: c.taus.cosine });
      total = weighted(total, out.cosine, c.weights.cosine);
    }
    if (c.weights.ibn > 0) {
      out.ibn = inBatchNegativesLoss(emb, labels, {
        tau: c.taus.ibn,
        positives: c.ibnPositives,
        duplicates: c.duplicates,
        keys: batch.keys,
      });
      total = weighted(total, out.ibn, c.weights.ibn);
    }
    if (c.weights.angle > 0) {
      out.angle = angleLoss(emb, labels, { tau: c.taus.angle, pooling: c.anglePooling });
      total = weighted(total, out.angle, c.weights.angle);
    }
    return { ...out, total };
  });
}

/** angleLossTerms with the label masks built on the device from the batch's label inputs: the terms in the same order, the same values bit for bit. */
function angleLossTermsOnDevice(emb: tf.Tensor2D, inputs: AngleLabelInputs, c: AngleLossConfig): AngleLossTerms {
  return tidyTerms(() => {
    const out: Partial<AngleLossTerms> = {};
    let total: tf.Scalar = tf.scalar(0);
    const ranks = c.weights.cosine > 0 || c.weights.angle > 0 ? labelInput(inputs, 'ranks') : undefined;
    if (c.weights.cosine > 0) {
      out.cosine = cosineLossByRank(emb, ranks!, { tau: c.taus.cosine });
      total = weighted(total, out.cosine, c.weights.cosine);
    }
    if (c.weights.ibn > 0) {
      const codes = { targetRows: labelInput(inputs, 'targetRows'), targetCols: labelInput(inputs, 'targetCols'), keyIds: c.duplicates !== 'ignore' ? labelInput(inputs, 'keyIds') : undefined };
      out.ibn = inBatchNegativesLossByCodes(emb, codes, { tau: c.taus.ibn, duplicates: c.duplicates });
      total = weighted(total, out.ibn, c.weights.ibn);
    }
    if (c.weights.angle > 0) {
      out.angle = angleLossByRank(emb, ranks!, { tau: c.taus.angle, pooling: c.anglePooling });
      total = weighted(total, out.angle, c.weights.angle);
    }
    return { ...out, total };
  });
}

/** The AnglE objective (weighted total) of a zigzag batch `emb` [2P, D] with one label per pair. */
export function angleTotalLoss(
  emb: tf.Tensor2D,
  labels: ArrayLike<number>,
  config: AngleLossConfigInput = {},
  batch: AngleLossBatchOptions = {},
): tf.Scalar {
  return tf.tidy(() => angleLossTerms(emb, labels, config, batch).total);
}

/** The AnglE objective of a triplet batch `[q0, p0, n0, ...]` (AnglE format C), with its terms. */
export function angleTripletLossTerms(emb: tf.Tensor2D, config: AngleLossConfigInput = {}): AngleLossTerms {
  const c = resolveAngleLossConfig(config);
  assertEmbeddings(emb, ANGLE_TOTAL_OBJECTIVE);
  const n = tripletCount(emb.shape[0], ANGLE_TOTAL_OBJECTIVE);
  return tidyTerms(() => {
    const out: Partial<AngleLossTerms> = {};
    let total: tf.Scalar = tf.scalar(0);
    const { query, positive, negative } = splitTriplets(emb, ANGLE_TOTAL_OBJECTIVE);
    if (c.weights.ibn > 0 || c.weights.cln > 0) {
      out.contrastive = tf.tidy(() => {
        let cll: tf.Scalar = tf.scalar(0);
        if (c.weights.ibn > 0) cll = weighted(cll, cosineInfoNce(query, positive, undefined, c.taus.ibn), c.weights.ibn);
        if (c.weights.cln > 0) cll = weighted(cll, cosineInfoNce(query, positive, negative, c.taus.ibn), c.weights.cln);
        return tf.mul(cll, tf.scalar(0.5)) as tf.Scalar;
      });
      total = tf.add(total, out.contrastive);
    }
    if (c.weights.angle > 0 || c.weights.cosine > 0) {
      const combined = tf.concat([interleavePairs(query, positive), interleavePairs(query, negative)], 0) as tf.Tensor2D;
      const labels = Array.from({ length: 2 * n }, (_, k) => (k < n ? 1 : 0));
      if (c.weights.angle > 0) {
        out.angle = angleLoss(combined, labels, { tau: c.taus.angle, pooling: c.anglePooling });
        total = weighted(total, out.angle, c.weights.angle);
      }
      if (c.weights.cosine > 0) {
        out.cosine = cosineLoss(combined, labels, { tau: c.taus.cosine });
        total = weighted(total, out.cosine, c.weights.cosine);
      }
    }
    return { ...out, total };
  });
}

/** The AnglE objective (weighted total) of a triplet batch `[q0, p0, n0, ...]`. */
export function angleTripletTotalLoss(emb: tf.Tensor2D, config: AngleLossConfigInput = {}): tf.Scalar {
  return tf.tidy(() => angleTripletLossTerms(emb, config).total);
}

/** The options schema of `loss` (keys of AngleLossConfigInput; the compiler checks the list). */
export const ANGLE_LOSS_SCHEMA = {
  preset: true,
  weights: { cosine: true, ibn: true, angle: true, cln: true } satisfies Record<keyof AngleLossWeights, true>,
  taus: { cosine: true, ibn: true, angle: true } satisfies Record<keyof AngleLossTaus, true>,
  anglePooling: true,
  ibnPositives: true,
  duplicates: true,
} as const satisfies Record<keyof AngleLossConfigInput, unknown>;

/**
 * Registration of objective `angle`: the weighted total above on pairs (format A) or triplets
 * (format C), configured by `loss` (a preset plus overrides; default the paper's).
 */
export const ANGLE_LOSS = defineLoss({
  name: 'angle',
  summary: 'AnglE total: w_cos·cosine + w_ibn·ibn + w_angle·angle (pairs), contrastive + angle + cosine (triplets)',
  options: { loss: ANGLE_LOSS_SCHEMA, teacher: TEACHER_SCHEMA },
  kinds: ['pairs', 'triplets'],
  bind: (config: { loss?: AngleLossConfigInput; teacher?: TeacherOptions }, kind, ctx) => {
    const loss = angleObjective(config.loss, kind);
    // Pairs: the labels reach the step as device inputs (./registry.ts ObjectiveBatch.labelInputs); triplets' labels are constants.
    const labelInputs = kind === 'pairs' ? (b: { labels: readonly number[]; keys: readonly string[] }) => angleLabelInputs(b.labels, config.loss, { keys: b.keys }) as LabelInputs : undefined;
    if (!checkTeacher(config.teacher, 'angle')) return { ...withoutParameters(loss), ...(labelInputs ? { labelInputs } : {}) };
    // angle_emb's AngleTrainer: the teacher term joins the total with its gradient (./teacher-alignment.ts).
    const withTeacher = withoutParameters((emb, b) => {
      const r = loss(emb, b);
      const teacher = teacherAlignmentLoss(emb, b.keys, ctx.teacher, 'angle');
      return { total: tf.add(r.total, teacher) as tf.Scalar, terms: { ...r.terms, teacher } };
    });
    return { ...withTeacher, ...(labelInputs ? { labelInputs } : {}) };
  },
});

/** The AnglE objective as the trainer calls it, with the terms it logs. */
export function angleObjective(loss: AngleLossConfigInput | undefined, kind: 'pairs' | 'triplets' | 'unsupervised'): ObjectiveFn {
  if (kind === 'triplets') {
    return (emb) => {
      const r = angleTripletLossTerms(emb, loss);
      const terms: Record<string, tf.Scalar> = {};
      for (const k of ['contrastive', 'cosine', 'angle'] as const) if (r[k]) terms[k] = r[k]!;
      return { total: r.total, terms };
    };
  }
  return (emb, b) => {
    const r = angleLossTerms(emb, b.labels, loss, { keys: b.keys, labelInputs: b.labelInputs as AngleLabelInputs | undefined });
    const terms: Record<string, tf.Scalar> = {};
    for (const k of ['cosine', 'ibn', 'angle'] as const) if (r[k]) terms[k] = r[k]!;
    return { total: r.total, terms };
  };
}
