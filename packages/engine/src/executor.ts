import { boundaryGate, hasBoundaries, runEvents, toError, type ControlState, type DataflowPlanner, type RunPlan } from '@panta/core';
import { parallelism } from './run-order.js';
import type { BoundaryOutcome, BoundaryTask, EventOutcome, EventTask, Transport, TransportMessage } from './task.js';

/** Events a run's planner plans per idle turn: short enough that a reply waiting behind it is not delayed. */
const IDLE_PLAN_STEP = 512;
/**
 * Runs being opened at once. Opening reads the run's progress on disk and opens its shard writer: a few
 * milliseconds, a hundred on a loaded machine, so one at a time 256 chains (a run per slot) took longer to
 * open than a chain of 64 events at 250 ms a call took to run (bench/chains.mjs: at most 101 open).
 */
const OPENING_AT_ONCE = 16;

/** Dispatches between two orderings of the open runs by depth left: a sort per event would cost more than it orders. */
const SORT_EVERY = 64;

/**
 * Where a run's outcomes go: the run's collector in this process (embedded), or a handle on the collector
 * process (distributed). `accept` resolves once the row is appended, or returns nothing when every row it
 * could append in order is appended already; `written` counts rows appended in order.
 */
export interface RunSink {
  accept(task: EventTask, outcome: EventOutcome): Promise<void> | undefined;
  readonly written: number;
  /** Outcomes accepted but not yet appended. */
  readonly backlog: number;
  /** Records a sweep boundary durably (runs with early stopping or drift-policy); resolves once recorded. */
  acceptBoundary?(task: BoundaryTask, outcome: BoundaryOutcome): Promise<void>;
  /** The last boundary already decided when the run was opened (a resume), and its state. */
  readonly control?: { sweep: number; state?: ControlState };
  /**
   * Called once when the run waits on nothing but its rows (every event answered, some rows not appended): a
   * sink that appends in batches (the collector process paces its reads) appends what it holds now.
   */
  rowsWanted?(): void;
}

/** A run being executed: its planner, its sink, and what it has in flight. */
export interface ActiveRun<S extends RunSink = RunSink> {
  run: RunPlan;
  planner: DataflowPlanner;
  sink: S;
  inflight: number;
  startedAt: number;
  error?: Error;
  /** Set when the sweep was stopped before this run finished: its written events stay for a resume. */
  stopped?: boolean;
  /** Sweep boundaries (early stopping, drift-policy): the last decided and whether one is running. */
  boundary?: { sweep: number; state?: ControlState; running: boolean };
  /** The sink was told the run waits only on its rows (RunSink.rowsWanted). */
  rowsAsked?: boolean;
}

export interface ExecutorProgress {
  /** Rows appended to the runs' shards, in order (durable once their part is flushed). */
  eventsWritten: number;
  /**
   * Events whose call was answered, or found on disk by a resume: ahead of eventsWritten while rows wait
   * for their turn, their verdict or a part to be encoded.
   */
  eventsExecuted: number;
  /** Calls in flight (events dispatched and not yet answered). */
  inflight: number;
  /** LLM calls made (retries included) and tokens used (prompt + completion) in this session. */
  calls: number;
  tokens: number;
  /** Of `tokens`, those the model generated (what a tokens-per-second figure means). */
  completionTokens: number;
  /** Calls beyond the first of each answered event (the backend's retries) in this session. */
  retries: number;
  runsActive: number;
  /** Runs closed (complete or failed) or found complete on disk. */
  runsFinished: number;
  /** Runs closed with an error in this session (they resume when the sweep runs again). */
  runsFailed: number;
  /** Events that runs stopped early (early stopping) will never run: progress counts to the total less these. */
  eventsSkipped: number;
}

/** One open run as progress reports show it. */
export interface OpenRunProgress {
  run: string;
  /** Rows written so far (durable or appended), of `total` = (sweeps + 1) N, or fewer once the run stopped early. */
  written: number;
  total: number;
  inflight: number;
}

export interface ExecutorOptions<S extends RunSink = RunSink> {
  transport: Transport;
  /** Events in flight at once, over all runs. */
  concurrency: number;
  /** Most runs open at once (each holds a planner window and a shard buffer). */
  maxActiveRuns: number;
  /**
   * Memory a run holds while open (its rows waiting to become parts), and the most the open runs may hold
   * together: a run is opened only when it fits, or when none is open. Unset: runs are counted, not weighed.
   */
  runBytes?(run: RunPlan): number;
  openBytesBudget?: number;
  /** Opens a run for execution, or returns null when its shard is already complete. */
  open(run: RunPlan): Promise<ActiveRun<S> | null>;
  /** Called once a run has every event written (ok) or has failed (error set). */
  close(active: ActiveRun<S>): Promise<void>;
  onProgress?(progress: ExecutorProgress): void;
  /** Events of all runs: the moment the last is written is reported at once, not at the next 100 ms tick. */
  eventsTotal?: number;
}

