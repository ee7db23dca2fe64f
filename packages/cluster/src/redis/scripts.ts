import type { Redis } from 'ioredis';
import { COMMIT_BOUNDARY } from '../scripts/commit-boundary-3.js';
import { COMMIT_EVENT } from '../scripts/commit-event-6.js';
import { FAIL_BOUNDARY } from '../scripts/fail-boundary-3.js';
import { FAIL_EVENT } from '../scripts/fail-event-3.js';
import { LEASE } from '../scripts/lease-1.js';
import { READ_VERSIONS } from '../scripts/read-versions-3.js';
import { INBOX_MAXLEN, type SweepKeys } from '../keys.js';

/**
 * One typed function per Lua step: each builds its script's KEYS from the sweep's keys and its ARGV from
 * named arguments, and maps the script's documented return codes to a result (or, for a code the script
 * never returns, a ScriptReplyError). Command names carry their key counts, as BullMQ's do, so a KEYS list
 * that drifts from its script shows in the name. ioredis sends EVALSHA and falls back to EVAL after a
 * Redis restart.
 */
interface LuaCommands {
  commitEvent6(...args: (string | number | Buffer)[]): Promise<number>;
  failEvent3(...args: (string | number)[]): Promise<number>;
  commitBoundary3(...args: (string | number)[]): Promise<number>;
  failBoundary3(...args: (string | number)[]): Promise<number>;
  readVersions3(...args: (string | number)[]): Promise<(number | string | null)[]>;
  lease1(...args: (string | number)[]): Promise<number>;
}

/** A connection with the Lua steps defined (what connect() returns). */
export type PantaRedis = Redis & { readonly [SCRIPTS]: true };
declare const SCRIPTS: unique symbol;

export function withScripts(redis: Redis): PantaRedis {
  redis.defineCommand('commitEvent6', { numberOfKeys: 6, lua: COMMIT_EVENT });
  redis.defineCommand('failEvent3', { numberOfKeys: 3, lua: FAIL_EVENT });
  redis.defineCommand('commitBoundary3', { numberOfKeys: 3, lua: COMMIT_BOUNDARY });
  redis.defineCommand('failBoundary3', { numberOfKeys: 3, lua: FAIL_BOUNDARY });
  redis.defineCommand('readVersions3', { numberOfKeys: 3, lua: READ_VERSIONS });
  redis.defineCommand('lease1', { numberOfKeys: 1, lua: LEASE });
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

export interface CommitEventArgs {
  keys: SweepKeys;
  runId: string;
  event: number;
  /** The text later events read as this agent's version. */
  version: string;
  /** The encoded result the collector writes (result-codec.ts): binary, which Lua stores untouched. */
  result: Buffer | string;
  calls: number;
  tokens: number;
}

/** Commits an event's result at most once and tells the scheduler and the collector (commit-event-6). */
export async function commitEvent(redis: PantaRedis, a: CommitEventArgs): Promise<Once> {
  const k = a.keys;
  const code = await lua(redis).commitEvent6(
    k.committed(a.runId),
    k.versions(a.runId),
    k.results(a.runId),
    k.closed,
    k.schedulerInbox,
    k.collectorInbox,
    a.runId,
    a.event,
    a.version,
    a.result,
    a.calls,
    a.tokens,
    INBOX_MAXLEN,
  );
  return once('commitEvent-6', code);
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
    await lua(redis).commitBoundary3(k.boundaries(a.runId), k.closed, k.collectorInbox, a.runId, a.sweep, a.outcome),
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

export interface ReadVersionsArgs {
  keys: SweepKeys;
  runId: string;
  event: number;
  versions: readonly number[];
}

/** The texts an event reads, in order (null where missing), or why it must not run: committed before, run closed. */
export type VersionsRead = { kind: 'run'; texts: (string | null)[] } | { kind: 'before' } | { kind: 'closed' };

/** What a worker reads for an event (read-versions-3). */
export async function readVersions(redis: PantaRedis, a: ReadVersionsArgs): Promise<VersionsRead> {
  const k = a.keys;
  const reply = await lua(redis).readVersions3(k.committed(a.runId), k.versions(a.runId), k.closed, a.runId, a.event, ...a.versions);
  const [code, ...texts] = reply;
  if (code === 1 && texts.length === a.versions.length && texts.every((t) => t === null || typeof t === 'string'))
    return { kind: 'run', texts: texts as (string | null)[] };
  if (code === 0 && texts.length === 0) return { kind: 'before' };
  if (code === -1 && texts.length === 0) return { kind: 'closed' };
  throw new ScriptReplyError('readVersions-3', reply);
}

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
