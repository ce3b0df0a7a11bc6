/**
 * What the OpenAI-compatible server (./server.ts) needs of a model to answer `POST /v1/embeddings`:
 * texts in, one vector per text out, with the token count of each text (OpenAI's usage).
 *
 * Pooling, over the decoder's last hidden states (after the final norm) of each text's tokens:
 * - `last`: the state at the last token — PromptEOL's and AnglE-LLaMA's embedding when the text is
 *   a filled prompt template (vLLM's `LAST` pooling);
 * - `mean`: the mean over the text's tokens (vLLM's `MEAN`).
 * No normalisation (the papers use the raw states; a cosine does not care).
 *
 * The implementation over this project's decoders is lib/embed/decoder-embedding-model.ts: it runs
 * the same encoders as in-process embedding (lib/embed sits above lib/llm, so this interface is
 * what lets the server stay here while the encoders stay there).
 */
export const EMBEDDING_POOLINGS = ['last', 'mean'] as const;
export type EmbeddingPooling = (typeof EMBEDDING_POOLINGS)[number];

export interface EmbeddedTexts {
  /** Row-major [texts, dim]. */
  data: Float32Array;
  /** Tokens of each text as the model read it. */
  tokens: number[];
}

export interface EmbeddingModel {
  /** Width of every vector. */
  readonly dim: number;
  /** The pooling of requests that name none. */
  readonly defaultPooling: EmbeddingPooling;
  /** Embeds the texts as they are (a prompt template, if any, is already filled in). */
  embed(texts: string[], pooling: EmbeddingPooling): Promise<EmbeddedTexts>;
}
