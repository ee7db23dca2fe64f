import { setTimeout as sleep } from 'node:timers/promises';
import { InputError, poolsBudget, redact, runEvents, toError, type EncoderColumn, type JudgeSpec, type RunPlan } from '@panta/core';
import { existsSync } from 'node:fs';
import { acquireOutLock, getDuckDB, readManifestToResume, shardPath, shardProgress, type Manifest, type OutLock } from '@panta/corpus';
import {
  SweepCorpus,
  adoptGrids,
  nextRound,
  recordRounds,
  corpusToResume,
  makeOutFolder,
  finishSweep,
  openEncoders,
  plannerFor,
  readVersionTexts,
  startManifest,
  sweepMeta,
  sweepSizing,
  callsAreSlow,
  type LoadedSweep,
  type Logger,
  type BoundaryOutcome,
  type RunRecorder,
  type SweepSummary,
} from '@panta/engine';
import { LlmJudge, createJudge, type Judge } from '@panta/judge';
import { endpointsOf, unhealthyCause, waitForEndpoints } from '@panta/llm';
import type { Redis } from 'ioredis';
import { durableDue } from './collector-durable.js';
import { ReadPace } from './collector-pace.js';
import { collectorShards } from './collector-shards.js';
import { collectorKeys, sweepKeys, type SweepKeys } from './keys.js';
import { hopTraceFor } from './hop-trace.js';
import { fromPayload } from './payload.js';
import { cpuMs } from './cpu.js';
import { closeConnection, connect, ready, type PantaRedis } from './redis.js';
import type { CloseRun, CollectorMessage, Delivered, PlanRound, ResultsCommitted } from './redis/inbox.js';
import { ackCollectorInbox, ensureCollectorGroup, readCollectorInbox, sendToScheduler, type CollectorRead } from './redis/inboxes.js';
import { leaseHeld } from './redis/leases.js';
import { listSweeps } from './redis/registry.js';
import { SweepStore } from './redis/sweep-store.js';
import { RedisVerdicts } from './redis/verdicts.js';
import { clearRefusal, recordRefusal } from './refusal.js';
import { decodeResults } from './result-codec.js';
import { RoleLease } from './role-lease.js';
import { DEFAULT_WAIT_ENDPOINT_MS } from './worker-context.js';

/** When the collector reads a commit (PANTA_HOP_TRACE; see hop-trace.ts). */
const trace = hopTraceFor('collector');
/** How often the collector reads its own pending inbox entries again. */
const PENDING_READ_MS = 5000;
/**
 * How long after rows are appended the scheduler hears how far each run's rows are (its window and run
 * retirement follow). Armed by the rows themselves, not a clock: a collector with nothing arriving does not
 * wake 20 times a second, which K idle or thinly fed shards paid K times (bench/NOTES.md: reports armed by rows).
 */
const REPORT_MS = 50;
/**
 * Reads of the workers' commits are paced to bring about GATHER_EVENTS events each, waiting at most
 * GATHER_MAX_MS between two (collector-pace.ts). The rows' latency this adds is absorbed by the scheduler's
 * window of unwritten events (the spec's lookahead, 16,384 by default); no control request waits for it, and
 * a run whose end waits on its rows alone asks for them ('rows'), so runs retire as soon as before. A read
 * of 256 events is about 40 ms of work here; reads of 500 may have cost chains some slot-time on a 2-core
 * machine, where the collector's bursts take a core from the roles on the chain's path (bench/NOTES.md:
 * paced reads).
 */
const GATHER_EVENTS = 256;
const GATHER_MAX_MS = 1000;
/** Entries one read takes from each inbox at most. */
const READ_COUNT = 1000;
/**
 * Appended rows become durable (a Parquet part, after which their results leave Redis) once the oldest has
 * waited `durableMs` (default DURABLE_MS), or once the run's waiting results fill a part worth its file
 * (DURABLE_PART_BYTES), or, largest runs first, while all runs' waiting results exceed DURABLE_BUDGET_BYTES
 * (Redis's memory, and what a restarted collector reads again). Every part costs a file, two fsyncs and a
 * merge at the run's close: made durable every 10 s whatever their size, the small runs of an eraclitus-like
 * sweep wrote six parts of about 20 rows each, most of the collector's CPU per event (bench/NOTES.md: parts
 * worth their files).
 */
const DURABLE_MS = 60_000;
const DURABLE_PART_BYTES = 4 << 20;
const DURABLE_BUDGET_BYTES = 256 << 20;
/** How often the runs' waiting rows are looked at, at most. */
const DURABLE_TICK_MS = 5_000;

