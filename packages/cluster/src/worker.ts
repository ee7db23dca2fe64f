import { randomBytes } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import { redact, toError } from '@panta/core';
import { executeBoundary, executeEvent, type BoundaryOutcome, type EventOutcome, type Logger } from '@panta/engine';
import { EndpointUnavailableError, unhealthyCause } from '@panta/llm';
import { bullmq } from './cjs-deps.js';
import { Committer } from './committer.js';
import { collectorKeys, EVENT_QUEUE, sweepKeys } from './keys.js';
import { cpuMs } from './cpu.js';
import { hopTraceFor } from './hop-trace.js';
import { JobTaker } from './job-taker.js';
import { connect, type PantaRedis, ready } from './redis.js';
import { sendToScheduler } from './redis/inboxes.js';
import { leaseHolder } from './redis/leases.js';
import { commitBoundary, failBoundary, failEvent, handOver, readEvents, type VersionsRead } from './redis/scripts.js';
import { SweepStore } from './redis/sweep-store.js';
import {
  chainWeight,
  encodeResult,
  EVENT_JOB_OPTIONS,
  jobPriority,
  planOfJob,
  type BatchJob,
  type BoundaryJob,
  type EventJob,
} from './result-codec.js';
import { WorkerRegistration } from './worker-registry.js';
import { loadContext, type ContextOptions, type WorkerContext } from './worker-context.js';

export interface WorkerOptions extends ContextOptions {
  redis: string;
  /** Events this worker runs at once. */
  concurrency: number;
  /** BullMQ lock: a killed worker's jobs go back to the queue after about this long. */
  lockMs?: number;
  log: Logger;
  signal?: AbortSignal;
  /** Called whenever an event starts or ends, with this worker's totals for that sweep (for metrics). */
  onProgress?(sweepId: string, progress: WorkerProgress): void;
}

export interface WorkerSummary {
  events: number;
  duplicates: number;
  /** Of the duplicates, those found committed only after this worker had called the LLM: calls spent twice. */
  calledTwice?: number;
  /** LLM calls sent again by the client (its retries), over the events this worker committed. */
  retries?: number;
  failures: number;
  /** Events of jobs whose scheduler was gone when taken (BatchJob.lease), dropped unrun: no LLM call spent. */
  dropped: number;
  /** Events run as continuations: taken by the commit of the event they follow, not from the queue. */
  continued?: number;
  /** Chains passed on to the queue (this worker held more than its share of the chains: see passOn). */
  passedOn?: number;
}

/** One worker's work on one sweep since it started: events committed, calls in flight, LLM usage. */
export interface WorkerProgress extends WorkerSummary {
  inflight: number;
  /** LLM calls (retries included), retries, and tokens (prompt + completion) of the events committed. */
  calls: number;
  retries: number;
  tokens: number;
}

/**
 * A worker: takes event jobs while it has free slots, reads what a job's events read from Redis in one step,
 * calls the model and embeds each event, and commits the events that finish together in one Lua step that
 * writes each event at most once. Serves until the signal aborts, then finishes the jobs it holds and resolves.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerSummary> {
  const { log } = options;
  // One connection for Panta's commands and BullMQ's (see JobTaker), and the one BullMQ blocks on: two in all.
  const redis = connect(options.redis, 'panta-worker', { autoPipelining: true, log });
  const started = await ready(redis, options.redis, options.signal).catch(async (e: unknown) => {
    redis.disconnect();
    throw e;
  });
  if (!started) {
    // Stopped while Redis was unreachable: nothing was taken.
    redis.disconnect();
    log.info({}, 'worker stopped before Redis answered');
    return { events: 0, duplicates: 0, failures: 0, dropped: 0 };
  }
  return new WorkerRole(redis, options).serve();
}

/** The chain's hop traced (PANTA_HOP_TRACE; see hop-trace.ts): a job taken, its reads, the answer, its commit. */
const trace = hopTraceFor('worker');

