import { Queue } from 'bullmq';
import { EVENT_QUEUE, SWEEPS_KEY, sweepKeys } from './keys.js';
import { connect } from './redis.js';

export interface RunStatus {
  run: string;
  written: number;
  inflight: number;
}

export interface SweepStatus {
  id: string;
  name: string;
  phase: string;
  runsTotal: number;
  runsFinished: number;
  runsActive: number;
  eventsTotal: number;
  eventsWritten: number;
  inflight: number;
  eventsPerSecond: number;
  calls: number;
  requeued: number;
  /** Seconds since the scheduler last reported (a large value: it is not running). */
  schedulerAge: number | null;
  runs: RunStatus[];
}

export interface ClusterStatus {
  queue: { waiting: number; active: number; delayed: number; failed: number };
  sweeps: SweepStatus[];
}

/** What `panta status` prints: every sweep published to this Redis, its open runs and the queue. */
export async function readStatus(url: string): Promise<ClusterStatus> {
  const redis = connect(url, 'panta-status');
  const queueConnection = redis.duplicate();
  const queue = new Queue(EVENT_QUEUE, { connection: queueConnection });
  try {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
    const sweeps: SweepStatus[] = [];
    for (const [id, info] of Object.entries(await redis.hgetall(SWEEPS_KEY))) {
      const keys = sweepKeys(id);
      const meta = JSON.parse(info) as { name: string; runs: number; events: number };
      const [phase, s, written, inflight] = await Promise.all([redis.hget(keys.state, 'phase'), redis.hgetall(keys.status), redis.hgetall(keys.written), redis.hgetall(keys.inflight)]);
      const num = (k: string) => Number(s[k] ?? 0);
      const runIds = new Set([...Object.keys(written), ...Object.keys(inflight).filter((k) => k !== '_')]);
      sweeps.push({
        id,
        name: meta.name,
        phase: phase ?? 'published',
        runsTotal: meta.runs,
        runsFinished: num('runsFinished'),
        runsActive: num('runsActive'),
        eventsTotal: meta.events,
        eventsWritten: phase === 'done' ? meta.events : num('eventsWritten'),
        inflight: num('inflight'),
        eventsPerSecond: num('eventsPerSecond'),
        calls: num('calls'),
        requeued: num('requeued'),
        schedulerAge: s.updatedAt ? (Date.now() - Number(s.updatedAt)) / 1000 : null,
        runs: [...runIds].sort().map((run) => ({ run, written: Number(written[run] ?? 0), inflight: Number(inflight[run] ?? 0) })),
      });
    }
    return { queue: { waiting: counts.waiting ?? 0, active: counts.active ?? 0, delayed: counts.delayed ?? 0, failed: counts.failed ?? 0 }, sweeps };
  } finally {
    await queue.close();
    await queueConnection.quit().catch(() => undefined);
    await redis.quit().catch(() => undefined);
  }
}
