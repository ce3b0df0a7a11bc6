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
 *
 * Exported here (`angle.experiments` of lib/index.ts, the public face): what the notebooks and the
 * docs use, no more (test/public-surface.test.ts); the rest of the folder is internal, and lib/,
 * scripts/ and tests import its files directly.
 */
export { seedsFor } from './presets.js';
export { angleStsbWithIsp, recipe } from './recipes/index.js';
export { Plan } from './plan.js';
export { ANGLE_FILE, table2PaperCells, table2TrainedRows, table3Rows, table4ObjectiveRows, table4PoolingRows, table4OffTableRow, table5Rows } from './tables/angle.js';
export { ESPRESSO_NO_PAPER, espressoRows } from './tables/espresso.js';
export { layerWidthGrid, layerWidthTable, type LayerWidthCell } from './espresso-grid.js';
export { PROMPTEOL_PAPER_FILE, optDemonstrationOf } from './tables/prompteol.js';
export { simaceSweepRows, simaceTable1Rows, sweepTable } from './tables/simace.js';
export { rehearseLongTextMemory, longTextMemoryTable } from './rehearsal/long-text-memory.js';

// Evaluations without training, and what a notebook shows of them.
export { loadModelOrExplain, modelEntriesTable, type ModelEntry } from './evaluation-models.js';
export { trainedModelEntries } from './trained-models.js';
export { checkEvaluationData } from './evaluation-data.js';
export { evaluateReleased, prepareTable2Data, table2CellSources, sentevalMtebTable, legacyPoolingTable, releasedTable } from './released-evaluations.js';
export { flickr30kRows, flickr30kRunsOf } from './flickr30k-rows.js';
export { flickr30kRunsTable, flickr30kIntervalTable, flickr30kBars, flickr30kVerdictTable, flickr30kCoverage } from './flickr30k-tables.js';
export { sklearnPath, pytorchPath } from './transfer-run.js';
export { locateWordVectors } from './transfer-resources.js';
export { transferDatasetId, transferWorkTable, vocabularyCoverageTable, transferCellSources, transferRowsTable, transferPathsTable, transferTimeTable } from './transfer-tables.js';
export { bowTransferPlanRow, modelTransferPlanRow, transferRunsOf } from './transfer-rows.js';
export { cosineSpreadTable, alignUniformPathTable, alignUniformPathSummary, f3 } from './geometry-measure.js';
export { geometryRows, geometryOf } from './geometry-rows.js';
export { poolingComparisonRows, poolingComparisonOf } from './pooling-comparison-rows.js';
export { promptRoutesTable } from './prompt-evaluations.js';
export { table5TrainingData } from './llm-supervised-data.js';
export { promptEolResults, promptEolRunResults, iclSearchesOf } from './prompt-evaluation-rows.js';
export { prompteolPlanRows, prompteolOverrides, prompteolDemonstrationCandidates, prompteolIclTable, prompteolCaptions, prompteolTable3Sources, prompteolVerdict, prompteolSummaryText, PROMPTEOL_SMOKE } from './prompteol-plan.js';
export { iclSearchTable, iclSearchFigure } from './icl-search-report.js';
