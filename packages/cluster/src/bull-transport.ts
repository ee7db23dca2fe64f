import type { Queue } from 'bullmq';
import { toError } from '@panta/core';
import type { Redis } from 'ioredis';
import type { BoundaryTask, EventOutcome, EventTask, Task, Transport, TransportMessage } from '@panta/engine';
import { jobIdOf } from './keys.js';
import { jobOf, type BatchJob } from './result-codec.js';
import { boundaryOutcomeOf, type BoundaryFailed, type BoundaryJournalled, type EventDone, type EventFailed } from './redis/inbox.js';
import { sendToCollector } from './redis/inboxes.js';
import type { SweepStore } from './redis/sweep-store.js';

/** The scheduler-inbox messages that answer a dispatched task. */
export type TaskAnswer = EventDone | EventFailed | BoundaryFailed | BoundaryJournalled;

interface Inflight {
  task: Task;
  since: number;
  jobId?: string;
}

/** Most events per job. */
const MAX_BATCH = 8;
/**
 * Jobs a flush makes at least, when it can. A worker's BullMQ concurrency counts jobs, not events, so fewer,
 * fuller jobs let one worker take more events than it has slots while another idles (one job per live worker
 * did: a sweep's first flush went whole to one worker). Fuller jobs need workers that take a job only while
 * they have free slots for its events.
 */
const MIN_JOBS = 8;

/**
 * The executor's second transport: events become BullMQ jobs (batches added in bulk once per tick), workers commit
 * results to Redis with an at-most-once Lua step, and the commit's message in the scheduler's inbox comes
 * back here as the outcome. An event already committed (by an earlier scheduler's job) is not sent again;
 * a job lost for any reason is added again by the watchdog. Version texts are written by the workers'
 * commits, so `publish` has nothing to do; `forget` deletes texts no later event reads.
 */
export class BullTransport implements Transport {
  private onMessage: (m: TransportMessage) => void = () => {};
  private readonly inflight = new Map<string, Inflight>();
  private pending: EventTask[] = [];
  private pendingBoundaries: BoundaryTask[] = [];
  private forgetting = new Map<string, number[]>();
  /** The flush queued for the end of this turn (close() runs it at once instead). */
  private scheduled?: NodeJS.Immediate;
  private chain: Promise<void> = Promise.resolve();
  private watchdog?: NodeJS.Timeout;
  private closed = false;
  /** Events added again because their job was gone (a failed job, a lost queue). */
  requeued = 0;
  /** Event jobs added and the events they carried (bench/cluster prints their ratio: the batch size). */
  readonly sent = { jobs: 0, events: 0 };
  private readonly incarnation = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  private jobs = 0;

  constructor(
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly sweepId: string,
    private readonly store: SweepStore,
    private readonly watchMs: number,
  ) {}

  async start(onMessage: (message: TransportMessage) => void): Promise<void> {
    this.onMessage = onMessage;
    this.watchdog = setInterval(() => {
      this.chain = this.chain.then(() => this.watch()).catch((e) => this.fail(e));
    }, this.watchMs);
    this.watchdog.unref();
  }

  dispatch(task: Task): void {
    this.inflight.set(this.keyOf(task), { task, since: Date.now() });
    if (task.kind === 'boundary') this.pendingBoundaries.push(task);
    else this.pending.push(task);
    this.schedule();
  }

  publish(): void {}

  forget(runId: string, versions: readonly number[]): void {
    const list = this.forgetting.get(runId);
    if (list) list.push(...versions);
    else this.forgetting.set(runId, [...versions]);
    this.schedule();
  }

