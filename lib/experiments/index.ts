/**
 * The experiments of the papers, as a notebook uses them (the public face: lib/ and its scripts and
 * tests import the files themselves):
 *
 * - the training tasks (./tasks.ts) and the presets (./presets.ts);
 * - the recipes, one paper per file (./recipes/), changed key by key by a parameter cell's
 *   overrides (./overrides.ts);
 * - the rows of each paper table (./tables/) and the one plan every notebook trains through
 *   (./plan.ts), which runs every kind of run through one store (./run-store.ts);
 * - the evaluations without training (released checkpoints, Flickr30k, SentEval's transfer tasks,
 *   geometry, prompt embeddings) and the tables a notebook shows of them;
 * - the rehearsal (./rehearsal/): the paper preset at the papers' shapes, projected onto one H100.
 */
export { TASK_NAMES, task, allTasks, loadTaskData, type TaskName, type TaskDefinition, type TaskData, type TaskLoadOptions } from './tasks.js';
export { PRESETS, PRESET_NAMES, PAPER_MODEL, PAPER_LLM_MODEL, presetTable, presetByName, isPresetName, seedsFor, type Preset, type PresetName, type RunScale } from './presets.js';
export * from './recipes/index.js';
export { applyOverrides, PARAMETER_CELL, type RecipeOverrides } from './overrides.js';
export { applyTableOverrides, type TableOverrides } from './row-overrides.js';
export { Plan, type PlanRow, type PlanCell, type PlanOptions, type PlannedRun, type LiveHooks } from './plan.js';
export { ModelSlot, type RowEvaluation, type EvaluationContext, type EvaluationOutcome, type EvaluationRecord, type RehearsalContext, type RehearsedEvaluation } from './plan-evaluation.js';
export { runRecipe, type RunRecipeOptions, type RecipeRun } from './run-recipe.js';
export { paperCellOf } from './paper-cell.js';
export * from './tables/angle.js';
export * from './tables/espresso.js';
export { layerWidthGrid, layerWidthTable, gridWidths, widthSweepEvaluator, type LayerWidthCell, type LayerWidthGridOptions } from './espresso-grid.js';
export * from './tables/prompteol.js';
export * from './tables/simace.js';
export { ranRowModel, type RanRowModel } from './ran-row-model.js';
export { rehearseLongTextMemory, longTextMemoryTable, LONG_TEXT_LENGTHS } from './rehearsal/long-text-memory.js';

