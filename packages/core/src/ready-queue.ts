import type { EventPlan } from './schedule.js';

/**
 * Bottom levels are counted up to this many events: past it, a longer chain of planned readers changes
 * nothing in practice: on a sparse graph with many slots, a horizon of 8 already reaches the ideal number of
 * rounds, ceil(events / slots), which the order events became ready does not (bench/NOTES.md).
 */
export const HORIZON = 8;

/**
 * Events reading more versions than this rank no one above them. On a dense graph (a full mean field) an
 * event reads nearly every live version, every chain runs through the whole run and ranks tell events
 * apart no better than the order they became ready, while raising them would cost O(k HORIZON) per event:
 * work on the main thread that changes no order worth having (bench/NOTES.md).
 */
export const DENSE_READS = 32;

/**
 * Ready events by priority (list scheduling by bottom level): an event on a long chain of planned readers
 * goes first, so the chain's tail is not left for the end when few slots have work. Within a level, events
 * go in the order they became ready. The order only decides which ready event runs first, never what an
 * event reads, so results do not depend on it.
 *
 * Each planned, unfinished event has a rank: 1 + the longest chain of planned events that read it, capped at
 * HORIZON. Planning an event can only raise its ancestors' ranks (at most HORIZON - 1 times each), so the
 * bookkeeping costs O(k) per event amortised over its life, for k <= DENSE_READS reads.
 *
 * State is per slot of the planner's ring (event & mask, see DataflowPlanner), not per event of the run:
 * planned, unfinished events own their slots, and a bucket entry is current only while its plan is the one
 * queued in its slot.
 */
export class ReadyQueue {
  private readonly mask: number;
  private readonly rank: Uint8Array;
  /** The plan queued in each slot while it is ready and not yet taken. */
  private readonly queued: (EventPlan | undefined)[];
  /** buckets[h]: events queued at rank h (an entry is stale once the event's rank moved above h). */
  private readonly buckets: EventPlan[][] = Array.from({ length: HORIZON + 1 }, () => []);
  private readonly heads = new Int32Array(HORIZON + 1);
  private count = 0;
  private readonly stack: EventPlan[] = [];

  /** @param size the planner's ring size, a power of two. */
  constructor(size: number) {
    if (!(size > 0 && (size & (size - 1)) === 0)) throw new Error(`ReadyQueue size must be a power of two, got ${size}`);
    this.mask = size - 1;
    this.rank = new Uint8Array(size);
    this.queued = new Array<EventPlan | undefined>(size).fill(undefined);
  }

  get size(): number {
    return this.count;
  }

  /**
   * A newly planned event: it ranks 1, and each unfinished event it reads (looked up with `unfinished`)
   * ranks at least one more, transitively.
   */
  planned(plan: EventPlan, unfinished: (event: number) => EventPlan | undefined): void {
    const mask = this.mask;
    this.rank[plan.event & mask] = 1;
    const stack = this.stack;
    stack.push(plan);
    while (stack.length > 0) {
      const child = stack.pop()!;
      const raised = this.rank[child.event & mask] + 1;
      if (raised > HORIZON) continue;
      const reads = child.readVersions;
      if (reads.length > DENSE_READS) continue;
      for (let i = 0; i < reads.length; i++) {
        const v = reads[i];
        const slot = v & mask;
        // A finished version's slot may hold a newer event's rank: skipping on it is harmless, as is looking it up.
        if (this.rank[slot] >= raised) continue;
        const parent = unfinished(v);
        if (!parent) continue;
        this.rank[slot] = raised;
        if (this.queued[slot] === parent) this.buckets[raised].push(parent);
        stack.push(parent);
      }
    }
  }

  /** An event whose reads are all written. */
  push(plan: EventPlan): void {
    const slot = plan.event & this.mask;
    this.queued[slot] = plan;
    this.buckets[this.rank[slot]].push(plan);
    this.count++;
  }

  /** The ready event of highest rank (within a rank, the first to become ready), or undefined. */
  takeOne(): EventPlan | undefined {
    const h = this.top();
    if (h === 0) return undefined;
    const head = this.heads[h];
    const plan = this.buckets[h][head];
    this.queued[plan.event & this.mask] = undefined;
    this.count--;
    this.compact(h, head + 1);
    return plan;
  }

  /**
   * The rank of the event takeOne would return (0 when none is ready): the longest chain of planned events
   * still to run through the run's next event, up to HORIZON.
   */
  topRank(): number {
    return this.top();
  }

  /**
   * The highest rank with a current entry, whose bucket's head is then that entry (0 when none is ready).
   * Drops the stale entries it passes: an event taken, or one whose rank moved above the bucket's.
   */
  private top(): number {
    for (let h = HORIZON; h >= 1 && this.count > 0; h--) {
      const bucket = this.buckets[h];
      let head = this.heads[h];
      while (head < bucket.length) {
        const slot = bucket[head].event & this.mask;
        if (this.queued[slot] === bucket[head] && this.rank[slot] === h) break;
        head++;
      }
      this.compact(h, head);
      if (this.heads[h] < bucket.length) return h;
    }
    return 0;
  }

  /** Drops a bucket's taken prefix once it is long, or all of it once the bucket is used up. */
  private compact(h: number, head: number): void {
    const bucket = this.buckets[h];
    if (head > 1024 && head * 2 > bucket.length) {
      bucket.splice(0, head);
      head = 0;
    } else if (head === bucket.length) {
      bucket.length = 0;
      head = 0;
    }
    this.heads[h] = head;
  }
}
