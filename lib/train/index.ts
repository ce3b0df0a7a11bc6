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
export { stsDevEvaluation, binaryDevEvaluation, type DevEvaluation } from './dev-evaluation.js';
export { Trainer, type TrainerConfig, type TrainerModel, type TrainerOptions, type RunOptions, type TrainResult } from './trainer.js';
