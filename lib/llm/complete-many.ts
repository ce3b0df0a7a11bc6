/**
 * A batch of chat requests through one generator, at most `concurrency` at a time, in the order
 * given (the first requests start first; answers arrive in any order and are put back in place).
 *
 * A failed request does not stop the batch: it is listed with its prompt id, kind and message, and
 * the others go on. `signal` stops the batch gracefully: no further request starts, the ones in
 * flight finish (and, behind a cache, are stored — nothing already being paid for is thrown away),
 * and the ids that never started are listed in `notStarted`; `cancelInFlight: true` cancels those
 * in flight too. Every answer is reported to `onResult` as it arrives, after the generator has
 * returned it (behind ./cached-generator.ts: after it is on disk).
 */
import { InputError } from '../util/errors.js';
import { Progress } from '../util/progress.js';
import { GenerationError, type GenerationErrorKind } from './generation-error.js';
import { Limiter } from './limiter.js';
import { UsageTally } from './pricing.js';
import type { ChatGenerator, ChatRequest, ChatResult } from './types.js';

export interface GenerationFailure {
  /** The prompt's id. */
  id: string;
  /** Its position in the batch. */
  index: number;
  kind: GenerationErrorKind | 'error';
  /** The error's message (it begins with "prompt <id>:"). */
  message: string;
  status?: number;
  attempts: number;
}

export interface CompleteManyOptions {
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Stops the batch: nothing new starts; those in flight finish unless `cancelInFlight`. */
  signal?: AbortSignal;
  cancelInFlight?: boolean;
  onResult?: (result: ChatResult, index: number) => void;
  onFailure?: (failure: GenerationFailure) => void;
  /** A progress line with this label (requests done/total, rate, ETA, failures, cost). */
  progress?: string;
}

export interface CompleteManyResult {
  /** Answers in the order of the requests; undefined where it failed or never started. */
  results: Array<ChatResult | undefined>;
  failures: GenerationFailure[];
  /** Ids of requests that never started because the batch was stopped. */
  notStarted: string[];
  /** Tokens and cost: paid in this run, and read back from a cache. */
  usage: UsageTally;
  stopped: boolean;
}

/** Each request's id (its own, else its index as text); duplicates are an error. */
export function requestIds(requests: readonly ChatRequest[]): string[] {
  const ids = requests.map((r, i) => r.id ?? String(i));
  const seen = new Map<string, number>();
  ids.forEach((id, i) => {
    const j = seen.get(id);
    if (j !== undefined) throw new InputError(`requests ${j} and ${i} have the same id '${id}': ids name prompts in failure reports and must be unique`);
    seen.set(id, i);
  });
  return ids;
}

export async function completeMany(generator: ChatGenerator, requests: readonly ChatRequest[], opts: CompleteManyOptions = {}): Promise<CompleteManyResult> {
  const ids = requestIds(requests);
  const limiter = new Limiter(opts.concurrency ?? 4);
  const results: Array<ChatResult | undefined> = new Array(requests.length).fill(undefined);
  const failures: GenerationFailure[] = [];
  const notStarted: string[] = [];
  const usage = new UsageTally();
  const progress = opts.progress ? new Progress({ label: opts.progress, total: requests.length, unit: 'req' }) : undefined;
  const stop = opts.signal;
  const stopped = () => stop?.aborted === true;

  await Promise.all(
    requests.map(async (request, index) => {
      const id = ids[index];
      try {
        await limiter.run(async () => {
          if (stopped()) {
            notStarted.push(id);
            return;
          }
          const r = await generator.complete({ ...request, id }, opts.cancelInFlight && stop ? { signal: stop } : {});
          results[index] = r;
          usage.add(r);
          opts.onResult?.(r, index);
        });
      } catch (e) {
        const failure: GenerationFailure =
          e instanceof GenerationError
            ? { id, index, kind: e.kind, message: e.message, ...(e.status !== undefined ? { status: e.status } : {}), attempts: e.attempts }
            : { id, index, kind: 'error', message: `prompt ${id}: ${(e as Error).message ?? String(e)}`, attempts: 0 };
        failures.push(failure);
        opts.onFailure?.(failure);
      }
      progress?.tick(1, `${failures.length} failed; ${usage}`);
    }),
  );
  const order = new Map(ids.map((id, i) => [id, i]));
  failures.sort((a, b) => a.index - b.index);
  notStarted.sort((a, b) => order.get(a)! - order.get(b)!);
  return { results, failures, notStarted, usage, stopped: stopped() };
}
