/**
 * Evaluation: the evaluator contract (./evaluator.ts) and its pair evaluators, Spearman as scipy,
 * SentEval STS, binary-label STS, retrieval, embedding geometry, baseline encoders.
 */
export { type Evaluator, type EvaluationResult } from './evaluator.js';
export { stsEvaluator, binaryEvaluator } from './pair-evaluators.js';
export { alignUniformEvaluator, type AlignUniformEvaluatorOptions } from './align-uniform-evaluator.js';
export { rankAverage, pearson, spearman } from './spearman.js';
export {
  dedupe,
  checkEmbeddings,
  embedUnique,
  pairCosines,
  pairCosinesF32,
  normalizeRows,
  gatherRows,
  cachingEncoder,
} from './vectors.js';
export {
  type Correlation,
  type StsSetScores,
  type StsTaskResult,
  type StsSuiteResult,
  type StsSuiteOptions,
  type StsSetIndex,
  summarizeStsSets,
  indexStsSets,
  evaluateStsSets,
  evaluateStsTask,
  evaluateStsSuite,
  reportedSpearman,
  sentevalSpearmanTable,
} from './senteval-sts.js';
export { type BinaryStsResult, evaluateBinaryPairs, evaluateBinaryTask } from './binary-sts.js';
export {
  type TopK,
  type SearchOptions,
  type CaptionRetrievalResult,
  searchInnerProduct,
  sliceTopK,
  dropFromTopK,
  FlatInnerProductIndex,
  recallAtK,
  exactSetAccuracy,
  captionRetrieval,
  evaluateFlickr30k,
} from './retrieval.js';
export {
  type AlignUniformResult,
  type Histogram,
  type Kde,
  type DensityBucket,
  type CosineDensityResult,
  type DensityOptions,
  alignment,
  uniformity,
  alignUniformOnSet,
  alignUniformStsb,
  histogram,
  gaussianKde,
  cosineDensityByGold,
  cosineDensityForSet,
} from './geometry.js';
export { hashingBowEncoder, tableEncoder } from './baselines.js';
export * as transfer from './transfer/index.js';
