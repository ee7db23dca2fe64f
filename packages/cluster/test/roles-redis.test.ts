import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { queryRows } from '@panta/corpus';
import { SWEEPS_KEY, sweepKeys } from '../src/index.js';
import { RHEON6, pantaProcess, tempDir, writeSpec } from '../../../test/helpers.js';
import { RedisServer, freePort } from '../../../test/redis-server.js';
import { Roles, logged } from './roles.js';

const dir = tempDir('panta-roles-redis-');
const PASSWORD = 'not-printed-Kq27';
let server: RedisServer;
let redis: Redis;
let specFile: string;
const roles = new Roles(() => ({}));

beforeAll(async () => {
  server = await RedisServer.start(dir);
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  specFile = writeSpec(
    dir,
    `name: down\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.5]\nsweeps: 2\nseed: 3\nbackend: {kind: surrogate, latency_ms: 2}\nconcurrency: 8\n`,
    'down.yaml',
  );
});
afterAll(async () => {
  roles.killAll();
  redis.disconnect();
  await server.stop();
});

describe('roles and a Redis that is down', () => {
  it('each role says at once that Redis is unreachable (its URL, no password), repeats it every few seconds, and stops on one SIGTERM', {
    timeout: 120_000,
  }, async () => {
    // A closed port: nothing listens there.
    const port = await freePort();
    const url = `redis://:${PASSWORD}@127.0.0.1:${port}`;
    const shown = `redis://127.0.0.1:${port}`;
    const cases: [string, string[]][] = [
      ['worker', ['worker', '--concurrency', '2']],
      ['scheduler', ['scheduler', specFile]],
      ['collector', ['collector', '--out', join(dir, 'never')]],
    ];
    // Started together: the machine's two cores start them more slowly one by one.
    const started = cases.map(([role, args]) => ({ role, at: Date.now(), p: roles.spawn([...args, '--redis', url]) }));
    for (const { role, at, p } of started) {
      await logged(p, `Redis at ${shown} is unreachable (connect ECONNREFUSED`);
      const first = Date.now() - at;
      // Said again while it stays down: at least twice in all, and not once per reconnect attempt.
      await logged(p, /is unreachable[^\n]*\n[^\n]*is unreachable/);
      const lines = p
        .stderr()
        .split('\n')
        .filter((l) => l.includes('is unreachable'));
      expect(lines.length).toBeLessThan(6);
      const term = Date.now();
      p.kill('SIGTERM');
      const done = await p.exited;
      console.log(`${role}: first line ${first} ms after start (node's start included); exit ${Date.now() - term} ms after SIGTERM`);
      expect(done.signal).toBeNull();
      expect([0, 130]).toContain(done.code);
      expect(done.stderr).not.toContain(PASSWORD);
      expect(done.stderr).not.toMatch(/getaddrinfo|ENOENT/);
    }
  });

  it('a malformed --redis or $PANTA_REDIS_URL is one line naming it, exit 2', { timeout: 60_000 }, async () => {
    const bad = async (args: string[], env: Record<string, string>, where: string, problem: string) => {
      const r = await pantaProcess(args, env).exited;
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`panta: ${where}: ${problem}`);
      expect(lines[0]).toContain('; fix: give a Redis URL, redis://host[:port][/db]');
      expect(r.stderr).not.toContain(PASSWORD);
    };
    // Each its own process, run at once.
    await Promise.all([
      bad(['worker', '--redis', 'localhost:6379'], {}, '--redis', '"localhost:6379" has scheme localhost, not redis or rediss'),
      bad(['scheduler', specFile, '--redis', 'redis//127.0.0.1'], {}, '--redis', '"redis//127.0.0.1" is not a URL'),
      bad(['collector', '--redis', `redis://:${PASSWORD}@/0`], {}, '--redis', '"redis://[redacted]@/0" is not a URL'),
      bad(['collector', '--redis', 'redis:///0'], {}, '--redis', '"redis:///0" names no host'),
      bad(['status'], { PANTA_REDIS_URL: 'redis-host:6379' }, '$PANTA_REDIS_URL', '"redis-host:6379" has scheme redis-host'),
      bad(['dashboard', '--redis', 'http://127.0.0.1:6379', '--port', '0'], {}, '--redis', '"http://127.0.0.1:6379" has scheme http'),
    ]);
  });

  it('panta dashboard --redis with Redis down prints its address and says Redis is unreachable, as /api/state does', {
    timeout: 60_000,
  }, async () => {
    const port = await freePort();
    const p = roles.spawn(['dashboard', '--redis', `redis://:${PASSWORD}@127.0.0.1:${port}`, '--port', '0']);
    await logged(p, /panta dashboard: http:\/\/127\.0\.0\.1:\d+\//);
    await logged(p, `panta dashboard: Redis at redis://127.0.0.1:${port} is unreachable`);
    const address = /panta dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(p.stderr())![1];
    const state = (await (await fetch(`${address}api/state`)).json()) as { error: string | null; watching: string };
    expect(state.error).toContain(`Redis at redis://127.0.0.1:${port} is unreachable`);
    expect(state.watching).toBe(`Redis redis://127.0.0.1:${port}`);
    p.kill('SIGTERM');
    const done = await p.exited;
    expect(done.code).toBe(0);
    expect(done.stderr).not.toContain(PASSWORD);
  });
});

