import { Queue } from 'bullmq';
import { redact, sweepEvents, type RunPlan } from '@panta/core';
import { Executor, loadSweep, plannerFor, runEnd, sweepSizing, type ActiveRun, type ExecutorProgress, type Logger, type SweepOverrides } from '@panta/engine';
import { BullTransport } from './bull-transport.js';
import { InboxReader } from './inbox-reader.js';
import { EVENT_QUEUE, SWEEPS_KEY, sweepIdOf, sweepKeys } from './keys.js';
import { toPayload } from './payload.js';
import { cpuMs } from './cpu.js';
import { connect } from './redis.js';
import { RoleLease } from './role-lease.js';
import { RemoteCollector, type RemoteSink } from './remote-collector.js';

export interface SchedulerOptions extends SweepOverrides {
  redis: string;
  log: Logger;
  signal?: AbortSignal;
  /** How long an event may be in flight before the watchdog checks that its job still exists. */
  watchMs?: number;
  onProgress?(p: ExecutorProgress & { sweepId: string; eventsTotal: number; runsTotal: number; requeued: number; waitingForCollector: boolean }): void;
}

export interface SchedulerSummary {
  sweepId: string;
  status: 'complete' | 'stopped' | 'failed';
  eventsTotal: number;
  failedRuns: string[];
}

/**
 * The scheduler role: publishes the sweep to Redis and runs the one executor over the BullMQ transport.
 * Runs are opened and closed by the collector process (which owns the corpus); when every run is closed it
 * asks the collector to finish the corpus and exits. Killed and restarted, it recomputes the schedule from
 * the seeds and continues from what Redis and the corpus hold.
 */
