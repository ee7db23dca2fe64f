import type { Queue } from 'bullmq';
import { toError } from '@panta/core';
import type { Redis } from 'ioredis';
import type { BoundaryTask, EventOutcome, EventTask, Task, Transport, TransportMessage } from '@panta/engine';
import { collectorKeys, jobIdOf } from './keys.js';
import { chainWeight, jobOf, jobPriority, type BatchJob } from './result-codec.js';
import { boundaryOutcomeOf, type BoundaryFailed, type BoundaryJournalled, type EventFailed, type EventsDone } from './redis/inbox.js';
import { sendToCollector } from './redis/inboxes.js';
import { hopTraceFor } from './hop-trace.js';
import { jobsGone, offerContinuations, type PantaRedis } from './redis/scripts.js';
import type { SweepStore } from './redis/sweep-store.js';

/** The scheduler-inbox messages that answer a dispatched task. */
export type TaskAnswer = EventsDone | EventFailed | BoundaryFailed | BoundaryJournalled;

interface Inflight {
  task: Task;
  since: number;
  jobId?: string;
  /** Handed to Redis (a job added, or a committed boundary confirmed): the watchdog looks only at these. */
  sent?: boolean;
  /** A continuation (EventTask.after): the event it follows; left in Redis for its worker while jobId is unset. */
  parent?: number;
  /** Counted among the chains running (see BullTransport's chains). */
  link?: boolean;
}

/**
 * Most events per job: a job's fixed costs in Redis (add, take, finish: about 30 commands) shared by up to
 * 64. Jobs of half a worker's slots rather than a quarter cut the CPU per event of every role and Redis by
 * about a fifth (bench/cluster.mjs A, side by side: 813 / 768 -> 649 / 614 us; 12.6 -> 17.3 events a job).
 */
const MAX_BATCH = 64;
/**
 * Fewest events per job when a flush has more: a flush of a few events goes to one worker rather than one
 * job of one or two events to each (a worker runs a job's events at once, so this delays none of them).
 */
const MIN_BATCH = 16;
/**
 * How long dispatched events wait to be sent, unless a full job's worth is waiting: replies come back one
 * commit step at a time, each unblocking a few events, and sending each few as a job paid BullMQ's steps
 * for about two events. A dependent event leaves at most this much later than the reply it waited for.
 */
const FLUSH_MS = 2;
/**
 * Jobs a flush adds one by one rather than in bulk: BullMQ's addBulk builds an ioredis pipeline, which copies
 * every script BullMQ defines on the connection (64) onto it, about 65 us each time here, more than adding a
 * few jobs one by one (bench/NOTES.md: jobs added without a pipeline).
 */
const ONE_BY_ONE = 4;

interface EventJobToAdd {
  name: string;
  data: BatchJob;
  opts: { jobId: string; priority: number };
}

/** The chain's hop traced (PANTA_HOP_TRACE; see hop-trace.ts): the scheduler learns, dispatches, adds. */
const trace = hopTraceFor('scheduler');

/**
 * The executor's second transport: events become BullMQ jobs (batches added in bulk once per tick), workers commit
 * results to Redis with an at-most-once Lua step, and the commit's message in the scheduler's inbox comes
 * back here as the outcome. An event already committed (by an earlier scheduler's job) is not sent again;
 * a job lost for any reason is added again by the watchdog. Version texts are written by the workers'
 * commits, so `publish` has nothing to do; `forget` deletes texts no later event reads.
 */
export class BullTransport implements Transport {
  /** Continuations go to the worker that commits the event they follow (see offer-continuations-n). */
  readonly continues = true;
  private onMessage: (m: TransportMessage) => void = () => {};
  private readonly inflight = new Map<string, Inflight>();
  private pending: EventTask[] = [];
  /** Continuations to leave in Redis at the next flush (those that cannot be left go as jobs). */
  private pendingContinuations: EventTask[] = [];
  /** The continuation of each event in flight that has one: parent key -> child key. */
  private readonly children = new Map<string, string>();
  /** A continuation's answer that came before its parent's (a watchdog's find): delivered after it, by parent key. */
  private readonly early = new Map<string, EventsDone['items'][number]>();
  private pendingBoundaries: BoundaryTask[] = [];
  private forgetting = new Map<string, number[]>();
  /** The flush queued (close() runs it at once instead). */
  private scheduled?: { now: boolean; cancel(): void };
  private chain: Promise<void> = Promise.resolve();
  private watchdog?: NodeJS.Timeout;
  /** The watchdog's check under way (it runs beside the flushes, never on their chain). */
  private watching?: Promise<void>;
  private closed = false;
  /** Events added again because their job was gone (a failed job, a lost queue). */
  requeued = 0;
  /** Event jobs added and the events they carried (bench/cluster prints their ratio: the batch size). */
  readonly sent = { jobs: 0, events: 0 };
  private readonly incarnation = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  private jobs = 0;
  /** The live workers and their slots (the scheduler follows them): jobs are sized so that all get work. */
  private workers = { count: 1, slots: 64 };
  /**
   * The chains running now: a continuation whose parent is answered, or an event with a continuation offered
   * whose own parent (if any) is answered; one per chain, whatever runs ahead in it. Each weighs its events'
   * reads + 1 (chainWeight: about its prompt's size). A continuation carries the weight a worker would hold
   * were they spread evenly (EventJob.share): a worker holding more passes chains on, so that the long chains
   * of a mean field, which stay with the worker that took their first event, spread over every endpoint.
   */
  private readonly chains = { weight: 0 };

