import type { Redis } from 'ioredis';

/** Takes a lease nobody holds, for ttlMs; false when another process holds it. */
export async function tryTakeLease(redis: Redis, a: { key: string; token: string; ttlMs: number }): Promise<boolean> {
  return (await redis.set(a.key, a.token, 'PX', a.ttlMs, 'NX')) === 'OK';
}

/** Who holds a lease now (its token names host and pid), or null. */
export async function leaseHolder(redis: Redis, key: string): Promise<string | null> {
  return redis.get(key);
}

export async function leaseHeld(redis: Redis, key: string): Promise<boolean> {
  return (await redis.exists(key)) === 1;
}
