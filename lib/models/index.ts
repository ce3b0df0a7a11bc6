/**
 * Text models behind one interface (./types.ts): loadModel picks the architecture from
 * config.json's model_type (./auto.ts); BERT lives in ./bert/, tokenizers in ./tokenizers/, weight
 * files in ./safetensors.ts and ./weight-files.ts.
 */
export type { TextModel, TextTokenizer, LoadedModel, ModelSource, ModelOutput, ForwardOptions, TokenBatch, EncodedText, BatchOptions } from './types.js';
export { loadModel, resolveModelDir, MODEL_TYPES, type LoadModelOptions } from './auto.js';
export { BertModel, type BertOutput } from './bert/model.js';
export { parseBertConfig, readBertConfig, type BertConfig } from './bert/config.js';
export { mapBertWeights, canonicalBertName, bertParameterShapes } from './bert/weights.js';
export { HfTokenizer } from './tokenizers/hf.js';
export { parseSafetensors, readSafetensors, serializeSafetensors, writeSafetensors, type TensorEntry, type TensorToWrite } from './safetensors.js';
export { weightFiles, readTensors, weightsSha256, SAFETENSORS_FILE, SAFETENSORS_INDEX } from './weight-files.js';