/** A continuation its parent's commit took, with what it reads (read in that step). */
type Continuation = { job: EventJob; read: VersionsRead };
type EventResult =
  | { kind: 'committed'; calls: number; tokens: number; next?: Continuation }
  | { kind: 'duplicate'; called?: boolean }
  | { kind: 'failed' };

/** A started worker's state: its sweeps' contexts, committers and progress, and what stops it. */
class WorkerRole {
  private readonly log: Logger;
  /** Stops the worker on the user's signal, or when its model never answered (then it exits 1 with that line). */
  private readonly stop = new AbortController();
  private fatal: Error | undefined;
  private readonly contexts = new Map<string, Promise<WorkerContext>>();
  /** Contexts whose backend was reported unhealthy, and those dropped for it (closed when the worker stops). */
  private readonly reported = new WeakSet<WorkerContext>();
  private readonly retired: WorkerContext[] = [];
  private readonly bySweep = new Map<string, WorkerProgress>();
  /** One committer per sweep: a commit step tells each collector shard of its runs. */
  private readonly committers = new Map<string, Committer>();
  /** Continuations run (events taken by the commit of the one before, not from the queue). */
  private continued = 0;
  /** The chains this worker runs now and their weight, per sweep (see passOn). */
  private readonly holding = new Map<string, { chains: number; weight: number }>();
  /** Chains passed on (passOn), and the prefix of the ids of the jobs they went as. */
  private passedOn = 0;
  private readonly passPrefix = `p${randomBytes(4).toString('hex')}`;
  /** The queue chains are passed on to (made with the first), on this worker's connection. */
  private queue?: Queue<BatchJob>;
  /** Schedulers whose jobs were dropped (schedulerGone), said once each. */
  private readonly goneSaid = new Set<string>();

  constructor(
    private readonly redis: PantaRedis,
    private readonly options: WorkerOptions,
  ) {
    this.log = options.log;
    options.signal?.addEventListener('abort', () => this.stop.abort(), { once: true });
    if (options.signal?.aborted) this.stop.abort();
  }

