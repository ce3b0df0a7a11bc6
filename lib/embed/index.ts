/**
 * From token states to sentence vectors: pooling strategies (./pooling.ts) and the sentence
 * encoders over any text model (./encoder.ts) that every evaluator takes (./types.ts SentenceEncoder).
 */
export { POOLING_STRATEGIES, parsePooling, pool, needsHiddenStates, type Pooling, type PoolingInput } from './pooling.js';
export { PooledSentenceEncoder, MultiPoolingEmbedder, sharedPoolingEncoders, type EncoderOptions, type EncoderModel } from './encoder.js';
export { cosineSimilarityMatrix } from './similarity.js';
export { row, type Embeddings, type SentenceEncoder, type EncodeOptions } from './types.js';
export { PromptSentenceEncoder, PROMPTEOL_TEMPLATE, ANGLE_LLAMA_TEMPLATE, inContextTemplate, type PromptEncoderOptions, type Demonstration } from './prompt-encoder.js';
