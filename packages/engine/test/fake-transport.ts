import { setImmediate as nextTurn } from 'node:timers/promises';
import { runEvents, type ControlState } from '@panta/core';
import type { BoundaryOutcome, BoundaryTask, EventOutcome, EventTask, RunSink, Task, Transport, TransportMessage } from '../src/index.js';

/** What a fake call answers for an event: usage the progress counters can be checked against. */
export function outcomeOf(task: EventTask, usage: Partial<EventOutcome> = {}): EventOutcome {
  return {
    runId: task.run.runId,
    event: task.plan.event,
    response: `answer ${task.plan.event}`,
    finishReason: 'stop',
    promptTokens: 10,
    completionTokens: 5,
    latencyMs: 1,
    calls: 1,
    embeddings: {},
    createdAt: 0,
    ...usage,
  };
}

/** A boundary's decision: carry on (or stop, or moderate the next sweep). */
export function stateOf(sweep: number, decision: { stop?: boolean; moderator?: string } = {}): ControlState {
  return {
    history: Array.from({ length: sweep + 1 }, () => ({ m: 0.5, rho: null })),
    mean0: [],
    stop: decision.stop ?? false,
    ...(decision.moderator ? { moderator: decision.moderator } : {}),
  };
}

/**
 * A transport the test answers by hand (or on the next turn, with `auto`), recording what the executor asks
 * of it. It checks what every transport may rely on: an event is dispatched only once the versions it reads
 * are published and not forgotten.
 */
export class FakeTransport implements Transport {
  readonly dispatched: Task[] = [];
  readonly published = new Map<string, Set<number>>();
  /** Reads of a dispatched event that were not published (or already forgotten) at dispatch: must stay empty. */
  readonly unpublishedReads: string[] = [];
  /** The most tasks unanswered at once. */
  peakPending = 0;
  started = false;
  closed = false;
  startError?: Error;
  /** start() resolves only once this does (a transport that takes a while to connect). */
  startGate?: Promise<void>;
  /** Thrown by dispatch(), once armed. */
  dispatchError?: Error;
  /** When set, every event is answered on the next turn of the event loop, with this usage. */
  auto?: {
    usage?: (task: EventTask) => Partial<EventOutcome>;
    failing?: (task: EventTask) => Error | undefined;
    /** Boundaries too are answered on the next turn, with this decision; else the test decides them. */
    decide?: (task: BoundaryTask) => ControlState;
  };
  private readonly open = new Set<Task>();
  private onMessage?: (message: TransportMessage) => void;

  async start(onMessage: (message: TransportMessage) => void): Promise<void> {
    if (this.startError) throw this.startError;
    await this.startGate;
    this.started = true;
    this.onMessage = onMessage;
  }

  dispatch(task: Task): void {
    if (this.dispatchError) throw this.dispatchError;
    this.dispatched.push(task);
    this.open.add(task);
    this.peakPending = Math.max(this.peakPending, this.open.size);
    if (task.kind === 'boundary') {
      const decide = this.auto?.decide;
      if (decide) setImmediate(() => this.decide(task, decide(task)));
      return;
    }
    const held = this.published.get(task.run.runId);
    for (const v of task.plan.readVersions)
      if (!held?.has(v)) this.unpublishedReads.push(`${task.run.runId}: event ${task.plan.event} reads ${v}`);
    const auto = this.auto;
    if (auto) {
      setImmediate(() => {
        const error = auto.failing?.(task);
        if (error) this.fail(task, error);
        else this.answer(task, auto.usage?.(task));
      });
    }
  }

  publish(runId: string, version: number): void {
    let held = this.published.get(runId);
    if (!held) this.published.set(runId, (held = new Set()));
    held.add(version);
  }

