import type { Redis } from 'ioredis';
import { INBOX_MAXLEN, type SweepKeys } from '../keys.js';
import type { SweepPayload } from '../payload.js';
import { byRun } from './by-run.js';
import { encodeSchedulerMessage } from './inbox.js';

/** A sweep's phase in Redis: published and running, every run closed and the corpus being finished, finished. */
export type Phase = 'running' | 'finishing' | 'done' | 'failed';

/** What the scheduler reports for `panta status` (flat numbers, as the status hash holds them). */
export type StatusReport = Record<string, number | string>;

/** What `panta status` reads of one sweep. */
export interface StoredStatus {
  phase: string | null;
  status: Record<string, string>;
  written: Record<string, string>;
  inflight: Record<string, string>;
  failed: Record<string, string>;
  /** The folder the (primary) collector writes the corpus to, absolute on its machine; null before one started. */
  collectorOut: string | null;
}

/**
 * Every read and write of one sweep's state (keys.ts names the keys; the Lua steps are in scripts.ts). Each
 * method is one round trip, MULTI where its writes must land together.
 */
export class SweepStore {
  constructor(
    private readonly redis: Redis,
    readonly keys: SweepKeys,
  ) {}

  async payload(): Promise<SweepPayload | null> {
    const text = await this.redis.get(this.keys.spec);
    return text === null ? null : (JSON.parse(text) as SweepPayload);
  }

  /** The output folder the payload names (read by status for sweeps listed without one). */
  async payloadOut(): Promise<string | null> {
    return (await this.payload())?.out ?? null;
  }

  async writePayload(payload: SweepPayload): Promise<void> {
    await this.redis.set(this.keys.spec, JSON.stringify(payload));
  }

  /** A new scheduler session: the last session's report (totals, end) goes, and the sweep runs. */
  async beginSession(): Promise<void> {
    await this.redis
      .multi()
      .del(this.keys.status, this.keys.inflight, this.keys.collectorsDone)
      .hset(this.keys.state, 'phase', 'running')
      .exec();
  }

  async phase(): Promise<string | null> {
    return this.redis.hget(this.keys.state, 'phase');
  }

  async setPhase(phase: Phase): Promise<void> {
    await this.redis.hset(this.keys.state, 'phase', phase);
  }

  /**
   * A scheduler started again on this finished sweep saw its corpus complete and scheduled nothing: collectors
   * started with it (a job's, a restarted deployment's) read when, and end too instead of waiting for a sweep.
   */
  async confirmFinished(): Promise<void> {
    await this.redis.hset(this.keys.state, 'finished_confirmed_at', Date.now());
  }

  /** When a scheduler last confirmed this finished sweep (ms since the epoch), or 0. */
  async finishedConfirmedAt(): Promise<number> {
    return Number((await this.redis.hget(this.keys.state, 'finished_confirmed_at')) ?? 0);
  }

