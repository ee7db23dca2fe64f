import { ReadyQueue } from './ready-queue.js';
import type { EventPlan, EventStream } from './schedule.js';

/**
 * The versioned dataflow planner (docs/DESIGN.md#exact-parallel-execution). It streams through a schedule with a bounded look-ahead
 * window: an event is planned once it is within `window` events of the oldest unfinished one, and becomes
 * ready when every version it reads has been written.
 *
 * It also tells which versions can be forgotten. When event s writes agent b, the version it supersedes can
 * only have been read by events planned before s, and by s itself: once every event up to s has finished,
 * that version is dead. This needs no per-reader bookkeeping, so planning an event costs O(k) array reads
 * even on a mean field of thousands of agents.
 *
 * Memory is O(min(window x (k + 1), 2^20) + N), never O(events): per-event state lives in rings of the
 * window's size (a version older than the oldest unfinished event is written, a newer one is planned and
 * owns its slot), so a run of 11 M events holds no array of 11 M entries. Live versions are at most N + window.
 */
/** Read entries planned events may hold at once (8 bytes each): on a mean field of 1,000 agents, ~1,000 events. */
const MAX_PLANNED_READS = 1 << 20;

/**
 * Planning is incremental: a new planner plans FIRST_STEP events, each completion at most STEP more, and
 * the caller tops the window up with planAhead() when it has nothing better to do (the executor does it
 * while calls are out). A whole window planned before the first dispatch would hold a run's first calls
 * back for as long as planning it takes; planned in steps, that time overlaps the calls (bench/NOTES.md).
 * Which events are planned when changes only which ready event runs first, never what an event reads.
 */
const FIRST_STEP = 1024;
const STEP = 8;

/** The continuations state (DataflowPlanner.followContinuations), per slot of the ring. */
interface Continuations {
  /** 1 once the slot's event was taken (dispatched, as a ready event or a continuation). */
  dispatched: Uint8Array;
  /** 1 once the slot's event was handed out as a continuation. */
  taken: Uint8Array;
  /** 1 once the slot's event has a continuation. */
  hasChild: Uint8Array;
  /** The slot's event's continuation (while hasChild). */
  child: Float64Array;
  /** Continuations found and not yet taken, in the order found. */
  queue: { plan: EventPlan; after: number }[];
}

/** What complete() returns when no version died (most completions out of order): shared, never written to. */
const NONE: readonly number[] = [];

/**
 * Per-event state lives in rings indexed by `event & mask`: planned, unfinished events all lie within `window`
 * events of the oldest unfinished one, so a ring of the next power of two above the window never has two of
 * them in one slot. Planning and completing an event then touch typed arrays only (no Map, no allocation),
 * which keeps the planner's share of the main thread small next to the calls it schedules (bench/NOTES.md).
 */
export class DataflowPlanner {
  private readonly mask: number;
  /** The plan of each planned, unfinished event. */
  private readonly plans: (EventPlan | undefined)[];
  /** Per planned, unready event: index of the read it waits on. Reads before it are written. */
  private readonly cursor: Int32Array;
  /** Planned events waiting on version v (each waits on one read at a time): a FIFO list from slot v. */
  private readonly waitHead: Float64Array;
  private readonly waitTail: Float64Array;
  private readonly waitNext: Float64Array;
  /** The version each planned event supersedes (-1: none), released once every event up to it has finished. */
  private readonly supersedes: Float64Array;
  private plannedCount = 0;
  /** Read entries held by planned events: bounds memory on dense graphs. */
  private plannedReads = 0;
  /** Per planned event: 1 once it has written its version (an event below oldestUnfinished is written). */
  private readonly finishedFlag: Uint8Array;
  private readonly ready: ReadyQueue;
  private readonly latest: Float64Array;
  private readonly resumed: Float64Array;
  private oldestUnfinished: number;
  private finishedCount: number;
  /** Oldest event whose result the consumer has not yet taken (written); the window counts from here too. */
  private floor = Number.POSITIVE_INFINITY;
  /** Events from here on are not planned until the gate moves (a sweep boundary must run first). */
  private gate = Number.POSITIVE_INFINITY;
  /** Events the run will have: the schedule's, or fewer once it ends early. */
  private end: number;
  /**
   * Synchronous dynamics: every event of sweep t reads the snapshot of sweep t - 1, so the version an event
   * supersedes still has readers after it (the rest of its sweep). Such versions die as a sweep: those of
   * sweep t - 1 once every event of sweep t has finished (0 when asynchronous).
   */
  private readonly syncN: number;
  /** Continuations, once followContinuations() was called (see there); undefined: none are looked for. */
  private follow?: Continuations;