  forget(runId: string, versions: readonly number[]): void {
    const held = this.published.get(runId);
    for (const v of versions) held?.delete(v);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Tasks dispatched and not yet answered, oldest first. */
  get pending(): Task[] {
    return [...this.open];
  }

  events(runId?: string): EventTask[] {
    return this.dispatched.filter((t): t is EventTask => t.kind !== 'boundary' && (runId === undefined || t.run.runId === runId));
  }

  boundaries(runId?: string): BoundaryTask[] {
    return this.dispatched.filter((t): t is BoundaryTask => t.kind === 'boundary' && (runId === undefined || t.run.runId === runId));
  }

  answer(task: EventTask, usage: Partial<EventOutcome> = {}): void {
    this.settle(task);
    this.onMessage!({ type: 'outcome', task, outcome: outcomeOf(task, usage) });
  }

  /** Answers every event task pending now (not boundaries). */
  answerPending(): void {
    for (const t of this.pending) if (t.kind !== 'boundary') this.answer(t);
  }

  decide(task: BoundaryTask, state: ControlState): void {
    this.settle(task);
    const outcome: BoundaryOutcome = { runId: task.run.runId, sweep: task.sweep, state, calls: [] };
    this.onMessage!({ type: 'boundary', task, outcome });
  }

  fail(task: Task, error: Error): void {
    this.settle(task);
    this.onMessage!({ type: 'failed', task, error });
  }

  /** The transport itself breaks (its store is gone). */
  fatal(error: Error): void {
    this.onMessage!({ type: 'fatal', error });
  }

  /** A message the executor never asked for: an outcome of a run it does not hold. */
  stray(task: EventTask): void {
    this.onMessage!({ type: 'outcome', task, outcome: outcomeOf(task) });
  }

  private settle(task: Task): void {
    if (!this.open.delete(task))
      throw new Error(
        `the test answered a task that is not pending: ${task.run.runId} ${task.kind === 'boundary' ? `boundary ${task.sweep}` : task.plan.event}`,
      );
  }
}

/**
 * A run's sink: rows appended in event order. `batch` > 1 holds rows back until that many wait or the run's
 * last has come (their write then resolves), so that executed runs ahead of written; `holdBoundaries` keeps each boundary's journal
 * pending until the test releases it.
 */
export class FakeSink implements RunSink {
  readonly rows: number[] = [];
  readonly journal: { sweep: number; state: ControlState }[] = [];
  private next: number;
  private readonly waiting = new Map<number, EventTask>();
  private accepted = 0;
  private held: { resolve: () => void; promise: Promise<void> } | undefined;
  private readonly heldBoundaries: (() => void)[] = [];
  /** Makes the next accept() reject (a write that failed). */
  writeError?: Error;
  acceptBoundary?: (task: BoundaryTask, outcome: BoundaryOutcome) => Promise<void>;
  /** With holdRows: writes what it holds (a sink that appends in batches), and counts the calls. */
  rowsWanted?: () => void;
  rowsAsked = 0;

  constructor(
    startEvent: number,
    private readonly onWritten: (count: number) => void,
    private readonly options: {
      batch?: number;
      boundaries?: boolean;
      holdBoundaries?: boolean;
      /** Writes no row until rowsWanted() (a collector whose reads are paced). */
      holdRows?: boolean;
      control?: { sweep: number; state?: ControlState };
    } = {},
  ) {
    this.next = startEvent;
    if (options.holdRows) {
      this.rowsWanted = () => {
        this.rowsAsked++;
        this.writeInOrder();
        const held = this.held;
        this.held = undefined;
        held?.resolve();
      };
    }
    if (options.boundaries || options.control) {
      this.acceptBoundary = (task, outcome) => {
        const record = () => this.journal.push({ sweep: task.sweep, state: outcome.state });
        if (!this.options.holdBoundaries) {
          record();
          return Promise.resolve();
        }
        return new Promise<void>((resolve) =>
          this.heldBoundaries.push(() => {
            record();
            resolve();
          }),
        );
      };
    }
  }

  get control(): { sweep: number; state?: ControlState } | undefined {
    return this.options.control;
  }

  get written(): number {
    return this.next;
  }

  get backlog(): number {
    return this.waiting.size;
  }

  /** Boundaries waiting to be journalled. */
  get boundariesHeld(): number {
    return this.heldBoundaries.length;
  }

  releaseBoundary(): void {
    this.heldBoundaries.shift()!();
  }

  accept(task: EventTask): Promise<void> | undefined {
    if (this.writeError) return Promise.reject(this.writeError);
    this.waiting.set(task.plan.event, task);
    this.accepted++;
    if (this.options.holdRows) {
      this.held ??= withResolvers();
      return this.held.promise;
    }
    const batch = this.options.batch ?? 1;
    if (batch > 1 && this.waiting.size < batch && this.accepted < runEvents(task.run)) {
      this.held ??= withResolvers();
      return this.held.promise;
    }
    this.writeInOrder();
    const held = this.held;
    this.held = undefined;
    held?.resolve();
    return undefined;
  }

  private writeInOrder(): void {
    let count = 0;
    while (this.waiting.has(this.next)) {
      this.waiting.delete(this.next);
      this.rows.push(this.next++);
      count++;
    }
    if (count > 0) this.onWritten(count);
  }
}

function withResolvers(): { resolve: () => void; promise: Promise<void> } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { resolve, promise };
}

/**
 * Turns the event loop until `done()` holds (the executor and the fakes only ever wait on the event loop, so
 * this is a count of turns, not of time), or fails naming what never happened.
 */
export async function until(done: () => boolean, what: string, turns = 10_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (done()) return;
    await nextTurn();
  }
  throw new Error(`never happened: ${what}`);
}

/** A few turns of the event loop: whatever the executor does on its own in answer to the last step is done. */
export async function quiesce(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await nextTurn();
}
