export * from './registry.js';
export { resolveDataDir, datasetDir, datasetFile } from './paths.js';
export {
  type SourceLine,
  type ScoredPair,
  type StsSet,
  type StsSplit,
  type LoadOptions,
  loadStsSubsetFiles,
  loadStsYear,
  loadStsBenchmarkFile,
  loadStsBenchmark,
  loadSickFile,
  loadSickRelatedness,
  loadStsTask,
} from './sts.js';
export {
  type BinarySet,
  loadBinaryTsv,
  loadBinaryJsonl,
  loadMrpc,
  loadQnli,
  loadQqp,
  loadGithubIssues,
  loadBinaryTask,
} from './pairs.js';
export { type CaptionSet, loadCaptionFile, loadFlickr30kCaptions } from './flickr.js';
export { senteval as sentevalSentence, pySplitWhitespace, pySplitLines, pyStrip } from './text.js';
