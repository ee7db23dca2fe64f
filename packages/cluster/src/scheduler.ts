import { dirname, isAbsolute, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { InputError, redact, sweepEvents, type RunPlan } from '@panta/core';
import { readManifestToResume } from '@panta/corpus';
import { inspectModelFolder } from '@panta/embed';
import {
  Executor,
  adaptiveOf,
  adoptGrids,
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
import { connect, type PantaRedis, ready, redisNow } from './redis.js';
import { decodeSchedulerMessage, type SchedulerMessage } from './redis/inbox.js';
import { InboxReader } from './redis/inbox-reader.js';
import { recordSweep } from './redis/registry.js';
import { SweepStore, type StatusReport } from './redis/sweep-store.js';
import { readRefusal } from './refusal.js';
import { EVENT_JOB_OPTIONS } from './result-codec.js';
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
    p: ExecutorProgress & {
      sweepId: string;
      eventsTotal: number;
      runsTotal: number;
      requeued: number;
      waitingForCollector: boolean;
      /** Adaptive temperatures: the round running (0: the start grid) and the rounds the spec allows. */
      round?: { index: number; of: number };
    },
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
  const sweepId = sweepIdOf(sweep.spec.name, sweep.fingerprint);
  const keys = sweepKeys(sweepId);
  const log = options.log.child({ sweep: sweepId });
  const eventsTotal = sweepEvents(sweep.runs);
  await checkBeforePublishing(sweep, options.out);
  // Commands of one turn go out in one write: a socket write per command was a visible share of the role's CPU.
  const redis = connect(options.redis, 'panta-scheduler', { autoPipelining: true, log });
  const store = new SweepStore(redis, keys);
  const queueConnection = connect(options.redis, 'panta-scheduler-queue', { log });
  const queue = new (bullmq().Queue)(EVENT_QUEUE, {
    connection: queueConnection,
    defaultJobOptions: EVENT_JOB_OPTIONS,
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
    const session: SchedulerSession = { sweep, sweepId, redis, queue, store, lease, startedAt, log, options, eventsTotal };
    const before = await endedBefore(session);
    if (before) return before;
    await publishSweep(session);
    return await new ScheduledSweep(session).run(closers);
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

/** What a scheduler holds once it has Redis and the sweep's lease. */
interface SchedulerSession {
  sweep: LoadedSweep;
  sweepId: string;
  redis: PantaRedis;
  queue: BullQueue;
  store: SweepStore;
  lease: RoleLease;
  /** Redis's clock when this scheduler started (refusals older than it are an earlier session's). */
  startedAt: number;
  log: Logger;
  options: SchedulerOptions;
  eventsTotal: number;
}

type BullQueue = ConstructorParameters<typeof BullTransport>[1];

/**
 * The summary when an earlier scheduler got this sweep far enough that nothing is scheduled: the collector is
 * finishing its corpus, or it finished and its corpus here is complete. Undefined: schedule it.
 */
async function endedBefore(session: SchedulerSession): Promise<SchedulerSummary | undefined> {
  const { store, sweep, sweepId, eventsTotal, log } = session;
  const phase = await store.phase();
  if (phase === 'finishing') {
    // An earlier scheduler asked the collector to finish the corpus: its verdict is this run's.
    log.info({}, 'every run closed before: waiting for the collector to finish the corpus');
    const verdict = await collectorVerdict(store, session.startedAt, log, refusalReporter(log), session.options.signal);
    return await ended(store, sweepId, eventsTotal, [], verdict);
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
  return undefined;
}

/** Writes the sweep's payload for the other roles, records it for `panta status`, and starts a new session report. */
async function publishSweep(session: SchedulerSession): Promise<void> {
  const { sweep, sweepId, store, options } = session;
  const payload = toPayload(sweepId, sweep, options.out, options.collectors ?? 1);
  await store.writePayload(payload);
  await recordSweep(session.redis, sweepId, {
    name: sweep.spec.name,
    out: payload.out,
    runs: sweep.runs.length,
    events: session.eventsTotal,
    started_at: new Date().toISOString(),
  });
  // The last session's report (its totals, its end) goes: `panta status` shows this session's.
  await store.beginSession();
  // Continuations an earlier scheduler left (and who took them) go: this one sends every unwritten event again.
  await store.forgetContinuations(sweep.runs.map((r) => r.runId));
}

/**
 * A published sweep being scheduled: the executor over the BullMQ transport, the collector sink that opens and
 * closes its runs, the inbox that brings workers' and collectors' replies, and a status timer.
 */
class ScheduledSweep {
  private readonly log: Logger;
  private readonly options: SchedulerOptions;
  private readonly collectors: number;
  private readonly transport: BullTransport;
  private readonly remote: CollectorSink;
  private readonly executorOptions: ExecutorOptions<RemoteSink>;
  /** The executor of the current round (adaptive temperatures: one per round, as embedded; else the only one). */
  private executor: Executor<RemoteSink>;
  /** The collector shard of every run (adaptive rounds add theirs). */
  private readonly shards: Map<string, number>;
  /** Adaptive temperatures: the round running (0: the start grid). */
  private round = 0;
  /** Progress of the rounds before the current one (the status counts the sweep's, not a round's). */
  private before: ExecutorProgress | undefined;
  private eventsTotal: number;
  /** A collector that refused the sweep (bad input at its end) exited; the sweep waits for one that accepts it. */
  private readonly saidRefusal: (refused: InputError) => void;
  private readonly failedRuns: string[] = [];
  private progress: ExecutorProgress | undefined;
  private ticks = 0;
  private readonly rate = { at: Date.now(), written: 0, perSecond: 0 };

  constructor(private readonly session: SchedulerSession) {
    const { sweep, redis, store, sweepId, options, log } = session;
    this.log = log;
    this.options = options;
    this.collectors = options.collectors ?? 1;
    this.saidRefusal = refusalReporter(log);
    const shards = collectorShards(sweep.runs, this.collectors, sweep.spec);
    this.shards = shards;
    this.eventsTotal = session.eventsTotal;
    this.transport = new BullTransport(redis, session.queue, sweepId, store, options.watchMs ?? 15_000, shards, session.lease.token);
    this.remote = new CollectorSink(redis, store, { of: shards, count: this.collectors });
    this.executorOptions = this.makeExecutorOptions();
    // Runs open in the embedded order (longest chain first: see chainsFirst), so both transports run a sweep alike.
    this.executor = new Executor<RemoteSink>(chainsFirst(sweep.runs), this.executorOptions);
  }

  /** Schedules every run until each is closed (or the scheduler is stopped), then waits for the collector's verdict. */
  async run(closers: (() => Promise<unknown>)[]): Promise<SchedulerSummary> {
    const { store, sweepId, startedAt, sweep } = this.session;
    const { log, transport, failedRuns } = this;
    const inbox = this.openInbox();
    await inbox.init();
    closers.unshift(() => inbox.close());
    inbox.start((e) => transport.fail(e));
    await this.followSlots().catch(() => undefined);
    const status = setInterval(() => this.tick(), 1000);
    status.unref();
    closers.unshift(async () => clearInterval(status));
    log.info(
      { runs: sweep.runs.length, events: this.eventsTotal, concurrency: this.executorOptions.concurrency, cpu_ms: cpuMs() },
      'scheduler started',
    );
    let outcome: 'ran' | 'stopped';
    try {
      outcome = await this.execute();
      if (outcome === 'ran') outcome = await this.rounds();
    } finally {
      await transport.close();
    }
    clearInterval(status);
    if (outcome === 'stopped' || this.executor.stopped) {
      log.info({}, 'scheduler stopped: run it again to continue');
      return await ended(store, sweepId, this.eventsTotal, failedRuns, 'stopped', this.progress, this.totals());
    }
    await this.remote.finish();
    log.info(
      {
        failed: failedRuns.length,
        jobs: transport.sent.jobs,
        job_events: transport.sent.events,
        // Events the watchdog sent again (their job gone and the event not committed): each may be called twice.
        requeued: transport.requeued,
        cpu_ms: cpuMs(),
      },
      'every run closed: the collector finishes the corpus',
    );
    // "complete" is said once the collector has written the corpus, not when the last event was.
    const verdict = await collectorVerdict(store, startedAt, log, this.saidRefusal, this.options.signal);
    return await ended(store, sweepId, this.eventsTotal, failedRuns, verdict, this.progress, this.totals());
  }

  /**
   * Adaptive temperatures (engine's adaptive-rounds.ts, as embedded): once every run of a round is closed, the
   * collector, which owns the corpus, computes the next round's grids from the finished runs with the embedded
   * sweep's function; the scheduler adopts them, publishes them (roles meeting a new run read them) and runs
   * the new runs. A restarted scheduler starts again at round 0: runs complete on disk are finished at once,
   * and each round's grids are computed again from the corpus, to the same ones.
   */
  private async rounds(): Promise<'ran' | 'stopped'> {
    const { sweep, store, sweepId, log } = this.session;
    const adaptive = adaptiveOf(sweep.spec);
    for (let round = 1; adaptive && round <= adaptive.rounds; round++) {
      // A round decides from every run before it: with one failed, the sweep ends failed here, and its rerun
      // (the failed run run again) decides the rest.
      if (this.failedRuns.length > 0 || this.executor.stopped) return 'ran';
      log.info({ round }, 'adaptive temperatures: every run of the round before is closed: the collector plans this round');
      const planned = await this.stoppable(this.remote.planRound(round, [...(sweep.grids ?? [])]));
      if (planned === 'stopped') return 'stopped';
      if (planned.missing > 0) return 'ran';
      const added = adoptGrids(sweep, new Map(planned.grids));
      for (const [run, shard] of collectorShards(sweep.runs, this.collectors, sweep.spec)) this.shards.set(run, shard);
      this.eventsTotal = sweepEvents(sweep.runs);
      // Published before any run of the round opens: the collector and workers read the grids again for it.
      await store.writePayload(toPayload(sweepId, sweep, this.options.out, this.collectors, round));
      log.info({ round, runs: added.length }, 'adaptive temperatures: round planned');
      if (added.length === 0) return 'ran';
      this.round = round;
      const last = this.executor.progress();
      this.before = this.before ? sumProgress(this.before, last) : last;
      this.executor = new Executor<RemoteSink>(chainsFirst(added), this.executorOptions);
      if ((await this.execute()) === 'stopped') return 'stopped';
    }
    return 'ran';
  }

  /** `work`, or 'stopped' once the signal aborts first. */
  private async stoppable<T>(work: Promise<T>): Promise<T | 'stopped'> {
    const { signal } = this.options;
    let onAbort = () => {};
    const aborted = new Promise<'stopped'>((resolve) => (onAbort = () => resolve('stopped')));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    try {
      return await Promise.race([work, aborted]);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Runs the executor until every run is closed, or until the signal aborts (stopping needs no draining: everything a restart needs is in Redis and the corpus already). */
  private async execute(): Promise<'ran' | 'stopped'> {
    try {
      return await this.stoppable(this.executor.run().then(() => 'ran' as const));
    } finally {
      if (this.options.signal?.aborted) this.executor.stop();
    }
  }

  /** The scheduler's inbox: collectors' opened/closed/written go to the sink, an unhealthy backend stops the sweep, the rest to the transport. */
  private openInbox(): InboxReader<SchedulerMessage> {
    const { redis, sweepId } = this.session;
    const { remote, transport, log } = this;
    return new InboxReader(redis, sweepKeys(sweepId).schedulerInbox, decodeSchedulerMessage, (entries) => {
      for (const { message: m } of entries) {
        if (m.op === 'opened' || m.op === 'closed' || m.op === 'written' || m.op === 'round') remote.deliver(m);
        // A worker's backend cannot produce answers: the sweep stops with its line (exit 1); rerun once fixed.
        else if (m.op === 'unhealthy') {
          log.error({ err: m.error, role: m.role }, `a ${m.role} reports its model endpoint unhealthy: stopping the sweep`);
          const stopping = m.role === 'worker' ? remote.stop(m.error) : Promise.resolve();
          void stopping.catch(() => undefined).finally(() => transport.fail(new Error(m.error)));
        } else transport.deliver(m);
      }
    });
  }

  /**
   * The collector holds an open run's rows, the scheduler decides which runs are open: it weighs them as the
   * collector will (sweepSizing), ONNX encoders at 1,024 floats (they are not opened here).
   */
  private sizing(slots: number): ReturnType<typeof sweepSizing> {
    const { spec, runs } = this.session.sweep;
    const columns = spec.encoders.map((e) => ({ name: e.name, dim: e.kind === 'hashing' ? e.dim : 1024 }));
    return sweepSizing(slots, columns, runs.length, spec.lookahead, callsAreSlow(spec));
  }

  private makeExecutorOptions(): ExecutorOptions<RemoteSink> {
    const { sweep, sweepId } = this.session;
    const sizing = this.sizing(sweep.spec.concurrency);
    return {
      transport: this.transport,
      concurrency: sweep.spec.concurrency,
      maxActiveRuns: sizing.maxActiveRuns,
      runBytes: sizing.runBytes,
      openBytesBudget: sizing.openBytesBudget,
      open: (run) => this.openRun(run),
      close: (active) => this.closeRun(active),
      onProgress: (round) => {
        const p = this.before ? sumProgress(this.before, round) : round;
        this.progress = p;
        this.options.onProgress?.({
          ...p,
          sweepId,
          eventsTotal: this.eventsTotal - p.eventsSkipped,
          runsTotal: sweep.runs.length,
          requeued: this.transport.requeued,
          waitingForCollector: this.remote.waitingForCollector,
          ...this.roundReport(),
        });
      },
    };
  }

  /** The runs planned and, with adaptive temperatures, the round reached: what `panta status` keeps once the scheduler ended. */
  private totals(): StatusReport {
    const round = this.roundReport().round;
    return { runsTotal: this.session.sweep.runs.length, ...(round ? { round: round.index, rounds: round.of } : {}) };
  }

  /** Adaptive temperatures: the round running and the rounds the spec allows (for progress and `panta status`). */
  private roundReport(): { round?: { index: number; of: number } } {
    const adaptive = adaptiveOf(this.session.sweep.spec);
    return adaptive ? { round: { index: this.round, of: adaptive.rounds } } : {};
  }

  /** Opens a run at the collector: one it holds finalized is complete on disk; one it holds in part resumes. */
  private async openRun(run: RunPlan): Promise<ActiveRun<RemoteSink> | null> {
    const { executor } = this;
    const opened = await this.remote.open(run.runId);
    if (opened.finalized) {
      executor.completeOnDisk(run, opened.next);
      return null;
    }
    if (opened.next > 0) this.log.info({ run: run.runId, nextEvent: opened.next }, 'run resumed');
    executor.written(opened.next);
    const planner = plannerFor(this.session.sweep, run, opened.next, opened.control);
    return {
      run,
      planner,
      sink: this.remote.sink(run.runId, opened.next, (count) => executor.written(count), opened.control),
      inflight: 0,
      startedAt: performance.now(),
    };
  }

  private async closeRun(active: ActiveRun<RemoteSink>): Promise<void> {
    const { store } = this.session;
    const end = runEnd(active);
    const { status } = end;
    if (status === 'stopped') return; // the collector makes rows durable on its own schedule
    if (status === 'failed') {
      this.failedRuns.push(active.run.runId);
      await store.markFailed(active.run.runId, redact(active.error?.message ?? 'failed'));
      this.log.error({ run: active.run.runId, err: active.error?.message }, 'run failed');
    }
    await this.remote.close(active.run.runId, end);
    if (status === 'complete') {
      this.log.info({ run: active.run.runId }, 'run finished');
      await store.clearFailed(active.run.runId);
    }
  }

  /**
   * Events in flight follow the live workers' slots and a margin queued beyond them (never fewer than the
   * spec's concurrency), so that more workers mean more throughput; --concurrency on the command line fixes
   * the cap instead. The executor reads its options at every dispatch, so a new cap takes effect with the
   * next event.
   */
  private async followSlots(): Promise<void> {
    const { workers, slots } = await liveSlots(this.session.redis);
    this.transport.setWorkers(workers, slots);
    if (this.options.concurrency !== undefined) return;
    const cap = Math.max(this.session.sweep.spec.concurrency, slots + queuedMargin(slots));
    if (cap === this.executorOptions.concurrency) return;
    const sizing = this.sizing(cap);
    this.executorOptions.concurrency = cap;
    this.executorOptions.maxActiveRuns = sizing.maxActiveRuns;
    this.executorOptions.openBytesBudget = sizing.openBytesBudget;
    this.log.info({ concurrency: cap, workers, slots }, "events in flight follow the workers' slots");
  }

  /** Every second: the workers' slots (every fifth), the lease, a collector's refusal, and the status `panta status` shows. */
  private tick(): void {
    const { store, lease, startedAt, sweep } = this.session;
    const { transport, progress, rate, eventsTotal } = this;
    if (this.ticks++ % 5 === 0) void this.followSlots().catch(() => undefined);
    if (lease.lost) transport.fail(new Error('lost the scheduler lease: another scheduler took over this sweep'));
    void readRefusal(store, startedAt)
      .then((refused) => refused && this.saidRefusal(refused))
      .catch(() => undefined);
    if (!progress) return;
    const now = Date.now();
    const round = this.roundReport().round;
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
          runsTotal: sweep.runs.length,
          eventsPerSecond: rate.perSecond,
          requeued: transport.requeued,
          updatedAt: now,
          ...(round ? { round: round.index, rounds: round.of } : {}),
        },
        transport.inflightByRun(),
      )
      .catch(() => undefined);
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
  extra: StatusReport = {},
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
    ...extra,
  });
  return { sweepId, status, eventsTotal, failedRuns };
}

/** The progress of rounds before (`a`) and of the current one (`b`): counts add up, what is open now is `b`'s. */
function sumProgress(a: ExecutorProgress, b: ExecutorProgress): ExecutorProgress {
  return {
    eventsWritten: a.eventsWritten + b.eventsWritten,
    eventsExecuted: a.eventsExecuted + b.eventsExecuted,
    inflight: b.inflight,
    calls: a.calls + b.calls,
    tokens: a.tokens + b.tokens,
    completionTokens: a.completionTokens + b.completionTokens,
    retries: a.retries + b.retries,
    runsActive: b.runsActive,
    runsFinished: a.runsFinished + b.runsFinished,
    runsFailed: a.runsFailed + b.runsFailed,
    eventsSkipped: a.eventsSkipped + b.eventsSkipped,
  };
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
