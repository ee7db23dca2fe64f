import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { redisNow } from './refusal.js';

/** Hash: worker id -> "slots|last seen (Redis's clock, ms)" of every worker serving this Redis's queue. */
export const WORKERS_KEY = 'panta:workers';
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
    await this.redis.hset(WORKERS_KEY, this.id, `${this.slots}|${await redisNow(this.redis)}`);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.redis.hdel(WORKERS_KEY, this.id).catch(() => undefined);
  }
}

/** Slots of the live workers (and how many they are); registrations gone silent are deleted. */
export async function liveSlots(redis: Redis): Promise<{ workers: number; slots: number }> {
  const now = await redisNow(redis);
  let workers = 0;
  let slots = 0;
  const stale: string[] = [];
  for (const [id, value] of Object.entries(await redis.hgetall(WORKERS_KEY))) {
    const [n, seen] = value.split('|').map(Number);
    if (!Number.isFinite(seen) || now - seen! > LIVE_MS) stale.push(id);
    else {
      workers++;
      slots += n ?? 0;
    }
  }
  if (stale.length > 0) await redis.hdel(WORKERS_KEY, ...stale);
  return { workers, slots };
}
