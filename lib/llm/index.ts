/**
 * Text generation for the LLM-supervised experiments (AnglE Table 5, Figure 4): one chat generator
 * interface, a client of any OpenAI-compatible endpoint (retries, bounded concurrency, token and
 * cost counts), the project's decoder behind the same interface (continuous batching), an on-disk
 * answer cache that makes runs resumable, an OpenAI-compatible server over any generator, and
 * Figure 4's prompt with the parsing of its answers into labelled pairs. Embeddings from a serving
 * engine: a client of OpenAI-compatible `/embeddings` endpoints with its on-disk cache, the
 * PromptEOL / AnglE-LLaMA prompt templates it fills on our side, and the server's embeddings route.
 *
 * A layer above models (it runs their decoder) and below train (which trains on its pairs).
 */
export type { ChatGenerator, ChatMessage, ChatRequest, ChatResult, ChatFinishReason, CompleteOptions, TokenUsage } from './types.js';
export { GenerationError, type GenerationErrorKind } from './generation-error.js';
export { InvalidRequestError, validateChatRequest, parseChatCompletionBody, stopStrings } from './request.js';
export { Limiter } from './limiter.js';
export { DEFAULT_RETRY_POLICY, backoffMs, retryAfterMs, isRetryableStatus, type RetryPolicy } from './backoff.js';
export { costOf, estimateTokens, UsageTally, type ModelPrice, type PriceTable, type UsageTotals } from './pricing.js';
export { OpenAIChatClient, OPENAI_DEFAULT_BASE_URL, type OpenAIClientOptions } from './openai-client.js';
export { OpenAIEndpoint, type OpenAIEndpointOptions } from './openai-endpoint.js';
export { OpenAIEmbeddingsClient, type OpenAIEmbeddingsClientOptions, type EmbedOptions } from './openai-embeddings-client.js';
export { servedModels, type ServedModelsOptions } from './served-models.js';
export { EmbeddingCache, embeddingCacheKey, EMBEDDING_CACHE_FORMAT, type EmbeddingCacheEntry, type EmbeddingKeyMaterial } from './embedding-cache.js';
export { EMBEDDING_POOLINGS, type EmbeddingModel, type EmbeddingPooling, type EmbeddedTexts } from './embedding-model.js';
export { parseEmbeddingsBody, embeddingsAnswerJson, readEmbeddingsAnswer, float32ToBase64, base64ToFloat32, EMBEDDING_FORMATS, MAX_EMBEDDING_INPUTS, type EmbeddingFormat, type EmbeddingsRequest, type EmbeddingsAnswer } from './embeddings-wire.js';
export { PROMPTEOL_TEMPLATE, ANGLE_LLAMA_TEMPLATE, promptFor, inContextTemplate, prepareTextPromptEol, type Demonstration, type PromptTemplateOptions } from './prompt-template.js';
export { readDemonstrationsJsonl, readAuthorsIclExamples, readDemonstrationFile, demonstrationsJsonl, writeDemonstrationsJsonl, type DemonstrationCandidate } from './demonstration-set.js';
export { labelOneWord, oneWordRequests, parseOneWordAnswer, ONE_WORD_REJECT_REASONS, MAX_WORD_CHARS, type OneWordLabel, type OneWordReject, type OneWordRejectReason, type OneWordLabelOptions, type OneWordLabelResult } from './one-word-labels.js';
export { KeyedFileStore } from './keyed-file-store.js';
export { ResponseCache, cacheKey, cacheKeyMaterial, CACHE_FORMAT, type CacheEntry, type CacheKeyMaterial } from './response-cache.js';
export { canonicalJson, JsonEntryCache } from './json-entry-cache.js';
export { CachedGenerator, type CachedGeneratorOptions } from './cached-generator.js';
export { completeMany, requestIds, type CompleteManyOptions, type CompleteManyResult, type GenerationFailure } from './complete-many.js';
export { LocalChatGenerator, plainPrompt, type LocalDecoder, type LocalGeneratorOptions } from './local-generator.js';
export { ContinuousBatcher, type BatchedRequest, type BatcherStats, type ContinuousBatcherOptions } from './continuous-batcher.js';
export { createChatServer, startChatServer, type ChatServerOptions, type RunningChatServer } from './server.js';
export { GenerationWorker } from './worker-generator.js';
export { answerGenerationRequests } from './generation-worker.js';
export type { GenerationWorkerInfo } from './generation-worker-protocol.js';
export { sseData, sseEvent } from './sse.js';
export { FIGURE4_TEMPLATE, POLARITIES, figure4Template, figure4Prompt, figure4Messages, type Polarity } from './figure4-prompt.js';
export { parseGeneratedSentences, cleanLine, comparable, splitInlineNumbering, REJECT_REASONS, type RejectReason, type RejectedLine, type ParsedAnswer, type ParseAnswerOptions } from './parse-answer.js';
export {
  generateSupervisedPairs,
  generateEnsemble,
  supervisionRequests,
  dropNearCopyNegatives,
  angleJsonl,
  writeAngleJsonl,
  type SupervisedPair,
  type SupervisedReject,
  type LlmSupervisionOptions,
  type LlmSupervisionResult,
  type EnsembleResult,
} from './llm-supervision.js';
export { startServeLlm, serveLlmCommand, type ServeLlmOptions, type ServeLlmProcess } from './serve-llm-process.js';
export { endpointFromEnv, type EndpointFromEnv, type EndpointFromEnvOptions } from './endpoint-from-env.js';
export { supervisionTable, rejectReasonsTable, rejectExamplesTable, pairExamplesTable } from './supervision-report.js';
