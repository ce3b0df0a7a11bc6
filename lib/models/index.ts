/**
 * Text models behind one interface (./types.ts): loadModel picks the architecture from
 * config.json's model_type (./auto.ts); every architecture's model class extends
 * ./transformer-model.ts (decoders the decoder base ./decoder/decoder-model.ts over
 * ./adaptable-transformer-model.ts, answering ./causal-decoder.ts);
 * BERT lives in ./bert/, the LLaMA decoder (generation, chat templates) in ./llama/, OPT in
 * ./opt/, LoRA adapters in PEFT's layout in ./adapters/, tokenizers in ./tokenizers/, weight files
 * in ./safetensors.ts and ./weight-files.ts.
 */
export type { TextModel, TextTokenizer, LoadedModel, ModelSource, ModelOutput, ForwardOptions, TokenBatch, EncodedText, BatchOptions } from './types.js';
export { loadModel, resolveModelDir, MODEL_TYPES, type LoadModelOptions } from './auto.js';
export { architectures, architectureOfConfig, registerArchitecture, defaultPoolingOf } from './architectures.js';
export type { Architecture } from './architecture.js';
export { BertModel, type BertOutput } from './bert/model.js';
export { parseBertConfig, readBertConfig, type BertConfig } from './bert/config.js';
export { mapBertWeights, canonicalBertName, bertParameterShapes } from './bert/weights.js';
export { HfTokenizer } from './tokenizers/hf.js';
export { parseSafetensors, readSafetensors, openSafetensors, serializeSafetensors, writeSafetensors, type TensorEntry, type TensorToWrite, type RawTensor } from './safetensors.js';
export { weightFiles, readTensors, openWeights, readWeightIndex, weightsSha256, SAFETENSORS_FILE, SAFETENSORS_INDEX, PYTORCH_FILE, PYTORCH_INDEX, type WeightReader } from './weight-files.js';
export { openTorchCheckpoint, type TorchCheckpoint } from './torch-checkpoint/index.js';
export { LlamaModel, positionsFromMask, disposeKvCache, type KvCache, type DecoderInput, type DecoderOutput } from './llama/model.js';
export { parseLlamaConfig, LLAMA_MODEL_TYPES, type LlamaConfig } from './llama/config.js';
export { loadLlamaModel } from './llama/load.js';
export { generate, type GenerateOptions, type Generation, type FinishReason } from './llama/generate.js';
export { ChatTemplate, applyChatTemplate, chatPromptIds, readChatTemplate, type ChatMessage } from './llama/chat-template.js';
export { writeLlamaHfDirectory } from './llama/hf-export.js';
export { OptModel, optPositionIds } from './opt/model.js';
export { parseOptConfig, OPT_MODEL_TYPES, type OptConfig } from './opt/config.js';
export { loadOptModel } from './opt/load.js';
export { Llama2cTokenizer } from './tokenizers/llama2c.js';
export { addLora, mergeLora, removeLora, loraAdapters, DEFAULT_LORA_TARGETS, type LoraConfig } from './adapters/lora.js';
export { saveLoraAdapter, loadLoraAdapter, readPeftLoraConfig, exportLoraAdapter, type ExportAdapterOptions } from './adapters/peft.js';
export type { AdaptableModel, LinearAdapter } from './adapters/types.js';
export * as sentenceTransformers from './sentence-transformers/index.js';
export { RELEASED_CHECKPOINTS, TABLE2_UNRELEASED_ROWS, releasedCheckpoint, type ReleasedCheckpoint, type ReleasedKind, type Table2RowRef } from './released.js';
export { loadReleasedModel, type LoadReleasedOptions } from './load-released.js';
