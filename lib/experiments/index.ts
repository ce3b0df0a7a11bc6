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
export { runRecipe, runKey, preparedRunKey, finishedRun, trainingData, type RunRecipeOptions, type RecipeRun, type ModelPreparation } from './run-recipe.js';
export { estimateCost, type CostEstimate } from './cost.js';
export { TablePlan, type PlannedRow, type PlannedRun, type TablePlanOptions, type LiveHooks } from './table-plan.js';
export { table3Rows, table4ObjectiveRows, table4PoolingRows, TABLE3_COLUMNS, ANGLE_FILE } from './paper-tables.js';
export { openModelEntry, withModelEntry, modelEntriesTable, type ModelEntry, type OpenedModel, type OpenModelOptions } from './evaluation-models.js';
export { trainedModelEntries, type TrainedModelQuery } from './trained-models.js';
export { checkEvaluationData, type EvaluationDataStatus } from './evaluation-data.js';
export { runFlickr30k, flickr30kQueryDetails, type Flickr30kRun, type Flickr30kRunOptions, type Flickr30kQueryDetails } from './flickr30k-run.js';
export { runTransferRows, bowTransferRow, modelTransferRow, sklearnPath, pytorchPath, transferRecordDetails, type TransferRow, type TransferPath, type TransferRowRun, type TaskOutcome, type RunTransferOptions } from './transfer-run.js';
export { locateWordVectors, sentevalTimings, vocabularyCoverage, type WordVectorsLocation, type SentevalTimings, type VocabularyCoverage } from './transfer-resources.js';
export { SuppliedDataPlan, type SuppliedRow, type SuppliedCell, type SuppliedDataPlanOptions, type SuppliedRun } from './supplied-data-plan.js';
export { runEvaluation, evaluationKey, type RunEvaluationOptions, type EvaluationRun } from './run-evaluation.js';
export { runLoraRecipe, loraRunKey, loraPreparation, estimateLoraCost, type RunLoraRecipeOptions } from './run-lora-recipe.js';
export { promptedExamples, promptedEvaluator, promptedEncoder, promptedTaskData, truncateSentence, type PromptSpec, type PromptedTrainingOptions } from './prompted-task.js';
export { paperCellOf } from './paper-cell.js';
export { llmSupervisedTaskData, angleLlmSupervisedRecipe, table5Rows, TABLE5_GENERATORS, TABLE5_UNSUPERVISED } from './llm-supervised-task.js';
export {
  unsupervisedRecipe,
  wiki1mTaskData,
  simaceTable1Rows,
  simaceSweepRows,
  sweepTable,
  SIMACE_PAPER_FILE,
  type UnsupervisedObjective,
  type UnsupervisedRecipeOptions,
  type SweepRow,
  type Wiki1mTask,
} from './simace-unsupervised.js';
export { PROMPTEOL_PAPER_FILE, PROMPTEOL_ICL_DEMONSTRATIONS, PROMPTEOL_LORA, PROMPTEOL_SENTENCE_TOKENS, promptEolEncoderSettings, promptEolCseRecipe, prompteolTable2Rows } from './prompteol-plan.js';
export { TRANSFER_RECIPE_NAMES, NLI_SOURCES, transferRecipe, type TransferRecipe, type SuiteEvaluation } from './nli-recipes.js';
export { NLI_TRANSFER_SOURCES, nliSourceFor, nliTransferData, type NliTransferSource, type NliView } from './nli-transfer-data.js';
export { runStsSuite, suiteRunKey, TABLE2_METRICS, TABLE2_AVERAGE, type SuiteRunOptions, type SuiteRun, type SuiteSettings } from './sts-suite-run.js';
export {
  evaluateReleased,
  trainTransferRows,
  prepareTable2Data,
  loadTransferData,
  transferCostTable,
  scaleTransferRecipe,
  table2PaperCells,
  table2CellSources,
  sentevalMtebTable,
  legacyPoolingTable,
  transferRecipeTable,
  releasedTable,
  releasedVariants,
  trainedPaperRows,
  exportTrainedAdapter,
  type Table2Evaluation,
  type Table2Options,
  type ReleasedVariant,
} from './table2-plan.js';
