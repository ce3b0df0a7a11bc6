/**
 * From token states to sentence vectors: pooling strategies (./pooling.ts) and the sentence
 * encoders over any text model (./encoder.ts) that every evaluator takes (./types.ts SentenceEncoder),
 * running their forward passes on an inference engine (./engines/: ONNX Runtime or tfjs).
 *
 * Exported here (`angle.embed` of lib/index.ts, the public face): what the notebooks and the docs
 * use, no more (test/public-surface.test.ts); the rest of the folder is internal, and lib/, scripts/
 * and tests import its files directly.
 */
export { PooledSentenceEncoder } from './encoder.js';
export { cosineSimilarityMatrix } from './similarity.js';
