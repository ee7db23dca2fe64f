import type { EventPlan, Schedule } from './schedule.js';

interface Planned {
  plan: EventPlan;
  /** Read versions not yet written. */
  pending: number;
}

/**
 * The versioned dataflow planner (DESIGN.md 2.4). It streams through a schedule with a bounded look-ahead
 * window: an event is planned once it is within `window` events of the oldest unfinished one, and becomes
 * ready when every version it reads has been written. It also tells which versions can be forgotten: a
 * version is dead once a later event of the same agent has been planned (no new reader can appear) and
 * every planned reader has finished.
 *
 * Memory is O(window x (k + 1) + N), never O(events).
 */
export class DataflowPlanner {
  private readonly planned = new Map<number, Planned>();
  /** Planned events waiting on a version, keyed by that version. */
  private readonly waiting = new Map<number, number[]>();
  /** Planned-but-unfinished readers per version. */
  private readonly readers = new Map<number, number>();
  /** Versions that a later write has superseded. */
  private readonly superseded = new Set<number>();
  private readonly written: Uint8Array;
  private readonly ready: EventPlan[] = [];
  private readonly latest: Float64Array;
  private readonly resumed: Float64Array;
  private released: number[] = [];
  private oldestUnfinished: number;
  private finishedCount: number;

  /**
   * @param startEvent events below it are already written (a resumed run): the schedule is advanced past
   *   them and only each agent's latest version is kept alive.
   */
  constructor(
    private readonly schedule: Schedule,
    private readonly window: number,
    startEvent = 0,
  ) {
    this.written = new Uint8Array(schedule.total);
    this.written.fill(1, 0, startEvent);
    schedule.skip(startEvent);
    this.latest = startEvent > 0 ? schedule.liveVersions() : new Float64Array(schedule.run.n).fill(-1);
    this.resumed = this.latest.slice();
    this.oldestUnfinished = startEvent;
    this.finishedCount = startEvent;
    this.refill();
  }

  get total(): number {
    return this.schedule.total;
  }

  get finished(): number {
    return this.finishedCount;
  }

  get done(): boolean {
    return this.finishedCount === this.schedule.total;
  }

  /** Each agent's latest version as of `startEvent` (-1 before any): what a resumed run must load. */
  liveVersions(): Float64Array {
    return this.resumed;
  }

  /** Number of events ready to run now. */
  get readyCount(): number {
    return this.ready.length;
  }

  /** Takes up to `max` ready events, oldest first. */
  take(max: number): EventPlan[] {
    return this.ready.splice(0, max);
  }

  /** Records that `event` has written its version; returns the versions that are now dead. */
  complete(event: number): number[] {
    if (this.written[event]) throw new Error(`event ${event} completed twice`);
    const entry = this.planned.get(event);
    if (!entry) throw new Error(`event ${event} completed before it was planned`);
    this.planned.delete(event);
    this.written[event] = 1;
    this.finishedCount++;
    for (const v of entry.plan.readVersions) {
      const left = this.readers.get(v)! - 1;
      if (left === 0) {
        this.readers.delete(v);
        if (this.superseded.has(v)) this.release(v);
      } else this.readers.set(v, left);
    }
    const waiters = this.waiting.get(event);
    if (waiters) {
      this.waiting.delete(event);
      for (const w of waiters) {
        const p = this.planned.get(w)!;
        if (--p.pending === 0) this.ready.push(p.plan);
      }
    }
    if (this.superseded.has(event) && !this.readers.has(event)) this.release(event);
    while (this.oldestUnfinished < this.schedule.total && this.written[this.oldestUnfinished]) this.oldestUnfinished++;
    this.refill();
    const out = this.released;
    this.released = [];
    return out;
  }

  private release(version: number): void {
    if (!this.written[version]) return;
    this.superseded.delete(version);
    this.released.push(version);
  }

  private refill(): void {
    const limit = this.oldestUnfinished + this.window;
    while (this.schedule.position < limit) {
      const plan = this.schedule.next();
      if (!plan) break;
      let pending = 0;
      for (const v of plan.readVersions) {
        this.readers.set(v, (this.readers.get(v) ?? 0) + 1);
        if (!this.written[v]) {
          pending++;
          const list = this.waiting.get(v);
          if (list) list.push(plan.event);
          else this.waiting.set(v, [plan.event]);
        }
      }
      const previous = this.latest[plan.agent]!;
      this.latest[plan.agent] = plan.event;
      if (previous >= 0) {
        // No reader planned from now on can read `previous`: it dies once its current readers finish.
        if (this.readers.has(previous) || !this.written[previous]) this.superseded.add(previous);
        else this.released.push(previous);
      }
      this.planned.set(plan.event, { plan, pending });
      if (pending === 0) this.ready.push(plan);
    }
  }
}