  /** Takes jobs until stopped, then finishes those it holds, closes everything and sums up. */
  async serve(): Promise<WorkerSummary> {
    const { redis, options, log } = this;
    const taker = new JobTaker({
      connection: redis,
      capacity: options.concurrency,
      lockMs: options.lockMs ?? 30_000,
      log,
      process: (job, finished) => this.processJob(job, finished),
    });
    await taker.start();
    const registration = new WorkerRegistration(redis, options.concurrency);
    await registration.start();
    log.info({ concurrency: options.concurrency, cpu_ms: cpuMs() }, 'worker started');

    await new Promise<void>((resolve) => {
      if (this.stop.signal.aborted) resolve();
      this.stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    if (this.fatal) log.error({ err: this.fatal.message }, 'worker stopping: its model endpoint never answered');
    else log.info({}, 'worker stopping: finishing the events it holds');
    await registration.stop();
    await taker.close();
    await this.queue?.close();
    await this.closeContexts();
    await redis.quit().catch(() => undefined);
    const summary = this.summary();
    log.info({ ...summary, cpu_ms: cpuMs() }, 'worker stopped');
    if (this.fatal) throw this.fatal;
    return summary;
  }

  private async closeContexts(): Promise<void> {
    for (const c of this.contexts.values()) await (await c.catch(() => undefined))?.close();
    for (const c of this.retired) await c.close().catch(() => undefined);
  }

  private summary(): WorkerSummary {
    const summary: WorkerSummary = { events: 0, duplicates: 0, failures: 0, dropped: 0 };
    for (const p of this.bySweep.values()) {
      summary.events += p.events;
      summary.duplicates += p.duplicates;
      summary.calledTwice = (summary.calledTwice ?? 0) + (p.calledTwice ?? 0);
      summary.retries = (summary.retries ?? 0) + p.retries;
      summary.failures += p.failures;
      summary.dropped += p.dropped;
    }
    summary.continued = this.continued;
    summary.passedOn = this.passedOn;
    return summary;
  }

  /** A sweep's context, loaded once per worker and sweep; a model that never answers stops the worker. */
  private context(sweepId: string): Promise<WorkerContext> {
    const { contexts, options, log } = this;
    let c = contexts.get(sweepId);
    if (!c) {
      c = loadContext(this.redis, sweepId, {
        baseUrl: options.baseUrl,
        // A call sent again costs the GPU its prompt once more: the operator sees each, with its reason.
        onRetry: (e) => log.warn(e, 'call sent again'),
        waitEndpointMs: options.waitEndpointMs,
        log,
        signal: this.stop.signal,
      });
      // Loading a sweep (its plan, backend, encoders, and the modules they import) is paid once per worker and
      // sweep; the CPU from here on is the events' (bench/cluster reads it).
      c.then(() => log.info({ sweep: sweepId, cpu_ms: cpuMs() }, 'sweep loaded')).catch(() => undefined);
      c.catch((e: unknown) => {
        contexts.delete(sweepId);
        if (e instanceof EndpointUnavailableError) {
          this.fatal ??= e;
          this.stop.abort();
        }
      });
      contexts.set(sweepId, c);
    }
    return c;
  }

  /**
   * A backend whose health breaker tripped (an endpoint refused the key, or its replies were unusable): the
   * event is neither committed nor failed (a rerun runs it), the scheduler is told once, and the sweep's
   * context is dropped, so that the next job of the sweep (a rerun once the server is fixed) gets a fresh
   * backend. Dropped contexts close when the worker stops (events of theirs may still be finishing).
   */
  private async reportedUnhealthy(ctx: WorkerContext, error: unknown): Promise<boolean> {
    const unhealthy = unhealthyCause(error);
    if (!unhealthy) return false;
    if (this.reported.has(ctx)) return true;
    this.reported.add(ctx);
    const current = this.contexts.get(ctx.sweepId);
    if (current && (await current.catch(() => undefined)) === ctx) this.contexts.delete(ctx.sweepId);
    this.retired.push(ctx);
    const message = redact(unhealthy.message);
    this.log.error({ sweep: ctx.sweepId, err: message }, 'model endpoint unhealthy: the scheduler stops the sweep');
    await sendToScheduler(this.redis, ctx.keys, { op: 'unhealthy', error: message, role: 'worker' }).catch(() => undefined);
    return true;
  }

  private progressOf(sweepId: string): WorkerProgress {
    let p = this.bySweep.get(sweepId);
    if (!p)
      this.bySweep.set(sweepId, (p = { events: 0, duplicates: 0, failures: 0, dropped: 0, inflight: 0, calls: 0, retries: 0, tokens: 0 }));
    return p;
  }

  private committerOf(ctx: WorkerContext): Committer {
    let c = this.committers.get(ctx.sweepId);
    if (!c) {
      const inboxes = new Map<number, string>();
      const inboxOf = (runId: string): string => {
        const shard = ctx.shardOf.get(runId) ?? 0;
        let inbox = inboxes.get(shard);
        if (inbox === undefined) inboxes.set(shard, (inbox = collectorKeys(ctx.keys, shard).collectorInbox));
        return inbox;
      };
      this.committers.set(ctx.sweepId, (c = new Committer(this.redis, ctx.keys, inboxOf)));
    }
    return c;
  }

  /**
   * One event, then its continuations one after the other (each taken by the commit of the one before), unless
   * the chain is passed on (passOn): then the job it goes as runs the rest, on whichever worker takes it.
   */
  private async processChain(ctx: WorkerContext, data: EventJob, read: VersionsRead, owner: string, lease?: string): Promise<void> {
    let next = await this.processEvent(ctx, data, read, owner);
    let weight = 0;
    try {
      while (next) {
        const { job, read: again } = next;
        if (weight === 0) this.hold(ctx.sweepId, 1, (weight = chainWeight(job)));
        if (again.kind === 'run' && this.passOn(ctx.sweepId, weight, job)) return await this.handOn(ctx, job, lease);
        if (trace) {
          trace.point('claimed', job.run, job.event);
          trace.point('read', job.run, job.event);
        }
        if (again.kind === 'before') await this.toldBefore(ctx, [job]);
        this.continued++;
        next = await this.processEvent(ctx, job, again, owner);
      }
    } finally {
      if (weight > 0) this.hold(ctx.sweepId, -1, -weight);
    }
  }

  private hold(sweepId: string, chains: number, weight: number): void {
    const held = this.holding.get(sweepId) ?? { chains: 0, weight: 0 };
    this.holding.set(sweepId, { chains: held.chains + chains, weight: held.weight + weight });
  }

  /**
   * Whether to pass a chain on instead of running its next event here. A chain's events run one after the other
   * on the worker that took its first (each the continuation of the one before), so chains would stay where
   * the first jobs happened to go: a mean field's long chains, most of the GPU time of a sweep, split unevenly
   * between endpoints, one queueing chains while another's KV cache idles. Were the sweep's chains spread
   * evenly, each worker would hold `share` of their weight (EventJob.share, the scheduler's when it offered
   * the event); a worker that would hold that much even without this chain passes it on, if the chain is at
   * least as heavy as the mean of those it holds: the heavy chains move, not the lattices' short ones, each
   * of which would cost a trip through the queue and take little off the excess.
   */
  private passOn(sweepId: string, weight: number, job: EventJob): boolean {
    const held = this.holding.get(sweepId);
    if (job.share === undefined || !(job.share > 0) || !held) return false;
    return held.weight - weight >= job.share && weight * held.chains >= held.weight;
  }

  /**
   * Passes a chain on: its next event goes to the queue as a job of its own (taken by the deepest-first order
   * of every job), then that job is recorded as the one that took it. Meanwhile the record names this
   * worker's job, whose lock holds until this returns: the scheduler's watchdog never finds the event's owner
   * gone, and a worker killed in between leaves the event to a job that exists (or, killed before the add,
   * to its own job's return to the queue and the watchdog).
   */
  private async handOn(ctx: WorkerContext, job: EventJob, lease: string | undefined): Promise<void> {
    const { share: _, ...event } = job;
    const jobId = `${this.passPrefix}|${this.passedOn++}|${job.run}|${job.event}`;
    if (!this.queue) {
      this.queue = new (bullmq().Queue)<BatchJob>(EVENT_QUEUE, { connection: this.redis, defaultJobOptions: EVENT_JOB_OPTIONS });
      this.queue.on('error', (err) => this.log.warn({ err: err.message }, 'queue error'));
    }
    const data: BatchJob = { sweep: ctx.sweepId, events: [event], ...(lease === undefined ? {} : { lease }) };
    await this.queue.add('events', data, { jobId, priority: jobPriority(job.depth) });
    await handOver(this.redis, ctx.keys, job.run, job.event, jobId);
    trace?.point('passed', job.run, job.event);
  }

  /** Runs an event; returns the continuation its commit took, if any. */
  private async processEvent(ctx: WorkerContext, data: EventJob, read: VersionsRead, owner: string): Promise<Continuation | undefined> {
    const progress = this.progressOf(ctx.sweepId);
    progress.inflight++;
    this.options.onProgress?.(ctx.sweepId, progress);
    try {
      const result = await this.runEvent(ctx, data, read, owner);
      if (result.kind === 'committed') {
        progress.events++;
        progress.calls += result.calls;
        progress.retries += Math.max(0, result.calls - 1);
        progress.tokens += result.tokens;
        return result.next;
      } else if (result.kind === 'duplicate') {
        progress.duplicates++;
        if (result.called) progress.calledTwice = (progress.calledTwice ?? 0) + 1;
      } else {
        progress.failures++;
      }
    } finally {
      progress.inflight--;
      this.options.onProgress?.(ctx.sweepId, progress);
    }
    return undefined;
  }

  /** One event: committed (with its LLM usage), a duplicate (already committed), or failed after the backend's retries. */
  private async runEvent(ctx: WorkerContext, data: EventJob, read: VersionsRead, owner: string): Promise<EventResult> {
    const { keys } = ctx;
    const run = ctx.runs.get(data.run);
    if (!run) throw new Error(`sweep ${ctx.sweepId} has no run ${data.run}`);
    const plan = planOfJob(data);
    if (read.kind !== 'run') return { kind: 'duplicate' };
    const { texts } = read;
    const missing = texts.findIndex((t) => typeof t !== 'string');
    if (missing >= 0)
      throw new Error(`${run.runId}: event ${plan.event} reads version ${data.readVersions[missing]}, which is not in Redis`);
    let outcome: EventOutcome;
    try {
      outcome = await executeEvent(
        data.moderator ? { run, plan, moderator: data.moderator, depth: data.depth } : { run, plan, depth: data.depth },
        texts as string[],
        ctx.services,
      );
    } catch (error) {
      if (await this.reportedUnhealthy(ctx, error)) return { kind: 'failed' };
      // The backend already retried: this event failed, and its run with it (as embedded).
      const message = redact(toError(error).message);
      this.log.warn({ run: run.runId, event: plan.event, err: message }, 'event failed');
      await failEvent(this.redis, { keys, runId: run.runId, event: plan.event, error: message });
      return { kind: 'failed' };
    }
    if (trace) {
      // The call's attempt began its latency before now (after the worker's admission let it in).
      const now = performance.timeOrigin + performance.now();
      trace.point('sent', run.runId, plan.event, now - outcome.latencyMs);
      trace.point('answered', run.runId, plan.event, now);
    }
    const tokens = outcome.promptTokens + outcome.completionTokens;
    const committed = await this.committerOf(ctx).commit({
      runId: run.runId,
      event: plan.event,
      version: outcome.version ?? outcome.response,
      result: encodeResult(plan, outcome),
      calls: outcome.calls,
      tokens,
      // A worker stopping takes no continuation: the scheduler's watchdog sends it as a job.
      owner: this.stop.signal.aborted ? '' : owner,
    });
    trace?.point('committed', run.runId, plan.event);
    if (committed.once !== 'done') return { kind: 'duplicate', called: true };
    const next = committed.next === undefined ? undefined : { job: JSON.parse(committed.next) as EventJob, read: committed.read! };
    return { kind: 'committed', calls: outcome.calls, tokens, ...(next ? { next } : {}) };
  }

  /**
   * A sweep boundary: reads the snapshot's versions, measures it (and for drift-policy calls the judge and
   * moderator), and commits the outcome once; the collector journals it and tells the scheduler.
   */
  private async runBoundary(ctx: WorkerContext, data: BoundaryJob): Promise<void> {
    const { keys } = ctx;
    const run = ctx.runs.get(data.run);
    if (!run) throw new Error(`sweep ${ctx.sweepId} has no run ${data.run}`);
    const store = new SweepStore(this.redis, keys);
    if (await store.hasBoundary(run.runId, data.sweepIndex)) return;
    const values = await store.versionTexts(run.runId, data.versions);
    const missing = values.findIndex((t) => typeof t !== 'string');
    if (missing >= 0)
      throw new Error(
        `${run.runId}: the boundary after sweep ${data.sweepIndex} reads version ${data.versions[missing]}, which is not in Redis`,
      );
    const task = {
      kind: 'boundary' as const,
      run,
      sweep: data.sweepIndex,
      versions: Float64Array.from(data.versions),
      ...(data.state ? { state: data.state } : {}),
    };
    let outcome: BoundaryOutcome;
    try {
      outcome = await executeBoundary(task, values as string[], ctx.services);
    } catch (error) {
      if (await this.reportedUnhealthy(ctx, error)) return;
      const message = redact(toError(error).message);
      this.log.warn({ run: run.runId, sweep: data.sweepIndex, err: message }, 'boundary failed');
      await failBoundary(this.redis, { keys, runId: run.runId, sweep: data.sweepIndex, error: message });
      return;
    }
    await commitBoundary(this.redis, {
      keys: collectorKeys(keys, ctx.shardOf.get(run.runId) ?? 0),
      runId: run.runId,
      sweep: data.sweepIndex,
      outcome: JSON.stringify(outcome),
    });
  }

  /**
   * Whether the scheduler that sent the job no longer holds its sweep's lease (it stopped, was killed, or a
   * newer one replaced it): nobody waits for the job, and a scheduler resuming the sweep sends every event not
   * committed again, so the job is dropped before its sweep is even loaded. Were the lease only lapsed (its
   * scheduler stalled past the lease's TTL), that scheduler's watchdog finds the job gone and sends its events
   * again: dropping never loses an event. A job without a lease (sent by another transport) always runs.
   */
  private async schedulerGone(job: Job<BatchJob>): Promise<boolean> {
    const { sweep, lease, events, boundary } = job.data;
    if (lease === undefined) return false;
    const holder = await leaseHolder(this.redis, sweepKeys(sweep).schedulerLease);
    if (holder === lease) return false;
    const progress = this.progressOf(sweep);
    progress.dropped += boundary ? 1 : events.length;
    this.options.onProgress?.(sweep, progress);
    if (!this.goneSaid.has(lease)) {
      this.goneSaid.add(lease);
      this.log.info(
        { sweep, scheduler: lease, holder },
        "dropping this scheduler's queued jobs unrun: it no longer holds the sweep (a scheduler that resumes it sends their events again)",
      );
    }
    return true;
  }

  /**
   * A job's events: what they read comes in one step; events found committed before (a job of an earlier
   * scheduler, sent again by a restarted one) are told to the scheduler at once, which may be waiting for them.
   */
  private async processJob(job: Job<BatchJob>, finished: () => void): Promise<void> {
    if (await this.schedulerGone(job)) return;
    const { boundary, events } = job.data;
    if (trace) for (const e of events) trace.point('taken', e.run, e.event);
    const ctx = await this.context(job.data.sweep);
    // A run an adaptive round added since this worker loaded the sweep: the scheduler published its grids first.
    if ([...events.map((e) => e.run), ...(boundary ? [boundary.run] : [])].some((run) => !ctx.runs.has(run))) await ctx.refresh();
    if (boundary) return this.runBoundary(ctx, boundary).finally(finished);
    const reads = await readEvents(
      this.redis,
      ctx.keys,
      events.map((e) => ({ runId: e.run, event: e.event, versions: e.readVersions })),
    );
    if (trace) for (const e of events) trace.point('read', e.run, e.event);
    const before = events.filter((_, i) => reads[i].kind === 'before');
    if (before.length > 0) await this.toldBefore(ctx, before);
    // An infrastructure error fails the job and BullMQ retries it; events already committed are skipped then.
    // A continuation runs in its parent's slot, under this job (whose lock stays renewed until it ends).
    await Promise.all(events.map((e, i) => this.processChain(ctx, e, reads[i], job.id!, job.data.lease).finally(finished)));
  }

  /** Events found committed before: the scheduler, which may be waiting for them, is told at once. */
  private async toldBefore(ctx: WorkerContext, before: readonly EventJob[]): Promise<void> {
    await sendToScheduler(this.redis, ctx.keys, {
      op: 'done',
      items: before.map((e) => ({ run: e.run, event: e.event, calls: 0, tokens: 0 })),
    });
  }
}
