import type { Redis } from 'ioredis';
import { COMMIT_BOUNDARY } from '../scripts/commit-boundary-3.js';
import { COMMIT_EVENTS } from '../scripts/commit-events-n.js';
import { FAIL_BOUNDARY } from '../scripts/fail-boundary-3.js';
import { FAIL_EVENT } from '../scripts/fail-event-3.js';
import { HAND_OVER } from '../scripts/hand-over-2.js';
import { JOBS_GONE } from '../scripts/jobs-gone-n.js';
import { LEASE } from '../scripts/lease-1.js';
import { OFFER_CONTINUATIONS } from '../scripts/offer-continuations-n.js';
import { READ_EVENTS } from '../scripts/read-events-n.js';
import { INBOX_MAXLEN, type SweepKeys } from '../keys.js';
import { byRun } from './by-run.js';

/**
 * One typed function per Lua step: each builds its script's KEYS from the sweep's keys and its ARGV from
 * named arguments, and maps the script's documented return codes to a result (or, for a code the script
 * never returns, a ScriptReplyError). Command names carry their key counts, as BullMQ's do, so a KEYS list
 * that drifts from its script shows in the name. ioredis sends EVALSHA and falls back to EVAL after a
 * Redis restart.
 */
interface LuaCommands {
  commitEventsN(...args: (string | number | Buffer)[]): Promise<unknown[]>;
  offerContinuationsN(...args: (string | number)[]): Promise<number[]>;
  failEvent3(...args: (string | number)[]): Promise<number>;
  commitBoundary3(...args: (string | number)[]): Promise<number>;
  failBoundary3(...args: (string | number)[]): Promise<number>;
  readEventsN(...args: (string | number)[]): Promise<(number | string | null)[]>;
  lease1(...args: (string | number)[]): Promise<number>;
  jobsGoneN(...args: string[]): Promise<number[]>;
  handOver2(...args: (string | number)[]): Promise<number>;
}

/** A connection with the Lua steps defined (what connect() returns). */
export type PantaRedis = Redis & { readonly [SCRIPTS]: true };
declare const SCRIPTS: unique symbol;

export function withScripts(redis: Redis): PantaRedis {
  // The -n steps take a key count first: their keys are a few per run of the batch.
  redis.defineCommand('commitEventsN', { lua: COMMIT_EVENTS });
  redis.defineCommand('offerContinuationsN', { lua: OFFER_CONTINUATIONS });
  redis.defineCommand('failEvent3', { numberOfKeys: 3, lua: FAIL_EVENT });
  redis.defineCommand('commitBoundary3', { numberOfKeys: 3, lua: COMMIT_BOUNDARY });
  redis.defineCommand('failBoundary3', { numberOfKeys: 3, lua: FAIL_BOUNDARY });
  redis.defineCommand('readEventsN', { lua: READ_EVENTS });
  redis.defineCommand('lease1', { numberOfKeys: 1, lua: LEASE });
  redis.defineCommand('jobsGoneN', { lua: JOBS_GONE });
  redis.defineCommand('handOver2', { numberOfKeys: 2, lua: HAND_OVER });
  return redis as PantaRedis;
}

const lua = (redis: PantaRedis): LuaCommands => redis as unknown as LuaCommands;

/** A script answered with a code it is documented never to return (a script and its caller out of step). */
export class ScriptReplyError extends Error {
  constructor(
    readonly script: string,
    readonly reply: unknown,
  ) {
    super(`Lua step ${script} answered ${JSON.stringify(reply)}, which it never returns: the script and its caller are out of step`);
    this.name = 'ScriptReplyError';
  }
}

/** What an at-most-once step did: done now, done before by another attempt, or refused because the run closed. */
export type Once = 'done' | 'before' | 'closed';

function once(script: string, code: unknown): Once {
  if (code === 1) return 'done';
  if (code === 0) return 'before';
  if (code === -1) return 'closed';
  throw new ScriptReplyError(script, code);
}

/** One finished event for commit-events-n. */
export interface EventCommit {
  runId: string;
  event: number;
  /** The text later events read as this agent's version. */
  version: string;
  /** The encoded result the collector writes (result-codec.ts): binary, which Lua stores untouched. */
  result: Buffer | string;
  calls: number;
  tokens: number;
  /** The job the worker runs it under: a continuation the scheduler left for this event is taken for it. */
  owner?: string;
}

/** What commit-events-n did with an event: its code, and the continuation it took (a job's JSON), if any. */
export interface Committed {
  once: Once;
  next?: string;
  /** What the continuation reads, read in the same step (after its writes). */
  read?: VersionsRead;
}

/**
 * Commits events at most once each and tells the scheduler and the collector shards concerned, in one step
 * (commit-events-n): `inboxOf` names the collector inbox of each run's shard (by default the sweep's one).
 * The codes come back in the order of `events`.
 */
export async function commitEvents(
  redis: PantaRedis,
  keys: SweepKeys,
  events: readonly EventCommit[],
  inboxOf: (runId: string) => string = () => keys.collectorInbox,
): Promise<Once[]> {
  return (await commitFollowing(redis, keys, events, inboxOf)).map((c) => c.once);
}

