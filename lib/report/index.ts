/**
 * Results: where a result came from (./provenance.ts), run records (./run-record.ts), the record
 * of a training run with its per-pair test predictions (./training-record.ts), statistics over runs
 * (./statistics/: mean ± std, bootstrap CIs, paired tests) and plotly figures (./figures/).
 */
export { collectProvenance, type Provenance } from './provenance.js';
export { writeRunRecord, newRunId, runRecordPath, type RunRecord, type DataIdentity, type ModelIdentity, type PaperCell } from './run-record.js';
export { writeTrainingRecord, trainingRunRecord, predictionsPath, portableModelIdentity, portablePath, type TrainingRecordOptions, type PredictionsFile } from './training-record.js';
export * as statistics from './statistics/index.js';
export * as figures from './figures/index.js';
