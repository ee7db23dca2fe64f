import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { verifyCorpus } from '@panta/corpus';
import { pantaProcess, type PantaProcess } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';

/** Every `panta` process a test file started, killed when its test ends (a failed test leaves none behind). */
export class Roles {
  private readonly started: PantaProcess[] = [];

  constructor(private readonly env: () => Record<string, string>) {}

  spawn(args: string[], env: Record<string, string> = {}): PantaProcess {
    const p = pantaProcess(args, { ...this.env(), ...env });
    this.started.push(p);
    return p;
  }

  killAll(): void {
    for (const p of this.started.splice(0)) p.kill('SIGKILL');
  }
}

/** Waits until `p` has written `text` to stderr (a role's log line), or fails the test with what it wrote. */
export async function logged(p: PantaProcess, text: string | RegExp, tries = 600): Promise<void> {
  const seen = () => (typeof text === 'string' ? p.stderr().includes(text) : text.test(p.stderr()));
  for (let i = 0; i < tries && !seen(); i++) await sleep(100);
  if (!seen()) throw new Error(`no log line ${String(text)}; stderr: ${p.stderr().slice(-2000)}`);
}

/**
 * What `panta verify OUT` checks (exit 0: "complete and consistent"), run in this process: a test of a
 * distributed sweep checks its corpus without starting node and loading the CLI again (packages/cli's tests
 * check the command itself).
 */
export async function expectVerified(out: string): Promise<void> {
  const report = await verifyCorpus(out);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
}

/** Lines a role logged at error level (pino level 50) or above. */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => /"level":(50|60)/.test(l));
}

/** What `redisPerFile` gives a test file: its redis-server, a client on it, and the roles its tests start. */
export interface FileRedis {
  readonly server: RedisServer;
  /** The server's URL (what roles get as PANTA_REDIS_URL). */
  readonly url: string;
  /** A client on it. */
  readonly client: Redis;
  readonly roles: Roles;
}

/**
 * A real redis-server (data in `dir`) for one test file: started before its first test, with a client on it, and
 * stopped after its last. After each test the roles it started are killed and, unless `flushEach` is false, Redis is
 * emptied, so that no sweep or role a test left behind (a failed one too) is served to the next.
 */
export function redisPerFile(dir: string, { flushEach = true } = {}): FileRedis {
  let server: RedisServer | undefined;
  let redis: Redis | undefined;
  const started = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error('redisPerFile: Redis is not started yet (use it inside a test or hook)');
    return x;
  };
  const roles = new Roles(() => ({ PANTA_REDIS_URL: started(server).url }));
  beforeAll(async () => {
    server = await RedisServer.start(dir);
    redis = new Redis(server.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
  });
  afterEach(async () => {
    roles.killAll();
    if (flushEach) await started(redis).flushall();
  });
  afterAll(async () => {
    roles.killAll();
    redis?.disconnect();
    await server?.stop();
  });
  return {
    get server() {
      return started(server);
    },
    get url() {
      return started(server).url;
    },
    get client() {
      return started(redis);
    },
    roles,
  };
}
