import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { redisNow } from './redis.js';
import { beatWorker, dropWorkers, workerBeats } from './redis/registry.js';

export { WORKERS_KEY } from './redis/registry.js';
/** A worker says it is alive this often; one silent for LIVE_MS (killed, cut off) no longer counts. */
const BEAT_MS = 5000;
const LIVE_MS = 3 * BEAT_MS;

/**
 * A worker's registration: how many events it runs at once, renewed while it serves. The scheduler keeps as
 * many events in flight as the live workers have slots (at least the spec's concurrency), so that adding
 * workers adds throughput instead of idle slots.
 */
export class WorkerRegistration {
  private readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly slots: number,
  ) {}

  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat().catch(() => undefined), BEAT_MS);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    await beatWorker(this.redis, { id: this.id, slots: this.slots, seen: await redisNow(this.redis) });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await dropWorkers(this.redis, [this.id]).catch(() => undefined);
  }
}

/** Slots of the live workers (and how many they are); registrations gone silent are deleted. */
export async function liveSlots(redis: Redis): Promise<{ workers: number; slots: number }> {
  const now = await redisNow(redis);
  let workers = 0;
  let slots = 0;
  const stale: string[] = [];
  for (const beat of await workerBeats(redis)) {
    if (!Number.isFinite(beat.seen) || now - beat.seen > LIVE_MS) stale.push(beat.id);
    else {
      workers++;
      slots += beat.slots;
    }
  }
  await dropWorkers(redis, stale);
  return { workers, slots };
}
