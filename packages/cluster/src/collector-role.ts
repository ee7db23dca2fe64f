import { setTimeout as sleep } from 'node:timers/promises';
import { InputError, runEvents, type EncoderColumn, type RunPlan } from '@panta/core';
import { acquireOutLock, readManifestToResume, shardProgress, type OutLock } from '@panta/corpus';
import {
  SweepCorpus,
  checkOutFolder,
  makeOutFolder,
  finishSweep,
  openEncoders,
  plannerFor,
  readVersionTexts,
  startManifest,
  sweepSizing,
  type LoadedSweep,
  type Logger,
  type BoundaryOutcome,
  type RunCollector,
  type SweepSummary,
} from '@panta/engine';
import { createJudge } from '@panta/judge';
import { createBackend, endpointsOf, waitForEndpoints } from '@panta/llm';
import type { Redis } from 'ioredis';
import { INBOX_MAXLEN, SWEEPS_KEY, sweepKeys, type SweepKeys } from './keys.js';
import { fromPayload, type SweepPayload } from './payload.js';
import { cpuMs } from './cpu.js';
import { connect, ready, streamEntries } from './redis.js';
import { clearRefusal, recordRefusal } from './refusal.js';
import { decodeResult } from './result-codec.js';
import { RoleLease } from './role-lease.js';
import { DEFAULT_WAIT_ENDPOINT_MS } from './worker-context.js';
import type { InboxEntry } from './inbox-reader.js';

const GROUP = 'collector';
/** How often the collector reads its own pending inbox entries again. */
const PENDING_READ_MS = 5000;

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
  /** How often rows appended are made durable (and their results deleted from Redis). */
  durableMs?: number;
  /** How long to wait for an LLM judge's endpoint to answer before collecting (default 600 s; 0: not at all). */
  waitEndpointMs?: number;
  /** Called once the sweep is known and validated (the CLI says where the corpus goes). */
  onSweep?(sweep: LoadedSweep): void;
}

interface OpenRun {
  run: RunPlan;
  collector: RunCollector;
  /** Rows durably written: their results are gone from Redis. */
  durable: number;
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
  const redis = connect(options.redis, 'panta-collector');
  const blocking = redis.duplicate();
  blocking.on('error', () => undefined);
  try {
    await ready(redis, options.redis);
    const sweepId = await pickSweep(redis, options);
    if (!sweepId) return null;
    const keys = sweepKeys(sweepId);
    try {
      const payload = JSON.parse((await redis.get(keys.spec))!) as SweepPayload;
      const sweep = fromPayload(payload, options.out);
      checkOutFolder(sweep.out);
      const previous = readManifestToResume(sweep.out);
      if (previous && previous.fingerprint !== sweep.fingerprint) {
        throw new InputError(sweep.out, 'out', `${sweep.out} holds a corpus of a different sweep`, 'give the collector another --out, or delete that folder to start over');
      }
      const lease = await RoleLease.acquire(redis, keys.collectorLease, (holder) => options.log.warn({ holder }, 'another collector holds this sweep: waiting for its lease'), options.signal);
      if (!lease) return null;
      try {
        options.onSweep?.(sweep);
        const collector = new CollectorProcess(redis, blocking, keys, sweep, options, lease);
        return await collector.serve(previous).finally(() => collector.outLock?.release());
      } finally {
        await lease.release();
      }
    } catch (error) {
      // The scheduler stops with the same line instead of waiting for this collector.
      if (error instanceof InputError) await recordRefusal(redis, keys, error).catch(() => undefined);
      throw error;
    }
  } finally {
    blocking.disconnect();
    await redis.quit().catch(() => undefined);
  }
}

/**
 * The sweep to collect: the one named, or the only unfinished one, waiting for a scheduler to publish it. A
 * finished sweep waits too: a scheduler run again publishes it again (see runScheduler), and only then is
 * there anything to collect.
 */
