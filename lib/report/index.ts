/**
 * Results: where a result came from (./provenance.ts), run records (./run-record.ts), the record
 * of a training run with its per-pair test predictions (./training-record.ts), statistics over runs
 * (./statistics/: mean ± std, bootstrap CIs, paired tests), plotly figures (./figures/), the results
 * as a data frame (./results-reader.ts, arquero), side-by-side tables against the papers with
 * paired comparisons and ordering verdicts, run cards and notebook summaries.
 *
 * Exported here (`angle.report` of lib/index.ts, the public face): what the notebooks and the docs
 * use, no more (test/public-surface.test.ts); the rest of the folder is internal, and lib/, scripts/
 * and tests import its files directly.
 */
export * as figures from './figures/index.js';
export { readResults, frameOfRuns } from './results-reader.js';
export { sideBySide, sideBySideTable, sideBySideBars, mergeCellSources, oursValue } from './side-by-side.js';
export { compareRuns, comparisonTable } from './run-comparison.js';
export { orderingVerdicts, orderingTable } from './ordering-verdict.js';
export { writeNotebookSummary } from './notebook-summary.js';
export { verdictWords } from './stand-in.js';
export { signed } from './format-numbers.js';
export { alignUniformPathFromRecord } from './align-uniform-path.js';
export { retrievalExamplesTable, pickExampleQueries } from './retrieval-examples.js';
