/**
 * The objectives a recipe can name: one registration line per loss (each entry lives in its loss's
 * file, beside its formula and options schema; see ./registry.ts). The order is the order
 * `npm run train --help` lists them in.
 */
import { ANGLE_LOSS } from './angle-loss.js';
import { ARCCON_LOSS } from './arccon.js';
import { SBERT_COSINE_LOSS } from './sbert-cosine.js';
import { SBERT_SOFTMAX_LOSS } from './sbert-softmax.js';
import { SIMACE_LOSS } from './simace.js';
import { SIMCSE_LOSS } from './simcse.js';
import { ESE_LOSS } from './ese.js';
import { registerLoss, type LossDefinition, type ObjectiveConfigOf } from './registry.js';

export const BUILTIN_LOSSES = [ANGLE_LOSS, SIMCSE_LOSS, SIMACE_LOSS, ARCCON_LOSS, SBERT_COSINE_LOSS, SBERT_SOFTMAX_LOSS, ESE_LOSS] as const;

for (const def of BUILTIN_LOSSES) registerLoss(def as LossDefinition<string, never>);

/** The configuration of a built-in objective, as a recipe writes it (`{ name: 'angle', loss: {...} }`). */
export type ObjectiveConfig = ObjectiveConfigOf<(typeof BUILTIN_LOSSES)[number]>;

/** The built-in objectives' names. */
export const OBJECTIVE_NAMES = BUILTIN_LOSSES.map((d) => d.name) as ReadonlyArray<ObjectiveConfig['name']>;