async function pickSweep(redis: Redis, options: CollectorOptions): Promise<string | null> {
  for (let waited = 0; !options.signal?.aborted; waited++) {
    const ids = Object.keys(await redis.hgetall(SWEEPS_KEY));
    if (options.sweep) {
      if (ids.includes(options.sweep) && (await redis.hget(sweepKeys(options.sweep).state, 'phase')) !== 'done') return options.sweep;
    } else {
      // An unfinished sweep counts while a scheduler serves it (or it waits to be finished): one left behind
      // by a scheduler that is gone (a spec edited since, the same Redis volume) must not take the collector
      // from the sweep that is about to be published.
      const open: string[] = [];
      const abandoned: string[] = [];
      for (const id of ids) {
        const k = sweepKeys(id);
        const phase = await redis.hget(k.state, 'phase');
        if (phase === 'done') continue;
        if (phase === 'finishing' || (await redis.exists(k.schedulerLease)) === 1) open.push(id);
        else abandoned.push(id);
      }
      if (open.length === 1) return open[0]!;
      if (open.length > 1) throw new InputError('--sweep', 'sweep', `Redis holds ${open.length} sweeps in progress (${open.join(', ')})`, 'name one with --sweep');
      if (waited % 20 === 0) options.log.info(abandoned.length > 0 ? { unfinished_without_scheduler: abandoned } : {}, 'waiting for a scheduler to publish a sweep');
    }
    if (options.sweep && waited % 20 === 0) options.log.info({ sweep: options.sweep }, 'waiting for a scheduler to publish the sweep');
    await sleep(500);
  }
  return null;
}

class CollectorProcess {
  private readonly runs = new Map<string, OpenRun>();
  private readonly byId: Map<string, RunPlan>;
  private corpus!: SweepCorpus;
  private readonly closes = new Set<Promise<void>>();
  private readonly closingRuns = new Set<string>();
  private fatal?: Error;
  outLock?: OutLock;

  constructor(
    private readonly redis: Redis,
    private readonly blocking: Redis,
    private readonly keys: SweepKeys,
    private readonly sweep: LoadedSweep,
    private readonly options: CollectorOptions,
    private readonly lease: RoleLease,
  ) {
    this.byId = new Map(sweep.runs.map((r) => [r.runId, r]));
  }

