/**
 * The experiments of the papers as data: the training tasks (./tasks.ts), the recipes of each
 * table with where every hyperparameter comes from (./recipes.ts), and the presets that say where
 * models and data come from and how big a run is (./presets.ts).
 */
export { TASK_NAMES, task, allTasks, type TaskName, type TaskDefinition, type TaskData } from './tasks.js';
export { PRESETS, PRESET_NAMES, PAPER_MODEL, presetTable, presetByName, isPresetName, type Preset, type PresetName, type RunScale } from './presets.js';