  constructor(
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly sweepId: string,
    private readonly store: SweepStore,
    private readonly watchMs: number,
    /** The collector shard of each run (collectorShards; empty: one collector). */
    private readonly shardOf: ReadonlyMap<string, number> = new Map(),
    /** The scheduler's lease token, carried by every job (BatchJob.lease); none: workers run the jobs whoever holds the lease. */
    private readonly lease?: string,
  ) {}

  async start(onMessage: (message: TransportMessage) => void): Promise<void> {
    this.onMessage = onMessage;
    // Started again by the executor of each adaptive round: one watchdog.
    if (this.watchdog) clearInterval(this.watchdog);
    // Off the dispatch chain: a check of many jobs never delays a flush (one check at a time).
    this.watchdog = setInterval(() => {
      if (this.watching || this.closed) return;
      this.watching = this.watch()
        .catch((e) => this.fail(e))
        .finally(() => (this.watching = undefined));
    }, this.watchMs);
    this.watchdog.unref();
  }

  dispatch(task: Task): void {
    const key = this.keyOf(task);
    this.inflight.set(key, { task, since: Date.now() });
    if (trace && task.kind !== 'boundary') trace.point('dispatched', task.run.runId, task.plan.event);
    if (task.kind === 'boundary') this.pendingBoundaries.push(task);
    else if (task.after !== undefined) {
      this.inflight.get(key)!.parent = task.after;
      const parent = this.key(task.run.runId, task.after);
      this.children.set(parent, key);
      this.recount(parent);
      this.pendingContinuations.push(task);
    } else this.pending.push(task);
    this.schedule();
  }

  publish(): void {}

  forget(runId: string, versions: readonly number[]): void {
    const list = this.forgetting.get(runId);
    if (list) list.push(...versions);
    else this.forgetting.set(runId, [...versions]);
    this.schedule();
  }

  /** The live workers: a flush is cut into jobs so that each can take some (see batches). */
  setWorkers(count: number, slots: number): void {
    if (count > 0 && slots > 0) this.workers = { count, slots };
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
    if (m.op === 'done') {
      for (const item of m.items) this.done(item);
      return;
    }
    const key = m.op === 'failed' ? this.key(m.run, m.event) : this.boundaryKey(m.run, m.sweep);
    const task = this.take(key);
    if (!task) return;
    if (m.op === 'failed' || m.op === 'boundaryFailed') {
      this.onMessage({ type: 'failed', task, error: new Error(m.error) });
      // Its continuation cannot run (nobody commits its parent now): it fails with it.
      const child = this.children.get(key);
      this.children.delete(key);
      const orphan = child === undefined ? undefined : this.take(child);
      if (orphan) this.onMessage({ type: 'failed', task: orphan, error: new Error(m.error) });
    } else if (task.kind === 'boundary') this.onMessage({ type: 'boundary', task, outcome: boundaryOutcomeOf(m) });
  }

  /** An event committed: its outcome, after its parent's when it is a continuation (the planner's order). */
  private done(item: EventsDone['items'][number]): void {
    const { run, event, calls, tokens } = item;
    trace?.point('learned', run, event);
    const key = this.key(run, event);
    const parent = this.inflight.get(key)?.parent;
    if (parent !== undefined && this.inflight.has(this.key(run, parent))) {
      this.early.set(this.key(run, parent), item);
      return;
    }
    const task = this.take(key);
    if (task && task.kind !== 'boundary') this.onMessage({ type: 'outcome', task, outcome: this.outcome(task, calls, tokens) });
    this.children.delete(key);
    const next = this.early.get(key);
    if (next) {
      this.early.delete(key);
      this.done(next);
    }
  }

