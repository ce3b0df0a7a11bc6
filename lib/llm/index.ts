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
 *
 * Exported here (`angle.llm` of lib/index.ts, the public face): what the notebooks and the docs
 * use, no more (test/public-surface.test.ts); the rest of the folder is internal, and lib/, scripts/
 * and tests import its files directly.
 */
export type { ChatGenerator } from './types.js';
export { OpenAIChatClient } from './openai-client.js';
export { LocalChatGenerator } from './local-generator.js';
export { POLARITIES, figure4Prompt } from './figure4-prompt.js';
export { generateSupervisedPairs, writeAngleJsonl, type LlmSupervisionResult } from './llm-supervision.js';
export { startServeLlm } from './serve-llm-process.js';
export { endpointFromEnv } from './endpoint-from-env.js';
export { supervisionTable, rejectReasonsTable, rejectExamplesTable, pairExamplesTable } from './supervision-report.js';
