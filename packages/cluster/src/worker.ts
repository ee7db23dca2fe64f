import { Worker, type Job } from 'bullmq';
import { redact, toError } from '@panta/core';
import { executeBoundary, executeEvent, type BoundaryOutcome, type EventOutcome, type Logger } from '@panta/engine';
import { EndpointUnavailableError } from '@panta/llm';
import { EVENT_QUEUE } from './keys.js';
import { cpuMs } from './cpu.js';
import { connect, ready } from './redis.js';
import { commitBoundary, commitEvent, failBoundary, failEvent, readVersions } from './redis/scripts.js';
import { SweepStore } from './redis/sweep-store.js';
import { encodeResult, planOfJob, type BatchJob, type BoundaryJob, type EventJob } from './result-codec.js';
import { Slots } from './slots.js';
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
  failures: number;
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
 * A worker: takes event jobs, reads the versions the event reads from Redis, calls the model, embeds, and
 * commits with one Lua step that writes an event at most once. Serves until the signal aborts, then
 * finishes the jobs it holds and resolves.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerSummary> {
  const { log } = options;
  const redis = connect(options.redis, 'panta-worker', { autoPipelining: true });
  await ready(redis, options.redis).catch(async (e: unknown) => {
    redis.disconnect();
    throw e;
  });
  // Stops the worker on the user's signal, or when its model never answered (then it exits 1 with that line).
  const stop = new AbortController();
  let fatal: Error | undefined;
  options.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  if (options.signal?.aborted) stop.abort();
  const contexts = new Map<string, Promise<WorkerContext>>();
  const context = (sweepId: string): Promise<WorkerContext> => {
    let c = contexts.get(sweepId);
    if (!c) {
      c = loadContext(redis, sweepId, {
        baseUrl: options.baseUrl,
        onRetry: (e) => log.debug(e, 'retry'),
        waitEndpointMs: options.waitEndpointMs,
        log,
        signal: stop.signal,
      });
      c.catch((e: unknown) => {
        contexts.delete(sweepId);
        if (e instanceof EndpointUnavailableError) {
          fatal ??= e;
          stop.abort();
        }
      });
      contexts.set(sweepId, c);
    }
    return c;
  };

  const bySweep = new Map<string, WorkerProgress>();
  const progressOf = (sweepId: string): WorkerProgress => {
    let p = bySweep.get(sweepId);
    if (!p) bySweep.set(sweepId, (p = { events: 0, duplicates: 0, failures: 0, inflight: 0, calls: 0, retries: 0, tokens: 0 }));
    return p;
  };

  const processEvent = async (ctx: WorkerContext, data: EventJob): Promise<void> => {
    const progress = progressOf(ctx.sweepId);
    progress.inflight++;
    options.onProgress?.(ctx.sweepId, progress);
    try {
      const result = await runEvent(ctx, data);
      if (result.kind === 'committed') {
        progress.events++;
        progress.calls += result.calls;
        progress.retries += Math.max(0, result.calls - 1);
        progress.tokens += result.tokens;
      } else if (result.kind === 'duplicate') {
        progress.duplicates++;
      } else {
        progress.failures++;
      }
    } finally {
      progress.inflight--;
      options.onProgress?.(ctx.sweepId, progress);
    }
  };

  /** One event: committed (with its LLM usage), a duplicate (already committed), or failed after the backend's retries. */
  const runEvent = async (
    ctx: WorkerContext,
    data: EventJob,
  ): Promise<{ kind: 'committed'; calls: number; tokens: number } | { kind: 'duplicate' | 'failed' }> => {
    const { keys } = ctx;
    const run = ctx.runs.get(data.run);
    if (!run) throw new Error(`sweep ${ctx.sweepId} has no run ${data.run}`);
    const plan = planOfJob(data);
    const read = await readVersions(redis, { keys, runId: run.runId, event: plan.event, versions: data.readVersions });
    if (read.kind !== 'run') return { kind: 'duplicate' };
    const { texts } = read;
    const missing = texts.findIndex((t) => typeof t !== 'string');
    if (missing >= 0)
      throw new Error(`${run.runId}: event ${plan.event} reads version ${data.readVersions[missing]}, which is not in Redis`);
    let outcome: EventOutcome;
    try {
      outcome = await executeEvent(
        data.moderator ? { run, plan, moderator: data.moderator } : { run, plan },
        texts as string[],
        ctx.services,
      );
    } catch (error) {
      // The backend already retried: this event failed, and its run with it (as embedded).
      const message = redact(toError(error).message);
      log.warn({ run: run.runId, event: plan.event, err: message }, 'event failed');
      await failEvent(redis, { keys, runId: run.runId, event: plan.event, error: message });
      return { kind: 'failed' };
    }
    const tokens = outcome.promptTokens + outcome.completionTokens;
    const committed = await commitEvent(redis, {
      keys,
      runId: run.runId,
      event: plan.event,
      version: outcome.version ?? outcome.response,
      result: encodeResult(plan, outcome),
      calls: outcome.calls,
      tokens,
    });
    if (committed !== 'done') return { kind: 'duplicate' };
    return { kind: 'committed', calls: outcome.calls, tokens };
  };

  const workerConnection = connect(options.redis, 'panta-worker-queue');
  // A job is a batch of events; `concurrency` bounds events in flight, whatever the batches.
  const slots = new Slots(options.concurrency);
  /**
   * A sweep boundary: reads the snapshot's versions, measures it (and for drift-policy calls the judge and
   * moderator), and commits the outcome once; the collector journals it and tells the scheduler.
   */
  const runBoundary = async (ctx: WorkerContext, data: BoundaryJob): Promise<void> => {
    const { keys } = ctx;
    const run = ctx.runs.get(data.run);
    if (!run) throw new Error(`sweep ${ctx.sweepId} has no run ${data.run}`);
    const store = new SweepStore(redis, keys);
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
      const message = redact(toError(error).message);
      log.warn({ run: run.runId, sweep: data.sweepIndex, err: message }, 'boundary failed');
      await failBoundary(redis, { keys, runId: run.runId, sweep: data.sweepIndex, error: message });
      return;
    }
    await commitBoundary(redis, { keys, runId: run.runId, sweep: data.sweepIndex, outcome: JSON.stringify(outcome) });
  };

  const processJob = async (job: Job<BatchJob>): Promise<void> => {
    const ctx = await context(job.data.sweep);
    const { boundary } = job.data;
    if (boundary) return slots.run(() => runBoundary(ctx, boundary));
    // An infrastructure error fails the job and BullMQ retries it; events already committed are skipped then.
    await Promise.all(job.data.events.map((e) => slots.run(() => processEvent(ctx, e))));
  };

  const worker = new Worker<BatchJob>(EVENT_QUEUE, processJob, {
    connection: workerConnection,
    concurrency: options.concurrency,
    lockDuration: options.lockMs ?? 30_000,
    stalledInterval: options.lockMs ?? 30_000,
    // A killed worker stalls its jobs; they must come back however often that happens (the commit is idempotent).
    maxStalledCount: 1_000_000,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 1000 },
  });
  worker.on('error', (err) => log.warn({ err: err.message }, 'queue error'));
  worker.on('failed', (job, err) => log.warn({ job: job?.id, err: err.message }, 'job failed (BullMQ retries it)'));
  const registration = new WorkerRegistration(redis, options.concurrency);
  await registration.start();
  log.info({ concurrency: options.concurrency, cpu_ms: cpuMs() }, 'worker started');

  await new Promise<void>((resolve) => {
    if (stop.signal.aborted) resolve();
    stop.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  if (fatal) log.error({ err: fatal.message }, 'worker stopping: its model endpoint never answered');
  else log.info({}, 'worker stopping: finishing the events it holds');
  await registration.stop();
  await worker.close();
  for (const c of contexts.values()) await (await c.catch(() => undefined))?.close();
  await workerConnection.quit().catch(() => undefined);
  await redis.quit().catch(() => undefined);
  const summary: WorkerSummary = { events: 0, duplicates: 0, failures: 0 };
  for (const p of bySweep.values()) {
    summary.events += p.events;
    summary.duplicates += p.duplicates;
    summary.failures += p.failures;
  }
  log.info({ ...summary, cpu_ms: cpuMs() }, 'worker stopped');
  if (fatal) throw fatal;
  return summary;
}