export interface CollectorOptions {
  redis: string;
  /** Output folder (default: the one the scheduler was given, relative to this process's folder). */
  out?: string;
  /** Which sweep, when Redis holds more than one unfinished. */
  sweep?: string;
  /** Replaces the LLM judge's endpoint (the judge is the only model the collector calls). */
  baseUrl?: string;
  log: Logger;
  signal?: AbortSignal;
  /**
   * The longest appended rows wait to be made durable (and their results deleted from Redis), default 60 s;
   * a run's rows go sooner once they fill a part, and the largest runs' while Redis holds too many results.
   */
  durableMs?: number;
  /** How long to wait for an LLM judge's endpoint to answer before collecting (default 600 s; 0: not at all). */
  waitEndpointMs?: number;
  /** Called once the sweep is known and validated (the CLI says where the corpus goes). */
  onSweep?(sweep: LoadedSweep): void;
  /**
   * This collector's part of the runs when the scheduler splits them over K collectors
   * (`panta scheduler --collectors K`, `panta collector --shard I/K`, I from 1 as for job arrays); absent: all.
   */
  shard?: { index: number; count: number } | 'auto';
}

interface OpenRun {
  run: RunPlan;
  recorder: RunRecorder;
  /** Rows durably written: their results are gone from Redis. */
  durable: number;
  /** Bytes of the results taken since the rows were last made durable, and when the first of them came. */
  waitingBytes: number;
  waitingSince: number | undefined;
  reported: number;
  closing: boolean;
}

/**
 * The collector role (the order-parameter service): owns the corpus. It opens runs where their durable
 * rows end, judges and appends committed results in event order, makes rows durable every few seconds and
 * only then deletes their results from Redis, closes runs, and finally writes runs.parquet, whitening,
 * order parameters and the manifest. Its inbox is read through a consumer group: a request it had not
 * finished when killed is delivered again on restart, and every request is idempotent.
 */
export async function runCollector(options: CollectorOptions): Promise<SweepSummary | null> {
  // Commands of one turn go out in one write (see the scheduler's connection).
  const redis = connect(options.redis, 'panta-collector', { autoPipelining: true, log: options.log });
  const blocking = redis.duplicate();
  blocking.on('error', () => undefined);
  try {
    if (!(await ready(redis, options.redis, options.signal))) return null;
    const picked = await pickSweep(redis, options, Date.now());
    if (!picked) return null;
    const sweepId = picked.sweepId;
    const base = sweepKeys(sweepId);
    let store = new SweepStore(redis, base);
    if (picked.finished) return await finishedBefore(store, options);
    try {
      const payload = await store.payload();
      if (!payload) throw new Error(`sweep ${sweepId} is not published in Redis (${base.spec} is missing)`);
      const collectors = payload.collectors ?? 1;
      // --shard I/K counts from 1, as job arrays do; keys and the split count from 0.
      const wanted = options.shard;
      const shard =
        wanted === 'auto'
          ? { index: -1, count: collectors }
          : wanted
            ? { index: wanted.index - 1, count: wanted.count }
            : { index: 0, count: 1 };
      if (wanted !== 'auto') checkShard(collectors, shard);
      const sweep = fromPayload(payload, options.out);
      const previous = corpusToResume(sweep, {
        file: sweep.out,
        fix: 'give the collector another --out, or delete that folder to start over',
      });
      const lease =
        wanted === 'auto'
          ? await freeShard(redis, store, base, shard, options)
          : await RoleLease.acquire(
              redis,
              collectorKeys(base, shard.index).collectorLease,
              (holder) => options.log.warn({ holder }, 'another collector holds this sweep: waiting for its lease'),
              options.signal,
            );
      if (!lease) return null;
      store = new SweepStore(redis, collectorKeys(base, shard.index));
      try {
        options.onSweep?.(sweep);
        const collector = new CollectorProcess(redis, blocking, store, sweep, options, lease, shard);
        return await collector.serve(previous).finally(() => collector.outLock?.release());
      } finally {
        await lease.release();
      }
    } catch (error) {
      // The scheduler stops with the same line instead of waiting for this collector.
      if (error instanceof InputError && !(error instanceof ShardMismatchError))
        await recordRefusal(redis, store, error).catch(() => undefined);
      throw error;
    }
  } finally {
    blocking.disconnect();
    await closeConnection(redis);
  }
}

/**
 * A collector started as a shard of a split the scheduler did not make: one line, exit 2. Unlike other bad
 * input at the collector's end it does not stop the scheduler: the right collectors may be running.
 */
class ShardMismatchError extends InputError {}

function checkShard(collectors: number, shard: { index: number; count: number }): void {
  if (shard.count === collectors) return;
  const fix =
    collectors === 1
      ? 'start one collector without --shard, or the scheduler with --collectors N and N collectors'
      : `start ${collectors} collectors, --shard 1/${collectors} to --shard ${collectors}/${collectors}`;
  throw new ShardMismatchError(
    '--shard',
    '',
    `the scheduler splits this sweep's runs over ${collectors} collector${collectors === 1 ? '' : 's'}, not ${shard.count}`,
    fix,
  );
}

/**
 * `--shard auto`: the first shard of the scheduler's split that no collector holds and that has not finished
 * (its lease taken at once, so that K collectors started alike, as replicas of one service, share the K
 * shards), waiting while every unfinished shard has a live collector. Sets shard.index; null once stopped.
 */
