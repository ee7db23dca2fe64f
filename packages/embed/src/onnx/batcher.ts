import { toError } from '@panta/core';

/**
 * A micro-batcher across concurrent callers: items queue until `maxBatch` are waiting or `maxWaitMs`
 * has passed since the first one, then go to `run` as one batch; each caller gets its own rows back.
 */
export class MicroBatcher<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: Error) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Batches sent so far (for tests and benchmarks). */
  batches = 0;

  constructor(
    private readonly run: (items: T[]) => Promise<R[]>,
    readonly maxBatch: number,
    readonly maxWaitMs: number,
  ) {
    if (!(maxBatch >= 1)) throw new RangeError('maxBatch must be at least 1');
  }

  /** Queues items; resolves with their results in order. */
  submit(items: readonly T[]): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    const promises = items.map((item) => new Promise<R>((resolve, reject) => this.queue.push({ item, resolve, reject })));
    while (this.queue.length >= this.maxBatch) this.flush();
    if (this.queue.length > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        while (this.queue.length > 0) this.flush();
      }, this.maxWaitMs);
    }
    if (this.queue.length === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    return Promise.all(promises);
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    this.batches++;
    this.run(batch.map((b) => b.item))
      .then(
        (results) => {
          if (results.length !== batch.length) throw new Error(`batch of ${batch.length} gave ${results.length} results`);
          batch.forEach((b, i) => b.resolve(results[i]));
        },
        (error: unknown) => {
          const e = toError(error);
          for (const b of batch) b.reject(e);
        },
      )
      .catch((error: unknown) => {
        const e = toError(error);
        for (const b of batch) b.reject(e);
      });
  }

  /** Rejects everything still queued. */
  cancel(error: Error): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const b of this.queue.splice(0)) b.reject(error);
  }
}
