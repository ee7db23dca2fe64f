import { dirname, isAbsolute, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { InputError, redact, sweepEvents, type RunPlan } from '@panta/core';
import { readManifestToResume } from '@panta/corpus';
import { inspectModelFolder } from '@panta/embed';
import {
  Executor,
  chainsFirst,
  loadSweep,
  plannerFor,
  callsAreSlow,
  runEnd,
  sweepSizing,
  type ActiveRun,
  type ExecutorOptions,
  type ExecutorProgress,
  type LoadedSweep,
  type Logger,
  type SweepOverrides,
} from '@panta/engine';
import { BullTransport } from './bull-transport.js';
import { bullmq } from './cjs-deps.js';
import { collectorShards } from './collector-shards.js';
import { EVENT_QUEUE, sweepIdOf, sweepKeys } from './keys.js';
import { toPayload } from './payload.js';
import { cpuMs } from './cpu.js';
import { connect, ready, redisNow } from './redis.js';
import { decodeSchedulerMessage } from './redis/inbox.js';
import { InboxReader } from './redis/inbox-reader.js';
import { recordSweep } from './redis/registry.js';
import { SweepStore } from './redis/sweep-store.js';
import { readRefusal } from './refusal.js';
import { RoleLease } from './role-lease.js';
import { liveSlots } from './worker-registry.js';
import { CollectorSink, type RemoteSink } from './collector-sink.js';

export interface SchedulerOptions extends SweepOverrides {
  redis: string;
  log: Logger;
  signal?: AbortSignal;
  /** How long an event may be in flight before the watchdog checks that its job still exists. */
  watchMs?: number;
  /** Collector processes the runs are split over (each started with --shard i/K); default 1. */
  collectors?: number;
  onProgress?(
    p: ExecutorProgress & { sweepId: string; eventsTotal: number; runsTotal: number; requeued: number; waitingForCollector: boolean },
  ): void;
}

export interface SchedulerSummary {
  sweepId: string;
  /** finished: the sweep had finished before and its corpus, seen here, is complete: nothing was scheduled. */
  status: 'complete' | 'stopped' | 'failed' | 'finished';
  /** The corpus folder as the scheduler sees it. */
  out?: string;
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
  await checkBeforePublishing(sweep, options.out);
  // Commands of one turn go out in one write: a socket write per command was a visible share of the role's CPU.
  const redis = connect(options.redis, 'panta-scheduler', { autoPipelining: true, log });
  const store = new SweepStore(redis, keys);
  const queueConnection = connect(options.redis, 'panta-scheduler-queue', { log });
  const queue = new (bullmq().Queue)(EVENT_QUEUE, {
    connection: queueConnection,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
  });
  queue.on('error', () => undefined); // failures surface from the calls
  const closers: (() => Promise<unknown>)[] = [() => queue.close(), () => queueConnection.quit(), () => redis.quit()];
  try {
    if (!(await ready(redis, options.redis, options.signal))) {
      // Stopped while Redis was unreachable: quit() would wait for it, and the queue for its connection.
      closers.splice(0);
      queueConnection.disconnect();
      redis.disconnect();
      return { sweepId, status: 'stopped', eventsTotal, failedRuns: [] };
    }
    const startedAt = await redisNow(redis);
    const lease = await RoleLease.acquire(
      redis,
      keys.schedulerLease,
      (holder) => log.warn({ holder }, 'another scheduler holds this sweep: waiting for its lease'),
      options.signal,
    );
    if (!lease) return { sweepId, status: 'stopped', eventsTotal, failedRuns: [] };
    closers.unshift(() => lease.release());
    const phase = await store.phase();
    if (phase === 'finishing') {
      // An earlier scheduler asked the collector to finish the corpus: its verdict is this run's.
      log.info({}, 'every run closed before: waiting for the collector to finish the corpus');
      return await ended(
        store,
        sweepId,
        eventsTotal,
        [],
        await collectorVerdict(store, startedAt, log, refusalReporter(log), options.signal),
      );
    }
    // A finished sweep is scheduled again rather than reported complete: only the collector sees the corpus at
    // its --out. Runs it holds complete are not run again (the collector answers them finalized); runs deleted
    // or damaged there since are run again; the corpus is finished once more either way. A sweep that finished
    // with failed runs ('failed') is scheduled again the same way: those runs resume.
    if (phase === 'done') {
      // Seen complete from here: a second scheduler of a finished spec says so instead of reopening it (it
      // would show as running at 0% until a collector came).
      if (completeCorpus(sweep)) {
        log.info({ out: sweep.out }, 'this sweep finished before and its corpus is complete: nothing to schedule');
        await store.confirmFinished();
        return { sweepId, status: 'finished', eventsTotal, failedRuns: [], out: sweep.out };
      }
      log.info({ out: sweep.out }, 'this sweep finished before: the collector checks its corpus, runs what it lacks and finishes it again');
    }
    const collectors = options.collectors ?? 1;
    const payload = toPayload(sweepId, sweep, options.out, collectors);
    await store.writePayload(payload);
    await recordSweep(redis, sweepId, {
      name: spec.name,
      out: payload.out,
      runs: runs.length,
      events: eventsTotal,
      started_at: new Date().toISOString(),
    });
    // The last session's report (its totals, its end) goes: `panta status` shows this session's.
    await store.beginSession();

    // A collector that refused the sweep (bad input at its end) exited; the sweep waits for one that accepts it.
    const saidRefusal = refusalReporter(log);
    const shards = collectorShards(runs, collectors);
    const transport = new BullTransport(redis, queue, sweepId, store, options.watchMs ?? 15_000, shards);
    const remote = new CollectorSink(redis, store, { of: shards, count: collectors });
    const inbox = new InboxReader(redis, keys.schedulerInbox, decodeSchedulerMessage, (entries) => {
      for (const { message: m } of entries) {
        if (m.op === 'opened' || m.op === 'closed' || m.op === 'written') remote.deliver(m);
        // A worker's backend cannot produce answers: the sweep stops with its line (exit 1); rerun once fixed.
        else if (m.op === 'unhealthy') {
          log.error({ err: m.error, role: m.role }, `a ${m.role} reports its model endpoint unhealthy: stopping the sweep`);
          const stopping = m.role === 'worker' ? remote.stop(m.error) : Promise.resolve();
          void stopping.catch(() => undefined).finally(() => transport.fail(new Error(m.error)));
        } else transport.deliver(m);
      }
    });
    await inbox.init();
    closers.unshift(() => inbox.close());

    const failedRuns: string[] = [];
    let progress: ExecutorProgress | undefined;
    // The collector holds an open run's rows, the scheduler decides which runs are open: it weighs them as the
    // collector will (sweepSizing), ONNX encoders at 1,024 floats (they are not opened here).
    const columns = spec.encoders.map((e) => ({ name: e.name, dim: e.kind === 'hashing' ? e.dim : 1024 }));
    const sizing = (slots: number) => sweepSizing(slots, columns, runs.length, spec.lookahead, callsAreSlow(spec));
    const executorOptions: ExecutorOptions<RemoteSink> = {
      transport,
      concurrency: spec.concurrency,
      maxActiveRuns: sizing(spec.concurrency).maxActiveRuns,
      runBytes: sizing(spec.concurrency).runBytes,
      openBytesBudget: sizing(spec.concurrency).openBytesBudget,
      open: async (run: RunPlan): Promise<ActiveRun<RemoteSink> | null> => {
        const opened = await remote.open(run.runId);
        if (opened.finalized) {
          executor.completeOnDisk(run, opened.next);
          return null;
        }
        if (opened.next > 0) log.info({ run: run.runId, nextEvent: opened.next }, 'run resumed');
        executor.written(opened.next);
        const planner = plannerFor(sweep, run, opened.next, opened.control);
        return {
          run,
          planner,
          sink: remote.sink(run.runId, opened.next, (count) => executor.written(count), opened.control),
          inflight: 0,
          startedAt: performance.now(),
        };
      },
      close: async (active: ActiveRun<RemoteSink>): Promise<void> => {
        const end = runEnd(active);
        const { status } = end;
        if (status === 'stopped') return; // the collector makes rows durable on its own schedule
        if (status === 'failed') {
          failedRuns.push(active.run.runId);
          await store.markFailed(active.run.runId, redact(active.error?.message ?? 'failed'));
          log.error({ run: active.run.runId, err: active.error?.message }, 'run failed');
        }
        await remote.close(active.run.runId, end);
        if (status === 'complete') {
          log.info({ run: active.run.runId }, 'run finished');
          await store.clearFailed(active.run.runId);
        }
      },
      onProgress: (p) => {
        progress = p;
        options.onProgress?.({
          ...p,
          sweepId,
          eventsTotal: eventsTotal - p.eventsSkipped,
          runsTotal: runs.length,
          requeued: transport.requeued,
          waitingForCollector: remote.waitingForCollector,
        });
      },
    };
    // Runs open in the embedded order (longest chain first: see chainsFirst), so both transports run a sweep alike.
    const executor: Executor<RemoteSink> = new Executor<RemoteSink>(chainsFirst(runs), executorOptions);
    inbox.start((e) => transport.fail(e));
    const rate = { at: Date.now(), written: 0, perSecond: 0 };
    // Events in flight follow the live workers' slots and a margin queued beyond them (never fewer than the
    // spec's concurrency), so that more workers mean more throughput; --concurrency on the command line fixes
    // the cap instead. The executor reads its options at every dispatch, so a new cap takes effect with the
    // next event.
    let ticks = 0;
    const followSlots = async () => {
      const { workers, slots } = await liveSlots(redis);
      transport.setWorkers(workers, slots);
      if (options.concurrency !== undefined) return;
      const cap = Math.max(spec.concurrency, slots + queuedMargin(slots));
      if (cap === executorOptions.concurrency) return;
      executorOptions.concurrency = cap;
      executorOptions.maxActiveRuns = sizing(cap).maxActiveRuns;
      executorOptions.openBytesBudget = sizing(cap).openBytesBudget;
      log.info({ concurrency: cap, workers, slots }, "events in flight follow the workers' slots");
    };
    await followSlots().catch(() => undefined);
    const status = setInterval(() => {
      if (ticks++ % 5 === 0) void followSlots().catch(() => undefined);
      if (lease.lost) transport.fail(new Error('lost the scheduler lease: another scheduler took over this sweep'));
      void readRefusal(store, startedAt)
        .then((refused) => refused && saidRefusal(refused))
        .catch(() => undefined);
      if (!progress) return;
      const now = Date.now();
      if (now - rate.at >= 5000) {
        rate.perSecond = ((progress.eventsWritten - rate.written) * 1000) / (now - rate.at);
        rate.at = now;
        rate.written = progress.eventsWritten;
      }
      void store
        .writeStatus(
          {
            ...progress,
            eventsTotal: eventsTotal - progress.eventsSkipped,
            runsTotal: runs.length,
            eventsPerSecond: rate.perSecond,
            requeued: transport.requeued,
            updatedAt: now,
          },
          transport.inflightByRun(),
        )
        .catch(() => undefined);
    }, 1000);
    status.unref();
    closers.unshift(async () => clearInterval(status));
    // Stopping needs no draining: everything a restart needs is in Redis and the corpus already.
    let onAbort = () => {};
    const aborted = new Promise<'stopped'>((resolve) => (onAbort = () => resolve('stopped')));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    log.info({ runs: runs.length, events: eventsTotal, concurrency: executorOptions.concurrency, cpu_ms: cpuMs() }, 'scheduler started');
    let outcome: 'ran' | 'stopped';
    try {
      outcome = await Promise.race([executor.run().then(() => 'ran' as const), aborted]);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) executor.stop();
      await transport.close();
    }
    clearInterval(status);
    if (outcome === 'stopped' || executor.stopped) {
      log.info({}, 'scheduler stopped: run it again to continue');
      return await ended(store, sweepId, eventsTotal, failedRuns, 'stopped', progress);
    }
    await remote.finish();
    log.info(
      { failed: failedRuns.length, jobs: transport.sent.jobs, job_events: transport.sent.events, cpu_ms: cpuMs() },
      'every run closed: the collector finishes the corpus',
    );
    // "complete" is said once the collector has written the corpus, not when the last event was.
    const verdict = await collectorVerdict(store, startedAt, log, saidRefusal, options.signal);
    return await ended(store, sweepId, eventsTotal, failedRuns, verdict, progress);
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

/**
 * What the scheduler can check before it publishes (the collector and workers check the same on their
 * machines, later): every encoder's model folder holds its files (compose and Kubernetes mount the models in
 * every role; they are not loaded here, which would need the spec's device, a GPU for `cuda`), and the
 * corpus folder, when this machine sees it, holds no corpus of another sweep. The spec, dataset and template
 * were read by loadSweep. Each failure is one line, exit 2, before anything reaches Redis.
 */
async function checkBeforePublishing(sweep: LoadedSweep, outArg: string | undefined): Promise<void> {
  sweep.spec.encoders.forEach((encoder, i) => {
    if (encoder.kind !== 'onnx') return;
    const path = isAbsolute(encoder.path) ? encoder.path : resolve(dirname(sweep.specFile), encoder.path);
    inspectModelFolder(path, { file: sweep.specFile, field: `encoders[${i}].path` });
  });
  const previous = readManifestToResume(sweep.out);
  if (previous && previous.fingerprint !== sweep.fingerprint) {
    throw new InputError(
      outArg === undefined ? sweep.specFile : '--out',
      'out',
      `${sweep.out} holds a corpus of a different sweep`,
      'give the scheduler and the collector another --out, or delete that folder to start over',
    );
  }
}

/**
 * Waits for the collector to write the corpus (phase done or failed); a refusal it records (bad input at its
 * end) is said, and the wait goes on for a collector that accepts the sweep. Says what it waits for now and
 * then: a collector that is not running leaves the scheduler here.
 */
async function collectorVerdict(
  store: SweepStore,
  startedAt: number,
  log: Logger,
  saidRefusal: (refused: InputError) => void,
  signal?: AbortSignal,
): Promise<'complete' | 'failed' | 'stopped'> {
  for (let waited = 0; !signal?.aborted; waited++) {
    const refused = await readRefusal(store, startedAt);
    if (refused) saidRefusal(refused);
    const phase = await store.phase();
    if (phase === 'done') return 'complete';
    if (phase === 'failed') return 'failed';
    if (waited > 0 && waited % 20 === 0) log.info({ waited_s: waited / 2 }, 'waiting for the collector to finish the corpus');
    await sleep(500);
  }
  return 'stopped';
}

/**
 * Says once per refusal that a collector refused the sweep (its own line: a corpus of another sweep at its
 * --out, a missing model): that collector exited 2, and the scheduler goes on waiting for one that accepts
 * the sweep, so that one mistaken collector does not stop it (under Slurm, the job script stops the job when
 * its collector exits non-zero).
 */
function refusalReporter(log: Logger): (refused: InputError) => void {
  let said = '';
  return (refused) => {
    if (refused.message === said) return;
    said = refused.message;
    log.warn(
      { refusal: redact(refused.message) },
      'a collector refused this sweep and exited: waiting for a collector that accepts it (the sweep goes on)',
    );
  };
}

/** Whether the corpus of this sweep at its out folder, as seen from here, is complete. */
function completeCorpus(sweep: LoadedSweep): boolean {
  try {
    const manifest = readManifestToResume(sweep.out);
    return manifest !== null && manifest.fingerprint === sweep.fingerprint && manifest.status === 'complete';
  } catch {
    return false;
  }
}

/** The scheduler's last report: nothing in flight or open any more, and that it ended (`panta status`). */
async function ended(
  store: SweepStore,
  sweepId: string,
  eventsTotal: number,
  failedRuns: string[],
  status: SchedulerSummary['status'],
  last?: ExecutorProgress,
): Promise<SchedulerSummary> {
  // The counts as they ended (calls, tokens, events written): the last report of the status timer may be
  // up to a second older, which left `panta status` short of the calls runs.parquet sums.
  const counts = last ? { ...last, eventsTotal: eventsTotal - last.eventsSkipped } : {};
  await store.writeEnded({
    ...counts,
    inflight: 0,
    runsActive: 0,
    eventsPerSecond: 0,
    endedAt: Date.now(),
    ended: status,
    updatedAt: Date.now(),
  });
  return { sweepId, status, eventsTotal, failedRuns };
}

/**
 * Events kept in flight beyond the workers' slots, waiting in the queue: a slot a reply frees then starts an
 * event the worker finds there, instead of idling while the commit reaches the scheduler and the event it
 * releases comes back as a job (three processes and four Redis steps, tens of milliseconds on a loaded
 * machine). An eighth of the slots covers a turnover of an eighth of a call; the executor's order is
 * unchanged, and an event queued early reads the versions its plan names, whenever it runs (bench/NOTES.md:
 * a margin of queued events: bench/cluster-sim 88-89% -> 93% of slot-time busy).
 */
export function queuedMargin(slots: number): number {
  return Math.ceil(slots / 8);
}