/** commitEvents, with the continuations the commits took (events with an owner: see EventCommit.owner). */
export async function commitFollowing(
  redis: PantaRedis,
  keys: SweepKeys,
  events: readonly EventCommit[],
  inboxOf: (runId: string) => string = () => keys.collectorInbox,
): Promise<Committed[]> {
  if (events.length === 0) return [];
  const groups = byRun(events);
  const inboxes = new Map<string, number>();
  const runKeys: string[] = [];
  const runArgs: (string | number | Buffer)[] = [];
  for (const [runId, at] of groups) {
    const inbox = inboxOf(runId);
    let n = inboxes.get(inbox);
    if (n === undefined) inboxes.set(inbox, (n = inboxes.size + 1));
    runKeys.push(keys.committed(runId), keys.versions(runId), keys.results(runId), keys.follow(runId));
    runArgs.push(runId, n, at.length);
    for (const i of at) {
      const e = events[i];
      runArgs.push(e.event, e.version, e.result, e.calls, e.tokens, e.owner ?? '');
    }
  }
  const allKeys = [keys.closed, keys.schedulerInbox, ...inboxes.keys(), ...runKeys];
  const codes = await lua(redis).commitEventsN(allKeys.length, ...allKeys, INBOX_MAXLEN, inboxes.size, groups.length, ...runArgs);
  const n = events.length;
  if (!Array.isArray(codes) || (codes.length !== n && codes.length !== 2 * n)) throw new ScriptReplyError('commitEvents-n', codes);
  // The codes come run by run, then the continuations in the same order: back to the order of `events`.
  const out = new Array<Committed>(n);
  groups
    .flatMap(([, at]) => at)
    .forEach((i, k) => {
      const code = once('commitEvents-n', codes[k]);
      const next = codes[n + k];
      if (next === undefined || next === 0) out[i] = { once: code };
      else out[i] = { once: code, ...continuationOf(next, codes) };
    });
  return out;
}

/** A continuation as commit-events-n returns it: {job, committed bit, texts...}. */
function continuationOf(entry: unknown, reply: unknown): { next: string; read: VersionsRead } {
  if (!Array.isArray(entry) || typeof entry[0] !== 'string' || (entry[1] !== 0 && entry[1] !== 1))
    throw new ScriptReplyError('commitEvents-n', reply);
  const texts = entry.slice(2) as (string | null)[];
  if (texts.some((t) => t !== null && typeof t !== 'string')) throw new ScriptReplyError('commitEvents-n', reply);
  return { next: entry[0], read: entry[1] === 1 ? { kind: 'before' } : { kind: 'run', texts } };
}

/** A continuation to leave for the worker that commits its parent (see offer-continuations-n). */
export interface ContinuationOffer {
  runId: string;
  parent: number;
  child: number;
  /** The child's job, JSON (a BatchJob of one event). */
  job: string;
}

/** Leaves continuations in one step (offer-continuations-n); per offer, whether it was left (else: send it as a job). */
export async function offerContinuations(redis: PantaRedis, keys: SweepKeys, offers: readonly ContinuationOffer[]): Promise<boolean[]> {
  if (offers.length === 0) return [];
  const allKeys = [keys.closed, ...offers.flatMap((o) => [keys.committed(o.runId), keys.follow(o.runId)])];
  const args = offers.flatMap((o) => [o.runId, o.parent, o.child, o.job]);
  const reply = await lua(redis).offerContinuationsN(allKeys.length, ...allKeys, ...args);
  if (!Array.isArray(reply) || reply.length !== offers.length || reply.some((c) => c !== 0 && c !== 1))
    throw new ScriptReplyError('offer-continuations-n', reply);
  return reply.map((c) => c === 1);
}

/**
 * A continuation passed on as job `jobId`: that job is recorded as the one that took it (hand-over-2); false
 * when the event is committed already.
 */
export async function handOver(redis: PantaRedis, keys: SweepKeys, runId: string, event: number, jobId: string): Promise<boolean> {
  const reply = await lua(redis).handOver2(keys.committed(runId), keys.follow(runId), event, jobId);
  if (reply !== 0 && reply !== 1) throw new ScriptReplyError('hand-over-2', reply);
  return reply === 1;
}

export interface FailEventArgs {
  keys: SweepKeys;
  runId: string;
  event: number;
  error: string;
}

/** Reports an event failed, unless it was committed meanwhile (fail-event-3). */
export async function failEvent(redis: PantaRedis, a: FailEventArgs): Promise<Once> {
  const k = a.keys;
  return once(
    'failEvent-3',
    await lua(redis).failEvent3(k.committed(a.runId), k.closed, k.schedulerInbox, a.runId, a.event, a.error, INBOX_MAXLEN),
  );
}

export interface CommitBoundaryArgs {
  keys: SweepKeys;
  runId: string;
  sweep: number;
  /** The outcome's JSON. */
  outcome: string;
}

/** Commits a boundary's outcome at most once and asks the collector to journal it (commit-boundary-3). */
export async function commitBoundary(redis: PantaRedis, a: CommitBoundaryArgs): Promise<Once> {
  const k = a.keys;
  return once(
    'commitBoundary-3',
    await lua(redis).commitBoundary3(k.boundaries(a.runId), k.closed, k.collectorControl, a.runId, a.sweep, a.outcome),
  );
}

