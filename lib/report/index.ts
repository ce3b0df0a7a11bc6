/**
 * Results: where a result came from (./provenance.ts), run records (./run-record.ts), the record
 * of a training run with its per-pair test predictions (./training-record.ts), statistics over runs
 * (./statistics/: mean ± std, bootstrap CIs, paired tests), plotly figures (./figures/), the results
 * as a data frame (./results-reader.ts, arquero), side-by-side tables against the papers with
 * paired comparisons and ordering verdicts, run cards and notebook summaries.
 */
export { collectProvenance, type Provenance } from './provenance.js';
export { writeRunRecord, newRunId, runRecordPath, type RunRecord, type DataIdentity, type ModelIdentity, type PaperCell } from './run-record.js';
export { writeTrainingRecord, trainingRunRecord, predictionsPath, portableModelIdentity, portablePath, type TrainingRecordOptions, type PredictionsFile } from './training-record.js';
export * as statistics from './statistics/index.js';
export * as figures from './figures/index.js';
export { readResults, loadRun, findRun, frameOfRuns, describeSkipped, runRecordProblem, type LoadedRun, type SkippedFile, type ResultsFrame, type ReadResultsOptions } from './results-reader.js';
export { flatten, recordRow, isConfigurationColumn, RUN_COLUMNS, PER_RUN_CONFIG_COLUMNS, type ColumnValue } from './record-columns.js';
export { aggregateSeeds, varyingColumns, frameToSimpleTable, type AggregateSeedsOptions } from './seed-aggregate.js';
export { selectRuns, selectSeeds, differingConfiguration, describeSelection, type RunSelection } from './run-selection.js';
export {
  sideBySide,
  sideBySideTable,
  sideBySideBars,
  mergeCellSources,
  oursValue,
  DEFAULT_METRIC,
  type CellSource,
  type SideBySide,
  type SideBySideCell,
  type SideBySideOptions,
  type SideBySideBootstrap,
  type OursValue,
  type SingleRunInterval,
} from './side-by-side.js';
export { compareRuns, comparisonTable, checkSameTestPairs, type RunComparison, type CompareRunsOptions } from './run-comparison.js';
export { orderingVerdicts, orderingTable, type OrderingCheck, type OrderingOptions, type CellRef, type NoiseVerdict } from './ordering-verdict.js';
export { runCardMarkdown, runCardPath, writeRunCard, writeRunCards, type RunCardOptions } from './run-card.js';
export { writeNotebookSummary, notebookSummaryMarkdown, type NotebookSummary } from './notebook-summary.js';
export { isStandInModel, standInModels, standInSentence, verdictWords, STAND_IN_WORDS } from './stand-in.js';
export { signed, hashPrefix, formatDuration, paperText } from './format-numbers.js';
export { alignUniformPathFromRecord } from './align-uniform-path.js';
export { retrievalExamplesTable, pickExampleQueries, type RetrievalExamplesInput } from './retrieval-examples.js';
export { writeEvaluationRecord, evaluationRunRecord, type EvaluationRecordOptions } from './evaluation-record.js';
export { writeMtebResults, mtebTaskResult, mtebModelMeta, mtebModelPath, MTEB_NO_REVISION, type MtebModelInfo } from './mteb-results.js';
