/**
 * The experiments of the papers as data: the training tasks (./tasks.ts), the recipes of each
 * table with where every hyperparameter comes from (./recipes.ts), and the presets that say where
 * models and data come from and how big a run is (./presets.ts).
 */
export { TASK_NAMES, task, allTasks, type TaskName, type TaskDefinition, type TaskData } from './tasks.js';
export { PRESETS, PRESET_NAMES, PAPER_MODEL, PAPER_LLM_MODEL, presetTable, presetByName, isPresetName, seedsFor, type Preset, type PresetName, type RunScale } from './presets.js';
export {
  defaultRecipe,
  recipe,
  RECIPE_NAMES,
  SOURCES,
  scaleRecipe,
  table3Recipes,
  angleStsbWithWeights,
  angleStsbWithIsp,
  angleStsbWithPooling,
  TABLE4_OBJECTIVES,
  TABLE4_POOLINGS,
  type Recipe,
} from './recipes.js';
export { runRecipe, runKey, finishedRun, trainingData, type RunRecipeOptions, type RecipeRun } from './run-recipe.js';
export { estimateCost, type CostEstimate } from './cost.js';
export { TablePlan, type PlannedRow, type PlannedRun, type TablePlanOptions, type LiveHooks } from './table-plan.js';
export { table3Rows, table4ObjectiveRows, table4PoolingRows, TABLE3_COLUMNS, ANGLE_FILE } from './paper-tables.js';
