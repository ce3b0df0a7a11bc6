/**
 * Training objectives: AnglE's (cosine/CoSENT, angle, in-batch negatives, their weighted total,
 * contrastive with hard negatives), the contrastive baselines (SimCSE, SimACE, ArcCon) and
 * Sentence-BERT's objectives (cosine regression, softmax classification).
 * Every objective is a differentiable function of an embedding matrix (tf.Tensor2D, rows in one of
 * the layouts of ./batch.ts) and, for the AnglE pair objectives, one label per pair, returning a
 * tf.Scalar; use it under tf.grad / tf.variableGrads.
 */
export {
  pairCount,
  tripletCount,
  zigzagPairs,
  tripletRows,
  splitPairs,
  splitTriplets,
  interleavePairs,
  interleaveTriplets,
  filterDuplicateExamples,
  duplicateRows,
  type LabelledPair,
  type Triplet,
} from './batch.js';
export { l2Normalize, rowCosine, cosineMatrix } from './similarity.js';
export { pairwiseRankingLoss } from './ranking.js';
export { cosineLoss, cosinePairScores, COSINE_OBJECTIVE, type CosineLossOptions } from './cosine.js';
export { angleLoss, anglePairScores, ANGLE_OBJECTIVE, type AngleLossOptions, type AnglePooling } from './angle.js';
export {
  inBatchNegativesLoss,
  inBatchTargets,
  IBN_OBJECTIVE,
  DUPLICATE_HANDLINGS,
  type DuplicateHandling,
  type IbnPositives,
  type InBatchNegativesOptions,
} from './in-batch-negatives.js';
export {
  angleTotalLoss,
  angleLossTerms,
  angleTripletTotalLoss,
  angleTripletLossTerms,
  resolveAngleLossConfig,
  ANGLE_PAPER_CONFIG,
  ANGLE_CODE_CONFIG,
  ANGLE_PRESETS,
  ANGLE_TOTAL_OBJECTIVE,
  type AngleLossConfig,
  type AngleLossConfigInput,
  type AngleLossBatchOptions,
  type AngleLossTerms,
  type AngleLossWeights,
  type AngleLossTaus,
  type AnglePresetName,
} from './angle-loss.js';
export {
  contrastiveWithNegativeLoss,
  tripletContrastiveLoss,
  CONTRASTIVE_WITH_NEGATIVE_OBJECTIVE,
  type ContrastiveWithNegativeOptions,
  type TripletContrastiveOptions,
} from './contrastive-with-negative.js';
export {
  infoNceLoss,
  simcseSupervisedLoss,
  simcsePairLoss,
  simcseUnsupervisedLoss,
  SIMCSE_OBJECTIVE,
  SIMCSE_DEFAULT_TEMPERATURE,
  type SimcseOptions,
} from './simcse.js';
export {
  simaceLoss,
  simaceInfoNceLoss,
  SIMACE_OBJECTIVE,
  SIMACE_DEFAULT_TEMPERATURE,
  SIMACE_DEFAULT_MARGIN_DEGREES,
  type SimaceOptions,
} from './simace.js';
export {
  arcconLoss,
  arcconInfoNceLoss,
  ARCCON_OBJECTIVE,
  ARCCON_DEFAULT_TEMPERATURE,
  ARCCON_DEFAULT_MARGIN_DEGREES,
  type ArcconOptions,
} from './arccon.js';
export { toRadians, clippedAcos, ARCCOS_CLIP_EPS, type AngleUnit } from './angular.js';
export { sbertCosineLoss, SBERT_COSINE_OBJECTIVE, type SbertCosineOptions } from './sbert-cosine.js';
export { sbertSoftmaxLoss, sbertClassifierInit, SBERT_SOFTMAX_OBJECTIVE } from './sbert-softmax.js';
export {
  registerLoss,
  defineLoss,
  registeredLossNames,
  lossDefinition,
  lossOptionKeys,
  bindLoss,
  withoutParameters,
  positivesOnly,
  type LossDefinition,
  type OptionsSchema,
  type ObjectiveBatch,
  type ObjectiveFn,
  type ObjectiveValue,
  type BoundObjective,
  type ObjectiveContext,
  type ObjectiveDataKind,
  type ObjectiveInput,
  type ObjectiveConfigOf,
} from './registry.js';
export { BUILTIN_LOSSES, OBJECTIVE_NAMES, type ObjectiveConfig } from './objectives.js';
export { distillationLoss, DISTILLATION_OBJECTIVE, type DistillationOptions } from './distillation.js';
export { maskedLmLoss, MLM_OBJECTIVE } from './masked-lm.js';
export { pcaCompress, type PcaCompressOptions } from './pca-compress.js';
export { eseLoss, pcaTarget, ESE_LOSS, ESE_OBJECTIVE, type EseOptions, type CompressionTarget } from './ese.js';