async function freeShard(
  redis: PantaRedis,
  store: SweepStore,
  base: SweepKeys,
  shard: { index: number; count: number },
  options: CollectorOptions,
): Promise<RoleLease | null> {
  for (let waited = 0; !options.signal?.aborted; waited++) {
    const done = await store.collectorsDone();
    for (let i = 0; i < shard.count; i++) {
      if (done.has(i)) continue;
      const lease = await RoleLease.tryAcquire(redis, collectorKeys(base, i).collectorLease);
      if (lease) {
        shard.index = i;
        options.log.info({ shard: `${i + 1}/${shard.count}` }, 'collector took a shard');
        return lease;
      }
    }
    if (waited % 20 === 0)
      options.log.warn({ shards: shard.count }, 'every unfinished shard of this sweep has a collector: waiting for a free one');
    await sleep(500);
  }
  return null;
}

/**
 * A sweep a scheduler started since this collector confirmed finished (its corpus complete where the scheduler
 * sees it): nothing to collect. The summary is the corpus's manifest, as the collector sees it at its --out.
 */
async function finishedBefore(store: SweepStore, options: CollectorOptions): Promise<SweepSummary | null> {
  const payload = await store.payload();
  if (!payload) return null;
  const sweep = fromPayload(payload, options.out);
  const manifest = readManifestToResume(sweep.out);
  if (!manifest || manifest.fingerprint !== sweep.fingerprint || manifest.status !== 'complete') {
    throw new InputError(
      '--out',
      'out',
      `a scheduler says sweep ${sweep.spec.name} finished with its corpus complete, but ${sweep.out} holds no complete corpus of it here`,
      'give the collector the --out the scheduler sees, or delete the sweep from Redis to run it again',
    );
  }
  options.log.info({ out: sweep.out }, 'this sweep finished before and its corpus is complete (a scheduler said so): nothing to collect');
  return {
    out: sweep.out,
    status: 'complete',
    runsComplete: manifest.runs.complete,
    runsPlanned: manifest.runs.planned,
    failed: [],
    eventsWritten: manifest.events.written,
    final: [],
  };
}

/**
 * The sweep to collect: the one named, or the only unfinished one, waiting for a scheduler to publish it. A
 * finished sweep waits too: a scheduler run again publishes it again (see runScheduler), and only then is
 * there anything to collect; or it confirms the sweep finished (its corpus complete), and there is nothing.
 */
async function pickSweep(redis: Redis, options: CollectorOptions, since: number): Promise<{ sweepId: string; finished: boolean } | null> {
  // A confirmation from before this collector started is an earlier job's: the collector waits past it.
  const confirmed = async (id: string) => (await new SweepStore(redis, sweepKeys(id)).finishedConfirmedAt()) >= since - 5_000;
  for (let waited = 0; !options.signal?.aborted; waited++) {
    const ids = [...(await listSweeps(redis)).keys()];
    if (options.sweep) {
      if (ids.includes(options.sweep)) {
        if ((await new SweepStore(redis, sweepKeys(options.sweep)).phase()) !== 'done') return { sweepId: options.sweep, finished: false };
        if (await confirmed(options.sweep)) return { sweepId: options.sweep, finished: true };
      }
    } else {
      // An unfinished sweep counts while a scheduler serves it (or it waits to be finished): one left behind
      // by a scheduler that is gone (a spec edited since, the same Redis volume) must not take the collector
      // from the sweep that is about to be published.
      const open: string[] = [];
      const abandoned: string[] = [];
      const finished: string[] = [];
      for (const id of ids) {
        const k = sweepKeys(id);
        const phase = await new SweepStore(redis, k).phase();
        if (phase === 'done') {
          if (await confirmed(id)) finished.push(id);
          continue;
        }
        if (phase === 'finishing' || (await leaseHeld(redis, k.schedulerLease))) open.push(id);
        else abandoned.push(id);
      }
      if (open.length === 1) return { sweepId: open[0] as string, finished: false };
      if (open.length === 0 && finished.length === 1) return { sweepId: finished[0] as string, finished: true };
      if (open.length > 1)
        throw new InputError(
          '--sweep',
          'sweep',
          `Redis holds ${open.length} sweeps in progress (${open.join(', ')})`,
          'name one with --sweep',
        );
      if (waited % 20 === 0)
        options.log.info(
          abandoned.length > 0 ? { unfinished_without_scheduler: abandoned } : {},
          'waiting for a scheduler to publish a sweep',
        );
    }
    if (options.sweep && waited % 20 === 0) options.log.info({ sweep: options.sweep }, 'waiting for a scheduler to publish the sweep');
    await sleep(500);
  }
  return null;
}

/** How handling an inbox's entries ended: the sweep finished, the collector stopped, or neither (read on). */
type InboxEnd = 'finished' | 'stopped' | undefined;

class CollectorProcess {
  private readonly runs = new Map<string, OpenRun>();
  private readonly byId: Map<string, RunPlan>;
  private readonly shardOf: Map<string, number>;
  private corpus!: SweepCorpus;
  private readonly closes = new Set<Promise<void>>();
  private readonly closingRuns = new Set<string>();
  private fatal?: Error;
  /** The report armed by appended rows (see REPORT_MS), and whether one is being sent. */
  private reportTimer?: NodeJS.Timeout;
  private reporting = false;
  private serving = true;
  /** Set by openCorpus: the sweep's logger, the encoders' columns, the judge, and shard 0's manifest. */
  private log!: Logger;
  private columns!: EncoderColumn[];
  private judge!: Judge;
  private manifest: Manifest | null = null;
  /** The corpus's summary once shard 0 has finished it. */
  private summary: SweepSummary | null = null;
  /** The scheduler waits on a run's rows alone (a 'rows' request): the commits are read at once. */
  private rowsWanted = false;
  outLock?: OutLock;

