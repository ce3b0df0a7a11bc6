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
  sentevalBatches,
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
export { chunkedInnerProductSearch, chunkedSearchMemoryBound, DEFAULT_CHUNK_ROWS, DEFAULT_QUERY_ROWS, type ChunkedSearchOptions, type CorpusChunks } from './chunked-search.js';
export { captionRetrievalQueries, evaluateFlickr30kQueries, type CaptionQueries } from './caption-queries.js';
export { cosineSpreadByGold, quantileType7, type CosineSpread, type CosineBucketSpread } from './cosine-spread.js';
export { sentevalStsEvaluator, sentevalMetricsTable, SENTEVAL_STS_COLUMNS, type SentevalStsEvaluatorOptions } from './senteval-sts-evaluator.js';
export { MTEB_STS_TASKS, mtebStsTask, mtebStsPairs, scoreMtebStsPairs, evaluateMtebSts, type MtebStsTask, type MtebStsTaskName, type MtebStsPairs, type MtebStsScores, type MtebStsTaskResult, type MtebStsOptions } from './mteb-sts.js';
