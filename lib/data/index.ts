export * from './registry.js';
export { resolveDataDir, datasetDir, datasetFile } from './paths.js';
export { type LocateOptions, type LocatedSplit, type SplitLayout, findSplit, locateSplit, howToGet } from './locate.js';
export { type CacheOptions, cachedCommit, cachedPreparedDir, preparedDir } from './cache.js';
export { type SizeOptions, checkSize } from './sizes.js';
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
export { type MsrRow, readMsrParaphrase, readDevIds, glueMrpcPairs } from './msr-paraphrase.js';
export { type CaptionSet, loadCaptionFile, loadFlickr30kCaptions } from './flickr.js';
export { type NliTriplet, type NliTriplets, type NliPairs, readNliCsv, loadNliTriplets, loadNliPairs, nliPairs } from './nli.js';
export { type Wiki1mCorpus, loadWiki1m, readWiki1mSample, wiki1mSampleFile } from './wiki1m.js';
export { type DomainCorpus, loadStsbSentence1 } from './domain.js';
export {
  type TransferExample,
  type TransferSet,
  TREC_LABELS,
  loadTransferTask,
  readSentevalLines,
  readSstFile,
  readTrecFile,
  readSentevalMrpcFile,
} from './transfer.js';
export { type CsvRecord, type CsvRow, parseCsv, csvTable } from './csv.js';
export { type TarExtractResult, extractTar } from './tar.js';
export { type ParquetTable, readParquetColumns } from './parquet.js';
export { extractArchiveRoot, parquetToPairsJsonl, flickrCsvToCaptions } from './prepare.js';
export { type EnsureOptions, type EnsuredDataset, type SplitSource, ensureDataset } from './ensure.js';
export { type CheckRow, type CheckStatus, checkDatasets, checkTable, loadedRows } from './check.js';
export { type DatasetCard, type DatasetCardText, DATASET_CARD_TEXT, datasetCard, datasetCardsTable } from './cards.js';
export {
  senteval as sentevalSentence,
  pySplitWhitespace,
  pySplitLines,
  pyStrip,
  readText,
  firstInvalidUtf8,
  type TextEncoding,
} from './text.js';
export { type SickEntailmentPairs, SICK_ENTAILMENT_LABELS, readSickEntailmentFile, loadSickEntailment, sickEntailmentTriplets } from './sick-entailment.js';