  /** Events in flight per run (for `panta status`). */
  inflightByRun(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { task } of this.inflight.values()) counts.set(task.run.runId, (counts.get(task.run.runId) ?? 0) + 1);
    return counts;
  }

  /**
   * Commits and failures from the workers, and boundaries once the collector has journalled them (via the
   * scheduler's inbox).
   */
  deliver(m: TaskAnswer): void {
    const key = m.op === 'boundary' || m.op === 'boundaryFailed' ? this.boundaryKey(m.run, m.sweep) : this.key(m.run, m.event);
    const item = this.inflight.get(key);
    if (!item) return; // a duplicate, or a task this scheduler has not dispatched yet (checked on dispatch)
    this.inflight.delete(key);
    const { task } = item;
    if (m.op === 'failed' || m.op === 'boundaryFailed') this.onMessage({ type: 'failed', task, error: new Error(m.error) });
    else if (m.op === 'boundary') {
      if (task.kind === 'boundary') this.onMessage({ type: 'boundary', task, outcome: boundaryOutcomeOf(m) });
    } else if (task.kind !== 'boundary') this.onMessage({ type: 'outcome', task, outcome: this.outcome(task, m.calls, m.tokens) });
  }

  /** An event found committed (by a job of an earlier scheduler, or whose message was trimmed): its usage was counted then. */
  private deliverCommitted(task: EventTask): void {
    this.deliver({ op: 'done', run: task.run.runId, event: task.plan.event, calls: 0, tokens: 0 });
  }

  /**
   * Returns once the work asked of the transport before is done: a dispatch or forget of this same turn
   * waits for its flush (scheduled for the turn's end), which runs now instead, since the scheduler quits
   * Redis right after.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
      this.chain = this.chain.then(() => this.flush());
    }
    await this.chain.catch(() => undefined);
  }

  private key(runId: string, event: number): string {
    return `${runId}|${event}`;
  }

  private boundaryKey(runId: string, sweep: number): string {
    return `${runId}|b${sweep}`;
  }

  private keyOf(task: Task): string {
    return task.kind === 'boundary' ? this.boundaryKey(task.run.runId, task.sweep) : this.key(task.run.runId, task.plan.event);
  }

  /**
   * A boundary a worker already committed (for an earlier scheduler, or before a restart): the collector
   * journals it if it has not yet, and answers with it either way.
   */
  private confirmBoundary(task: BoundaryTask): Promise<void> {
    return sendToCollector(this.redis, this.store.keys, { op: 'boundary', run: task.run.runId, sweep: task.sweep });
  }

  private boundaryJob(task: BoundaryTask): { name: string; data: BatchJob; opts: { jobId: string } } {
    const jobId = jobIdOf(this.incarnation, this.jobs++, task.run.runId, -1 - task.sweep);
    const item = this.inflight.get(this.keyOf(task));
    if (item) item.jobId = jobId;
    const boundary = {
      run: task.run.runId,
      sweepIndex: task.sweep,
      versions: Array.from(task.versions),
      ...(task.state ? { state: task.state } : {}),
    };
    return { name: 'boundary', data: { sweep: this.sweepId, events: [], boundary }, opts: { jobId } };
  }

  /** Sends boundaries: committed ones are confirmed through the collector, the others become jobs. */
  private async sendBoundaries(tasks: readonly BoundaryTask[]): Promise<void> {
    const jobs = [];
    for (const t of tasks) {
      if (await this.store.hasBoundary(t.run.runId, t.sweep)) await this.confirmBoundary(t);
      else jobs.push(this.boundaryJob(t));
    }
    if (jobs.length > 0) await this.queue.addBulk(jobs);
  }

  /** The scheduler needs no answer text (workers read versions from Redis): counts for progress only. */
  private outcome(task: EventTask, calls: number, tokens: number): EventOutcome {
    return {
      runId: task.run.runId,
      event: task.plan.event,
      response: '',
      finishReason: '',
      promptTokens: 0,
      completionTokens: tokens,
      latencyMs: 0,
      calls,
      embeddings: {},
      createdAt: 0,
    };
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.chain = this.chain.then(() => this.flush()).catch((e) => this.fail(e));
    });
  }

  fail(e: unknown): void {
    if (this.closed) return;
    this.onMessage({ type: 'fatal', error: toError(e) });
  }

  private async flush(): Promise<void> {
    const tasks = this.pending;
    this.pending = [];
    const boundaries = this.pendingBoundaries;
    this.pendingBoundaries = [];
    if (boundaries.length > 0) await this.sendBoundaries(boundaries);
    const forgetting = this.forgetting;
    this.forgetting = new Map();
    if (tasks.length > 0) {
      const committed = await this.store.committed(tasks.map((t) => ({ runId: t.run.runId, event: t.plan.event })));
      const fresh: EventTask[] = [];
      tasks.forEach((t, i) => {
        if (committed[i]) this.deliverCommitted(t);
        else fresh.push(t);
      });
      if (fresh.length > 0) await this.queue.addBulk(this.batches(fresh));
    }
    await this.store.forgetVersions(forgetting);
  }

  /** Groups events into jobs; a job's id names its first event (ids must be unique while jobs exist). */
  private batches(tasks: readonly EventTask[]): { name: string; data: BatchJob; opts: { jobId: string } }[] {
    const size = Math.min(MAX_BATCH, Math.max(1, Math.ceil(tasks.length / MIN_JOBS)));
    const jobs = [];
    for (let start = 0; start < tasks.length; start += size) {
      const group = tasks.slice(start, start + size);
      const jobId = jobIdOf(this.incarnation, this.jobs++, group[0]!.run.runId, group[0]!.plan.event);
      for (const t of group) {
        const item = this.inflight.get(this.key(t.run.runId, t.plan.event));
        if (item) item.jobId = jobId;
      }
      jobs.push({
        name: 'events',
        data: { sweep: this.sweepId, events: group.map((t) => jobOf(t.run.runId, t.plan, t.moderator)) },
        opts: { jobId },
      });
      this.sent.jobs++;
      this.sent.events += group.length;
    }
    return jobs;
  }

  /** Finds events in flight for long whose job is gone: committed ones are delivered, the others sent again. */
  private async watch(): Promise<void> {
    const now = Date.now();
    const old = [...this.inflight.values()].filter((i) => now - i.since > this.watchMs);
    const jobs = new Map<string, boolean>();
    const lost: EventTask[] = [];
    const lostBoundaries: BoundaryTask[] = [];
    for (const item of old) {
      if (this.closed) return;
      const { task } = item;
      if (item.jobId !== undefined && !jobs.has(item.jobId)) {
        const job = await this.queue.getJob(item.jobId);
        const alive = job !== undefined && !(await job.isFailed());
        if (job && !alive) await job.remove().catch(() => undefined);
        jobs.set(item.jobId, alive);
      }
      if (item.jobId !== undefined && jobs.get(item.jobId)) continue;
      item.since = now;
      if (task.kind === 'boundary') {
        lostBoundaries.push(task);
        continue;
      }
      if ((await this.store.committed([{ runId: task.run.runId, event: task.plan.event }]))[0]) {
        this.deliverCommitted(task);
        continue;
      }
      lost.push(task);
    }
    if (this.closed) return;
    // A boundary whose job is gone: committed (the collector's answer may still be on its way) or sent again.
    if (lostBoundaries.length > 0) await this.sendBoundaries(lostBoundaries);
    if (lost.length === 0) return;
    this.requeued += lost.length;
    await this.queue.addBulk(this.batches(lost));
  }
}