  constructor(
    private readonly redis: PantaRedis,
    private readonly blocking: Redis,
    private readonly store: SweepStore,
    private readonly sweep: LoadedSweep,
    private readonly options: CollectorOptions,
    private readonly lease: RoleLease,
    private readonly shard: { index: number; count: number },
  ) {
    this.byId = new Map(sweep.runs.map((r) => [r.runId, r]));
    this.shardOf = collectorShards(sweep.runs, shard.count, sweep.spec);
  }

  /** Runs this collector writes (all of them, unless the runs are split over shards). */
  private owns(runId: string): boolean {
    return (this.shardOf.get(runId) ?? 0) === this.shard.index;
  }

  async serve(previous: Manifest | null): Promise<SweepSummary | null> {
    const { sweep, store, redis } = this;
    const { keys } = store;
    const judgeSpec = await this.openCorpus(previous);
    await this.waitForJudge(judgeSpec);
    await ensureCollectorGroup(redis, keys);
    // A run of an adaptive round the published grids do not hold yet (a restarted scheduler replays the rounds)
    // is opened when the scheduler reaches that round again.
    for (const runId of await store.openRuns()) if (this.byId.has(runId) && this.owns(runId)) await this.open(runId);
    const timers = [
      setInterval(
        this.once(() => this.makeDurable()),
        Math.min(this.durableMs, DURABLE_TICK_MS),
      ),
    ];
    // DuckDB (loaded with its first instance: duckdb-api.ts) before the first rows, which would wait for it.
    await getDuckDB();
    this.log.info({ out: sweep.out, reopened: this.runs.size, cpu_ms: cpuMs() }, 'collector started');
    try {
      if (await this.collect()) return this.summary;
      // Stopped: what was appended becomes durable, so a restart continues after it.
      await Promise.all(this.closes);
      await this.makeDurable(true);
      this.log.info({}, 'collector stopped');
      return null;
    } finally {
      for (const t of timers) clearInterval(t);
      this.serving = false;
      clearTimeout(this.reportTimer);
      for (const r of this.runs.values()) await r.recorder.flush().catch(() => undefined);
      await this.judge.close();
    }
  }

  /**
   * Opens what the corpus is written with: the encoders' columns, the judge, the out folder (and its lock and
   * manifest on shard 0), and the SweepCorpus. Returns the judge's spec (with --base-url applied).
   */
  private async openCorpus(previous: Manifest | null): Promise<JudgeSpec> {
    const { sweep, options, store, redis } = this;
    const { keys } = store;
    const log = options.log.child({ sweep: keys.spec.split(':')[1] });
    this.log = log;
    const encoders = await openEncoders(sweep.spec.encoders, sweep.specFile);
    const columns: EncoderColumn[] = encoders.map((e) => ({ name: e.name, dim: e.dim }));
    this.columns = columns;
    const judgeSpec =
      options.baseUrl && sweep.spec.judge.kind === 'llm'
        ? { ...sweep.spec.judge, backend: { ...sweep.spec.judge.backend, base_url: options.baseUrl } }
        : sweep.spec.judge;
    const judge = createJudge(judgeSpec, sweep.specFile, sweep.prompts, sweep.out, { shared: new RedisVerdicts(redis, keys.verdicts) });
    this.judge = judge;
    makeOutFolder(sweep.out);
    // Shard 0 holds the folder's lock and writes the manifest; other shards write only their runs' files, and
    // their Redis leases keep two of the same shard apart.
    const primary = this.shard.index === 0;
    if (primary) this.outLock = acquireOutLock(sweep.out);
    await clearRefusal(store);
    // The collector's --out may differ from the scheduler's: `panta dashboard --redis` reads the corpus here.
    if (primary) await store.setCollectorOut(sweep.out);
    if (this.outLock?.tookOver) log.warn({ holder: this.outLock.tookOver }, 'took over the corpus folder lock of a process that is gone');
    // The backend is named from the spec: the collector makes no agent call, so it opens no backend.
    const meta = sweepMeta(sweep.spec, encoders);
    this.manifest = primary ? startManifest(sweep, previous, meta) : null;
    for (const e of encoders) await e.close(); // only their names, dims and models are needed here
    this.corpus = new SweepCorpus({
      out: sweep.out,
      columns,
      judge,
      meta: { backend: meta.backend.kind, model: meta.backend.model },
      // Parts as embedded mode sizes them: a chain's are small where calls are slow (see sweepSizing).
      partRows: sweepSizing(sweep.spec.concurrency, columns, sweep.runs.length, sweep.spec.lookahead, callsAreSlow(sweep.spec)).partRowsFor,
      log,
      onWritten: () => this.reportSoon(),
    });
    return judgeSpec;
  }

