/** What a run's appended rows wait for: the bytes of their results in Redis, and since when the first waits. */
export interface Waiting {
  waitingBytes: number;
  waitingSince: number | undefined;
}

export interface DurablePolicy {
  /** The longest a row waits. */
  maxWaitMs: number;
  /** A run whose waiting results reach this fills a part worth its file: made durable at once. */
  partBytes: number;
  /** All runs' waiting results above this: the largest runs are made durable until they are below. */
  budgetBytes: number;
}

/**
 * The runs whose rows are due to be made durable now, largest first. Every part costs a file, two fsyncs and
 * its share of a merge when the run closes; every row waiting costs Redis memory and a restarted collector's
 * reading: parts are written when they are worth their file, when a row has waited long enough, or while
 * Redis holds too much.
 */
export function durableDue<K>(runs: Iterable<[K, Waiting]>, now: number, policy: DurablePolicy): K[] {
  const sorted = [...runs].sort((a, b) => b[1].waitingBytes - a[1].waitingBytes);
  let waiting = sorted.reduce((n, [, w]) => n + w.waitingBytes, 0);
  const due: K[] = [];
  for (const [key, w] of sorted) {
    const old = w.waitingSince !== undefined && now - w.waitingSince >= policy.maxWaitMs;
    if (waiting > policy.budgetBytes || w.waitingBytes >= policy.partBytes || old) {
      due.push(key);
      waiting -= w.waitingBytes;
    }
  }
  return due;
}
