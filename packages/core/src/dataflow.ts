import { ReadyQueue } from './ready-queue.js';
import type { EventPlan, Schedule } from './schedule.js';

/**
 * The versioned dataflow planner (DESIGN.md 2.4). It streams through a schedule with a bounded look-ahead
 * window: an event is planned once it is within `window` events of the oldest unfinished one, and becomes
 * ready when every version it reads has been written.
 *
 * It also tells which versions can be forgotten. When event s writes agent b, the version it supersedes can
 * only have been read by events planned before s, and by s itself: once every event up to s has finished,
 * that version is dead. This needs no per-reader bookkeeping, so planning an event costs O(k) array reads
 * even on a mean field of thousands of agents.
 *
 * Memory is O(min(window x (k + 1), 2^20) + N), never O(events); live versions are at most N + window.
 */
/** Read entries planned events may hold at once (8 bytes each): on a mean field of 1,000 agents, ~1,000 events. */
const MAX_PLANNED_READS = 1 << 20;

export class DataflowPlanner {
  private readonly planned = new Map<number, EventPlan>();
  /** Per planned, unready event: index of the read it waits on. Reads before it are written. */
  private readonly cursor = new Map<number, number>();
  /** Read entries held by planned events: bounds memory on dense graphs. */
  private plannedReads = 0;
  /** Planned events waiting on a version, keyed by that version (each waits on one read at a time). */
  private readonly waiting = new Map<number, number[]>();
  private readonly written: Uint8Array;
  private readonly ready: ReadyQueue;
  private readonly latest: Float64Array;
  private readonly resumed: Float64Array;
  /** (superseding event, superseded version) pairs, in increasing superseding event. */
  private readonly superseded: number[] = [];
  private supersededHead = 0;
  private released: number[] = [];
  private oldestUnfinished: number;
  private finishedCount: number;
  /** Oldest event whose result the consumer has not yet taken (written); the window counts from here too. */
  private floor = Number.POSITIVE_INFINITY;
  /** Events from here on are not planned until the gate moves (a sweep boundary must run first). */
  private gate = Number.POSITIVE_INFINITY;
  /** Events the run will have: the schedule's, or fewer once it ends early. */
  private end: number;

  /**
   * @param startEvent events below it are already written (a resumed run): the schedule is advanced past
   *   them and only each agent's latest version is kept alive.
   * @param gate events from here on wait for setGate (a sweep boundary).
   */
  constructor(
    private readonly schedule: Schedule,
    private readonly window: number,
    startEvent = 0,
    gate = Number.POSITIVE_INFINITY,
  ) {
    this.gate = gate;
    this.written = new Uint8Array(schedule.total);
    this.ready = new ReadyQueue(schedule.total);
    this.written.fill(1, 0, startEvent);
    schedule.skip(startEvent);
    this.latest = startEvent > 0 ? schedule.liveVersions() : new Float64Array(schedule.run.n).fill(-1);
    this.resumed = this.latest.slice();
    this.oldestUnfinished = startEvent;
    this.finishedCount = startEvent;
    this.end = schedule.total;
    this.refill();
  }

  get total(): number {
    return this.end;
  }

  /**
   * Holds back events from `event` on (a sweep boundary): they are planned, and so dispatched, only once the
   * gate moves. Infinity lifts it.
   */
  setGate(event: number): void {
    this.gate = event;
    this.refill();
  }

  /** Every event before the gate has finished, and none after it has been planned: the boundary may run. */
  get atGate(): boolean {
    return this.gate < this.end && this.finishedCount === this.gate;
  }

  /** The run ends at the gate (early stopping): no event from there on will run. */
  endAtGate(): void {
    if (this.gate < this.end) this.end = this.gate;
  }

  /** Each agent's latest version among planned events: at the gate, the snapshot a boundary reads. */
  snapshotVersions(): Float64Array {
    return this.latest.slice();
  }

  get finished(): number {
    return this.finishedCount;
  }

  get done(): boolean {
    return this.finishedCount === this.end;
  }

  /** Each agent's latest version as of `startEvent` (-1 before any): what a resumed run must load. */
  liveVersions(): Float64Array {
    return this.resumed;
  }

  /** Number of events ready to run now. */
  get readyCount(): number {
    return this.ready.size;
  }

  /** Takes up to `max` ready events, those on the longest chains of planned readers first (ReadyQueue). */
  take(max: number): EventPlan[] {
    return this.ready.take(max);
  }

  /**
   * Tells the planner that every event below `event` has been consumed (its row written). The window then
   * counts from the older of this and the oldest unfinished event, so results waiting to be written are
   * bounded by the window too, and a slow writer slows planning instead of piling up results.
   */
  consumed(event: number): void {
    this.floor = event;
    this.refill();
  }

  /** Records that `event` has written its version; returns the versions that are now dead. */
  complete(event: number): number[] {
    if (this.written[event]) throw new Error(`event ${event} completed twice`);
    const plan = this.planned.get(event);
    if (!plan) throw new Error(`event ${event} completed before it was planned`);
    this.planned.delete(event);
    this.plannedReads -= plan.readVersions.length;
    this.written[event] = 1;
    this.finishedCount++;
    const waiters = this.waiting.get(event);
    if (waiters) {
      this.waiting.delete(event);
      for (const w of waiters) this.advance(this.planned.get(w)!, this.cursor.get(w)! + 1);
    }
    const total = this.schedule.total;
    while (this.oldestUnfinished < total && this.written[this.oldestUnfinished]) this.oldestUnfinished++;
    const s = this.superseded;
    while (this.supersededHead < s.length && s[this.supersededHead]! < this.oldestUnfinished) {
      this.released.push(s[this.supersededHead + 1]!);
      this.supersededHead += 2;
    }
    if (this.supersededHead > 4096) {
      s.splice(0, this.supersededHead);
      this.supersededHead = 0;
    }
    this.refill();
    const out = this.released;
    this.released = [];
    return out;
  }

  /**
   * Waits on the first unwritten read from index `from` on, or makes the event ready. Written versions stay
   * written, so each read is checked once over the event's life: O(k) per event, however dense the graph.
   */
  private advance(plan: EventPlan, from: number): void {
    const reads = plan.readVersions;
    let i = from;
    while (i < reads.length && this.written[reads[i]!]) i++;
    if (i === reads.length) {
      this.cursor.delete(plan.event);
      this.ready.push(plan);
      return;
    }
    this.cursor.set(plan.event, i);
    const list = this.waiting.get(reads[i]!);
    if (list) list.push(plan.event);
    else this.waiting.set(reads[i]!, [plan.event]);
  }

  private readonly unfinished = (event: number): EventPlan | undefined => (this.written[event] ? undefined : this.planned.get(event));

  private refill(): void {
    const limit = Math.min(Math.min(this.oldestUnfinished, this.floor) + this.window, this.gate, this.end);
    while (this.schedule.position < limit && (this.plannedReads < MAX_PLANNED_READS || this.planned.size === 0)) {
      const plan = this.schedule.next();
      if (!plan) break;
      const previous = this.latest[plan.agent]!;
      this.latest[plan.agent] = plan.event;
      if (previous >= 0) this.superseded.push(plan.event, previous);
      this.planned.set(plan.event, plan);
      this.plannedReads += plan.readVersions.length;
      this.ready.planned(plan, this.unfinished);
      this.advance(plan, 0);
    }
  }
}
