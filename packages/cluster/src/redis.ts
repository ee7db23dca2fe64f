import { Redis } from 'ioredis';
import { withScripts, type PantaScripts } from './scripts/index.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function redisUrl(flag?: string): string {
  return flag ?? process.env.PANTA_REDIS_URL ?? DEFAULT_REDIS_URL;
}

/**
 * A connection that waits out a Redis restart instead of failing commands (BullMQ requires
 * maxRetriesPerRequest: null too): with AOF and appendfsync always, nothing acknowledged is lost, so every
 * role simply carries on once Redis is back.
 */
export function connect(url: string, name: string, options: { autoPipelining?: boolean; failFast?: boolean } = {}): Redis & PantaScripts {
  const redis = new Redis(url, {
    // An interactive command (status) says Redis is unreachable instead of waiting for it.
    maxRetriesPerRequest: options.failFast ? 1 : null,
    connectionName: name,
    // Commands issued in one tick (a worker's many commits) go out in one write.
    enableAutoPipelining: options.autoPipelining ?? false,
    retryStrategy: (times) => (options.failFast && times > 3 ? null : Math.min(100 * times, 2000)),
  });
  redis.on('error', () => undefined); // reconnects by itself; roles log what they see through their own calls
  return withScripts(redis);
}

/** Reads a stream reply ([id, [field, value, ...]][]) into objects. */
export function streamEntries(reply: [string, string[]][] | null | undefined): { id: string; fields: Record<string, string> }[] {
  if (!reply) return [];
  return reply.map(([id, flat]) => {
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
    return { id, fields };
  });
}
