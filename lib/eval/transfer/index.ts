/**
 * SentEval's transfer tasks (AnglE Table 6: MR, CR, SUBJ, MPQA, SST2, TREC, MRPC): sample
 * preparation, the bag-of-words baseline, the two classifier paths (scikit-learn's logistic
 * regression, SentEval's PyTorch linear classifier) and SentEval's validation protocols.
 */
export { RandomState } from './random-state.js';
export { type Fold, type StratifiedKFoldOptions, stratifiedTestFolds, stratifiedKFold } from './stratified-kfold.js';
export { numpyMean, numpySum, numpyRound2, rint, firstArgmax } from './numpy-reductions.js';
export { type Matrix, matrix, gatherRows, gather, gramWithIntercept, linearScores, addTransposedProduct, cholesky, choleskySolve } from './matrix.js';
export { type WordVectors, readWordVectors, bowEmbed, bowEncoder, tokensOf } from './bow.js';
export {
  SENTEVAL_TRANSFER_TASKS,
  type SentevalTransferTask,
  type ValidationProtocol,
  type TransferTaskSpec,
  type PreparedSplit,
  type PreparedTask,
  transferTaskSpec,
  sentevalSortOrder,
  prepareSplit,
  prepareTransferTask,
} from './tasks.js';
export { pairFeatures } from './pair-features.js';
export { type EmbeddingBatch, type TransferBatcher, type TaskMatrices, type EmbedTaskOptions, bowBatcher, batcherFromEncoder, embedTask } from './embed-task.js';
export { type LogisticProblem, blocksOf, log1pExp, logisticObjective, decisionFunction } from './logistic-objective.js';
export { type LbfgsObjective, type LbfgsOptions, type LbfgsResult, minimizeLbfgs } from './lbfgs.js';
export { type ObjectiveWithGradient, type LbfgsbOptions, type LbfgsbIteration, type LbfgsbResult, minimizeLbfgsb } from './lbfgsb.js';
export { Dcsrch, type DcsrchParams, type DcsrchTask } from './dcsrch.js';
export { type SklearnLbfgsOptions, SKLEARN_LOGISTIC_DEFAULTS, fitLogisticRegressionSklearn, toSklearnOrder, fromSklearnOrder } from './sklearn-lbfgs-fit.js';
export {
  type LogisticModel,
  type LogisticFitOptions,
  type SolverReport,
  LOGISTIC_TOL,
  encodeClasses,
  dataHessian,
  fitLogisticRegression,
  predictLogistic,
  coefficients,
  thetaFrom,
} from './logistic-regression.js';
export {
  type ValidationSpec,
  type TrainingRows,
  type FittedClassifier,
  type FitContext,
  type TransferLearner,
  type ProtocolOptions,
  type FitStats,
  type InnerKFoldFold,
  type InnerKFoldResult,
  type KFoldResult,
  type SplitResult,
  accuracy,
  innerKFold,
  kFold,
  splitValidation,
} from './validation.js';
export { type SklearnPathOptions, sklearnRegs, sklearnLogisticLearner } from './sklearn-path.js';
export {
  type SentevalClassifierConfig,
  type LinearModel,
  type LinearFitInput,
  type LinearFitResult,
  SIMCSE_TEST_CLASSIFIER,
  SIMCSE_FASTTEST_CLASSIFIER,
  pytorchRegs,
  TorchCpuUniform,
  initLinear,
  predictLinear,
  fitSentevalLinear,
  pytorchLinearLearner,
} from './pytorch-path.js';
export {
  type TransferTaskResult,
  type TransferSuiteResult,
  type ClassifyOptions,
  type TransferEvalOptions,
  f1Binary,
  classifyTransferTask,
  evaluateTransferTask,
  evaluateTransferTasks,
} from './evaluate.js';
