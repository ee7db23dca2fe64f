/**
 * Paces a collector's reads of the workers' commits so that each read brings about `target` events, waiting
 * at most `maxMs` between two (a read that finds a backlog is not paced: the caller reads on at once). Every
 * read costs the same rounds (read, results, acknowledgement) and their garbage however few events it brings:
 * read as they come, K collector shards, each receiving 1/K of the events, would pay K times the rounds of
 * one collector. Paced by its own rate, each shard reads what one collector would, whatever K. Nothing waits
 * on these rows within milliseconds: the scheduler dispatches on the workers' commits, control requests
 * (boundaries, closes) are read apart, at once, and a run's end asks for its rows ('rows').
 */
export class ReadPace {
  /** Events per millisecond, smoothed over reads; undefined until two reads are known. */
  private rate: number | undefined;
  private lastReadAt: number | undefined;

  constructor(
    readonly target: number,
    readonly maxMs: number,
  ) {}

  /**
   * A read of commits returned at `readAt` (ms) with `events` events, and they are handled at `now`: how long
   * to wait before the next read (0: at once).
   */
  waitAfter(events: number, readAt: number, now: number): number {
    const since = this.lastReadAt === undefined ? undefined : readAt - this.lastReadAt;
    this.lastReadAt = readAt;
    if (since === undefined || since <= 0) return 0;
    const rate = events / since;
    // Smoothed, so that one burst (the first wave of a sweep, a worker's backlog after a pause) or one lull
    // does not swing the wait from nothing to the longest.
    this.rate = this.rate === undefined ? rate : 0.7 * this.rate + 0.3 * rate;
    if (this.rate <= 0) return this.maxMs;
    return Math.max(0, Math.min(this.maxMs, this.target / this.rate - (now - readAt)));
  }
}
