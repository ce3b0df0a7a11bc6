/**
 * A client of any OpenAI-compatible embeddings endpoint (`POST {baseURL}/embeddings`): vLLM serving
 * a decoder as a pooling model (docs/serving-engines.md), this project's `npm run serve-llm`, or
 * OpenAI itself — so PromptEOL and AnglE-LLaMA rows too large for one GPU of ours can be embedded
 * by an engine that spreads the model over several.
 *
 * - The prompt template is filled on our side (./prompt-template.ts, the code the in-process
 *   PromptSentenceEncoder uses), so the engine sees exactly the text our own encoder would; the
 *   engine then only tokenises (with its BOS), runs the model and pools (last token, no
 *   normalisation, for PromptEOL). Without `prompt` the texts are sent as they are.
 * - Texts are sent `batchSize` at a time (default 64), at most `maxConcurrency` requests at once
 *   (default 4), each retried as the chat client's are (./openai-endpoint.ts: 429 honouring
 *   Retry-After, 5xx, timeouts, dropped connections, garbled bodies; never another 4xx).
 * - Every answer is checked (./embeddings-wire.ts readEmbeddingsAnswer): one vector per text, each
 *   `dimensions` wide (or, when not declared, as wide as the first answer's), no non-finite value,
 *   and the model named as asked; an answer that fails is an error naming what is wrong, and none
 *   of it is cached.
 * - With `cache`, vectors are stored on disk (./embedding-cache.ts) keyed by model, revision,
 *   prompt template, pooling and text: a rerun sends only the texts it has no vector for; repeated
 *   texts, within a call or across concurrent calls, are sent once.
 *
 * `encode(texts)` returns a row-major float32 matrix in input order: the client is a SentenceEncoder
 * (lib/embed/types.ts), so evaluators take it as they take an in-process encoder.
 */
import { InputError } from '../util/errors.js';
import { Progress } from '../util/progress.js';
import { EmbeddingCache, embeddingCacheKey, type EmbeddingKeyMaterial } from './embedding-cache.js';
import type { EmbeddingPooling } from './embedding-model.js';
import { readEmbeddingsAnswer, type EmbeddingFormat } from './embeddings-wire.js';
import { GenerationError } from './generation-error.js';
import type { Limiter } from './limiter.js';
import { nonEmpty, OpenAIEndpoint, serverMessage, type OpenAIEndpointOptions } from './openai-endpoint.js';
import { checkTemplate, inContextTemplate, PROMPTEOL_TEMPLATE, promptFor, type PromptTemplateOptions } from './prompt-template.js';

export interface OpenAIEmbeddingsClientOptions extends OpenAIEndpointOptions {
  /** The served model's name, sent with every request and expected back. Default: OPENAI_EMBEDDING_MODEL. */
  model?: string;
  /** The revision of the served weights (a commit, a tag): part of the cache key, never sent. */
  revision?: string;
  /** The prompt template filled before sending (PromptEOL's, AnglE-LLaMA's, …); absent: texts as they are. */
  prompt?: PromptTemplateOptions;
  /** Sent as `pooling` (serve-llm reads it; vLLM's pooling is set when it starts); part of the cache key. */
  pooling?: EmbeddingPooling;
  /** The width every vector must have (e.g. the model's hidden size); default: the first answer's. */
  dimensions?: number;
  /** Texts per request (default 64). */
  batchSize?: number;
  /** `base64` (default: exact and compact) or `float`; answers in either form are read. */
  encodingFormat?: EmbeddingFormat;
  /** An on-disk cache or its folder. */
  cache?: EmbeddingCache | string;
}

export interface EmbedOptions {
  signal?: AbortSignal;
  /** Show a progress line on stderr (default: when at least 2000 texts are sent). */
  progress?: boolean;
}

interface Pending {
  text: string;
  material: EmbeddingKeyMaterial;
  key: string;
}

