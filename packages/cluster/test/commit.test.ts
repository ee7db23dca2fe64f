import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, sweepKeys, type PantaScripts } from '../src/index.js';
import type { Redis } from 'ioredis';
import { tempDir } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';

let server: RedisServer;
let redis: Redis & PantaScripts;
beforeAll(async () => {
  server = await RedisServer.start(tempDir('panta-commit-'));
  redis = connect(server.url, 'test');
});
afterAll(async () => {
  await redis.quit();
  await server.stop();
});

const keys = sweepKeys('lua-0123456789ab');
const run = 'fq117-ring-n8-T0.7-glauber-t0';
const commitArgs = (event: number, text: string) =>
  [keys.committed(run), keys.versions(run), keys.results(run), keys.closed, keys.schedulerInbox, keys.collectorInbox, run, event, text, `{"e":${event}}`, 1, 42, 1000] as const;

describe('the Lua steps of a worker', () => {
  it('commit writes an event at most once: a retried or duplicated job changes nothing', async () => {
    expect(await redis.commitEvent(...commitArgs(5, 'first'))).toBe(1);
    expect(await redis.commitEvent(...commitArgs(5, 'second'))).toBe(0);
    expect(await redis.hget(keys.versions(run), '5')).toBe('first');
    expect(await redis.hget(keys.results(run), '5')).toBe('{"e":5}');
    const told = await redis.xrange(keys.schedulerInbox, '-', '+');
    expect(told.map(([, f]) => f)).toEqual([['op', 'done', 'run', run, 'event', '5', 'calls', '1', 'tokens', '42']]);
    expect(await redis.xlen(keys.collectorInbox)).toBe(1);
    // A failure reported after the commit (a late duplicate whose call failed) is dropped too.
    expect(await redis.failEvent(keys.committed(run), keys.closed, keys.schedulerInbox, run, 5, 'boom', 1000)).toBe(0);
    expect(await redis.failEvent(keys.committed(run), keys.closed, keys.schedulerInbox, run, 6, 'boom', 1000)).toBe(1);
    expect(await redis.xlen(keys.schedulerInbox)).toBe(2);
  });

  it('reads versions in order, and nothing for an event already committed or a closed run', async () => {
    await redis.hset(keys.versions(run), { '1': 'one', '3': 'three' });
    expect(await redis.readVersions(keys.committed(run), keys.versions(run), keys.closed, run, 7, 3, 1, 2)).toEqual([1, 'three', 'one', null]);
    expect(await redis.readVersions(keys.committed(run), keys.versions(run), keys.closed, run, 5, 3)).toEqual([0]);
    expect(await redis.readVersions(keys.committed(run), keys.versions(run), keys.closed, run, 0)).toEqual([1]);
    await redis.sadd(keys.closed, run);
    expect(await redis.readVersions(keys.committed(run), keys.versions(run), keys.closed, run, 7, 3)).toEqual([0]);
    expect(await redis.commitEvent(...commitArgs(7, 'late'))).toBe(0);
    expect(await redis.hexists(keys.results(run), '7')).toBe(0);
  });
});