  /** An LLM judge still loading would fail the judging of every row appended: wait for it first. */
  private async waitForJudge(judgeSpec: JudgeSpec): Promise<void> {
    const { options, sweep, log } = this;
    const waitMs = options.waitEndpointMs ?? DEFAULT_WAIT_ENDPOINT_MS;
    if (judgeSpec.kind !== 'llm' || waitMs <= 0) return;
    await waitForEndpoints(endpointsOf(judgeSpec.backend, sweep.specFile), {
      timeoutMs: waitMs,
      signal: options.signal,
      onWait: (w) =>
        log.info(
          { endpoint: w.endpoint, waited_s: w.waitedS, limit_s: w.limitS, last: w.last },
          "waiting for the judge's model endpoint to answer before collecting",
        ),
    });
  }

  /**
   * Reads the inboxes until the sweep is finished (true: this.summary holds the corpus's, or null on a shard
   * other than 0) or the collector is stopped (false). Pending entries (delivered, never acknowledged) are
   * read first, and again every few seconds: an XREADGROUP that Redis answered just before it died left its
   * entries pending, and the reply that carried them was lost with the connection.
   */
  private async collect(): Promise<boolean> {
    const { options } = this;
    const { keys } = this.store;
    let pending = true;
    let pendingReadAt = Date.now();
    const pace = new ReadPace(GATHER_EVENTS, GATHER_MAX_MS);
    while (!options.signal?.aborted) {
      if (this.fatal) throw this.fatal;
      if (this.lease.lost) throw new Error('lost the collector lease: another collector took over this sweep');
      const read = await readCollectorInbox(this.blocking, keys, { pending, count: READ_COUNT, blockMs: 500 });
      const readAt = Date.now();
      if (pending) {
        pending = false;
        pendingReadAt = readAt;
      } else if (readAt - pendingReadAt > PENDING_READ_MS) pending = true;
      let end = await this.handleRead(read);
      if (end === 'finished') return true;
      if (end === 'stopped') return false;
      // Paced: the next read of commits waits until about GATHER_EVENTS have gathered (see ReadPace), and
      // only control requests are read meanwhile, at once; a read that left more behind, or a run whose
      // end waits on its rows alone, reads on.
      const events = read.commits.reduce((n, e) => n + (e.message.op === 'done' ? e.message.items.length : 0), 0);
      const paced = events > 0 ? pace.waitAfter(events, readAt, Date.now()) : 0;
      let wait = read.commits.length >= READ_COUNT || this.rowsWanted ? 0 : paced;
      this.rowsWanted = false;
      for (let until = Date.now() + wait; wait >= 1 && !this.rowsWanted && !options.signal?.aborted; wait = until - Date.now()) {
        end = await this.handleRead(
          await readCollectorInbox(this.blocking, keys, { pending: false, count: READ_COUNT, blockMs: wait, controlOnly: true }),
        );
        if (end === 'finished') return true;
        if (end === 'stopped') return false;
      }
    }
    return false;
  }

  /** Commits first, then requests: a close or a boundary read with the commits before it finds them taken. */
  private async handleRead(read: CollectorRead): Promise<InboxEnd> {
    const acks = { control: [] as string[], commits: [] as string[] };
    const end = (await this.handle('commits', read.commits, acks.commits)) ?? (await this.handle('control', read.control, acks.control));
    if (end !== 'stopped') await this.ack(acks);
    return end;
  }

  /**
   * Handles one inbox's entries in order; 'finished' once the sweep is (or this shard's part is), 'stopped'
   * when stopped while waiting for the other shards.
   */
  private async handle(inbox: 'control' | 'commits', entries: Delivered<CollectorMessage>[], acks: string[]): Promise<InboxEnd> {
    for (const group of batches(entries)) {
      if (group.kind === 'done') {
        await this.accept(group.entries.map((e) => e.message));
        acks.push(...group.entries.map((e) => e.id));
        continue;
      }
      const { id, message: m } = group.entry;
      if (m.op === 'open') {
        await this.open(m.run);
        acks.push(id);
      } else if (m.op === 'boundary') {
        await this.boundary(m.run, m.sweep);
        acks.push(id);
      } else if (m.op === 'rows') {
        // The scheduler waits on a run's rows alone: the commits are read at once.
        this.rowsWanted = true;
        acks.push(id);
      } else if (m.op === 'close') {
        this.close(inbox, id, m);
      } else if (m.op === 'stop') {
        // A worker's backend cannot produce answers: stop with its line (acknowledged first, so that the
        // collector started for the rerun does not read it); committed results stay in Redis for the rerun.
        await this.ack({ control: [id], commits: [] });
        throw new Error(m.error);
      } else if (m.op === 'round') {
        await this.planRound(m);
        acks.push(id);
      } else if (m.op === 'finish') {
        await Promise.all(this.closes);
        if (this.fatal) throw this.fatal;
        acks.push(id);
        return await this.finish();
      }
    }
    return undefined;
  }