  async serve(previous: ReturnType<typeof readManifestToResume>): Promise<SweepSummary | null> {
    const { sweep, options, keys, redis } = this;
    const log = options.log.child({ sweep: keys.spec.split(':')[1] });
    const backend = createBackend(sweep.spec.backend, sweep.prompts, sweep.specFile);
    const encoders = await openEncoders(sweep.spec.encoders, sweep.specFile);
    const columns: EncoderColumn[] = encoders.map((e) => ({ name: e.name, dim: e.dim }));
    const judgeSpec = options.baseUrl && sweep.spec.judge.kind === 'llm' ? { ...sweep.spec.judge, backend: { ...sweep.spec.judge.backend, base_url: options.baseUrl } } : sweep.spec.judge;
    const judge = createJudge(judgeSpec, sweep.specFile, sweep.prompts, sweep.out);
    makeOutFolder(sweep.out);
    this.outLock = acquireOutLock(sweep.out);
    await clearRefusal(redis, keys);
    if (this.outLock.tookOver) log.warn({ holder: this.outLock.tookOver }, 'took over the corpus folder lock of a process that is gone');
    const manifest = startManifest(sweep, previous, backend, judge, encoders);
    for (const e of encoders) await e.close(); // only their names, dims and models are needed here
    this.corpus = new SweepCorpus({
      out: sweep.out,
      columns,
      judge,
      meta: { backend: backend.kind, model: backend.model },
      partRows: sweepSizing(sweep.spec.concurrency, columns, sweep.runs.length).partRows,
      log,
      onWritten: () => undefined,
    });
    await backend.close();
    // An LLM judge still loading would fail the judging of every row appended: wait for it first.
    const waitMs = options.waitEndpointMs ?? DEFAULT_WAIT_ENDPOINT_MS;
    if (judgeSpec.kind === 'llm' && waitMs > 0) {
      await waitForEndpoints(endpointsOf(judgeSpec.backend, sweep.specFile), {
        timeoutMs: waitMs,
        signal: options.signal,
        onWait: (w) => log.info({ endpoint: w.endpoint, waited_s: w.waitedS, limit_s: w.limitS, last: w.last }, "waiting for the judge's model endpoint to answer before collecting"),
      });
    }
    await redis.xgroup('CREATE', keys.collectorInbox, GROUP, '0', 'MKSTREAM').catch((e: Error) => {
      if (!e.message.includes('BUSYGROUP')) throw e;
    });
    for (const runId of await redis.smembers(keys.open)) await this.open(runId);
    const timers = [setInterval(this.once(() => this.report()), 50), setInterval(this.once(() => this.makeDurable()), options.durableMs ?? 10_000)];
    log.info({ out: sweep.out, reopened: this.runs.size, cpu_ms: cpuMs() }, 'collector started');
    try {
      // '0' reads this consumer's pending entries (delivered, never acknowledged), '>' new ones. Pending ones
      // are read first, and again every few seconds: an XREADGROUP that Redis answered just before it died
      // left its entries pending, and the reply that carried them was lost with the connection.
      let cursor = '0';
      let pendingReadAt = Date.now();
      while (!options.signal?.aborted) {
        if (this.fatal) throw this.fatal;
        if (this.lease.lost) throw new Error('lost the collector lease: another collector took over this sweep');
        const reply = (await this.blocking.xreadgroup('GROUP', GROUP, 'collector', 'COUNT', 1000, 'BLOCK', 500, 'STREAMS', keys.collectorInbox, cursor)) as
          | [string, [string, string[]][]][]
          | null;
        const entries = streamEntries(reply?.[0]?.[1]);
        if (cursor === '0') {
          cursor = '>';
          pendingReadAt = Date.now();
        } else if (Date.now() - pendingReadAt > PENDING_READ_MS) cursor = '0';
        const acks: string[] = [];
        for (const group of batches(entries)) {
          if (group.op === 'done') {
            await this.accept(group.entries);
            acks.push(...group.entries.map((e) => e.id));
          } else {
            for (const entry of group.entries) {
              const f = entry.fields;
              if (f.op === 'open') {
                await this.open(f.run!);
                acks.push(entry.id);
              } else if (f.op === 'boundary') {
                await this.boundary(f.run!, Number(f.sweep));
                acks.push(entry.id);
              } else if (f.op === 'close') {
                this.close(entry);
              } else if (f.op === 'finish') {
                await Promise.all(this.closes);
                if (this.fatal) throw this.fatal;
                const summary = await finishSweep(sweep, manifest, columns, judge, this.corpus.trace);
                await redis.hset(keys.state, 'phase', summary.status === 'complete' ? 'done' : 'failed');
                await this.ack([...acks, entry.id]);
                log.info({ status: summary.status, events: summary.eventsWritten, cpu_ms: cpuMs() }, 'corpus finished');
                return summary;
              } else acks.push(entry.id);
            }
          }
        }
        await this.ack(acks);
      }
      // Stopped: what was appended becomes durable, so a restart continues after it.
      await Promise.all(this.closes);
      await this.makeDurable();
      log.info({}, 'collector stopped');
      return null;
    } finally {
      for (const t of timers) clearInterval(t);
      for (const r of this.runs.values()) await r.collector.flush().catch(() => undefined);
      await judge.close();
    }
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
    this.fatal ??= e instanceof Error ? e : new Error(String(e));
  }

  private async ack(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.multi().xack(this.keys.collectorInbox, GROUP, ...ids).xdel(this.keys.collectorInbox, ...ids).exec();
  }

  /** Opens a run where its durable rows end (idempotent: an open run answers with what it has appended). */
  private async open(runId: string): Promise<void> {
    const { keys, redis, sweep } = this;
    const run = this.byId.get(runId);
    if (!run) throw new Error(`the scheduler opened run ${runId}, which this sweep does not have`);
    let reply: { next: number; finalized: boolean };
    const open = this.runs.get(runId);
    if (open) reply = { next: open.collector.written, finalized: false };
    else {
      const progress = await shardProgress(sweep.out, runId);
      if (progress.discarded.length > 0) this.options.log.warn({ run: runId, discarded: progress.discarded }, 'discarded damaged files of a run: it resumes after its last good part');
      if (progress.finalized) reply = { next: progress.nextEvent, finalized: true };
      else {
        await this.forgetIfAhead(runId, progress.nextEvent);
        if (progress.nextEvent > 0) {
          // Each agent's latest durable answer back into the version store (a Redis that lost the sweep).
          const planner = plannerFor(sweep, run, progress.nextEvent);
          const texts = await readVersionTexts(progress.parts, planner.liveVersions(), run.protocol);
          if (texts.size > 0) {
            const m = redis.multi();
            for (const [v, text] of texts) m.hsetnx(keys.versions(runId), String(v), text);
            await m.exec();
          }
        }
        const collector = await this.corpus.openCollector(run, progress.nextEvent);
        await this.restoreBoundaries(run, collector);
        this.runs.set(runId, { run, collector, durable: progress.nextEvent, reported: -1, closing: false });
        await redis.sadd(keys.open, runId);
        await this.loadResults(runId);
        reply = { next: progress.nextEvent, finalized: false };
      }
    }
    // A run with sweep boundaries continues from the last one its journal holds.
    const control = this.runs.get(runId)?.collector.control;
    const fields = ['op', 'opened', 'run', runId, 'next', String(reply.next), 'finalized', reply.finalized ? '1' : '0'];
    if (control && control.sweep >= 0) fields.push('control', JSON.stringify(control));
    await redis.xadd(keys.schedulerInbox, 'MAXLEN', '~', INBOX_MAXLEN, '*', ...fields);
  }