// Evaluations without training, and what a notebook shows of them.
export { openModelEntry, withModelEntry, loadModelOrExplain, modelEntriesTable, type ModelEntry, type OpenedModel } from './evaluation-models.js';
export { trainedModelEntries, type TrainedModelQuery } from './trained-models.js';
export { checkEvaluationData, type EvaluationDataStatus } from './evaluation-data.js';
export { runEvaluation, type RunEvaluationOptions, type EvaluationRun } from './run-evaluation.js';
export { runStsSuite, TABLE2_METRICS, TABLE2_AVERAGE, type SuiteRun, type SuiteSettings } from './sts-suite-run.js';
export { evaluateReleased, prepareTable2Data, table2CellSources, sentevalMtebTable, legacyPoolingTable, releasedTable, releasedVariants, type Table2Evaluation, type Table2Options, type ReleasedVariant } from './released-evaluations.js';
export { runFlickr30k, rehearseFlickr30k, flickr30kQueryDetails, type Flickr30kRun, type Flickr30kQueryDetails } from './flickr30k-run.js';
export { Flickr30kEvaluation, flickr30kRows, flickr30kRunsOf, type Flickr30kRowOptions } from './flickr30k-rows.js';
export { flickr30kRunsTable, flickr30kCellSources, flickr30kIntervalTable, flickr30kBars, flickr30kVerdictTable, flickr30kCoverage } from './flickr30k-tables.js';
export { runTransferRows, bowTransferRow, modelTransferRow, sklearnPath, pytorchPath, type TransferRow, type TransferPath, type TransferRowRun } from './transfer-run.js';
export { locateWordVectors, sentevalTimings, vocabularyCoverage } from './transfer-resources.js';
export { transferDatasetId, transferWorkTable, vocabularyCoverageTable, transferCellSources, transferRowsTable, transferPathsTable, transferTimeTable } from './transfer-tables.js';
export { TransferEvaluation, bowTransferPlanRow, modelTransferPlanRow, transferRunsOf, runModelTransfer, type ModelTransferRow, type TransferOutcome } from './transfer-rows.js';
export { measureEntryGeometry, cosineSpreadTable, alignUniformPathTable, alignUniformPathSummary, f3, type GeometryMeasurement } from './geometry-measure.js';
export { geometryRows, geometryOf, type GeometryResult, type TrainedGeometry } from './geometry-rows.js';
export { poolingComparisonRows, poolingComparisonOf, type PoolingComparison } from './pooling-comparison-rows.js';
export {
  promptEolRows,
  evaluatePromptRows,
  evaluatePromptRowsThroughEndpoint,
  fitSentencesToContext,
  promptRoutesTable,
  optIclImprovements,
  iclImprovementTable,
  type PromptRow,
  type PromptModelResult,
} from './prompt-evaluations.js';
export {
  promptEmbeddingRoute,
  promptEmbeddingRoutes,
  inProcessFit,
  tensorParallelSize,
  vllmEmbeddingCommand,
  serveLlmCommand,
  endpointFor,
  smokeOptStandIn,
  type PromptEmbeddingRoute,
  type EndpointSetting,
  type PromptEolModel,
  type RouteOptions,
} from './prompt-embedding-route.js';
export { llmSupervisedTaskData, table5TrainingData, type TableGenerator } from './llm-supervised-data.js';
export { inProcessPromptEncoder, endpointPromptEncoder } from './prompt-evaluations.js';
export {
  searchIclDemonstrations,
  rehearseIclSearch,
  stsbDevEvaluator,
  type IclSearch,
  type IclSearchResult,
  type IclSearchRehearsal,
  type IclSearchNotRun,
  type IclSearchOptions,
  type IclScore,
  type IclCandidateScore,
} from './icl-demonstration-search.js';
export { PromptRowEvaluation, IclSearchEvaluation, promptEolTable1Rows, promptEolResults, promptEolRunResults, iclSearchesOf, type RoutedPromptModel, type IclModelSearch, type IclSearchRowOptions } from './prompt-evaluation-rows.js';
export {
  prompteolPlanRows,
  prompteolRoutedModels,
  prompteolOverrides,
  prompteolDemonstrationCandidates,
  prompteolIclTable,
  prompteolCaptions,
  prompteolTable3Sources,
  prompteolVerdict,
  prompteolSummaryText,
  decoderName,
  PROMPTEOL_SMOKE,
  type PromptEolPlanOptions,
} from './prompteol-plan.js';
export { iclSearchTable, iclCandidatesTable, iclSearchFigure, type IclSearchEntry } from './icl-search-report.js';
export {
  table4DemonstrationSet,
  stsbTrainSentences,
  labelStsbTrainDemonstrations,
  oneWordLabelsTable,
  PROMPTEOL_DEMONSTRATION_SET_SIZE,
  type LabelledDemonstrations,
} from './icl-demonstration-sets.js';
export { readDemonstrationFile, readDemonstrationsJsonl, readAuthorsIclExamples, writeDemonstrationsJsonl, type DemonstrationCandidate } from '../llm/demonstration-set.js';

// The rehearsal.
export { rehearseEncoding, type RehearseEncodingOptions } from './rehearsal/encode.js';
export { readRehearsalSummary, rehearsalTable, rehearsalNotebookTable, type RehearsalRow } from './rehearsal/summary.js';
