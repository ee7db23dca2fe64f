import type { Queue } from 'bullmq';
import { bullmq } from './cjs-deps.js';
import { EVENT_QUEUE, sweepKeys } from './keys.js';
import { redact } from '@panta/core';
import { authError, closeConnection, connect, isAuthError } from './redis.js';
import { listSweeps } from './redis/registry.js';
import { SweepStore } from './redis/sweep-store.js';

export interface RunStatus {
  run: string;
  written: number;
  inflight: number;
  /** Why the run failed (it resumes when a scheduler runs the sweep again). */
  failed?: string;
}

export interface SweepStatus {
  id: string;
  name: string;
  phase: string;
  /** The output folder the scheduler was given (relative paths resolve in the collector's folder); null for sweeps published before it was recorded. */
  out: string | null;
  /** The folder the sweep's collector writes (its --out, absolute on its machine); null before a collector started on it. */
  collectorOut: string | null;
  runsTotal: number;
  /** Adaptive temperatures: the round the scheduler runs (0: the start grid) and the rounds the spec allows. */
  round?: { index: number; of: number };
  runsFinished: number;
  runsActive: number;
  /** Runs that failed in the scheduler's current session (they resume when it runs again). */
  runsFailed: number;
  eventsTotal: number;
  eventsWritten: number;
  inflight: number;
  eventsPerSecond: number;
  /** LLM calls (retries included), tokens and retries of the scheduler's current session. */
  calls: number;
  tokens: number;
  retries: number;
  /** Events whose job went missing (a killed worker) and were queued again. */
  requeued: number;
  /** Seconds since the scheduler last reported (a large value: it is not running). */
  schedulerAge: number | null;
  /** The scheduler ended (complete, failed or stopped) and said so: nothing is in flight for it. */
  schedulerExited: boolean;
  runs: RunStatus[];
}

export interface ClusterStatus {
  queue: { waiting: number; active: number; delayed: number; failed: number };
  sweeps: SweepStatus[];
}

/**
 * Reads the status the scheduler keeps in Redis (every sweep published there, its open runs, the queue),
 * over one connection kept open between reads: `panta status` reads once, `panta dashboard` every second.
 */
export class StatusReader {
  private readonly redis;
  private readonly queueConnection;
  private readonly queue: Queue;
  /** Output folders of sweeps published before SWEEPS_KEY recorded them, read once from their payload. */
  private readonly outs = new Map<string, string | null>();

  /** failFast: a one-off read (`panta status`) reports an unreachable Redis; the dashboard keeps waiting. */
  constructor(
    url: string,
    private readonly failFast = false,
  ) {
    this.redis = connect(url, 'panta-status', { failFast: this.failFast });
    this.redis.on('error', (e: Error) => (this.lastError = e.message));
    this.redis.on('ready', () => (this.lastError = undefined));
    this.queueConnection = this.redis.duplicate();
    this.queueConnection.on('error', () => undefined);
    this.queue = new (bullmq().Queue)(EVENT_QUEUE, { connection: this.queueConnection });
    this.queue.on('error', () => undefined); // failures surface from the reads
  }

  /** The last connection error since Redis last answered (undefined while it does). */
  private lastError?: string;

  /**
   * Why Redis cannot be read now (the dashboard says so instead of waiting for it), or undefined: the
   * connection failed and is not ready again: the last error seen.
   */
  unreachable(): string | undefined {
    // Still connecting, with no error yet: the read waits for it (the dashboard bounds that wait).
    if (this.redis.status === 'ready' || this.lastError === undefined) return undefined;
    if (isAuthError(new Error(this.lastError))) return undefined; // the read reports it
    return redact(this.lastError);
  }

  async read(): Promise<ClusterStatus> {
    const { redis } = this;
    // Event jobs carry a priority (bull-transport.ts: jobPriority): BullMQ keeps them apart from the plain waiting list.
    const counts = await this.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed');
    const sweeps: SweepStatus[] = [];
    for (const [id, meta] of await listSweeps(redis)) {
      const store = new SweepStore(redis, sweepKeys(id));
      const { phase, status: s, written, inflight, failed, collectorOut } = await store.readStatus();
      const num = (k: string) => Number(s[k] ?? 0);
      // The scheduler's own total is the planned one less what early stopping skipped.
      const eventsTotal = s.eventsTotal !== undefined ? num('eventsTotal') : meta.events;
      // Adaptive rounds add runs: the scheduler's count, once it reports.
      const runsTotal = s.runsTotal !== undefined ? num('runsTotal') : meta.runs;
      // A finished sweep, or one whose scheduler has exited, has nothing open or in flight, whatever its last
      // progress report said (a scheduler killed mid-report leaves one behind).
      const done = phase === 'done';
      const exited = s.endedAt !== undefined;
      const idle = done || exited;
      const runIds = new Set([
        ...(idle ? [] : [...Object.keys(written), ...Object.keys(inflight).filter((k) => k !== '_')]),
        ...Object.keys(failed),
      ]);
      sweeps.push({
        id,
        name: meta.name,
        phase: phase ?? 'published',
        out: meta.out ?? (await this.payloadOut(id, store)),
        collectorOut,
        runsTotal,
        ...(s.rounds !== undefined ? { round: { index: num('round'), of: num('rounds') } } : {}),
        runsFinished: done ? runsTotal : num('runsFinished'),
        runsActive: idle ? 0 : num('runsActive'),
        runsFailed: num('runsFailed'),
        eventsTotal,
        eventsWritten: done ? eventsTotal : num('eventsWritten'),
        inflight: idle ? 0 : num('inflight'),
        eventsPerSecond: idle ? 0 : num('eventsPerSecond'),
        calls: num('calls'),
        tokens: num('tokens'),
        retries: num('retries'),
        requeued: num('requeued'),
        schedulerAge: s.updatedAt ? (Date.now() - Number(s.updatedAt)) / 1000 : null,
        schedulerExited: exited,
        runs: [...runIds].sort().map((run) => ({
          run,
          written: Number(written[run] ?? 0),
          inflight: idle ? 0 : Number(inflight[run] ?? 0),
          ...(failed[run] ? { failed: failed[run] } : {}),
        })),
      });
    }
    return {
      queue: {
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
      },
      sweeps,
    };
  }

  private async payloadOut(id: string, store: SweepStore): Promise<string | null> {
    if (!this.outs.has(id)) this.outs.set(id, await store.payloadOut());
    return this.outs.get(id)!;
  }

  async close(): Promise<void> {
    if (this.redis.status !== 'ready') {
      // Redis unreachable: closing the queue or QUIT would wait for it.
      this.queueConnection.disconnect();
      this.redis.disconnect();
      return;
    }
    await this.queue.close();
    await closeConnection(this.queueConnection);
    await closeConnection(this.redis);
  }
}

/** What `panta status` prints: every sweep published to this Redis, its open runs and the queue. */
export async function readStatus(url: string): Promise<ClusterStatus> {
  const reader = new StatusReader(url, true);
  try {
    return await reader.read().catch((e: Error) => {
      if (isAuthError(e)) throw authError(url, e);
      throw new Error(
        `cannot read the status from Redis at ${redact(url)} (${redact(e.message)}); fix: start redis-server there, or give --redis URL (or $PANTA_REDIS_URL)`,
      );
    });
  } finally {
    await reader.close();
  }
}
