import { InputError, redact, registerSecret } from '@panta/core';
import type { Redis } from 'ioredis';
import { ioredis } from './cjs-deps.js';
import { withScripts, type PantaRedis } from './redis/scripts.js';

export type { PantaRedis } from './redis/scripts.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function redisUrl(flag?: string): string {
  return flag ?? process.env.PANTA_REDIS_URL ?? DEFAULT_REDIS_URL;
}

/**
 * The password a role authenticates with: the URL's (`redis://:PASS@host:port`), else $PANTA_REDIS_PASSWORD
 * (a secret env name: the process's redactor already hides it). A URL's password is registered too, so that no
 * log line, error or status print shows it whatever echoes it.
 */
function passwordFor(url: string): string | undefined {
  let fromUrl = '';
  try {
    fromUrl = decodeURIComponent(new URL(url).password);
  } catch {
    // ioredis reports a malformed URL itself
  }
  if (fromUrl) {
    registerSecret(fromUrl);
    return undefined; // ioredis reads it from the URL
  }
  const env = process.env.PANTA_REDIS_PASSWORD;
  return env ? env : undefined;
}

/**
 * A connection that waits out a Redis restart instead of failing commands (BullMQ requires
 * maxRetriesPerRequest: null too): with AOF and appendfsync always, nothing acknowledged is lost, so every
 * role simply carries on once Redis is back.
 */
export function connect(url: string, name: string, options: { autoPipelining?: boolean; failFast?: boolean } = {}): PantaRedis {
  const password = passwordFor(url);
  const redis = new (ioredis().Redis)(url, {
    ...(password ? { password } : {}),
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

/** Whether Redis refused this connection's credentials (no password given, or a wrong one). */
export function isAuthError(error: unknown): boolean {
  return error instanceof Error && /^(NOAUTH|WRONGPASS)\b/.test(error.message);
}

/** A refused password as one line naming the fix (exit 2): retrying would be refused again. */
export function authError(url: string, error: Error): InputError {
  const given = passwordFor(url) !== undefined || /^[a-z]+:\/\/[^/@]*:[^/@]*@/i.test(url);
  const problem =
    error.message.startsWith('WRONGPASS') || given ? 'Redis refused the password given (WRONGPASS)' : 'Redis requires a password (NOAUTH)';
  return new InputError(
    redact(url),
    'password',
    problem,
    "give the password in the URL, redis://:<password>@host:port, as --redis (or $PANTA_REDIS_URL), or set $PANTA_REDIS_PASSWORD to the server's requirepass",
  );
}

/**
 * The first round trip of a role: waits for Redis like every command, but a refused password is reported at
 * once (one line, exit 2) instead of failing some later command.
 */
export async function ready(redis: Redis, url: string): Promise<void> {
  try {
    await redis.ping();
  } catch (error) {
    if (isAuthError(error)) throw authError(url, error as Error);
    throw error;
  }
}

/** Redis's clock in ms (every role compares times on it: hosts' clocks may differ). */
export async function redisNow(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}