export interface FailBoundaryArgs {
  keys: SweepKeys;
  runId: string;
  sweep: number;
  error: string;
}

/** Reports a boundary failed, unless it was committed meanwhile (fail-boundary-3). */
export async function failBoundary(redis: PantaRedis, a: FailBoundaryArgs): Promise<Once> {
  const k = a.keys;
  return once(
    'failBoundary-3',
    await lua(redis).failBoundary3(k.boundaries(a.runId), k.closed, k.schedulerInbox, a.runId, a.sweep, a.error, INBOX_MAXLEN),
  );
}

/** One event a job asks to run, with the versions it reads. */
export interface EventRead {
  runId: string;
  event: number;
  versions: readonly number[];
}

/** Whether an event runs (with the texts it reads, in order; null where missing), or why not. */
export type VersionsRead = { kind: 'run'; texts: (string | null)[] } | { kind: 'before' } | { kind: 'closed' };

/**
 * What a worker reads for a job's events, in one step (read-events-n): per event whether it must run, and
 * the texts it reads. A version several events of a run read is read once.
 */
export async function readEvents(redis: PantaRedis, keys: SweepKeys, events: readonly EventRead[]): Promise<VersionsRead[]> {
  if (events.length === 0) return [];
  const groups = byRun(events);
  const runKeys: string[] = [];
  const args: (string | number)[] = [groups.length];
  const unions: number[][] = [];
  for (const [runId, at] of groups) {
    runKeys.push(keys.committed(runId), keys.versions(runId));
    args.push(runId, at.length);
    for (const i of at) args.push(events[i].event);
    const union = [...new Set(at.flatMap((i) => events[i].versions))];
    unions.push(union);
    args.push(union.length, ...union);
  }
  const allKeys = [keys.closed, ...runKeys];
  const reply = await lua(redis).readEventsN(allKeys.length, ...allKeys, ...args);
  const expected = events.length + unions.reduce((n, u) => n + u.length, 0);
  if (!Array.isArray(reply) || reply.length !== expected) throw new ScriptReplyError('readEvents-n', reply);
  const out = new Array<VersionsRead>(events.length);
  let next = 0;
  groups.forEach(([, at], g) => {
    const codes = reply.slice(next, next + at.length);
    next += at.length;
    const texts = new Map<number, string | null>();
    for (const v of unions[g]) {
      const t = reply[next++];
      if (t !== null && typeof t !== 'string') throw new ScriptReplyError('readEvents-n', reply);
      texts.set(v, t);
    }
    at.forEach((i, k) => {
      const code = codes[k];
      if (code === 1) out[i] = { kind: 'run', texts: events[i].versions.map((v) => texts.get(v) ?? null) };
      else if (code === 0) out[i] = { kind: 'before' };
      else if (code === -1) out[i] = { kind: 'closed' };
      else throw new ScriptReplyError('readEvents-n', reply);
    });
  });
  return out;
}

/**
 * The ids of `ids` whose BullMQ job is gone or failed (jobs-gone-n), in one step however many: `failedKey` is
 * the queue's failed set, `jobKey` names a job's hash. Asked in slices of 5,000 jobs (one step each), so that
 * one script never holds Redis for long.
 */
export async function jobsGone(
  redis: PantaRedis,
  failedKey: string,
  jobKey: (id: string) => string,
  ids: readonly string[],
): Promise<string[]> {
  const gone: string[] = [];
  for (let from = 0; from < ids.length; from += JOBS_GONE_SLICE) {
    const slice = ids.slice(from, from + JOBS_GONE_SLICE);
    const reply = await lua(redis).jobsGoneN(String(slice.length + 1), failedKey, ...slice.map(jobKey), ...slice);
    if (!Array.isArray(reply)) throw new ScriptReplyError('jobs-gone-n', reply);
    for (const i of reply) {
      if (typeof i !== 'number' || i < 1 || i > slice.length) throw new ScriptReplyError('jobs-gone-n', reply);
      gone.push(slice[i - 1]);
    }
  }
  return gone;
}

const JOBS_GONE_SLICE = 5000;

export interface LeaseArgs {
  key: string;
  token: string;
  ttlMs: number;
}

/** Renews a lease this process holds; false when it no longer does (lease-1). */
export async function renewLease(redis: PantaRedis, a: LeaseArgs): Promise<boolean> {
  return leaseStep(redis, a, 'renew');
}

/** Deletes a lease this process holds; false when it no longer did (lease-1). */
export async function releaseLease(redis: PantaRedis, a: LeaseArgs): Promise<boolean> {
  return leaseStep(redis, a, 'release');
}

async function leaseStep(redis: PantaRedis, a: LeaseArgs, step: 'renew' | 'release'): Promise<boolean> {
  const code = await lua(redis).lease1(a.key, a.token, step, a.ttlMs);
  if (code !== 0 && code !== 1) throw new ScriptReplyError('lease-1', code);
  return code === 1;
}
