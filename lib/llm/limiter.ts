/**
 * Bounded concurrency: at most `limit` tasks run at once; the others wait in arrival order (FIFO).
 * A waiting task whose signal aborts leaves the queue without running. `inFlight` and `peak` say
 * how busy it is (tests and progress lines read them).
 */
export class Limiter {
  private running = 0;
  private peakRunning = 0;
  private readonly waiting: Array<{ start: () => void }> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency must be an integer >= 1, got ${limit}`);
  }

  get inFlight(): number {
    return this.running;
  }
  get queued(): number {
    return this.waiting.length;
  }
  /** The most tasks that ever ran at once. */
  get peak(): number {
    return this.peakRunning;
  }

  /** Runs `task` when a slot is free; rejects with the signal's reason if aborted while waiting. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.running >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const entry = {
          start: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(entry);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(entry);
      });
    } else {
      this.running++;
    }
    this.peakRunning = Math.max(this.peakRunning, this.running);
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter (running stays the same), or free it.
      const next = this.waiting.shift();
      if (next) next.start();
      else this.running--;
    }
  }
}
