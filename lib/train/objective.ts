/**
 * The training objective by name, bound to the layout of the training data: a function from the
 * batch's embedding matrix to the loss and its named terms (the terms are what the log shows).
 *
 * Each objective is one entry of the loss registry (lib/losses/registry.ts), written in its loss's
 * file and listed in lib/losses/objectives.ts; this module only looks the entry up and binds it.
 *
 * | name     | pairs (zigzag + labels)        | triplets                   | unsupervised (two views) |
 * |----------|--------------------------------|----------------------------|--------------------------|
 * | `angle`  | AnglE total (cosine/ibn/angle) | AnglE triplet form         | —                        |
 * | `simcse` | InfoNCE, positives only        | supervised SimCSE          | unsupervised SimCSE      |
 * | `simace` | SimACE, positives only         | —                          | SimACE                   |
 * | `arccon` | ArcCon, positives only         | —                          | ArcCon                   |
 * | `sbert-cosine`  | SBERT cosine regression (graded labels / scale) | — | —                      |
 * | `sbert-softmax` | SBERT softmax classifier over (u, v, |u−v|)     | — | —                      |
 *
 * "Positives only" objectives read every pair as a positive, so pair data for them must be
 * labelled 1 throughout; anything else is refused rather than silently treated as positive.
 */
import { bindLoss, type BoundObjective, type ObjectiveContext } from '../losses/registry.js';
import { OBJECTIVE_NAMES, type ObjectiveConfig } from '../losses/objectives.js';
import type { TrainingExamples } from './examples.js';

export { OBJECTIVE_NAMES, type ObjectiveConfig };
export type { BoundObjective, ObjectiveBatch, ObjectiveContext, ObjectiveFn, ObjectiveValue } from '../losses/registry.js';

/** Checks that the objective accepts this kind of data and returns it ready to train. */
export function bindObjective(cfg: ObjectiveConfig, kind: TrainingExamples['kind'], ctx: ObjectiveContext = {}): BoundObjective {
  return bindLoss(cfg, kind, ctx);
}
