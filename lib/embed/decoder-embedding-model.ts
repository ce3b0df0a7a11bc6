/**
 * A decoder's embeddings as the OpenAI-compatible server serves them (lib/llm/embedding-model.ts;
 * `npm run serve-llm` answers `POST /v1/embeddings` with this): the very encoders that embed
 * in-process, so a text embedded through the endpoint and here gives the same vector.
 *
 * - `last`: PromptSentenceEncoder (./prompt-encoder.ts) with the identity template `{text}` — the
 *   caller has filled its prompt template already (lib/llm/openai-embeddings-client.ts does, with
 *   the same lib/llm/prompt-template.ts), so the server embeds exactly that text: tokenised with the
 *   tokenizer's special tokens (BOS), left-padded, the last token's final hidden state.
 * - `mean`: PooledSentenceEncoder (./encoder.ts) with `avg` pooling: the masked mean of the final
 *   hidden states over the text's tokens (BOS included), texts truncated to the model's context.
 *
 * Why here and not in lib/llm: the server lives in lib/llm, below lib/embed in the layer order, so
 * it cannot import these encoders; it takes any EmbeddingModel, and this adapter (in the layer that
 * owns the encoders) is what scripts/serve-llm.ts hands it. No pooling code is repeated.
 *
 * Both run on the model's tfjs forward (the backend generation uses); no normalisation.
 */
import type { EmbeddedTexts, EmbeddingModel, EmbeddingPooling } from '../llm/embedding-model.js';
import type { TextModel, TextTokenizer } from '../models/types.js';
import { PooledSentenceEncoder } from './encoder.js';
import { PromptSentenceEncoder, promptFor } from './prompt-encoder.js';
import type { SentenceEncoder } from './types.js';

/** The identity template: the text as sent is the prompt. */
const AS_SENT = '{text}';

export interface DecoderEmbeddingModelOptions {
  /** The pooling of requests that name none (default `last`, PromptEOL's). */
  defaultPooling?: EmbeddingPooling;
  /** Texts per forward pass (default 16). */
  batchSize?: number;
}

export class DecoderEmbeddingModel implements EmbeddingModel {
  readonly defaultPooling: EmbeddingPooling;
  private readonly encoders: Record<EmbeddingPooling, SentenceEncoder>;

  constructor(
    private readonly m: { model: TextModel; tokenizer: TextTokenizer },
    opts: DecoderEmbeddingModelOptions = {},
  ) {
    this.defaultPooling = opts.defaultPooling ?? 'last';
    const batchSize = opts.batchSize ?? 16;
    this.encoders = {
      last: new PromptSentenceEncoder(m, { template: AS_SENT, batchSize }),
      mean: new PooledSentenceEncoder(m, { pooling: 'avg', batchSize, engine: 'tfjs' }),
    };
  }

  get dim(): number {
    return this.m.model.hiddenSize;
  }

  async embed(texts: string[], pooling: EmbeddingPooling): Promise<EmbeddedTexts> {
    const e = await this.encoders[pooling].encode(texts, { progress: false });
    const { tokenizer, model } = this.m;
    // The tokens each encoder read: the trimmed prompt for `last`, the text cut to the context for `mean`.
    const tokens = texts.map((t) => (pooling === 'last' ? tokenizer.encode(promptFor(t, { template: AS_SENT })).ids.length : tokenizer.encode(t, null, model.maxPositions).ids.length));
    return { data: e.data, tokens };
  }
}