  /** The task in flight under `key`, no longer in flight; nothing for a duplicate answer. */
  private take(key: string): Task | undefined {
    const item = this.inflight.get(key);
    if (!item) return undefined;
    this.inflight.delete(key);
    if (item.link) {
      this.chains.weight -= chainWeight((item.task as EventTask).plan);
    }
    // Its continuation runs now (its parent answered): the chain goes on in it.
    const child = this.children.get(key);
    if (child !== undefined) this.recount(child);
    return item.task;
  }

  /** Counts an event among the chains running once it is one (see chains): running, and a chain's link. */
  private recount(key: string): void {
    const item = this.inflight.get(key);
    if (!item || item.link || item.task.kind === 'boundary') return;
    const running = item.parent === undefined || !this.inflight.has(this.key(item.task.run.runId, item.parent));
    if (!running || (item.parent === undefined && !this.children.has(key))) return;
    item.link = true;
    this.chains.weight += chainWeight(item.task.plan);
  }

  /** An event found committed (by a job of an earlier scheduler, or whose message was trimmed): its usage was counted then. */
  private deliverCommitted(task: EventTask): void {
    this.deliver({ op: 'done', items: [{ run: task.run.runId, event: task.plan.event, calls: 0, tokens: 0 }] });
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
      this.scheduled.cancel();
      this.scheduled = undefined;
      this.chain = this.chain.then(() => this.flush());
    }
    await this.chain.catch(() => undefined);
    await this.watching;
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
    const keys = collectorKeys(this.store.keys, this.shardOf.get(task.run.runId) ?? 0);
    return sendToCollector(this.redis, keys, { op: 'boundary', run: task.run.runId, sweep: task.sweep });
  }

  private boundaryJob(task: BoundaryTask): EventJobToAdd {
    const jobId = jobIdOf(this.incarnation, this.jobs++, task.run.runId, -1 - task.sweep);
    const item = this.inflight.get(this.keyOf(task));
    if (item) {
      item.jobId = jobId;
      item.sent = false;
    }
    const boundary = {
      run: task.run.runId,
      sweepIndex: task.sweep,
      versions: Array.from(task.versions),
      ...(task.state ? { state: task.state } : {}),
    };
    // Before any event: a run's next sweep waits on it.
    return { name: 'boundary', data: { sweep: this.sweepId, events: [], boundary, ...this.leased() }, opts: { jobId, priority: 1 } };
  }

  /** Sends boundaries: committed ones are confirmed through the collector, the others become jobs. */
  private async sendBoundaries(tasks: readonly BoundaryTask[]): Promise<void> {
    const jobs = [];
    for (const t of tasks) {
      if (await this.store.hasBoundary(t.run.runId, t.sweep)) {
        const item = this.inflight.get(this.keyOf(t));
        if (item) {
          item.jobId = undefined;
          item.sent = true;
        }
        await this.confirmBoundary(t);
      } else jobs.push(this.boundaryJob(t));
    }
    await this.addJobs(jobs);
  }

  private leased(): { lease?: string } {
    return this.lease === undefined ? {} : { lease: this.lease };
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
    // Two full jobs per live worker are waiting: nothing is gained by waiting longer.
    const full = this.pending.length >= 2 * this.workers.count * this.fullJob();
    const now = full || this.pendingBoundaries.length > 0;
    if (this.scheduled && !(now && !this.scheduled.now)) return;
    this.scheduled?.cancel();
    const run = () => {
      this.scheduled = undefined;
      this.chain = this.chain.then(() => this.flush()).catch((e) => this.fail(e));
    };
    if (now) {
      const t = setImmediate(run);
      this.scheduled = { now, cancel: () => clearImmediate(t) };
    } else {
      const t = setTimeout(run, FLUSH_MS);
      this.scheduled = { now, cancel: () => clearTimeout(t) };
    }
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
    const continuations = this.pendingContinuations;
    this.pendingContinuations = [];
    if (boundaries.length > 0) await this.sendBoundaries(boundaries);
    // Left before their parents' jobs are added (a parent may be in this flush): those whose parent is
    // committed already go as jobs.
    if (continuations.length > 0) tasks.push(...(await this.offer(continuations)));
    const forgetting = this.forgetting;
    this.forgetting = new Map();
    // An event committed already (by a job of an earlier scheduler) goes out too: the worker finds it
    // committed and says so, which costs a restart a job instead of every dispatch a look.
    if (tasks.length > 0) await this.addJobs(this.batches(tasks));
    await this.store.forgetVersions(forgetting);
  }

  /** Leaves continuations for their parents' workers; returns those that must go as jobs (parent committed, run closed). */
  private async offer(tasks: readonly EventTask[]): Promise<EventTask[]> {
    const share = Math.round(this.chains.weight / this.workers.count);
    const left = await offerContinuations(
      this.redis as PantaRedis,
      this.store.keys,
      tasks.map((t) => ({
        runId: t.run.runId,
        parent: t.after!,
        child: t.plan.event,
        job: JSON.stringify({ ...jobOf(t.run.runId, t.plan, t.moderator, t.depth), share }),
      })),
    );
    const jobs: EventTask[] = [];
    tasks.forEach((t, i) => {
      const item = this.inflight.get(this.key(t.run.runId, t.plan.event));
      if (!left[i]) jobs.push(t);
      else if (item) item.sent = true;
    });
    return jobs;
  }

  /** The most events a job holds: MAX_BATCH, and half a live worker's slots (see batches). */
  private fullJob(): number {
    const { count, slots } = this.workers;
    return Math.min(MAX_BATCH, Math.max(1, Math.floor(slots / count / 2)));
  }

  /** Events per job for a flush of `events`: about one job per live worker, within the bounds of batches(). */
  private jobSize(events: number): number {
    return Math.min(this.fullJob(), Math.max(MIN_BATCH, Math.ceil(events / this.workers.count)));
  }

  /**
   * Groups events into jobs; a job's id names its first event (ids must be unique while jobs exist). A flush
   * makes about one job per live worker, of at most MAX_BATCH events and half a worker's slots: a
   * worker takes a job whenever it has a free slot, so a job may wait behind up to that many of its events.
   * The deepest events go together, and each job is taken by its deepest event's depth (jobPriority): a chain's
   * next call does not wait behind the lattice events queued before it. Events of one run and depth go
   * together (a job reads each of its runs' versions once).
   */
  private batches(unsorted: readonly EventTask[]): EventJobToAdd[] {
    const size = this.jobSize(unsorted.length);
    const tasks = [...unsorted].sort(
      (a, b) => (b.depth ?? 0) - (a.depth ?? 0) || (a.run.runId < b.run.runId ? -1 : a.run.runId > b.run.runId ? 1 : 0),
    );
    const jobs: EventJobToAdd[] = [];
    for (let start = 0; start < tasks.length; start += size) {
      const group = tasks.slice(start, start + size);
      const jobId = jobIdOf(this.incarnation, this.jobs++, group[0].run.runId, group[0].plan.event);
      for (const t of group) {
        const item = this.inflight.get(this.key(t.run.runId, t.plan.event));
        if (item) {
          item.jobId = jobId;
          item.sent = false;
        }
      }
      jobs.push({
        name: 'events',
        data: { sweep: this.sweepId, events: group.map((t) => jobOf(t.run.runId, t.plan, t.moderator, t.depth)), ...this.leased() },
        opts: { jobId, priority: jobPriority(group[0].depth) },
      });
      this.sent.jobs++;
      this.sent.events += group.length;
    }
    return jobs;
  }

  /**
   * Finds events in flight for long whose job is gone: committed ones are delivered, the others sent again.
   * Whatever the number of jobs in flight, it asks Redis in one step which of them are gone (jobs-gone-n),
   * then, only if some are, in one more which of their events were committed: a tick with 20,000 events in
   * flight for longer than watchMs cost a round trip per job on the dispatch chain before (bench/watchdog.mjs).
   * An event not yet handed to Redis (its flush is queued) is not looked at.
   */
  private async watch(): Promise<void> {
    const now = Date.now();
    const old: Inflight[] = [];
    const ids = new Set<string>();
    const left: Inflight[] = [];
    for (const item of this.inflight.values()) {
      if (!item.sent || now - item.since <= this.watchMs) continue;
      if (item.parent !== undefined && item.jobId === undefined) {
        left.push(item);
        continue;
      }
      old.push(item);
      if (item.jobId !== undefined) ids.add(item.jobId);
    }
    if (left.length > 0) await this.watchContinuations(left, now);
    if (old.length === 0 || this.closed) return;
    const gone = new Set(await jobsGone(this.redis as PantaRedis, this.queue.keys.failed, (id) => this.queue.toKey(id), [...ids]));
    if (this.closed) return;
    // A failed job kept in the failed set goes (its id may be asked about again otherwise).
    await Promise.all([...gone].map((id) => this.queue.remove(id).catch(() => undefined)));
    const lost: EventTask[] = [];
    const lostBoundaries: BoundaryTask[] = [];
    for (const item of old) {
      if (item.jobId !== undefined && !gone.has(item.jobId)) continue;
      const { task } = item;
      // Answered while Redis was asked: nothing to do.
      if (this.inflight.get(this.keyOf(task)) !== item) continue;
      item.since = now;
      if (task.kind === 'boundary') lostBoundaries.push(task);
      else lost.push(task);
    }
    // A boundary whose job is gone: committed (the collector's answer may still be on its way) or sent again.
    if (lostBoundaries.length > 0) await this.sendBoundaries(lostBoundaries);
    if (lost.length === 0 || this.closed) return;
    const committed = await this.store.committed(lost.map((t) => ({ runId: t.run.runId, event: t.plan.event })));
    const resend: EventTask[] = [];
    lost.forEach((task, i) => {
      if (committed[i]) this.deliverCommitted(task);
      else if (this.inflight.has(this.keyOf(task))) resend.push(task);
    });
    if (resend.length === 0 || this.closed) return;
    this.requeued += resend.length;
    await this.addJobs(this.batches(resend));
  }

  /**
   * Continuations left in Redis for long: answered (delivered), taken by a job that is gone (sent again as a
   * job), or never taken though their parent is committed (a worker stopping takes none; Redis lost them):
   * sent as jobs. One whose parent is not committed waits for it (the parent is watched on its own).
   */
  private async watchContinuations(items: readonly Inflight[], now: number): Promise<void> {
    const tasks = items.map((i) => i.task as EventTask);
    const runs = tasks.map((t) => t.run.runId);
    const events = tasks.map((t) => ({ runId: t.run.runId, event: t.plan.event }));
    // In this order, each read after the one before has returned (two reads sent together are not one step: a
    // worker's commit may come between them): the parent's commit step takes its continuation in the same step,
    // so a parent read committed has its continuation's owner written by the time the owners are read. Read
    // together, an owner read before that commit and the parent read committed after it sent a running
    // continuation again (bench/gpu-sim's full mode: 67 events a run, 60 of them called twice).
    const committed = await this.store.committed([...events, ...tasks.map((t) => ({ runId: t.run.runId, event: t.after! }))]);
    const owners = await this.store.continuationOwners(events);
    const taken = [...new Set(owners.filter((o): o is string => o !== null))];
    const gone = new Set(
      taken.length > 0 ? await jobsGone(this.redis as PantaRedis, this.queue.keys.failed, (id) => this.queue.toKey(id), taken) : [],
    );
    if (this.closed) return;
    const candidates: number[] = [];
    tasks.forEach((task, i) => {
      if (this.inflight.get(this.key(runs[i], task.plan.event)) !== items[i]) return;
      items[i].since = now;
      const owner = owners[i];
      if (committed[i]) this.deliverCommitted(task);
      else if (owner !== null ? gone.has(owner) : committed[tasks.length + i]) candidates.push(i);
    });
    if (candidates.length === 0 || this.closed) return;
    // An owner's job is gone once its chain ended, which commits this event first: read again after the job was
    // found gone, a committed event is delivered, not sent again.
    const since = await this.store.committed(candidates.map((i) => events[i]));
    const resend: EventTask[] = [];
    candidates.forEach((i, k) => {
      if (this.inflight.get(this.key(runs[i], tasks[i].plan.event)) !== items[i]) return;
      if (since[k]) this.deliverCommitted(tasks[i]);
      else resend.push(tasks[i]);
    });
    if (resend.length === 0 || this.closed) return;
    this.requeued += resend.length;
    await this.addJobs(this.batches(resend));
  }

  /** Adds jobs in order: a few one by one (see ONE_BY_ONE), more in bulk. */
  private async addJobs(jobs: EventJobToAdd[]): Promise<void> {
    if (jobs.length > ONE_BY_ONE) await this.queue.addBulk(jobs);
    else await Promise.all(jobs.map((j) => this.queue.add(j.name, j.data, j.opts)));
    // In Redis now: the watchdog may look for these jobs (before, it would find them missing and add them again).
    for (const { data, opts } of jobs) {
      const keys = data.boundary
        ? [this.boundaryKey(data.boundary.run, data.boundary.sweepIndex)]
        : data.events.map((e) => this.key(e.run, e.event));
      if (trace) for (const e of data.events) trace.point('added', e.run, e.event);
      for (const k of keys) {
        const item = this.inflight.get(k);
        if (item?.jobId === opts.jobId) item.sent = true;
      }
    }
  }
}
