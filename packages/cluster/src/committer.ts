import type { SweepKeys } from './keys.js';
import { commitFollowing, type Committed, type EventCommit, type PantaRedis } from './redis/scripts.js';

/** Most events one commit step takes: a step runs alone in Redis, so a long one delays every other client. */
const MAX_STEP = 256;

interface Waiting {
  commit: EventCommit;
  resolve(committed: Committed): void;
  reject(error: unknown): void;
}

/**
 * Commits a worker's finished events of one sweep together: the events that finish in one turn of the event
 * loop go in one commit step (commit-events-n), with one message to the scheduler and one to each collector
 * shard concerned, instead of a step and two messages each (and a step per shard: K collectors cost Redis and
 * the scheduler no more per event than one). Nothing waits for a batch to fill: a lone event is committed at
 * the end of the turn it finished in, so a dependent event is dispatched as soon as before.
 */
export class Committer {
  private waiting: Waiting[] = [];
  private scheduled = false;

  /** @param inboxOf the collector inbox of a run's shard */
  constructor(
    private readonly redis: PantaRedis,
    private readonly keys: SweepKeys,
    private readonly inboxOf: (runId: string) => string,
  ) {}

  commit(commit: EventCommit): Promise<Committed> {
    return new Promise<Committed>((resolve, reject) => {
      this.waiting.push({ commit, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const all = this.waiting;
    this.waiting = [];
    for (let start = 0; start < all.length; start += MAX_STEP) {
      const batch = all.slice(start, start + MAX_STEP);
      commitFollowing(
        this.redis,
        this.keys,
        batch.map((w) => w.commit),
        this.inboxOf,
      ).then(
        (codes) => batch.forEach((w, i) => w.resolve(codes[i])),
        (error: unknown) => {
          for (const w of batch) w.reject(error);
        },
      );
    }
  };
}