  /**
   * Every run is closed: a shard other than 0 makes its runs durable and says it is done; shard 0 waits for
   * the others and finishes the corpus (this.summary).
   */
  private async finish(): Promise<'finished' | 'stopped'> {
    const { judge, manifest, store, log, sweep } = this;
    const judgeCalls = judge instanceof LlmJudge ? judge.stats.calls : 0;
    if (!manifest) {
      // A shard other than 0: its runs are closed and durable; shard 0 finishes the corpus.
      await this.makeDurable(true);
      await store.markCollectorDone(this.shard.index, judgeCalls);
      log.info({ shard: `${this.shard.index + 1}/${this.shard.count}`, cpu_ms: cpuMs() }, 'shard done: collector 1 finishes the corpus');
      return 'finished';
    }
    const calls = await this.othersDone(judgeCalls);
    if (calls === undefined) return 'stopped';
    // Adaptive temperatures: every round's runs, as the scheduler last published the grids.
    if (sweep.grids) {
      await this.refresh();
      recordRounds(manifest, sweep);
    }
    // The CPU up to here is the rows' (bench/collectors reads it), what follows the sweep's once.
    log.info({ cpu_ms: cpuMs() }, 'every run written: finishing the corpus');
    // Split over shards: this judge (its calls so far, and a study table's it makes now) beside the
    // other shards' calls.
    const finishJudge = this.shard.count > 1 ? { calls: calls - judgeCalls, judge } : judge;
    const summary = await finishSweep(sweep, manifest, this.columns, finishJudge, this.corpus.trace);
    this.summary = summary;
    await store.setPhase(summary.status === 'complete' ? 'done' : 'failed');
    log.info({ status: summary.status, events: summary.eventsWritten, cpu_ms: cpuMs() }, 'corpus finished');
    return 'finished';
  }

  /**
   * Shard 0 waits for the other shards to have made their runs durable before it finishes the corpus, and
   * adds up every shard's judge calls; undefined if it was stopped meanwhile.
   */
  private async othersDone(ownCalls: number): Promise<number | undefined> {
    for (let waited = 0; !this.options.signal?.aborted; waited++) {
      const done = await this.store.collectorsDone();
      let calls = ownCalls;
      let missing = 0;
      for (let shard = 1; shard < this.shard.count; shard++) {
        if (done.has(shard)) calls += done.get(shard)!;
        else missing++;
      }
      if (missing === 0) return calls;
      if (waited % 20 === 0) this.options.log.info({ waiting_for: missing }, 'waiting for the other collector shards to finish their runs');
      await sleep(250);
    }
    return undefined;
  }

  /** A periodic task that skips its turn while the previous one still runs (a slow disk, Redis restarting). */
  private once(task: () => Promise<void>): () => void {
    let running = false;
    return () => {
      if (running) return;
      running = true;
      task()
        .catch((e) => this.fail(e))
        .finally(() => (running = false));
    };
  }

  private fail(e: unknown): void {
    if (this.fatal) return;
    this.fatal = toError(e);
    // The judge's backend cannot produce verdicts: the scheduler stops the sweep with the same line (exit 1),
    // instead of waiting for a collector that has stopped.
    const unhealthy = unhealthyCause(e);
    if (unhealthy)
      void sendToScheduler(this.redis, this.store.keys, { op: 'unhealthy', error: redact(unhealthy.message), role: 'collector' }).catch(
        () => undefined,
      );
  }

  private async ack(ids: { control: readonly string[]; commits: readonly string[] }): Promise<void> {
    await ackCollectorInbox(this.redis, this.store.keys, ids);
  }

  /**
   * Adaptive temperatures: every run under round `m.round - 1`'s grids is closed (their shards written, on
   * every collector shard's part of the folder): the next round's grids, from the corpus, by the embedded
   * sweep's own function (engine's nextRound), go to the scheduler. A run without a shard (failed) stops the
   * rounds there, as embedded.
   */
  private async planRound(m: PlanRound): Promise<void> {
    await Promise.all(this.closes);
    const round = { ...this.sweep, runs: [] as RunPlan[], grids: new Map<string, number[]>() };
    adoptGrids(round, new Map(m.grids));
    const missing = round.runs.filter((r) => !existsSync(shardPath(round.out, r.runId))).length;
    if (missing === 0) await nextRound(round);
    const grids = [...round.grids].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.log.info({ round: m.round, missing, grids: Object.fromEntries(grids) }, 'adaptive temperatures: round planned');
    await sendToScheduler(this.redis, this.store.keys, { op: 'round', round: m.round, grids, missing });
  }

  /** Adaptive temperatures: the runs of the grids the scheduler published last (a later round's runs). */
  private async refresh(): Promise<void> {
    const payload = await this.store.payload();
    if (!payload?.grids) return;
    adoptGrids(this.sweep, new Map(payload.grids));
    for (const r of this.sweep.runs) this.byId.set(r.runId, r);
    for (const [run, shard] of collectorShards(this.sweep.runs, this.shard.count, this.sweep.spec)) this.shardOf.set(run, shard);
  }

