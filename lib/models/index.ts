/**
 * Text models behind one interface (./types.ts): loadModel picks the architecture from
 * config.json's model_type (./auto.ts); BERT lives in ./bert/, the LLaMA decoder (generation, chat
 * templates) in ./llama/, LoRA adapters in PEFT's layout in ./adapters/, tokenizers in
 * ./tokenizers/, weight files in ./safetensors.ts and ./weight-files.ts.
 */
export type { TextModel, TextTokenizer, LoadedModel, ModelSource, ModelOutput, ForwardOptions, TokenBatch, EncodedText, BatchOptions } from './types.js';
export { loadModel, resolveModelDir, MODEL_TYPES, type LoadModelOptions } from './auto.js';
export { BertModel, type BertOutput } from './bert/model.js';
export { parseBertConfig, readBertConfig, type BertConfig } from './bert/config.js';
export { mapBertWeights, canonicalBertName, bertParameterShapes } from './bert/weights.js';
export { HfTokenizer } from './tokenizers/hf.js';
export { parseSafetensors, readSafetensors, serializeSafetensors, writeSafetensors, type TensorEntry, type TensorToWrite } from './safetensors.js';
export { weightFiles, readTensors, weightsSha256, SAFETENSORS_FILE, SAFETENSORS_INDEX } from './weight-files.js';
export { LlamaModel, positionsFromMask, disposeKvCache, type KvCache, type DecoderInput, type DecoderOutput } from './llama/model.js';
export { parseLlamaConfig, LLAMA_MODEL_TYPES, type LlamaConfig } from './llama/config.js';
export { loadLlamaModel } from './llama/load.js';
export { generate, type GenerateOptions, type Generation, type FinishReason } from './llama/generate.js';
export { ChatTemplate, applyChatTemplate, chatPromptIds, readChatTemplate, type ChatMessage } from './llama/chat-template.js';
export { writeLlamaHfDirectory } from './llama/hf-export.js';
export { Llama2cTokenizer } from './tokenizers/llama2c.js';
export { addLora, mergeLora, removeLora, loraAdapters, DEFAULT_LORA_TARGETS, type LoraConfig } from './adapters/lora.js';
export { saveLoraAdapter, loadLoraAdapter, readPeftLoraConfig } from './adapters/peft.js';
export type { AdaptableModel, LinearAdapter } from './adapters/types.js';
export * as sentenceTransformers from './sentence-transformers/index.js';
export { RELEASED_CHECKPOINTS, TABLE2_UNRELEASED_ROWS, releasedCheckpoint, type ReleasedCheckpoint, type ReleasedKind, type Table2RowRef } from './released.js';
export { loadReleasedModel, type LoadReleasedOptions } from './load-released.js';
