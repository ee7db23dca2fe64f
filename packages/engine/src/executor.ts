import type { DataflowPlanner, RunPlan } from '@panta/core';
import type { RunCollector } from './collector.js';
import type { EventTask, Transport, TransportMessage } from './task.js';

/** A run being executed: its planner, its collector, and what it has in flight. */
export interface ActiveRun {
  run: RunPlan;
  planner: DataflowPlanner;
  collector: RunCollector;
  inflight: number;
  startedAt: number;
  error?: Error;
  /** Set when the sweep was stopped before this run finished: its written events stay for a resume. */
  stopped?: boolean;
}

export interface ExecutorProgress {
  eventsWritten: number;
  /** Calls in flight (events dispatched and not yet answered). */
  inflight: number;
  /** LLM calls made (retries included) and tokens used (prompt + completion) in this session. */
  calls: number;
  tokens: number;
  runsActive: number;
  runsFinished: number;
}

export interface ExecutorOptions {
  transport: Transport;
  /** Events in flight at once, over all runs. */
  concurrency: number;
  /** Most runs open at once (each holds a planner window and a shard buffer). */
  maxActiveRuns: number;
  /** Opens a run for execution, or returns null when its shard is already complete. */
  open(run: RunPlan): Promise<ActiveRun | null>;
  /** Called once a run has every event written (ok) or has failed (error set). */
  close(active: ActiveRun): Promise<void>;
  onProgress?(progress: ExecutorProgress): void;
  /** Events of all runs: the moment the last is written is reported at once, not at the next 100 ms tick. */
  eventsTotal?: number;
}

/**
 * The one executor (DESIGN.md 2.4, 6): it keeps up to `concurrency` events in flight over many runs,
 * dispatching only events whose read versions exist, round-robin over runs so that every run advances.
 * Dynamics live in the planner, transport details in the transport: embedded and distributed mode differ
 * only in the Transport they pass.
 */
export class Executor {
  private readonly queue: RunPlan[];
  private readonly active: ActiveRun[] = [];
  private readonly byId = new Map<string, ActiveRun>();
  private cursor = 0;
  private inflight = 0;
  private opening = 0;
  private closing = 0;
  private eventsWritten = 0;
  private runsFinished = 0;
  private fatal?: Error;
  private reported = 0;
  private stopping = false;
  private calls = 0;
  private tokens = 0;
  private settle!: { resolve: () => void; reject: (e: Error) => void };

  constructor(
    runs: readonly RunPlan[],
    private readonly options: ExecutorOptions,
  ) {
    this.queue = [...runs];
  }

  /** Counts rows the collectors wrote (for progress). */
  written(count: number): void {
    this.eventsWritten += count;
    // Execution has ended: say so now (a benchmark times it), not up to 100 ms later.
    if (this.eventsWritten === this.options.eventsTotal) this.reported = Number.NEGATIVE_INFINITY;
  }

  async run(): Promise<void> {
    await this.options.transport.start((m) => this.onMessage(m));
    await new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
      this.pump();
    });
  }

  /**
   * Stops gracefully: no new event is dispatched and no run opened; calls in flight are answered and written,
   * every open run's rows are made durable, and run() resolves. A later sweep resumes from there.
   */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.pump();
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
    const active = this.byId.get(message.task.run.runId);
    if (!active) return this.fail(new Error(`outcome for unknown run ${message.task.run.runId}`));
    this.inflight--;
    active.inflight--;
    if (message.type === 'failed') {
      active.error ??= message.error;
    } else {
      const { task, outcome } = message;
      this.calls += outcome.calls;
      this.tokens += outcome.promptTokens + outcome.completionTokens;
      this.options.transport.publish(active.run.runId, task.plan.event, outcome.response);
      const dead = active.planner.complete(task.plan.event);
      if (dead.length > 0) this.options.transport.forget(active.run.runId, dead);
      active.collector.accept(task, outcome).then(
        () => {
          // Rows written free room in the planner's window (which bounds unwritten results too).
          active.planner.consumed(active.collector.written);
          this.pump();
        },
        (e: unknown) => this.fail(e instanceof Error ? e : new Error(String(e))),
      );
    }
    this.pump();
  }

  private nextReady(): ActiveRun | undefined {
    for (let i = 0; i < this.active.length; i++) {
      const a = this.active[(this.cursor + i) % this.active.length]!;
      if (a.error || a.planner.readyCount === 0) continue;
      this.cursor = (this.cursor + i + 1) % this.active.length;
      return a;
    }
    return undefined;
  }

  private pump(): void {
    if (this.fatal) return;
    const { concurrency, transport } = this.options;
    while (!this.stopping && this.inflight < concurrency) {
      const a = this.nextReady();
      if (!a) break;
      const [plan] = a.planner.take(1);
      this.inflight++;
      a.inflight++;
      const task: EventTask = { run: a.run, plan: plan! };
      try {
        transport.dispatch(task);
      } catch (e) {
        return this.fail(e as Error);
      }
    }
    for (const a of [...this.active]) {
      if (a.inflight > 0) continue;
      if (a.error || (a.planner.done && a.collector.backlog === 0)) this.retire(a);
      else if (this.stopping) {
        a.stopped = true;
        this.retire(a);
      }
    }
    const starving = this.inflight + this.readyTotal() < concurrency;
    if (!this.stopping && starving && this.queue.length > 0 && this.opening === 0 && this.active.length < this.options.maxActiveRuns) {
      this.openNext();
    }
    const finished = (this.queue.length === 0 || this.stopping) && this.active.length === 0 && this.opening === 0 && this.closing === 0;
    // pump() runs once per event: report progress a few times a second, not every time.
    const now = performance.now();
    if (this.options.onProgress && (finished || now - this.reported >= 100)) {
      this.reported = now;
      this.options.onProgress({
        eventsWritten: this.eventsWritten,
        inflight: this.inflight,
        calls: this.calls,
        tokens: this.tokens,
        runsActive: this.active.length,
        runsFinished: this.runsFinished,
      });
    }
    if (finished) this.settle.resolve();
  }

  private readyTotal(): number {
    let n = 0;
    for (const a of this.active) if (!a.error) n += a.planner.readyCount;
    return n;
  }

  private openNext(): void {
    const run = this.queue.shift()!;
    this.opening++;
    this.options.open(run).then(
      (active) => {
        this.opening--;
        if (active) {
          this.active.push(active);
          this.byId.set(run.runId, active);
        } else this.runsFinished++;
        this.pump();
      },
      (e: unknown) => this.fail(e instanceof Error ? e : new Error(String(e))),
    );
  }

  private retire(a: ActiveRun): void {
    this.active.splice(this.active.indexOf(a), 1);
    this.closing++;
    this.options.close(a).then(
      () => {
        this.byId.delete(a.run.runId);
        this.closing--;
        if (!a.stopped) this.runsFinished++;
        this.pump();
      },
      (e: unknown) => this.fail(e instanceof Error ? e : new Error(String(e))),
    );
  }
}