  /**
   * Redis ahead of the corpus: the run was closed complete, or its next row was committed and made durable
   * (its result deleted), yet the folder no longer holds it (deleted, replaced, a damaged part discarded).
   * Left as it is, the scheduler would find those events committed and wait forever for rows never written;
   * the run's state goes instead, and the run continues from the rows on disk (its events are deterministic).
   * Never true of a run the corpus keeps: a result is deleted only after its row is durable.
   */
  private async forgetIfAhead(runId: string, next: number): Promise<void> {
    const { keys } = this;
    const replies = (await this.redis.multi().sismember(keys.closed, runId).getbit(keys.committed(runId), next).hexists(keys.results(runId), String(next)).exec()) ?? [];
    const [closed, committed, held] = replies.map(([err, value]) => {
      if (err) throw err;
      return Number(value);
    });
    if (closed !== 1 && !(committed === 1 && held === 0)) return;
    this.options.log.warn({ run: runId, nextEvent: next }, 'the corpus holds less of this run than Redis recorded as written (a deleted or replaced folder): the run continues from its rows on disk');
    await this.redis.multi().srem(keys.closed, runId).del(keys.committed(runId), keys.versions(runId), keys.results(runId), keys.boundaries(runId)).exec();
  }

  /**
   * A sweep boundary a worker committed: journalled (once; a repeated request finds it there) before the
   * scheduler hears of it, so the next sweep never starts on a decision that could be lost.
   */
  private async boundary(runId: string, sweep: number): Promise<void> {
    const open = this.runs.get(runId);
    if (!open) return; // closed meanwhile: the scheduler no longer waits for it
    const text = await this.redis.hget(this.keys.boundaries(runId), String(sweep));
    if (text === null) return;
    const outcome = JSON.parse(text) as BoundaryOutcome;
    const { collector } = open;
    if (collector.control.sweep < sweep) await collector.acceptBoundary({ kind: 'boundary', run: open.run, sweep, versions: new Float64Array(0) }, outcome);
    await this.redis.xadd(this.keys.schedulerInbox, 'MAXLEN', '~', INBOX_MAXLEN, '*', 'op', 'boundary', 'run', runId, 'sweep', String(sweep), 'outcome', text);
  }

  /**
   * Boundaries committed in Redis past the journal's durable part. The journal keeps only boundaries whose
   * sweep is durable (events not yet durable are redone on an embedded resume); here events are never redone,
   * their committed results wait in Redis, and so do these boundaries, which the scheduler has acted on.
   */
  private async restoreBoundaries(run: RunPlan, collector: RunCollector): Promise<void> {
    const stored = await this.redis.hgetall(this.keys.boundaries(run.runId));
    const sweeps = Object.keys(stored).map(Number).sort((a, b) => a - b);
    for (const sweep of sweeps) {
      if (sweep <= collector.control.sweep) continue;
      await collector.acceptBoundary({ kind: 'boundary', run, sweep, versions: new Float64Array(0) }, JSON.parse(stored[String(sweep)]!) as BoundaryOutcome);
    }
  }

