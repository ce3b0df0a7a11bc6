/**
 * Teacher alignment: angle_emb 0.6.1 `AngleTrainer.compute_loss` (angle.py:412-422; options
 * `teacher_name_or_path`, `teacher_pooling_strategy` default 'cls'). A frozen teacher embeds each
 * row of the batch (under no_grad, pooled with the teacher's strategy) and the loss gains
 *
 *   distillationLoss(student, teacher, mse 0, T 1)   (./distillation.ts: T · KL(softmax(t/T) ‖ softmax(x/T)), batchmean)
 *
 * where `student` is the student's pooled output. The student gets its gradient; in
 * `AngleESETrainer` (548-559) the same term is computed under no_grad, so it adds to the loss value
 * only (./ese.ts does the same). The teacher's vectors must be as wide as the student's (the KL runs
 * over the last dimension). The library's teacher strategy 'all' (every token's states) is not offered.
 *
 * Here the teacher is frozen and deterministic (no dropout: HF's from_pretrained returns a model in
 * eval mode), so its vector of a text never changes: the trainer embeds every training text once
 * before the first step (lib/train/trainer.ts) and the objective looks the rows up by text (the
 * batch's `keys`, the texts of its rows in order). A recipe names the teacher in its objective:
 * `objective: { name: 'angle', loss, teacher: { model, pooling } }`, and OVERRIDES reach it as any
 * objective option (`{ objective: { teacher: { model: '...' } } }`).
 */
import { tf } from '../backend/index.js';
import { InputError } from '../util/errors.js';
import { distillationLoss } from './distillation.js';

export interface TeacherOptions {
  /** A Hub id or model folder: the teacher (angle_emb's teacher_name_or_path). */
  model: string;
  /** The teacher's pooling (angle_emb's teacher_pooling_strategy; default cls). */
  pooling?: string;
}

/** The option schema of `teacher` (lib/losses/registry.ts: the override keys derive from it). */
export const TEACHER_SCHEMA = { model: true, pooling: true } as const satisfies Record<keyof TeacherOptions, true>;

/** The teacher's vectors of the batch's rows, by their texts: a constant [rows, dim] (no gradient reaches the teacher). */
export type TeacherVectors = (texts: readonly string[]) => tf.Tensor2D;

/** The library's setting of the teacher term (mse_weight 0, kl_temperature 1, hard-coded in compute_loss). */
const TEACHER_TERM = { mseWeight: 0, klTemperature: 1 } as const;

/** Checks a recipe's `teacher` option. */
export function checkTeacher(t: TeacherOptions | undefined, objective: string): TeacherOptions | undefined {
  if (t === undefined) return undefined;
  if (typeof t !== 'object' || t === null || typeof t.model !== 'string' || t.model.trim() === '') {
    throw new InputError(`${objective}: teacher must be { model: '<hub id or folder>', pooling?: '<name>' }, got ${JSON.stringify(t)}`);
  }
  return t;
}

/** The teacher term of `emb` [rows, dim] for the rows `keys`. */
export function teacherAlignmentLoss(emb: tf.Tensor2D, keys: readonly string[], vectors: TeacherVectors | undefined, objective: string): tf.Scalar {
  if (!vectors) throw new InputError(`${objective}: its teacher's vectors were not prepared (the trainer embeds the training texts with the teacher before the first step)`);
  if (keys.length !== emb.shape[0]) throw new InputError(`${objective}: the batch names ${keys.length} texts for ${emb.shape[0]} rows`);
  // Freed by the caller's scope (the training step's tidy), not here: the tape may hold it for backward.
  const t = vectors(keys);
  if (t.shape[1] !== emb.shape[1]) throw new InputError(`${objective}: the teacher's vectors are ${t.shape[1]} wide, the student's ${emb.shape[1]}: teacher alignment needs the same width`);
  return distillationLoss(emb, t, TEACHER_TERM);
}

/** A lookup over vectors computed once per distinct text (row i of `data` [n, dim] is `texts[i]`'s). */
export function teacherLookup(texts: readonly string[], data: Float32Array, dim: number, teacher: string): TeacherVectors {
  const row = new Map<string, number>();
  texts.forEach((t, i) => row.set(t, i));
  return (keys) => {
    const out = new Float32Array(keys.length * dim);
    keys.forEach((k, i) => {
      const r = row.get(k);
      if (r === undefined) throw new InputError(`teacher ${teacher}: no vector for the text ${JSON.stringify(k.slice(0, 60))} (not among the training texts it embedded)`);
      out.set(data.subarray(r * dim, (r + 1) * dim), i * dim);
    });
    return tf.tensor2d(out, [keys.length, dim]);
  };
}
