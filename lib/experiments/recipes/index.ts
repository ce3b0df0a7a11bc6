/**
 * Every named recipe of the papers, in one registry: `recipe(name)` for `npm run train -- --recipe`,
 * notebooks and tests; `defaultRecipe(task)` for `npm run train -- --task`. The recipes themselves
 * live one paper per file (./angle.ts, ./simcse.ts, ./sbert.ts, ./prompteol.ts, ./simace.ts), over
 * HF Trainer's defaults (./base.ts); ./recipe.ts says what a recipe is.
 */
import { UnknownNameError } from '../../util/errors.js';
import { task, type TaskName } from '../tasks.js';
import {
  angleBert,
  angleRan,
  angleLlamaNli,
  angleLlmSupervised,
  angleNliLater,
  angleNliPaper,
  angleNliTriplets,
  angleStsbWithIsp,
  angleStsbWithPooling,
  angleStsbWithWeights,
  TABLE4_OBJECTIVES,
  TABLE4_POOLINGS,
} from './angle.js';
import { espressoNli, espressoNliWithoutEse } from './espresso.js';
import { promptEolCse, promptEolCse13b } from './prompteol.js';
import type { Recipe } from './recipe.js';
import { sbertBert } from './sbert.js';
import { unsupervisedRecipe } from './simace.js';
import { simcseBert, simcseNliSup } from './simcse.js';

export type { Recipe, RecipePrompt, SuiteEvaluation } from './recipe.js';
export { scaleRecipe } from './recipe.js';
export { HF_TRAINER, SOURCES, overHfTrainer } from './base.js';
export { ANGLE_SOURCES, NLI_SOURCES, RAN_SOURCES, TABLE4_OBJECTIVES, TABLE4_POOLINGS, angleBert, angleRan, angleLlamaNli, angleLlmSupervised, angleNliLater, angleNliPaper, angleNliTriplets, angleStsbWithIsp, angleStsbWithPooling, angleStsbWithWeights } from './angle.js';
export { ESPRESSO_SMOKE_COMPRESSION, ESPRESSO_SMOKE_WIDTH, ESPRESSO_SOURCES, espressoNli, espressoNliWithoutEse, type EspressoWidth } from './espresso.js';
export { SIMCSE_SOURCES, simcseBert, simcseNliSup } from './simcse.js';
export { SBERT_SOURCES, sbertBert } from './sbert.js';
export { PROMPTEOL_LORA, PROMPTEOL_SENTENCE_TOKENS, promptEolCse, promptEolCse13b } from './prompteol.js';
export { unsupervisedRecipe, type UnsupervisedObjective, type UnsupervisedRecipeOptions } from './simace.js';

/** The tasks AnglE Table 3 trains one model each on (its own train split). */
const TABLE3_TASKS = ['stsb', 'sick', 'mrpc', 'qnli', 'qqp', 'gis'] as const satisfies readonly TaskName[];

/** Every named recipe, built fresh on each call (callers may change what they get). */
function allRecipes(): Recipe[] {
  return [
    ...TABLE3_TASKS.flatMap((t) => [angleBert(t), simcseBert(t), sbertBert(t)]),
    // AnglE-RAN: AnglE Table 3's five columns (it has no SICK-R cell).
    ...(['mrpc', 'stsb', 'qqp', 'qnli', 'gis'] as const).map((t) => angleRan(t)),
    ...TABLE4_OBJECTIVES.map(({ row, weights }) => angleStsbWithWeights(row, weights)).filter((r) => r.name !== 'angle-stsb-w111'),
    angleStsbWithIsp(false),
    ...TABLE4_POOLINGS.filter((p) => p.pooling !== 'cls').map(({ row, pooling }) => angleStsbWithPooling(row, pooling)),
    angleNliTriplets(),
    espressoNli(),
    espressoNliWithoutEse(),
    angleNliPaper(),
    angleNliLater(),
    simcseNliSup(),
    angleLlamaNli(),
    angleLlmSupervised(),
    promptEolCse('nli'),
    promptEolCse13b(),
    unsupervisedRecipe('simcse'),
    unsupervisedRecipe('arccon'),
    unsupervisedRecipe('simace'),
  ];
}

export const RECIPE_NAMES: readonly string[] = allRecipes().map((r) => r.name);

/** A recipe by name (e.g. 'angle-stsb', 'simcse-nli-sup'), or an error listing them all. */
export function recipe(name: string): Recipe {
  const r = allRecipes().find((x) => x.name === name);
  if (!r) throw new UnknownNameError('recipe', name, RECIPE_NAMES);
  return r;
}

/** Each task's default recipe (what `npm run train -- --task <t>` runs). */
const DEFAULT_RECIPES: Record<TaskName, () => Recipe> = {
  stsb: () => angleBert('stsb'),
  sick: () => angleBert('sick'),
  mrpc: () => angleBert('mrpc'),
  qnli: () => angleBert('qnli'),
  qqp: () => angleBert('qqp'),
  gis: () => angleBert('gis'),
  nli: angleNliTriplets,
  'nli-pairs': angleNliPaper,
  wiki1m: () => unsupervisedRecipe('simace'),
};

/** The default recipe of a task. */
export function defaultRecipe(t: TaskName): Recipe {
  return DEFAULT_RECIPES[task(t).name]();
}