  /** The scheduler's progress report and the events in flight per run. */
  async writeStatus(report: StatusReport, inflight: ReadonlyMap<string, number>): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.status, report)
      .del(this.keys.inflight)
      .hset(this.keys.inflight, inflight.size > 0 ? Object.fromEntries(inflight) : { _: 0 })
      .exec();
  }

  /** The scheduler's last report: nothing in flight any more. */
  async writeEnded(report: StatusReport): Promise<void> {
    await this.redis.multi().del(this.keys.inflight).hset(this.keys.status, report).exec();
  }

  async readStatus(): Promise<StoredStatus> {
    const { keys, redis } = this;
    const [phase, status, written, inflight, failed, collectorOut] = await Promise.all([
      redis.hget(keys.state, 'phase'),
      redis.hgetall(keys.status),
      redis.hgetall(keys.written),
      redis.hgetall(keys.inflight),
      redis.hgetall(keys.failed),
      redis.hget(keys.state, 'collector_out'),
    ]);
    return { phase, status, written, inflight, failed, collectorOut };
  }

  /** Says where the collector writes the corpus (its --out may differ from the scheduler's): the dashboard reads it there. */
  async setCollectorOut(dir: string): Promise<void> {
    await this.redis.hset(this.keys.state, 'collector_out', dir);
  }

  async markFailed(runId: string, message: string): Promise<void> {
    await this.redis.hset(this.keys.failed, runId, message);
  }

  async clearFailed(runId: string): Promise<void> {
    await this.redis.hdel(this.keys.failed, runId);
  }

  /** The collector's refusal, as JSON (refusal.ts gives it its meaning). */
  async refusal(): Promise<string | null> {
    return this.redis.hget(this.keys.state, 'refused');
  }

  async setRefusal(json: string): Promise<void> {
    await this.redis.hset(this.keys.state, 'refused', json);
  }

  async clearRefusal(): Promise<void> {
    await this.redis.hdel(this.keys.state, 'refused');
  }

  /** A collector shard has made its runs durable: its LLM judge calls, for the finish step's totals. */
  async markCollectorDone(shard: number, judgeCalls: number): Promise<void> {
    await this.redis.hset(this.keys.collectorsDone, String(shard), String(judgeCalls));
  }

  /** The collector shards done so far, with their judge calls. */
  async collectorsDone(): Promise<Map<number, number>> {
    const done = await this.redis.hgetall(this.keys.collectorsDone);
    return new Map(Object.entries(done).map(([shard, calls]) => [Number(shard), Number(calls)]));
  }

  async openRuns(): Promise<string[]> {
    return this.redis.smembers(this.keys.open);
  }

  async markOpen(runId: string): Promise<void> {
    await this.redis.sadd(this.keys.open, runId);
  }

  /**
   * A run leaves the open set; a complete run is marked closed and its state goes (a failed run's stays, so
   * that a later scheduler resumes it).
   */
  async closeRun(runId: string, complete: boolean): Promise<void> {
    const { keys } = this;
    const m = this.redis.multi().srem(keys.open, runId).hdel(keys.written, runId);
    if (complete)
      m.sadd(keys.closed, runId).del(
        keys.committed(runId),
        keys.versions(runId),
        keys.results(runId),
        keys.boundaries(runId),
        keys.follow(runId),
      );
    await m.exec();
  }

  /** Whether Redis recorded a run as further than `next`: closed, or event `next` committed with its result gone. */
  async aheadOf(runId: string, next: number): Promise<boolean> {
    const { keys } = this;
    const replies =
      (await this.redis
        .multi()
        .sismember(keys.closed, runId)
        .getbit(keys.committed(runId), next)
        .hexists(keys.results(runId), String(next))
        .exec()) ?? [];
    const [closed, committed, held] = replies.map(([err, value]) => {
      if (err) throw err;
      return Number(value);
    });
    return closed === 1 || (committed === 1 && held === 0);
  }

  /** Deletes the runs' continuations (keys.follow): those an earlier scheduler left, and who took them. */
  async forgetContinuations(runIds: readonly string[]): Promise<void> {
    for (let from = 0; from < runIds.length; from += 1000)
      await this.redis.del(...runIds.slice(from, from + 1000).map((r) => this.keys.follow(r)));
  }

  /** Forgets everything Redis holds of a run (it continues from the corpus). */
  async forgetRun(runId: string): Promise<void> {
    const { keys } = this;
    await this.redis
      .multi()
      .srem(keys.closed, runId)
      .del(keys.committed(runId), keys.versions(runId), keys.results(runId), keys.boundaries(runId), keys.follow(runId))
      .exec();
  }

  /** Whether each event is committed, in order. */
  async committed(events: readonly { runId: string; event: number }[]): Promise<boolean[]> {
    if (events.length === 0) return [];
    const bits = this.redis.pipeline();
    for (const e of events) bits.getbit(this.keys.committed(e.runId), e.event);
    const replies = (await bits.exec()) ?? [];
    return events.map((_, i) => {
      const [err, bit] = replies[i] ?? [new Error('no reply'), 0];
      if (err) throw err;
      return bit === 1;
    });
  }

  /** Which job took each continuation (field `o<event>` of its run's keys.follow; null: none yet), in one round trip. */
  async continuationOwners(events: readonly { runId: string; event: number }[]): Promise<(string | null)[]> {
    if (events.length === 0) return [];
    const owners = this.redis.pipeline();
    for (const e of events) owners.hget(this.keys.follow(e.runId), `o${e.event}`);
    const replies = (await owners.exec()) ?? [];
    return events.map((_, i) => {
      const [err, owner] = replies[i] ?? [new Error('no reply'), null];
      if (err) throw err;
      return (owner as string | null) ?? null;
    });
  }

  /** Puts version texts back where none is (the corpus's latest answers, for a Redis that lost the sweep). */
  async restoreVersions(runId: string, texts: ReadonlyMap<number, string>): Promise<void> {
    if (texts.size === 0) return;
    const m = this.redis.multi();
    for (const [v, text] of texts) m.hsetnx(this.keys.versions(runId), String(v), text);
    await m.exec();
  }

  /** Version texts, in order (null where missing). */
  async versionTexts(runId: string, versions: readonly number[]): Promise<(string | null)[]> {
    if (versions.length === 0) return [];
    return this.redis.hmget(this.keys.versions(runId), ...versions.map(String));
  }

  /** Deletes version texts no later event reads. */
  async forgetVersions(byRun: ReadonlyMap<string, readonly number[]>): Promise<void> {
    if (byRun.size === 0) return;
    const del = this.redis.pipeline();
    for (const [runId, versions] of byRun) if (versions.length > 0) del.hdel(this.keys.versions(runId), ...versions.map(String));
    await del.exec();
  }

  /** Committed results (binary, result-codec.ts), in order (null: already durable and deleted); one HMGET per run. */
  async results(events: readonly { runId: string; event: number }[]): Promise<(Buffer | null)[]> {
    if (events.length === 0) return [];
    const groups = byRun(events);
    const get = this.redis.pipeline();
    for (const [runId, at] of groups) get.hmgetBuffer(this.keys.results(runId), ...at.map((i) => String(events[i].event)));
    const replies = (await get.exec()) ?? [];
    const out: (Buffer | null)[] = new Array(events.length).fill(null);
    groups.forEach(([, at], r) => {
      const [err, stored] = replies[r] ?? [new Error('no reply'), null];
      if (err) throw err;
      const values = stored as (Buffer | null)[];
      at.forEach((i, k) => {
        const v = values[k];
        out[i] = Buffer.isBuffer(v) ? v : null;
      });
    });
    return out;
  }

  /** Every result a run has waiting, a page at a time. */
  async eachResult(runId: string, take: (stored: Buffer) => void): Promise<void> {
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscanBuffer(this.keys.results(runId), cursor, 'COUNT', 1000);
      cursor = next.toString();
      for (let i = 0; i + 1 < flat.length; i += 2) take(flat[i + 1]);
    } while (cursor !== '0');
  }

  /** Deletes the results of events [from, to) (their rows are durable). */
  async dropResults(runId: string, from: number, to: number): Promise<void> {
    for (let start = from; start < to; start += 2000) {
      const fields: string[] = [];
      for (let e = start; e < Math.min(to, start + 2000); e++) fields.push(String(e));
      await this.redis.hdel(this.keys.results(runId), ...fields);
    }
  }

  /** Rows appended so far by run: told to the scheduler and kept for `panta status`, together. */
  async reportWritten(counts: Record<string, number>): Promise<void> {
    await this.redis
      .multi()
      .xadd(this.keys.schedulerInbox, 'MAXLEN', '~', INBOX_MAXLEN, '*', ...encodeSchedulerMessage({ op: 'written', counts }))
      .hset(this.keys.written, counts)
      .exec();
  }

  async hasBoundary(runId: string, sweep: number): Promise<boolean> {
    return (await this.redis.hexists(this.keys.boundaries(runId), String(sweep))) === 1;
  }

  /** A committed boundary's outcome JSON, or null. */
  async boundaryOutcome(runId: string, sweep: number): Promise<string | null> {
    return this.redis.hget(this.keys.boundaries(runId), String(sweep));
  }

  /** Every committed boundary outcome of a run (JSON), by sweep. */
  async boundaryOutcomes(runId: string): Promise<Map<number, string>> {
    const stored = await this.redis.hgetall(this.keys.boundaries(runId));
    return new Map(Object.entries(stored).map(([sweep, json]) => [Number(sweep), json]));
  }
}
