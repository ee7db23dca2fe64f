import type { Redis } from 'ioredis';
import { SWEEPS_KEY } from '../keys.js';

/** What SWEEPS_KEY says of a published sweep (`out` is missing for sweeps published before it was recorded). */
export interface SweepListing {
  name: string;
  out?: string;
  runs: number;
  events: number;
  started_at?: string;
}

/** Every sweep published to this Redis, by id. */
export async function listSweeps(redis: Redis): Promise<Map<string, SweepListing>> {
  const all = await redis.hgetall(SWEEPS_KEY);
  return new Map(Object.entries(all).map(([id, json]) => [id, JSON.parse(json) as SweepListing]));
}

export async function recordSweep(redis: Redis, sweepId: string, listing: SweepListing): Promise<void> {
  await redis.hset(SWEEPS_KEY, sweepId, JSON.stringify(listing));
}

/** Hash: worker id -> "slots|last seen (Redis's clock, ms)" of every worker serving this Redis's queue. */
export const WORKERS_KEY = 'panta:workers';

export interface WorkerBeat {
  id: string;
  slots: number;
  /** Redis's clock when the worker last said it is alive; NaN when unreadable. */
  seen: number;
}

export async function beatWorker(redis: Redis, beat: WorkerBeat): Promise<void> {
  await redis.hset(WORKERS_KEY, beat.id, `${beat.slots}|${beat.seen}`);
}

export async function workerBeats(redis: Redis): Promise<WorkerBeat[]> {
  return Object.entries(await redis.hgetall(WORKERS_KEY)).map(([id, value]) => {
    const [slots, seen] = value.split('|').map(Number);
    return { id, slots: slots ?? 0, seen: seen ?? Number.NaN };
  });
}

export async function dropWorkers(redis: Redis, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await redis.hdel(WORKERS_KEY, ...ids);
}