  /** Results committed before this collector opened the run (it was down, or restarted). */
  private async loadResults(runId: string): Promise<void> {
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(this.keys.results(runId), cursor, 'COUNT', 1000);
      cursor = next;
      for (let i = 0; i + 1 < flat.length; i += 2) this.take(runId, flat[i + 1]!);
    } while (cursor !== '0');
  }

  private async accept(entries: InboxEntry[]): Promise<void> {
    const wanted = entries.filter((e) => {
      const r = this.runs.get(e.fields.run!);
      return r && !r.collector.holds(Number(e.fields.event));
    });
    if (wanted.length === 0) return;
    const get = this.redis.pipeline();
    for (const e of wanted) get.hget(this.keys.results(e.fields.run!), e.fields.event!);
    const replies = (await get.exec()) ?? [];
    replies.forEach(([err, text], i) => {
      if (err) throw err;
      // Gone only if already durable and deleted (a duplicate notification).
      if (typeof text === 'string') this.take(wanted[i]!.fields.run!, text);
    });
  }

  private take(runId: string, text: string): void {
    const open = this.runs.get(runId);
    if (!open) return;
    const { plan, outcome } = decodeResult(text);
    if (open.collector.holds(plan.event)) return;
    open.collector.accept({ run: open.run, plan }, outcome)?.catch((e: unknown) => this.fail(e as Error));
  }

  /** Tells the scheduler how far each run's rows are appended (its window and run retirement follow). */
  private async report(): Promise<void> {
    const counts: Record<string, number> = {};
    let any = false;
    for (const [runId, r] of this.runs) {
      if (r.collector.written === r.reported) continue;
      r.reported = r.collector.written;
      counts[runId] = r.reported;
      any = true;
    }
    if (!any) return;
    await this.redis
      .multi()
      .xadd(this.keys.schedulerInbox, 'MAXLEN', '~', INBOX_MAXLEN, '*', 'op', 'written', 'counts', JSON.stringify(counts))
      .hset(this.keys.written, counts)
      .exec();
  }

  /** Appended rows become a durable part; only then are their results deleted from Redis. */
  private async makeDurable(): Promise<void> {
    for (const [runId, r] of this.runs) {
      if (r.closing || r.collector.written === r.durable) continue;
      const upto = r.collector.written;
      await r.collector.flush();
      await this.dropResults(runId, r.durable, upto);
      r.durable = upto;
    }
  }

  private async dropResults(runId: string, from: number, to: number): Promise<void> {
    for (let start = from; start < to; start += 2000) {
      const fields: string[] = [];
      for (let e = start; e < Math.min(to, start + 2000); e++) fields.push(String(e));
      await this.redis.hdel(this.keys.results(runId), ...fields);
    }
  }

  /** Closes a run in the background (finalizing merges its parts), acknowledging the request when done. */
  private close(entry: InboxEntry): void {
    const f = entry.fields;
    const runId = f.run!;
    // Read again while its close runs (it stays pending until done): that close acknowledges it.
    if (this.closingRuns.has(runId)) return;
    this.closingRuns.add(runId);
    const run = this.byId.get(runId)!;
    const status = f.status as 'complete' | 'failed' | 'stopped';
    const task = (async () => {
      const open = this.runs.get(runId);
      if (open && !open.closing) {
        open.closing = true;
        // A run that stopped early (early stopping) ends at its gate, before runEvents.
        const end = open.collector.stoppedAfter === undefined ? runEvents(run) : (open.collector.stoppedAfter + 1) * run.n;
        if (status === 'complete') while (open.collector.written < end) await sleep(10);
        await this.corpus.closeRun(run, open.collector, { status, error: f.error, wallMs: Number(f.wall_ms) });
        this.runs.delete(runId);
      }
      const { keys } = this;
      const m = this.redis.multi().srem(keys.open, runId).hdel(keys.written, runId);
      // A complete run's state goes; a failed run's stays, so that a later scheduler resumes it.
      if (status === 'complete') m.sadd(keys.closed, runId).del(keys.committed(runId), keys.versions(runId), keys.results(runId), keys.boundaries(runId));
      await m.exec();
      await this.redis.xadd(keys.schedulerInbox, 'MAXLEN', '~', INBOX_MAXLEN, '*', 'op', 'closed', 'run', runId);
      await this.ack([entry.id]);
    })()
      .catch((e) => this.fail(e))
      .finally(() => this.closingRuns.delete(runId));
    this.closes.add(task);
    void task.finally(() => this.closes.delete(task));
  }
}

/** Consecutive entries of the same kind: commit notifications are fetched in one round trip. */
function batches(entries: InboxEntry[]): { op: string; entries: InboxEntry[] }[] {
  const out: { op: string; entries: InboxEntry[] }[] = [];
  for (const e of entries) {
    const op = e.fields.op === 'done' ? 'done' : 'control';
    const last = out[out.length - 1];
    if (last && last.op === op) last.entries.push(e);
    else out.push({ op, entries: [e] });
  }
  return out;
}