  /** Opens a run where its durable rows end (idempotent: an open run answers with what it has appended). */
  private async open(runId: string): Promise<void> {
    const { store, sweep } = this;
    if (!this.byId.has(runId)) await this.refresh();
    const run = this.byId.get(runId);
    if (!run) throw new Error(`the scheduler opened run ${runId}, which this sweep does not have`);
    let reply: { next: number; finalized: boolean };
    const open = this.runs.get(runId);
    if (open) reply = { next: open.recorder.written, finalized: false };
    else {
      const progress = await shardProgress(sweep.out, runId);
      if (progress.discarded.length > 0)
        this.options.log.warn(
          { run: runId, discarded: progress.discarded },
          'discarded damaged files of a run: it resumes after its last good part',
        );
      if (progress.finalized) reply = { next: progress.nextEvent, finalized: true };
      else {
        await this.forgetIfAhead(runId, progress.nextEvent);
        if (progress.nextEvent > 0) {
          // Each agent's latest durable answer back into the version store (a Redis that lost the sweep).
          const planner = plannerFor(sweep, run, progress.nextEvent);
          await store.restoreVersions(
            runId,
            await readVersionTexts(progress.parts, planner.liveVersions(), run.protocol, poolsBudget(run)),
          );
        }
        const recorder = await this.corpus.openRecorder(run, progress.nextEvent);
        await this.restoreBoundaries(run, recorder);
        this.runs.set(runId, {
          run,
          recorder,
          durable: progress.nextEvent,
          waitingBytes: 0,
          waitingSince: undefined,
          reported: -1,
          closing: false,
        });
        await store.markOpen(runId);
        this.reportSoon();
        await this.loadResults(runId);
        reply = { next: progress.nextEvent, finalized: false };
      }
    }
    // A run with sweep boundaries continues from the last one its journal holds.
    const control = this.runs.get(runId)?.recorder.control;
    await sendToScheduler(this.redis, store.keys, {
      op: 'opened',
      run: runId,
      next: reply.next,
      finalized: reply.finalized,
      ...(control && control.sweep >= 0 ? { control } : {}),
    });
  }

  /**
   * Redis ahead of the corpus: the run was closed complete, or its next row was committed and made durable
   * (its result deleted), yet the folder no longer holds it (deleted, replaced, a damaged part discarded).
   * Left as it is, the scheduler would find those events committed and wait forever for rows never written;
   * the run's state goes instead, and the run continues from the rows on disk (its events are deterministic).
   * Never true of a run the corpus keeps: a result is deleted only after its row is durable.
   */
  private async forgetIfAhead(runId: string, next: number): Promise<void> {
    if (!(await this.store.aheadOf(runId, next))) return;
    this.options.log.warn(
      { run: runId, nextEvent: next },
      'the corpus holds less of this run than Redis recorded as written (a deleted or replaced folder): the run continues from its rows on disk',
    );
    await this.store.forgetRun(runId);
  }

  /**
   * A sweep boundary a worker committed: journalled (once; a repeated request finds it there) before the
   * scheduler hears of it, so the next sweep never starts on a decision that could be lost.
   */
  private async boundary(runId: string, t: number): Promise<void> {
    const open = this.runs.get(runId);
    if (!open) return; // closed meanwhile: the scheduler no longer waits for it
    const text = await this.store.boundaryOutcome(runId, t);
    if (text === null) return;
    const outcome = JSON.parse(text) as BoundaryOutcome;
    const { recorder } = open;
    if (recorder.control.sweep < t)
      await recorder.acceptBoundary({ kind: 'boundary', run: open.run, sweep: t, versions: new Float64Array(0) }, outcome);
    await sendToScheduler(this.redis, this.store.keys, { op: 'boundary', run: runId, sweep: t, outcome: text });
  }

  /**
   * Boundaries committed in Redis past the journal's durable part. The journal keeps only boundaries whose
   * sweep is durable (events not yet durable are redone on an embedded resume); here events are never redone,
   * their committed results wait in Redis, and so do these boundaries, which the scheduler has acted on.
   */
  private async restoreBoundaries(run: RunPlan, recorder: RunRecorder): Promise<void> {
    const stored = await this.store.boundaryOutcomes(run.runId);
    for (const t of [...stored.keys()].sort((a, b) => a - b)) {
      if (t <= recorder.control.sweep) continue;
      await recorder.acceptBoundary(
        { kind: 'boundary', run, sweep: t, versions: new Float64Array(0) },
        JSON.parse(stored.get(t)!) as BoundaryOutcome,
      );
    }
  }

  /** Results committed before this collector opened the run (it was down, or restarted). */
  private async loadResults(runId: string): Promise<void> {
    const page: Buffer[] = [];
    await this.store.eachResult(runId, (stored) => {
      page.push(stored);
      if (page.length >= 1000) this.take(runId, page.splice(0));
    });
    this.take(runId, page);
  }

  private async accept(messages: ResultsCommitted[]): Promise<void> {
    if (trace) for (const m of messages) for (const i of m.items) trace.point('collected', i.run, i.event);
    const wanted = messages
      .flatMap((m) => m.items)
      .filter((m) => {
        const r = this.runs.get(m.run);
        return r && !r.recorder.holds(m.event);
      });
    if (wanted.length === 0) return;
    const stored = await this.store.results(wanted.map((m) => ({ runId: m.run, event: m.event })));
    // Decoded run by run: a run's rows, and so the arrays decoded for them, are written together.
    const byRun = new Map<string, Buffer[]>();
    stored.forEach((result, i) => {
      // Gone only if already durable and deleted (a duplicate notification).
      if (result === null) return;
      const list = byRun.get(wanted[i].run);
      if (list) list.push(result);
      else byRun.set(wanted[i].run, [result]);
    });
    for (const [runId, results] of byRun) this.take(runId, results);
  }