  /**
   * @param startEvent events below it are already written (a resumed run): the schedule is advanced past
   *   them and only each agent's latest version is kept alive.
   * @param gate events from here on wait for setGate (a sweep boundary).
   */
  constructor(
    private readonly schedule: EventStream,
    private readonly window: number,
    startEvent = 0,
    gate = Number.POSITIVE_INFINITY,
  ) {
    if (!(window >= 1)) throw new Error(`planner window must be at least 1, got ${window}`);
    const size = 2 ** Math.ceil(Math.log2(Math.min(window, schedule.total) + 1));
    this.mask = size - 1;
    this.plans = new Array<EventPlan | undefined>(size).fill(undefined);
    this.cursor = new Int32Array(size);
    this.waitHead = new Float64Array(size).fill(-1);
    this.waitTail = new Float64Array(size);
    this.waitNext = new Float64Array(size);
    this.supersedes = new Float64Array(size);
    this.gate = gate;
    this.finishedFlag = new Uint8Array(size);
    this.ready = new ReadyQueue(size);
    schedule.skip(startEvent);
    this.latest = startEvent > 0 ? schedule.liveVersions() : new Float64Array(schedule.slots).fill(-1);
    this.syncN = schedule.run.dynamics === 'synchronous' ? schedule.run.n : 0;
    this.resumed = this.syncN > 0 ? this.synchronousLive(startEvent) : this.latest.slice();
    this.oldestUnfinished = startEvent;
    this.finishedCount = startEvent;
    this.end = schedule.total;
    this.refill(FIRST_STEP);
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
    this.refill(STEP);
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

  /** The longest chain of planned events through the next ready event, up to HORIZON (0 when none is ready). */
  get readyRank(): number {
    return this.ready.topRank();
  }

  /** Number of events ready to run now. */
  get readyCount(): number {
    return this.ready.size;
  }

  /** Takes up to `max` ready events, those on the longest chains of planned readers first (ReadyQueue). */
  take(max: number): EventPlan[] {
    const out: EventPlan[] = [];
    while (out.length < max) {
      const plan = this.takeOne();
      if (!plan) break;
      out.push(plan);
    }
    return out;
  }

  /** The next ready event (as take(1)), or undefined. Plans further when none is ready yet. */
  takeOne(): EventPlan | undefined {
    while (this.ready.size === 0 && this.behind) this.refill(STEP);
    const plan = this.ready.takeOne();
    if (plan && this.follow) this.dispatchedNow(plan.event);
    return plan;
  }

  /**
   * From now on, looks for continuations: a planned event whose one unwritten read is the version of an event
   * taken (dispatched) and not yet finished is a continuation of that event, and takeContinuation() hands it
   * out, at most one per event, instead of its becoming ready once that event finishes. A transport can give it
   * to whoever runs its parent, to start the moment the parent's version is written. What an event reads does
   * not change: only who runs it, and when it may be sent. Call before any event is taken.
   */
  followContinuations(): void {
    const size = this.mask + 1;
    this.follow ??= {
      dispatched: new Uint8Array(size),
      taken: new Uint8Array(size),
      hasChild: new Uint8Array(size),
      child: new Float64Array(size),
      queue: [],
    };
  }

  /** The next continuation found (see followContinuations) and the event it follows, or undefined. */
  takeContinuation(): { plan: EventPlan; after: number } | undefined {
    const follow = this.follow;
    if (!follow || follow.queue.length === 0) return undefined;
    return follow.queue.shift();
  }

  /** An event taken (by takeOne, or as a continuation): its first waiter that waits on it alone follows it. */
  private dispatchedNow(event: number): void {
    this.follow!.dispatched[event & this.mask] = 1;
    this.offerWaiters(event);
  }

  /** The first event waiting on `event` (in flight) whose other reads are all written becomes its continuation. */
  private offerWaiters(event: number): void {
    const follow = this.follow!;
    const slot = event & this.mask;
    for (let w = this.waitHead[slot]; w >= 0 && !follow.hasChild[slot]; w = this.waitNext[w & this.mask]) {
      const plan = this.plans[w & this.mask]!;
      this.offer(plan, this.cursor[w & this.mask], event);
    }
  }

  /**
   * `plan` waits on read `i`, the version of `parent`: when `parent` is in flight with no continuation yet and
   * every other read of `plan` is written, `plan` becomes its continuation.
   */
  private offer(plan: EventPlan, i: number, parent: number): void {
    const follow = this.follow!;
    const on = parent & this.mask;
    const slot = plan.event & this.mask;
    if (!follow.dispatched[on] || follow.hasChild[on] || follow.taken[slot]) return;
    const reads = plan.readVersions;
    for (let j = i + 1; j < reads.length; j++) if (!this.isWritten(reads[j])) return;
    follow.taken[slot] = 1;
    follow.hasChild[on] = 1;
    follow.child[on] = plan.event;
    follow.queue.push({ plan, after: parent });
    this.dispatchedNow(plan.event);
  }

  /** Events within the window are not planned yet: planAhead() has work. */
  get behind(): boolean {
    return this.schedule.position < this.limit() && (this.plannedReads < MAX_PLANNED_READS || this.plannedCount === 0);
  }

  /** Plans up to `max` more events of the window (idle-time work; see FIRST_STEP). */
  planAhead(max: number): void {
    this.refill(max);
  }

  /**
   * Tells the planner that every event below `event` has been consumed (its row written). The window then
   * counts from the older of this and the oldest unfinished event, so results waiting to be written are
   * bounded by the window too, and a slow writer slows planning instead of piling up results.
   */
  consumed(event: number): void {
    this.floor = event;
    this.refill(STEP);
  }

  /**
   * What a synchronous run resumed at `startEvent` must load: each agent's latest version, and, mid-sweep,
   * the previous sweep's versions of the agents already updated in this one (the sweep's later events read
   * them). -1 where there is none.
   */
  private synchronousLive(startEvent: number): Float64Array {
    const n = this.syncN;
    const updated = startEvent >= n ? startEvent % n : 0;
    const live = new Float64Array(n + updated);
    live.set(this.latest);
    const base = startEvent - updated - n;
    for (let b = 0; b < updated; b++) live[n + b] = base + b;
    return live;
  }

  /** Records that `event` has written its version; returns the versions that are now dead (read-only). */
  complete(event: number): readonly number[] {
    if (this.isWritten(event)) throw new Error(`event ${event} completed twice`);
    const slot = event & this.mask;
    const plan = this.plans[slot];
    if (!plan || plan.event !== event) throw new Error(`event ${event} completed before it was planned`);
    this.plans[slot] = undefined;
    this.plannedCount--;
    this.plannedReads -= plan.readVersions.length;
    this.finishedFlag[slot] = 1;
    this.finishedCount++;
    let w = this.waitHead[slot];
    this.waitHead[slot] = -1;
    while (w >= 0) {
      const ws = w & this.mask;
      const next = this.waitNext[ws];
      this.advance(this.plans[ws]!, this.cursor[ws] + 1);
      w = next;
    }
    // Its continuation runs now: an event waiting on it whose last other unwritten read was this one follows
    // it (a chain's next event waits on the continuation while this one was still in flight).
    if (this.follow?.hasChild[slot]) this.offerWaiters(this.follow.child[slot]);
    let released: number[] | undefined;
    const total = this.schedule.total;
    // Past the last planned event a slot's flag is an older event's: stop there.
    const planned = Math.min(total, this.schedule.position);
    while (this.oldestUnfinished < planned && this.finishedFlag[this.oldestUnfinished & this.mask]) {
      // Every event up to this one has finished: the version it superseded has no reader left.
      const dead = this.supersedes[this.oldestUnfinished & this.mask];
      if (dead >= 0) (released ??= []).push(dead);
      this.oldestUnfinished++;
      const n = this.syncN;
      if (n > 0 && this.oldestUnfinished % n === 0 && this.oldestUnfinished >= 2 * n) {
        // Sweep t ended: its reads are done, so the snapshot of sweep t - 1 has no reader left.
        released ??= [];
        for (let v = this.oldestUnfinished - 2 * n; v < this.oldestUnfinished - n; v++) released.push(v);
      }
    }
    this.refill(STEP);
    if (this.finishedCount === this.end && this.schedule.slots === this.schedule.total && this.syncN === 0) {
      // A slot per event (a team schedule) supersedes nothing: once the run has finished, every version is dead.
      return Array.from({ length: this.end }, (_, v) => v);
    }
    return released ?? NONE;
  }

  /**
   * Waits on the first unwritten read from index `from` on, or makes the event ready. Written versions stay
   * written, so each read is checked once over the event's life: O(k) per event, however dense the graph.
   */
  private advance(plan: EventPlan, from: number): void {
    const reads = plan.readVersions;
    let i = from;
    while (i < reads.length && this.isWritten(reads[i])) i++;
    const slot = plan.event & this.mask;
    if (i === reads.length) {
      // A continuation was handed out already: it is in flight, not ready.
      if (!this.follow?.taken[slot]) this.ready.push(plan);
      return;
    }
    this.cursor[slot] = i;
    this.waitNext[slot] = -1;
    // An unwritten read is a planned event, so its slot is its own.
    const on = reads[i] & this.mask;
    if (this.waitHead[on] < 0) this.waitHead[on] = plan.event;
    else this.waitNext[this.waitTail[on] & this.mask] = plan.event;
    this.waitTail[on] = plan.event;
    if (this.follow) this.offer(plan, i, reads[i]);
  }

  /** Whether version `v` is written: older than every unfinished event, or a planned event that finished. */
  private isWritten(v: number): boolean {
    return v < this.oldestUnfinished || this.finishedFlag[v & this.mask] === 1;
  }

  /** The plan of `event` while it is planned and unfinished (a finished event's slot is cleared or reused). */
  private readonly unfinished = (event: number): EventPlan | undefined => {
    const plan = this.plans[event & this.mask];
    return plan !== undefined && plan.event === event ? plan : undefined;
  };

  private limit(): number {
    return Math.min(Math.min(this.oldestUnfinished, this.floor) + this.window, this.gate, this.end);
  }

  /** Plans up to `max` events, in schedule order, within the window. */
  private refill(max: number): void {
    const limit = Math.min(this.limit(), this.schedule.position + max);
    while (this.schedule.position < limit && (this.plannedReads < MAX_PLANNED_READS || this.plannedCount === 0)) {
      const plan = this.schedule.next();
      if (!plan) break;
      const slot = plan.event & this.mask;
      const key = plan.slot ?? plan.agent;
      const previous = this.latest[key];
      this.latest[key] = plan.event;
      // A version read at resume (below startEvent) is released like any other once superseded.
      this.supersedes[slot] = this.syncN > 0 ? -1 : previous;
      this.finishedFlag[slot] = 0;
      if (this.follow) this.follow.dispatched[slot] = this.follow.taken[slot] = this.follow.hasChild[slot] = 0;
      this.plans[slot] = plan;
      this.plannedCount++;
      this.plannedReads += plan.readVersions.length;
      this.ready.planned(plan, this.unfinished);
      this.advance(plan, 0);
    }
  }
}