function quoted(t: string): string {
  return JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}…` : t);
}

export class OpenAIEmbeddingsClient {
  readonly name: string;
  readonly model: string;
  readonly baseURL: string;
  /** The embeddings URL. */
  readonly endpoint: string;
  readonly cache?: EmbeddingCache;
  readonly batchSize: number;
  /** Requests answered, texts sent in them, texts served from the cache. */
  readonly stats = { requests: 0, textsSent: 0, cacheHits: 0 };
  private readonly http: OpenAIEndpoint;
  private readonly promptKey: EmbeddingKeyMaterial['prompt'];
  private width?: number;
  /** Vectors being fetched, by cache key: a text asked for again meanwhile waits for them. */
  private readonly inFlight = new Map<string, Promise<Float32Array>>();

  constructor(private readonly opts: OpenAIEmbeddingsClientOptions = {}) {
    const env = opts.env ?? process.env;
    this.http = new OpenAIEndpoint({ ...opts, maxConcurrency: opts.maxConcurrency ?? 4 }, '/embeddings');
    this.baseURL = this.http.baseURL;
    this.endpoint = this.http.url('/embeddings');
    const model = nonEmpty(opts.model) ?? nonEmpty(env.OPENAI_EMBEDDING_MODEL);
    if (!model) throw new InputError('no model for the embeddings client: pass { model } or set OPENAI_EMBEDDING_MODEL');
    this.model = model;
    this.batchSize = opts.batchSize ?? 64;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new InputError(`batchSize must be an integer >= 1, got ${opts.batchSize}`);
    if (opts.dimensions !== undefined && !(Number.isInteger(opts.dimensions) && opts.dimensions > 0)) throw new InputError(`dimensions must be an integer >= 1, got ${opts.dimensions}`);
    this.width = opts.dimensions;
    if (opts.prompt) {
      const template = opts.prompt.template ?? PROMPTEOL_TEMPLATE;
      checkTemplate(template);
      this.promptKey = { template: inContextTemplate(template, opts.prompt.demonstrations ?? [], opts.prompt.demonstrationEnd), ...(opts.prompt.prepareText && opts.prompt.prepareText !== 'none' ? { prepareText: opts.prompt.prepareText } : {}) };
    } else {
      this.promptKey = null;
    }
    if (opts.cache !== undefined) this.cache = typeof opts.cache === 'string' ? new EmbeddingCache(opts.cache) : opts.cache;
    this.name = `openai-embeddings:${model}@${new URL(this.endpoint).host}`;
  }

  /** The width of the vectors: declared, or learned from the first answer (undefined before). */
  get dim(): number | undefined {
    return this.width;
  }

  get limiter(): Limiter {
    return this.http.limiter;
  }

  /** HTTP attempts sent (retries included). */
  get attemptsSent(): number {
    return this.http.attemptsSent;
  }

  /** The text sent for `text`: the filled prompt, or the text itself. */
  promptOf(text: string): string {
    return this.opts.prompt ? promptFor(text, this.opts.prompt) : text;
  }

  /** What the vector of `text` is cached under. */
  keyMaterial(text: string): EmbeddingKeyMaterial {
    return {
      model: this.model,
      ...(this.opts.revision !== undefined ? { revision: this.opts.revision } : {}),
      prompt: this.promptKey,
      ...(this.opts.pooling !== undefined ? { pooling: this.opts.pooling } : {}),
      text,
    };
  }

  /** One vector per text, in input order: row-major [texts, dim]. */
  async encode(texts: string[], opts: EmbedOptions = {}): Promise<{ data: Float32Array; rows: number; dim: number }> {
    if (!Array.isArray(texts)) throw new TypeError(`texts must be a list of strings, got ${typeof texts}`);
    texts.forEach((t, i) => {
      if (typeof t !== 'string') throw new TypeError(`text ${i} is ${typeof t}, expected a string`);
    });
    const vectors = new Map<string, Float32Array>();
    const unique = [...new Set(texts)].map((text): Pending => {
      const material = this.keyMaterial(text);
      return { text, material, key: embeddingCacheKey(material) };
    });
    const waits: Array<Promise<void>> = [];
    const missing: Pending[] = [];
    for (const p of unique) {
      const running = this.inFlight.get(p.key);
      if (running) waits.push(running.then((v) => void vectors.set(p.text, v)));
      else missing.push(p);
    }
    const toSend: Pending[] = [];
    if (this.cache) {
      // Sequential lookups: one small file each, and no burst of open files for a long list.
      for (const p of missing) {
        const v = await this.cache.get(p.key, p.material);
        if (v && (this.width === undefined || v.length === this.width)) {
          vectors.set(p.text, v);
          this.stats.cacheHits++;
        } else toSend.push(p);
      }
    } else toSend.push(...missing);

    const progress = new Progress({ label: `embeddings from ${this.model}`, total: toSend.length, unit: 'texts', enabled: opts.progress ?? toSend.length >= 2000 });
    for (let s = 0; s < toSend.length; s += this.batchSize) {
      const batch = toSend.slice(s, s + this.batchSize);
      const work = this.fetchBatch(batch, opts.signal);
      batch.forEach((p, i) => {
        const one = work.then((vs) => vs[i]);
        one.catch(() => undefined); // its failure is reported through `work`
        this.inFlight.set(p.key, one);
      });
      waits.push(
        work
          .then((vs) => {
            batch.forEach((p, i) => vectors.set(p.text, vs[i]));
            progress.tick(batch.length);
          })
          .finally(() => batch.forEach((p) => this.inFlight.delete(p.key))),
      );
    }
    const settled = await Promise.allSettled(waits);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;

    const dim = this.width ?? vectors.values().next().value?.length ?? 0;
    const data = new Float32Array(texts.length * dim);
    texts.forEach((t, i) => {
      const v = vectors.get(t)!;
      if (v.length !== dim) throw new GenerationError('malformed', `the vector of text ${i} (${quoted(t)}) has ${v.length} dimensions, the others ${dim}`, { retryable: false });
      data.set(v, i * dim);
    });
    return { data, rows: texts.length, dim };
  }

  /** Asks the endpoint for one batch, checks the answer, stores it in the cache. */
  private async fetchBatch(batch: readonly Pending[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const id = `embeddings of ${batch.length} text${batch.length === 1 ? '' : 's'} (first ${quoted(batch[0].text)})`;
    const body: Record<string, unknown> = { model: this.model, input: batch.map((p) => this.promptOf(p.text)), encoding_format: this.opts.encodingFormat ?? 'base64' };
    if (this.opts.pooling !== undefined) body.pooling = this.opts.pooling;
    const answer = await this.http.run(id, signal, () =>
      this.http.post(this.endpoint, body, { signal }, async (res) => {
        const text = await res.text();
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new GenerationError('malformed', `the answer from ${this.endpoint} is not JSON: ${serverMessage(text)}`, { retryable: true, body: text.slice(0, 2000) });
        }
        return readEmbeddingsAnswer(json, { count: batch.length, model: this.model, dim: this.width }, this.endpoint);
      }),
    );
    const width = answer.vectors[0]?.length;
    if (this.width !== undefined && width !== this.width) {
      // Answers read concurrently before the first one fixed the width.
      throw new GenerationError('malformed', `the answer from ${this.endpoint} is not what was asked for: vectors of ${width} dimensions, but earlier answers had ${this.width}; nothing of it was cached`, { id, retryable: false });
    }
    this.width ??= width;
    this.stats.requests++;
    this.stats.textsSent += batch.length;
    if (this.cache) {
      const cache = this.cache;
      try {
        await Promise.all(batch.map((p, i) => cache.put(p.key, p.material, answer.vectors[i])));
      } catch (e) {
        throw new GenerationError('cache', `the embeddings came but could not be written to the cache ${cache.dir}: ${(e as Error).message}`, { id, cause: e });
      }
    }
    return answer.vectors;
  }
}