/**
 * The one executor (docs/DESIGN.md#exact-parallel-execution): it keeps up to `concurrency` events in flight over many runs,
 * dispatching only events whose read versions exist, the deepest runs' first (see nextReady).
 * Dynamics live in the planner, transport details in the transport: embedded and distributed mode differ
 * only in the Transport they pass.
 */
export class Executor<S extends RunSink = RunSink> {
  private readonly queue: RunPlan[];
  private readonly active: ActiveRun<S>[] = [];
  private readonly byId = new Map<string, ActiveRun<S>>();
  /** Events each open run has yet to dispatch, over its parallelism: its depth left (see nextReady). */
  private readonly depthLeft = new Map<ActiveRun<S>, { events: number; width: number }>();
  /** Dispatches since the open runs were last put in order of depth left. */
  private sinceSort = 0;
  /** Answers whose rows are written after the current turn (see onMessage). */
  private accepting: { active: ActiveRun<S>; task: EventTask; outcome: EventOutcome }[] = [];
  /** pump() calls, for reading the clock now and then. */
  private pumps = 0;
  /** An idle planning step is scheduled. */
  private planning = false;
  private inflight = 0;
  /**
   * Continuations dispatched whose parent is not answered yet, by `run|parent`: they count in the run's
   * inflight at once, in the executor's once their parent is answered (until then they hold no slot).
   */
  private readonly following = new Set<string>();
  private opening = 0;
  /** What the runs open or being opened hold (see runBytes). */
  private openBytes = 0;
  /**
   * openBytes when the last look found no queued run that fits: until it changes none can (the queue only
   * shrinks), so pump, which runs per event, does not look again.
   */
  private fullAt = -1;
  private closing = 0;
  private eventsWritten = 0;
  private eventsExecuted = 0;
  private runsFinished = 0;
  private runsFailed = 0;
  private retries = 0;
  private skipped = 0;
  private fatal?: Error;
  private reported = 0;
  private stopping = false;
  private calls = 0;
  private tokens = 0;
  private completionTokens = 0;
  private settle!: { resolve: () => void; reject: (e: Error) => void };
  private started = false;

  constructor(
    runs: readonly RunPlan[],
    private readonly options: ExecutorOptions<S>,
  ) {
    this.queue = [...runs];
  }

  /** Counts rows the collectors wrote (for progress). */
  written(count: number): void {
    this.eventsWritten += count;
    // Execution has ended: say so now (a benchmark times it), not up to 100 ms later.
    if (this.eventsWritten === (this.options.eventsTotal ?? 0) - this.skipped) this.reported = Number.NEGATIVE_INFINITY;
  }

  /** A run found complete on disk with `events` events (fewer than planned when it stopped early). */
  completeOnDisk(run: RunPlan, events: number): void {
    this.skipped += runEvents(run) - events;
    this.eventsExecuted += events;
    this.written(events);
  }

  async run(): Promise<void> {
    // The settling promise exists before the transport starts: stop() may come while it starts (a Ctrl-C
    // during a cluster's connection), and a fatal message may come before start() has resolved.
    const done = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    done.catch(() => undefined);
    await this.options.transport.start((m) => this.onMessage(m));
    this.started = true;
    this.pump();
    await done;
  }

