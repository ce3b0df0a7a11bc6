/**
 * What `npm run serve-llm` serves, built from its settings: the tfjs backend started, the decoder
 * loaded, the chat generator (lib/llm/local-generator.ts, continuous batching) and the embedding
 * model (lib/embed/decoder-embedding-model.ts) over it. Built once on the thread that will run the
 * forward passes: in the generation worker (./serve-llm-worker.ts, `--generation-thread worker`)
 * or on the HTTP thread itself (`--generation-thread main`). The settings are plain data, so they
 * travel to the worker as its workerData.
 */
import { initBackend } from '../lib/backend/index.js';
import { DecoderEmbeddingModel } from '../lib/embed/decoder-embedding-model.js';
import type { EmbeddingPooling } from '../lib/llm/embedding-model.js';
import type { GenerationWorkerInfo } from '../lib/llm/generation-worker-protocol.js';
import { LocalChatGenerator } from '../lib/llm/local-generator.js';
import { loadModel } from '../lib/models/auto.js';
import type { CausalLanguageModel } from '../lib/models/llama/generate.js';
import type { TextModel } from '../lib/models/types.js';
import { InputError } from '../lib/util/errors.js';

export const PROMPT_STYLES = ['auto', 'chat-template', 'plain'] as const;

/** The command's settings that decide the model (validated by scripts/serve-llm.ts). */
export interface ServedModelSettings {
  modelId: string;
  /** tfjs backend (undefined: ANGLE_BACKEND, else cpu). */
  backend?: string;
  servedModelName?: string;
  maxBatchSize: number;
  prompt: (typeof PROMPT_STYLES)[number];
  embeddingPooling: EmbeddingPooling;
}

export interface ServedModel {
  generator: LocalChatGenerator;
  embeddings: DecoderEmbeddingModel;
  info: GenerationWorkerInfo;
  dispose(): void;
}

/** Whether a loaded model can generate (LlamaModel and OPT have decode()). */
function isCausalDecoder(model: TextModel): model is TextModel & CausalLanguageModel {
  return typeof (model as Partial<CausalLanguageModel>).decode === 'function' && Array.isArray((model as Partial<CausalLanguageModel>).config?.eosTokenId);
}

/** Starts the backend on this thread and loads the decoder; an InputError when it cannot generate. */
export async function loadServedModel(s: ServedModelSettings, log: (line: string) => void): Promise<ServedModel> {
  const backend = await initBackend(s.backend, { log });
  const m = await loadModel(s.modelId);
  if (!isCausalDecoder(m.model)) throw new InputError(`serve-llm serves causal decoders (a model with a decode() step: llama, opt); '${s.modelId}' is a ${m.model.architecture} model`);
  const decoder = m.model;
  const generator = new LocalChatGenerator({ model: decoder, tokenizer: m.tokenizer, dir: m.dir, id: s.modelId }, {
    modelName: s.servedModelName,
    maxBatchSize: s.maxBatchSize,
    prompt: s.prompt,
  });
  const embeddings = new DecoderEmbeddingModel({ model: decoder, tokenizer: m.tokenizer }, { defaultPooling: s.embeddingPooling });
  return {
    generator,
    embeddings,
    info: {
      model: generator.model,
      name: generator.name,
      promptStyle: generator.promptStyle,
      numParameters: decoder.numParameters(),
      maxPositions: decoder.maxPositions,
      dim: embeddings.dim,
      defaultPooling: embeddings.defaultPooling,
      backend: backend.name,
    },
    dispose: () => decoder.dispose(),
  };
}
