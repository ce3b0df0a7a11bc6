/**
 * Training: the trainer (./trainer.ts) over a model's trainable parameters, AdamW, schedules,
 * batching, objectives by name, checkpoints and the best model.
 */
export { SeededRng, type RngState } from './rng.js';
export { SCHEDULE_NAMES, learningRate, scheduleFactor, checkSchedule, warmupStepsFromFraction, type ScheduleConfig, type ScheduleName } from './schedule.js';
export { AdamW, gradientsByParameterName, isNoDecayParameter, type AdamWOptions, type AdamWState } from './adamw.js';
export { clipByGlobalNorm } from './clip.js';
export {
  validateExamples,
  pairExamples,
  rowsPerExample,
  type PairExample,
  type TripletExample,
  type UnsupervisedExample,
  type TrainingExamples,
} from './examples.js';
export { BatchPlan, type BatchingOptions, type TrainingBatch } from './batching.js';
export { bindObjective, type ObjectiveConfig, type ObjectiveFn, type ObjectiveValue } from './objective.js';
export {
  saveCheckpoint,
  loadCheckpoint,
  latestCheckpoint,
  checkCheckpointFits,
  checkpointsDir,
  type Checkpoint,
  type TrainerState,
  type StepLog,
  type EvalLog,
} from './checkpoint.js';
export { Trainer, type TrainerConfig, type TrainerOptions, type RunOptions, type TrainResult, type TrainingIdentity, type TestEvaluation } from './trainer.js';
export { saveBestModel, restoreBestWeights, readBestModelInfo, bestModelDir, type BestModelInfo } from './best-model.js';