  private take(runId: string, stored: readonly Buffer[]): void {
    const open = this.runs.get(runId);
    if (!open || stored.length === 0) return;
    for (const b of stored) open.waitingBytes += b.length;
    open.waitingSince ??= Date.now();
    for (const { plan, outcome } of decodeResults(stored)) {
      if (open.recorder.holds(plan.event)) continue;
      open.recorder.accept({ run: open.run, plan }, outcome)?.catch((e: unknown) => this.fail(e as Error));
    }
  }

  /** A report REPORT_MS from now, unless one is armed; one that comes while another is sent waits its turn. */
  private reportSoon(): void {
    if (this.reportTimer !== undefined || !this.serving) return;
    this.reportTimer = setTimeout(() => {
      this.reportTimer = undefined;
      if (this.reporting) return this.reportSoon();
      this.reporting = true;
      this.report()
        .catch((e) => this.fail(e))
        .finally(() => (this.reporting = false));
    }, REPORT_MS);
  }

  /** Tells the scheduler how far each run's rows are appended (its window and run retirement follow). */
  private async report(): Promise<void> {
    const counts: Record<string, number> = {};
    let any = false;
    for (const [runId, r] of this.runs) {
      if (r.recorder.written === r.reported) continue;
      r.reported = r.recorder.written;
      counts[runId] = r.reported;
      any = true;
    }
    if (!any) return;
    await this.store.reportWritten(counts);
  }

  /**
   * Appended rows become a durable part, only then are their results deleted from Redis: every run's (`all`:
   * stopping, a shard done), or those due (see DURABLE_MS).
   */
  private async makeDurable(all = false): Promise<void> {
    const now = Date.now();
    const candidates = [...this.runs].filter(([, r]) => !r.closing && r.recorder.written !== r.durable);
    const due = all
      ? candidates.map(([runId]) => runId)
      : durableDue(candidates, now, { maxWaitMs: this.durableMs, partBytes: DURABLE_PART_BYTES, budgetBytes: DURABLE_BUDGET_BYTES });
    for (const runId of due) {
      const r = this.runs.get(runId);
      if (!r || r.closing) continue;
      const upto = r.recorder.written;
      await r.recorder.flush();
      await this.store.dropResults(runId, r.durable, upto);
      r.durable = upto;
      // Results taken but not yet appended (an earlier event's still missing) wait on, counted from now.
      r.waitingBytes = 0;
      r.waitingSince = r.recorder.backlog > 0 ? now : undefined;
    }
  }

  private get durableMs(): number {
    return this.options.durableMs ?? DURABLE_MS;
  }

  /** Closes a run in the background (finalizing merges its parts), acknowledging the request when done. */
  private close(inbox: 'control' | 'commits', id: string, request: CloseRun): void {
    const runId = request.run;
    // Read again while its close runs (it stays pending until done): that close acknowledges it.
    if (this.closingRuns.has(runId)) return;
    this.closingRuns.add(runId);
    const run = this.byId.get(runId)!;
    const { status } = request;
    const task = (async () => {
      const open = this.runs.get(runId);
      if (open && !open.closing) {
        open.closing = true;
        // A run that stopped early (early stopping) ends at its gate, before runEvents.
        const end = open.recorder.stoppedAfter === undefined ? runEvents(run) : (open.recorder.stoppedAfter + 1) * run.n;
        if (status === 'complete') while (open.recorder.written < end) await sleep(10);
        await this.corpus.closeRun(run, open.recorder, { status, error: request.error, wallMs: request.wallMs });
        this.runs.delete(runId);
      }
      // A complete run's state goes; a failed run's stays, so that a later scheduler resumes it.
      await this.store.closeRun(runId, status === 'complete');
      await sendToScheduler(this.redis, this.store.keys, { op: 'closed', run: runId });
      await this.ack(inbox === 'control' ? { control: [id], commits: [] } : { control: [], commits: [id] });
    })()
      .catch((e) => this.fail(e))
      .finally(() => this.closingRuns.delete(runId));
    this.closes.add(task);
    void task.finally(() => this.closes.delete(task));
  }
}

type Batch =
  | { kind: 'done'; entries: Delivered<ResultsCommitted>[] }
  | { kind: 'control'; entry: Delivered<Exclude<CollectorMessage, ResultsCommitted>> };

/** Consecutive commit notifications go together (their results are fetched in one round trip); requests one by one, in order. */
function batches(entries: Delivered<CollectorMessage>[]): Batch[] {
  const out: Batch[] = [];
  for (const { id, message } of entries) {
    const last = out[out.length - 1];
    if (message.op !== 'done') out.push({ kind: 'control', entry: { id, message } });
    else if (last?.kind === 'done') last.entries.push({ id, message });
    else out.push({ kind: 'done', entries: [{ id, message }] });
  }
  return out;
}
