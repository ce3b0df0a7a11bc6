/**
 * sentence-transformers model folders: what follows the transformer, as data (./spec.ts), read
 * from a folder (./read.ts) and written to one (./write.ts, with complete tokenizer files:
 * ./tokenizer-files.ts). lib/models/auto.ts loads such folders;
 * lib/embed/sentence-transformer-encoder.ts computes the embeddings they describe.
 */
export {
  ST_MODULE_TYPES,
  ST_POOLING_MODES,
  ST_POOLING_CONFIG_KEYS,
  ST_ACTIVATIONS,
  sentenceEmbeddingDim,
  needsAllHiddenStates,
  type SentenceEmbeddingSpec,
  type SentenceEmbeddingStep,
  type LayerMixStep,
  type PoolingStep,
  type DenseStep,
  type NormalizeStep,
  type StPoolingMode,
  type StModuleName,
  type DenseActivation,
} from './spec.js';
export {
  isSentenceTransformerFolder,
  readSentenceTransformerFolder,
  readModulesJson,
  sentenceTransformerRepoFiles,
  moduleFile,
  MODULES_JSON,
  ST_CONFIG_JSON,
  SENTENCE_BERT_CONFIGS,
  type SentenceTransformerFolder,
  type StModuleEntry,
} from './read.js';
export { writeSentenceTransformerFolder, checkExportTarget, TOKENIZER_FILES, type SentenceTransformerContents, type WriteFolderOptions } from './write.js';
export { completeTokenizerFiles, TOKENIZER_CLASSES, SPECIAL_TOKEN_KEYS, type CompletedTokenizerFiles } from './tokenizer-files.js';