describe('a finished sweep', () => {
  it('a second scheduler for a finished spec says it finished and exits 0 without reopening it', { timeout: 120_000 }, async () => {
    const env = { PANTA_REDIS_URL: server.url };
    const out = join(dir, 'finished');
    const workers = [roles.spawn(['worker', '--concurrency', '4'], env)];
    const collector = roles.spawn(['collector', '--durable-ms', '200'], env);
    const first = await roles.spawn(['scheduler', specFile, '--out', out], env).exited;
    expect(first.code).toBe(0);
    expect((await collector.exited).code).toBe(0);
    const [id] = Object.keys(await redis.hgetall(SWEEPS_KEY));
    const phase = () => redis.hget(sweepKeys(id!).state, 'phase');
    expect(await phase()).toBe('done');
    // The calls `panta status` says are the calls of runs.parquet: counted as the scheduler ended, not at its
    // last report of the second before.
    const [{ calls }] = await queryRows(`SELECT sum(calls)::INTEGER AS calls FROM read_parquet('${out}/runs.parquet')`);
    const json = JSON.parse((await pantaProcess(['status', '--json'], env).exited).stdout) as { sweeps: { calls: number }[] };
    expect(calls).toBeGreaterThan(0);
    expect(json.sweeps[0]!.calls).toBe(calls);

    // A collector started with it (as a batch job starts both) ends too, instead of waiting for a sweep.
    const collector2 = roles.spawn(['collector', '--durable-ms', '200'], env);
    const again = await roles.spawn(['scheduler', specFile, '--out', out], env).exited;
    expect(again.code).toBe(0);
    const ended = await collector2.exited;
    expect(ended.code).toBe(0);
    expect(ended.stdout).toMatch(/^complete: \d+\/\d+ runs, [\d,]+ events; corpus: /m);
    expect(ended.stderr).toMatch(/finished before and its corpus is complete \(a scheduler said so\)/);
    expect(again.stdout).toMatch(/^finished before: sweep down-[0-9a-f]{12}, corpus complete in .*finished; nothing to schedule/m);
    expect(await phase()).toBe('done');
    const status = await pantaProcess(['status'], env).exited;
    expect(status.stdout).toMatch(/\(done; corpus written\)/);
    for (const w of workers) w.kill('SIGTERM');
    for (const w of workers) await w.exited;
  });
});

describe('Redis connections', () => {
  it('a worker holds two connections to Redis: its own (shared with BullMQ) and the one BullMQ blocks on', {
    timeout: 60_000,
  }, async () => {
    const own = Number(await redis.client('ID'));
    const others = async () =>
      String(await redis.client('LIST'))
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith(`id=${own} `));
    expect(await others()).toEqual([]);
    const worker = roles.spawn(['worker', '--concurrency', '4', '--redis', server.url]);
    await logged(worker, 'worker started');
    // Its registration and the first blocking fetch are under way once it says it started.
    let clients: string[] = [];
    for (let i = 0; i < 20; i++) {
      clients = await others();
      if (clients.some((c) => / cmd=bzpopmin/.test(c))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(clients.map((c) => c.replace(/^.*? name=(\S*).*? cmd=(\S+).*$/, 'name=$1 cmd=$2')).join('\n'));
    expect(clients.length).toBeLessThanOrEqual(2);
    expect(clients.some((c) => / cmd=bzpopmin/.test(c))).toBe(true);
    worker.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });
});
