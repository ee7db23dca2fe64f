/** The BullMQ queue every sweep's events go through (workers serve whatever sweep a job names). */
export const EVENT_QUEUE = 'panta-events';
/** Hash: sweep id -> JSON {name, out, runs, events, started_at} of every sweep published to this Redis. */
export const SWEEPS_KEY = 'panta:sweeps';
/** Stream entries kept at most in the scheduler's inbox (it trims what it has read much sooner). */
export const INBOX_MAXLEN = 200_000;

/** A sweep's id in Redis: its name and the start of its corpus fingerprint, so two sweeps never share keys. */
export function sweepIdOf(name: string, fingerprint: string): string {
  return `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}-${fingerprint.slice(0, 12)}`;
}

/**
 * Every key of one sweep. Per-run state: a bitmap of committed events (the at-most-once guard), the
 * version texts workers read, the results waiting for the collector, and sweep boundaries' outcomes. Inboxes are streams: one the
 * scheduler reads (commits, failures, collector replies), and two the collector reads with a consumer group:
 * the workers' commits (read in paced batches) and its control requests (open, boundary, close, finish, rows:
 * read at once, so that pacing the commits never delays a boundary or a close).
 */
export function sweepKeys(sweepId: string) {
  const p = `panta:${sweepId}`;
  return {
    spec: `${p}:spec`,
    state: `${p}:state`,
    status: `${p}:status`,
    open: `${p}:open`,
    closed: `${p}:closed`,
    written: `${p}:written`,
    failed: `${p}:failed`,
    inflight: `${p}:inflight`,
    schedulerInbox: `${p}:inbox:scheduler`,
    collectorInbox: `${p}:inbox:collector`,
    collectorControl: `${p}:inbox:collector-control`,
    schedulerLease: `${p}:lease:scheduler`,
    collectorLease: `${p}:lease:collector`,
    /** Hash: collector shard -> its LLM judge calls, once that shard has made its runs durable (sharded collectors). */
    collectorsDone: `${p}:collectors:done`,
    verdicts: `${p}:verdicts`, // hash: the LLM judge's verdicts, shared by every process of the sweep (redis/verdicts.ts)
    committed: (runId: string) => `${p}:run:${runId}:committed`,
    versions: (runId: string) => `${p}:run:${runId}:versions`,
    results: (runId: string) => `${p}:run:${runId}:results`,
    /**
     * Continuations (offer-continuations-n, commit-events-n): c<parent> -> "<child>:<job>" left by the
     * scheduler, o<child> -> the job of the worker that took it.
     */
    follow: (runId: string) => `${p}:run:${runId}:follow`,
    /** Sweep boundary outcomes (early stopping, drift-policy), by sweep: written once by a worker, read by the collector. */
    boundaries: (runId: string) => `${p}:run:${runId}:boundaries`,
  };
}

export type SweepKeys = ReturnType<typeof sweepKeys>;

/**
 * The keys as collector shard `shard` sees them: its own inboxes and lease (shard 0 keeps the unsharded names,
 * so one collector is shard 0 of 1). Everything else is shared by the shards.
 */
export function collectorKeys(keys: SweepKeys, shard: number): SweepKeys {
  if (shard === 0) return keys;
  return {
    ...keys,
    collectorInbox: `${keys.collectorInbox}:${shard}`,
    collectorControl: `${keys.collectorControl}:${shard}`,
    collectorLease: `${keys.collectorLease}:${shard}`,
  };
}

/**
 * A job's id names the scheduler incarnation, the job's number and its first event (BullMQ ids must not
 * contain ':' nor be all digits). Ids are unique: BullMQ drops a job whose id exists, which would lose the
 * other events of a batch composed differently by a restarted scheduler.
 */
export function jobIdOf(incarnation: string, seq: number, runId: string, event: number): string {
  return `${incarnation}|${seq}|${runId}|${event}`;
}
