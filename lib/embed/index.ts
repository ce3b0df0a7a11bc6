/**
 * From token states to sentence vectors: pooling strategies (./pooling.ts) and the sentence
 * encoders over any text model (./encoder.ts) that every evaluator takes (./types.ts SentenceEncoder),
 * running their forward passes on an inference engine (./engines/: ONNX Runtime or tfjs).
 */
export { POOLING_STRATEGIES, parsePooling, pool, needsHiddenStates, needsPoolerOutput, type Pooling, type PoolingInput } from './pooling.js';
export { PooledSentenceEncoder, MultiPoolingEmbedder, sharedPoolingEncoders, type EncoderOptions, type EncoderModel } from './encoder.js';
export { poolingModuleOf, type PoolingModule } from './pooling-module.js';
export { chooseInferenceEngine, parseEngineChoice, INFERENCE_ENGINE_CHOICES, OnnxEngine, TfjsEngine, loadOnnxInferenceModel, OnnxInferenceModel, type InferenceEngine, type InferenceEngineChoice, type EngineOutput, type OnnxInferenceLoadOptions } from './engines/index.js';
export { cosineSimilarityMatrix } from './similarity.js';
export { row, type Embeddings, type SentenceEncoder, type EncodeOptions } from './types.js';
export { PromptSentenceEncoder, PROMPTEOL_TEMPLATE, ANGLE_LLAMA_TEMPLATE, inContextTemplate, type PromptEncoderOptions, type Demonstration } from './prompt-encoder.js';
export { DecoderEmbeddingModel, type DecoderEmbeddingModelOptions } from './decoder-embedding-model.js';
export { SentenceTransformerEncoder, applySentenceEmbeddingSteps, type SentenceTransformerEncoderOptions } from './sentence-transformer-encoder.js';
export { saveSentenceTransformer, exportSentenceTransformer, sentenceTransformerSpec, sentenceTransformerSteps, type SaveSentenceTransformerOptions, type ExportSentenceTransformerOptions, type ExportedSentenceTransformer } from './sentence-transformer-export.js';
export { checkTruncation, truncateColumns, type EmbeddingTruncation } from './truncation.js';
export { RETRIEVAL_PROMPTS, retrievalPrompts, fillPrompt, promptedEncoder, queryDocumentEncoders, type QueryDocumentPrompts, type RetrievalPromptName } from './retrieval-prompts.js';