  /**
   * Stops gracefully: no new event is dispatched and no run opened; calls in flight are answered and written,
   * every open run's rows are made durable, and run() resolves. A later sweep resumes from there.
   */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    // Before the transport has started, run() pumps once it has: nothing opens, and it resolves.
    if (this.started) this.pump();
  }

  /** The runs open now, in opening order: rows written and events in flight (for live progress). */
  openRuns(): OpenRunProgress[] {
    return this.active.map((a) => ({ run: a.run.runId, written: a.sink.written, total: a.planner.total, inflight: a.inflight }));
  }

  /** True when run() ended because stop() was called before every run finished. */
  get stopped(): boolean {
    return this.stopping;
  }

  private fail(error: Error): void {
    if (this.fatal) return;
    this.fatal = error;
    this.settle.reject(error);
  }

  private onMessage(message: TransportMessage): void {
    if (message.type === 'fatal') return this.fail(message.error);
    const active = this.byId.get(message.task.run.runId);
    if (!active) return this.fail(new Error(`outcome for unknown run ${message.task.run.runId}`));
    this.inflight--;
    // The continuation of this event (if any) holds a slot from now on.
    if (message.task.kind !== 'boundary' && this.following.delete(`${active.run.runId}|${message.task.plan.event}`)) this.inflight++;
    if (message.type === 'failed') {
      active.inflight--;
      active.error ??= message.error;
    } else if (message.type === 'boundary') {
      active.inflight--;
      this.onBoundary(active, message.task, message.outcome);
    } else {
      const { task, outcome } = message;
      this.eventsExecuted++;
      this.calls += outcome.calls;
      this.tokens += outcome.promptTokens + outcome.completionTokens;
      this.completionTokens += outcome.completionTokens;
      this.retries += Math.max(0, outcome.calls - 1);
      this.options.transport.publish(active.run.runId, task.plan.event, outcome.version ?? outcome.response);
      const dead = active.planner.complete(task.plan.event);
      if (dead.length > 0) this.options.transport.forget(active.run.runId, dead);
      // The events this answer unblocks go out first; its rows are judged and written after this turn of the
      // event loop (the run keeps counting it in flight until then, so it cannot close before). Replies
      // arrive in waves: a wave's dependents then go out before any of its rows is written, instead of each
      // waiting for the bookkeeping of every reply ahead of it (bench/NOTES.md: dependents before rows).
      this.accepting.push({ active, task, outcome });
      if (this.accepting.length === 1) setImmediate(this.acceptAll);
    }
    this.pump();
  }

  /** Hands the answers of the last turn to their runs' sinks, in arrival order. */
  private readonly acceptAll = (): void => {
    const batch = this.accepting;
    this.accepting = [];
    for (const { active, task, outcome } of batch) {
      active.inflight--;
      // Rows written free room in the planner's window (which bounds unwritten results too).
      const writing = active.sink.accept(task, outcome);
      if (!writing) active.planner.consumed(active.sink.written);
      else {
        writing.then(
          () => {
            active.planner.consumed(active.sink.written);
            this.pump();
          },
          (e: unknown) => this.fail(toError(e)),
        );
      }
    }
    this.pump();
  };

  private onBoundary(active: ActiveRun<S>, task: BoundaryTask, outcome: BoundaryOutcome): void {
    const boundary = active.boundary!;
    this.calls += outcome.calls.reduce((s, c) => s + c.calls, 0);
    this.tokens += outcome.calls.reduce((s, c) => s + c.promptTokens + c.completionTokens, 0);
    this.completionTokens += outcome.calls.reduce((s, c) => s + c.completionTokens, 0);
    active.inflight++; // held until the sink has journalled it
    this.inflight++;
    active.sink.acceptBoundary!(task, outcome).then(
      () => {
        active.inflight--;
        this.inflight--;
        boundary.running = false;
        boundary.sweep = task.sweep;
        boundary.state = outcome.state;
        this.moveGate(active);
        this.pump();
      },
      (e: unknown) => this.fail(toError(e)),
    );
  }

  /** Sets a run's gate after its last decided boundary: the next boundary, or the end when it stopped. */
  private moveGate(active: ActiveRun<S>): void {
    const { boundary, run, planner } = active;
    if (!boundary) return;
    const stop = boundary.state?.stop ?? false;
    planner.setGate(boundaryGate(run, boundary.sweep, stop));
    if (stop) {
      planner.endAtGate();
      this.skipped += runEvents(run) - planner.total;
    }
  }

  /** Adds a run the caller opened: its boundaries (if any) pick up where its sink's journal ends. */
  private admit(active: ActiveRun<S>): void {
    if (hasBoundaries(active.run.protocol, active.run.controls)) {
      if (!active.sink.acceptBoundary)
        throw new Error(`${active.run.runId}: its protocol needs sweep boundaries, which this sink does not record`);
      const control = active.sink.control ?? { sweep: -1 };
      active.boundary = { sweep: control.sweep, ...(control.state ? { state: control.state } : {}), running: false };
      this.moveGate(active);
    }
    // Rows its sink holds already (a resumed run) were executed by an earlier session.
    this.eventsExecuted += active.sink.written;
    // The window counts from the first unwritten row from the start: answers not yet handed to the sink are
    // bounded by it too. With an instant backend, answers, dispatches and their promises can chain in
    // microtasks without the event loop turning, so the rows' hand-over (setImmediate) would wait, and an
    // unbounded window let a ring of 10^6 hold millions of answers in memory.
    active.planner.consumed(active.sink.written);
    if (this.options.transport.continues) active.planner.followContinuations();
    this.active.push(active);
    this.depthLeft.set(active, { events: active.planner.total - active.sink.written, width: parallelism(active.run) });
    this.sinceSort = SORT_EVERY;
    this.byId.set(active.run.runId, active);
  }

  /**
   * Tops up the open runs' planning windows while calls are out (planners plan incrementally, see
   * DataflowPlanner): one step per turn of the event loop, so completions are never held up for long.
   */
  private schedulePlanning(): void {
    if (this.planning || this.fatal) return;
    let behind = false;
    for (const a of this.active) if (a.planner.behind && !a.error) behind = true;
    if (!behind) return;
    this.planning = true;
    setImmediate(() => {
      this.planning = false;
      if (this.fatal) return;
      for (const a of this.active) if (!a.error) a.planner.planAhead(IDLE_PLAN_STEP);
      this.pump();
    });
  }

  /**
   * The open run whose ready event goes next: the one with the most depth left (events yet to dispatch over
   * the events it can have in flight), as list scheduling by longest remaining path does. Shared round-robin,
   * a run of 500 events that could run 17 at once got one slot in 600 while slots were short, and such runs
   * were what was left at the end, running alone with most slots idle (bench/cluster-sim.mjs). The order
   * only decides which ready event runs first, never what an event reads, so results do not depend on it.
   */
  private nextReady(): ActiveRun<S> | undefined {
    if (++this.sinceSort >= SORT_EVERY) {
      this.sinceSort = 0;
      // Near its end a run's events left over its width understate what remains: its last events form
      // chains (each reads the one before), which its next ready event's rank counts (up to HORIZON).
      const keyed = this.active.map((a, i) => {
        const d = this.depthLeft.get(a)!;
        return { a, i, depth: Math.max(d.events / d.width, a.planner.readyRank) };
      });
      // Runs of equal depth keep their order (the order they opened in).
      keyed.sort((x, y) => y.depth - x.depth || x.i - y.i);
      keyed.forEach((k, i) => (this.active[i] = k.a));
    }
    for (const a of this.active) if (!a.error && a.planner.readyCount > 0) return a;
    return undefined;
  }

  /** Dispatches the continuations the open runs' planners found (see EventTask.after); false once it failed. */
  private dispatchContinuations(): boolean {
    const { transport } = this.options;
    for (const a of this.active) {
      if (a.error) continue;
      for (let c = a.planner.takeContinuation(); c; c = a.planner.takeContinuation()) {
        const left = this.depthLeft.get(a)!;
        const depth = Math.ceil(left.events / left.width);
        left.events--;
        a.inflight++;
        this.following.add(`${a.run.runId}|${c.after}`);
        const moderator = a.boundary?.state?.moderator;
        const task: EventTask = { run: a.run, plan: c.plan, ...(moderator ? { moderator } : {}), depth, after: c.after };
        try {
          transport.dispatch(task);
        } catch (e) {
          this.fail(e as Error);
          return false;
        }
      }
    }
    return true;
  }

  private pump(): void {
    if (this.fatal) return;
    const { concurrency, transport } = this.options;
    while (!this.stopping && this.inflight < concurrency) {
      const a = this.nextReady();
      if (!a) break;
      const readyRank = a.planner.readyRank;
      const plan = a.planner.takeOne()!;
      const left = this.depthLeft.get(a)!;
      // The chain behind this event: its run's events left over its width, or its bottom level (as nextReady).
      const depth = Math.max(Math.ceil(left.events / left.width), readyRank);
      left.events--;
      this.inflight++;
      a.inflight++;
      const moderator = a.boundary?.state?.moderator;
      const task: EventTask = moderator ? { run: a.run, plan, moderator, depth } : { run: a.run, plan, depth };
      try {
        transport.dispatch(task);
      } catch (e) {
        return this.fail(e as Error);
      }
    }
    if (!this.stopping && this.options.transport.continues && !this.dispatchContinuations()) return;
    if (!this.stopping) {
      for (const a of this.active) {
        if (!a.boundary || a.boundary.running || a.error || !a.planner.atGate) continue;
        a.boundary.running = true;
        this.inflight++;
        a.inflight++;
        const sweep = a.boundary.sweep + 1;
        const task: BoundaryTask = {
          kind: 'boundary',
          run: a.run,
          sweep,
          versions: a.planner.snapshotVersions(),
          ...(a.boundary.state ? { state: a.boundary.state } : {}),
        };
        try {
          transport.dispatch(task);
        } catch (e) {
          return this.fail(e as Error);
        }
      }
    }
    // Backwards: retire() removes the run from the list.
    for (let i = this.active.length - 1; i >= 0; i--) {
      const a = this.active[i];
      if (a.inflight > 0) continue;
      if (a.error || (a.planner.done && a.sink.backlog === 0)) this.retire(a);
      else if (a.planner.done && !this.stopping && !a.rowsAsked) {
        a.rowsAsked = true;
        a.sink.rowsWanted?.();
      } else if (this.stopping) {
        a.stopped = true;
        this.retire(a);
      }
    }
    this.schedulePlanning();
    if (!this.stopping && this.queue.length > 0) {
      // Runs open as long as they fit (maxActiveRuns, the byte budget), not only while the slots lack ready
      // events: a run opened once the slots ran short started its whole depth then, and the last runs opened
      // so ran on alone at the end with most slots idle (bench/cluster-sim.mjs; 112 rounds of calls where
      // 86 would do, against 91 now: packages/engine/test/chain-rounds.test.ts). With nextReady's depth
      // order, deep runs go first and shallow ones fill the slots they leave.
      while (this.queue.length > 0 && this.opening < OPENING_AT_ONCE && this.active.length + this.opening < this.options.maxActiveRuns) {
        const next = this.nextFitting();
        if (next < 0) break;
        this.openNext(next);
      }
    }
    const finished = (this.queue.length === 0 || this.stopping) && this.active.length === 0 && this.opening === 0 && this.closing === 0;
    // pump() runs once per event or more: report progress a few times a second, reading the clock only
    // every 32nd time (a clock read per pump was a visible share of it), and at once when execution ends.
    const check = finished || this.reported === Number.NEGATIVE_INFINITY || (++this.pumps & 31) === 0;
    if (this.options.onProgress && check && (finished || performance.now() - this.reported >= 100)) {
      this.reported = performance.now();
      this.options.onProgress(this.progress());
    }
    if (finished) this.settle.resolve();
  }

  /** Where execution stands now (what onProgress reports). */
  progress(): ExecutorProgress {
    return {
      eventsWritten: this.eventsWritten,
      eventsExecuted: this.eventsExecuted,
      inflight: this.inflight,
      calls: this.calls,
      tokens: this.tokens,
      completionTokens: this.completionTokens,
      retries: this.retries,
      runsActive: this.active.length,
      runsFinished: this.runsFinished,
      runsFailed: this.runsFailed,
      eventsSkipped: this.skipped,
    };
  }

  /** Whether `run` may open now: the open runs' memory leaves room for it, or none is open. */
  private fits(run: RunPlan): boolean {
    const { runBytes, openBytesBudget } = this.options;
    if (!runBytes || openBytesBudget === undefined || this.openBytes === 0) return true;
    return this.openBytes + runBytes(run) <= openBytesBudget;
  }

  /**
   * The first queued run that fits (see fits), or -1: a heavy run waits while lighter ones behind it open,
   * instead of holding up the whole queue (results do not depend on the order runs open in).
   */
  private nextFitting(): number {
    // Looking further than the runs that could open is pointless: a few hundred at most.
    if (this.openBytes === this.fullAt) return -1;
    const look = Math.min(this.queue.length, 256);
    for (let i = 0; i < look; i++) if (this.fits(this.queue[i])) return i;
    this.fullAt = this.openBytes;
    return -1;
  }

  private openNext(index: number): void {
    const run = this.queue.splice(index, 1)[0];
    const bytes = this.options.runBytes?.(run) ?? 0;
    this.opening++;
    this.openBytes += bytes;
    this.options.open(run).then(
      (active) => {
        this.opening--;
        try {
          if (active) this.admit(active);
          else {
            this.openBytes -= bytes;
            this.runsFinished++;
          }
        } catch (e) {
          return this.fail(e as Error);
        }
        this.pump();
      },
      (e: unknown) => this.fail(toError(e)),
    );
  }

  private retire(a: ActiveRun<S>): void {
    this.active.splice(this.active.indexOf(a), 1);
    this.depthLeft.delete(a);
    this.closing++;
    this.options.close(a).then(
      () => {
        this.byId.delete(a.run.runId);
        this.closing--;
        this.openBytes -= this.options.runBytes?.(a.run) ?? 0;
        if (!a.stopped) this.runsFinished++;
        if (a.error && !a.stopped) this.runsFailed++;
        this.pump();
      },
      (e: unknown) => this.fail(toError(e)),
    );
  }
}
