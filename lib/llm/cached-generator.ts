/**
 * Any generator behind the on-disk answer cache (./response-cache.ts): a request whose key
 * (model, messages, parameters) has an answer on disk gets it back without a call (`cached: true`,
 * `attempts: 0`); otherwise the inner generator answers, the answer is written to disk, and only
 * then is it returned — so an answer a caller has seen is always on disk, and a run stopped at any
 * point reruns without paying again for anything it already received.
 *
 * Requests with the same key in flight at the same time make one call: the later ones wait for the
 * first one's answer (a batch with repeated texts pays once even before the first answer is
 * stored). Failures are not cached. `refresh: true` ignores what is on disk and overwrites it.
 */
import { GenerationError } from './generation-error.js';
import { validateChatRequest } from './request.js';
import { cacheKey, cacheKeyMaterial, ResponseCache } from './response-cache.js';
import type { ChatGenerator, ChatRequest, ChatResult, CompleteOptions } from './types.js';

export interface CachedGeneratorOptions {
  /** Ask the generator again even when an answer is on disk, and store the new one. */
  refresh?: boolean;
}

export class CachedGenerator implements ChatGenerator {
  readonly cache: ResponseCache;
  private readonly pending = new Map<string, Promise<{ result: ChatResult; fromCache: boolean }>>();

  constructor(
    readonly inner: ChatGenerator,
    cache: ResponseCache | string,
    private readonly opts: CachedGeneratorOptions = {},
  ) {
    this.cache = typeof cache === 'string' ? new ResponseCache(cache) : cache;
  }

  get name(): string {
    return this.inner.name;
  }
  get model(): string {
    return this.inner.model;
  }

  /** The cache key of a request as this generator would look it up. */
  keyOf(request: ChatRequest): string {
    return cacheKey(cacheKeyMaterial(validateChatRequest(request), this.inner.model));
  }

  async complete(request: ChatRequest, opts: CompleteOptions = {}): Promise<ChatResult> {
    let req: ChatRequest;
    try {
      req = validateChatRequest(request);
    } catch (e) {
      throw new GenerationError('input', (e as Error).message, { id: (request as ChatRequest | undefined)?.id, cause: e });
    }
    const material = cacheKeyMaterial(req, this.inner.model);
    const key = cacheKey(material);
    const asThisRequest = (r: ChatResult, cached: boolean): ChatResult => {
      const { id: _, ...rest } = r;
      return { ...rest, ...(req.id !== undefined ? { id: req.id } : {}), ...(cached ? { cached: true, attempts: 0 } : {}) };
    };
    const running = this.pending.get(key);
    if (running) {
      // Another request with this key is being answered: its answer is this one's, paid once.
      let answer: ChatResult;
      try {
        answer = (await running).result;
      } catch (e) {
        // Its failure is this request's too, reported under this request's id.
        throw e instanceof GenerationError ? e.with({ id: req.id }) : e;
      }
      const r = asThisRequest(answer, true);
      opts.onText?.(r.text);
      return r;
    }
    // Registered before the first await, so that identical requests arriving meanwhile wait for it.
    const work = (async (): Promise<{ result: ChatResult; fromCache: boolean }> => {
      if (!this.opts.refresh) {
        const hit = await this.cache.get(key, material);
        if (hit) return { result: { ...hit.result, cached: true, attempts: 0 }, fromCache: true };
      }
      const r = await this.inner.complete(req, opts);
      try {
        await this.cache.put({ key, request: material, result: { text: r.text, usage: r.usage, finishReason: r.finishReason, model: r.model, ...(r.costUsd !== undefined ? { costUsd: r.costUsd } : {}) }, ...(req.id !== undefined ? { id: req.id } : {}), generator: this.inner.name });
      } catch (e) {
        throw new GenerationError('cache', `the answer came but could not be written to the cache ${this.cache.dir}: ${(e as Error).message}`, { id: req.id, cause: e });
      }
      return { result: r, fromCache: false };
    })();
    this.pending.set(key, work);
    try {
      const { result, fromCache } = await work;
      if (fromCache) {
        opts.signal?.throwIfAborted();
        opts.onText?.(result.text);
      }
      return asThisRequest(result, fromCache);
    } finally {
      this.pending.delete(key);
    }
  }
}