export async function runScheduler(specPath: string, options: SchedulerOptions): Promise<SchedulerSummary> {
  const sweep = loadSweep(specPath, options);
  const { spec, runs } = sweep;
  const sweepId = sweepIdOf(spec.name, sweep.fingerprint);
  const keys = sweepKeys(sweepId);
  const log = options.log.child({ sweep: sweepId });
  const eventsTotal = sweepEvents(runs);
  const redis = connect(options.redis, 'panta-scheduler');
  const queueConnection = redis.duplicate();
  const queue = new Queue(EVENT_QUEUE, {
    connection: queueConnection,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
  });
  const closers: (() => Promise<unknown>)[] = [() => queue.close(), () => queueConnection.quit(), () => redis.quit()];
  try {
    const phase = await redis.hget(keys.state, 'phase');
    // A sweep that finished with failed runs ('failed') is scheduled again: those runs resume.
    if (phase === 'done' || phase === 'finishing') {
      log.info({ phase }, 'sweep already complete: nothing to schedule');
      return { sweepId, status: 'complete', eventsTotal, failedRuns: [] };
    }
    const lease = await RoleLease.acquire(redis, keys.schedulerLease, (holder) => log.warn({ holder }, 'another scheduler holds this sweep: waiting for its lease'), options.signal);
    if (!lease) return { sweepId, status: 'stopped', eventsTotal, failedRuns: [] };
    closers.unshift(() => lease.release());
    const payload = toPayload(sweepId, sweep, options.out);
    await redis.set(keys.spec, JSON.stringify(payload));
    await redis.hset(SWEEPS_KEY, sweepId, JSON.stringify({ name: spec.name, out: payload.out, runs: runs.length, events: eventsTotal, started_at: new Date().toISOString() }));
    await redis.hset(keys.state, 'phase', 'running');

    const transport = new BullTransport(redis, queue, sweepId, keys, options.watchMs ?? 15_000);
    const remote = new RemoteCollector(redis, keys);
    const inbox = new InboxReader(redis, keys.schedulerInbox, (entries) => {
      for (const e of entries) {
        if (e.fields.op === 'done' || e.fields.op === 'failed' || e.fields.op === 'boundary') transport.deliver(e);
        else remote.deliver(e);
      }
    });
    await inbox.init();
    closers.unshift(() => inbox.close());

    const failedRuns: string[] = [];
    let progress: ExecutorProgress | undefined;
    const executor: Executor<RemoteSink> = new Executor<RemoteSink>(runs, {
      transport,
      concurrency: spec.concurrency,
      maxActiveRuns: sweepSizing(spec.concurrency, [], runs.length).maxActiveRuns,
      open: async (run: RunPlan): Promise<ActiveRun<RemoteSink> | null> => {
        const opened = await remote.open(run.runId);
        if (opened.finalized) {
          executor.completeOnDisk(run, opened.next);
          return null;
        }
        if (opened.next > 0) log.info({ run: run.runId, nextEvent: opened.next }, 'run resumed');
        executor.written(opened.next);
        const planner = plannerFor(sweep, run, opened.next, opened.control);
        return { run, planner, collector: remote.sink(run.runId, opened.next, (count) => executor.written(count), opened.control), inflight: 0, startedAt: performance.now() };
      },
      close: async (active: ActiveRun<RemoteSink>): Promise<void> => {
        const end = runEnd(active);
        const { status } = end;
        if (status === 'stopped') return; // the collector makes rows durable on its own schedule
        if (status === 'failed') {
          failedRuns.push(active.run.runId);
          await redis.hset(keys.failed, active.run.runId, redact(active.error?.message ?? 'failed'));
          log.error({ run: active.run.runId, err: active.error?.message }, 'run failed');
        }
        await remote.close(active.run.runId, end);
        if (status === 'complete') {
          log.info({ run: active.run.runId }, 'run finished');
          await redis.hdel(keys.failed, active.run.runId);
        }
      },
      onProgress: (p) => {
        progress = p;
        options.onProgress?.({ ...p, sweepId, eventsTotal: eventsTotal - p.eventsSkipped, runsTotal: runs.length, requeued: transport.requeued, waitingForCollector: remote.waitingForCollector });
      },
    });
    inbox.start((e) => transport.fail(e));
    const rate = { at: Date.now(), written: 0, perSecond: 0 };
    const status = setInterval(() => {
      if (lease.lost) transport.fail(new Error('lost the scheduler lease: another scheduler took over this sweep'));
      if (!progress) return;
      const now = Date.now();
      if (now - rate.at >= 5000) {
        rate.perSecond = ((progress.eventsWritten - rate.written) * 1000) / (now - rate.at);
        rate.at = now;
        rate.written = progress.eventsWritten;
      }
      const inflight = transport.inflightByRun();
      void redis
        .multi()
        .hset(keys.status, { ...progress, eventsTotal: eventsTotal - progress.eventsSkipped, runsTotal: runs.length, eventsPerSecond: rate.perSecond, requeued: transport.requeued, updatedAt: now })
        .del(keys.inflight)
        .hset(keys.inflight, inflight.size > 0 ? Object.fromEntries(inflight) : { _: 0 })
        .exec()
        .catch(() => undefined);
    }, 1000);
    status.unref();
    closers.unshift(async () => clearInterval(status));
    // Stopping needs no draining: everything a restart needs is in Redis and the corpus already.
    let onAbort = () => {};
    const aborted = new Promise<'stopped'>((resolve) => (onAbort = () => resolve('stopped')));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    log.info({ runs: runs.length, events: eventsTotal, concurrency: spec.concurrency, cpu_ms: cpuMs() }, 'scheduler started');
    let outcome: 'ran' | 'stopped';
    try {
      outcome = await Promise.race([executor.run().then(() => 'ran' as const), aborted]);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) executor.stop();
      await transport.close();
    }
    if (outcome === 'stopped' || executor.stopped) {
      log.info({}, 'scheduler stopped: run it again to continue');
      return { sweepId, status: 'stopped', eventsTotal, failedRuns };
    }
    await remote.finish();
    log.info({ failed: failedRuns.length, cpu_ms: cpuMs() }, 'every run closed: the collector finishes the corpus');
    return { sweepId, status: failedRuns.length > 0 ? 'failed' : 'complete', eventsTotal, failedRuns };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}
