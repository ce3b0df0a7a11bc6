/**
 * The public face of the library: what notebooks and scripts import.
 * Data flows one way: data -> tokenizer -> model -> pooling -> loss / evaluator -> results -> report.
 */
export { tf, initBackend, activeBackend, BACKEND_NAMES, type BackendName, type BackendInfo } from './backend/index.js';
export { envConfig, type EnvConfig } from './config.js';
export { InputError, UnavailableError } from './util/errors.js';
export { Progress } from './util/progress.js';

export { parseSafetensors, readSafetensors, serializeSafetensors, writeSafetensors, type TensorEntry } from './models/safetensors.js';
export { parseBertConfig, readBertConfig, type BertConfig } from './models/bert/config.js';
export { BertModel, type BertOutput, type ForwardOptions } from './models/bert/model.js';
export { mapBertWeights, canonicalBertName, bertParameterShapes } from './models/bert/weights.js';
export { HfTokenizer, type TokenBatch, type EncodedText } from './models/tokenizers/hf.js';
export { loadModel, resolveModelDir, type LoadedModel, type LoadModelOptions } from './models/auto.js';
export { resolveRepoFiles, hubSettings, isHubId } from './hub/index.js';

export { POOLING_STRATEGIES, parsePooling, pool, type Pooling } from './embed/pooling.js';
export { BertSentenceEncoder, type BertEncoderOptions } from './embed/encoder.js';
export { cosineSimilarityMatrix } from './embed/similarity.js';
export type { Embeddings, SentenceEncoder } from './embed/types.js';

export { type ParityCheck } from './parity/check.js';
export { goldenSuites, GOLDEN_SUITE_NAMES } from './parity/suites.js';

export * from './notebook/index.js';

export * from './losses/index.js';
export * from './eval/index.js';
export * from './data/index.js';
export { sharedPoolingEncoders, BertEmbedder } from './embed/encoder.js';

export * from './train/index.js';
export { collectProvenance, type Provenance } from './report/provenance.js';
export { writeRunRecord, newRunId, runRecordPath, type RunRecord, type DataIdentity, type ModelIdentity, type PaperCell } from './report/run-record.js';
