import { InputError, redact, registerSecret } from '@panta/core';
import type { Redis } from 'ioredis';
import { ioredis } from './cjs-deps.js';
import { withScripts, type PantaRedis } from './redis/scripts.js';

export type { PantaRedis } from './redis/scripts.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * The Redis URL a command uses: --redis, else $PANTA_REDIS_URL, else the default. A malformed one is one line
 * naming it and where it came from (exit 2), instead of ioredis's later `getaddrinfo ENOTFOUND` or
 * `connect ENOENT` (it takes a string that is not a URL for a host name or a socket path).
 */
export function redisUrl(flag?: string): string {
  const env = process.env.PANTA_REDIS_URL;
  const url = flag ?? (env ? env : DEFAULT_REDIS_URL);
  const problem = redisUrlProblem(url);
  if (problem)
    throw new InputError(
      flag !== undefined ? '--redis' : '$PANTA_REDIS_URL',
      '',
      `${JSON.stringify(redact(url))} ${problem}`,
      'give a Redis URL, redis://host[:port][/db] (rediss:// for TLS; a password in $PANTA_REDIS_PASSWORD), e.g. redis://127.0.0.1:6379',
    );
  return url;
}

/** Why `url` is not a Redis URL ioredis connects to as meant, or undefined. */
export function redisUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    return `has scheme ${parsed.protocol.slice(0, -1)}, not redis or rediss`;
  if (parsed.hostname === '') return 'names no host';
  if (parsed.port !== '' && !(Number(parsed.port) > 0)) return `has port ${parsed.port}`;
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) return `names database "${db}" (a number is expected)`;
  return undefined;
}

/** The URL as printed: host, port and database, never a password. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return redact(url);
  }
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
export function connect(
  url: string,
  name: string,
  options: { autoPipelining?: boolean; failFast?: boolean; log?: ConnectionLog } = {},
): PantaRedis {
  const password = passwordFor(url);
  const redis = new (ioredis().Redis)(url, {
    ...(password ? { password } : {}),
    // An interactive command (status) says Redis is unreachable instead of waiting for it.
    maxRetriesPerRequest: options.failFast ? 1 : null,
    connectionName: name,
    // Commands issued in one tick (a worker's many commits) go out in one write.
    enableAutoPipelining: options.autoPipelining ?? false,
    // A host that drops the SYN is reported as unreachable within 2 s, like a refused port (ioredis waits 10 s).
    connectTimeout: 1500,
    // disconnect() arms a timer to destroy a socket that does not close; a socket that had failed to connect
    // already closed and never clears it, so a role stopped while Redis is down lived on 2 s (the default).
    disconnectTimeout: 200,
    retryStrategy: (times) => (options.failFast && times > 3 ? null : Math.min(100 * times, 2000)),
  });
  const log = options.log;
  if (log) watchReachability(redis, url, log);
  else redis.on('error', () => undefined); // reconnects by itself; the caller reports what its calls see
  return withScripts(redis);
}

/** Where a role says that Redis is unreachable and that it is back (its logger). */
export interface ConnectionLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** How often a role repeats that Redis is still unreachable. */
export const UNREACHABLE_REPEAT_MS = 5000;
/** When each URL was last said unreachable (a process's connections to one Redis speak once for all). */
const lastSaid = new Map<string, number>();

/**
 * Says that Redis is unreachable at the first failed connect (a refused port at once; a silent host after
 * connectTimeout), then every UNREACHABLE_REPEAT_MS while it stays so (not a line per retry), and once that it is
 * reachable again. ioredis keeps reconnecting all the while; commands wait for it (maxRetriesPerRequest: null).
 */
function watchReachability(redis: Redis, url: string, log: ConnectionLog): void {
  const shown = shownUrl(url);
  let downSince: number | undefined;
  redis.on('error', (error: Error) => {
    if (isAuthError(error)) return; // reported by ready() as one line, exit 2
    const now = Date.now();
    downSince ??= now;
    const last = lastSaid.get(shown);
    if (last !== undefined && now - last < UNREACHABLE_REPEAT_MS) return;
    lastSaid.set(shown, now);
    const down_s = Math.round((now - downSince) / 1000);
    log.warn(
      { redis: shown, err: redact(error.message), down_s },
      `Redis at ${shown} is unreachable (${redact(error.message)}): retrying every 2 s; start it, or give the right --redis / $PANTA_REDIS_URL`,
    );
  });
  redis.on('ready', () => {
    if (downSince === undefined) return;
    downSince = undefined;
    if (!lastSaid.has(shown)) return;
    lastSaid.delete(shown);
    log.info({ redis: shown }, `Redis at ${shown} is reachable again`);
  });
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
 * The first round trip of a role: waits for Redis like every command (the connection's log says meanwhile
 * that it is unreachable), but a refused password is reported at once (one line, exit 2) instead of failing
 * some later command. False when `signal` aborted first: the role stops without having started.
 */
export async function ready(redis: Redis, url: string, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  let onAbort = () => {};
  const aborted = new Promise<false>((resolve) => {
    onAbort = () => resolve(false);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    // A stop while Redis is unreachable ends the wait at once (the ping is dropped with the connection).
    return await Promise.race([redis.ping().then(() => true), aborted]);
  } catch (error) {
    if (isAuthError(error)) throw authError(url, error as Error);
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Closes a connection: QUIT when Redis is reachable (replies first), else at once (QUIT would wait for it). */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => undefined);
  else redis.disconnect();
}

/** Redis's clock in ms (every role compares times on it: hosts' clocks may differ). */
export async function redisNow(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}
