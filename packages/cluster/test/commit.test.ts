import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, sweepKeys, type PantaRedis } from '../src/index.js';
import { decodeCollectorMessage, decodeSchedulerMessage } from '../src/redis/inbox.js';
import {
  commitBoundary,
  commitEvent,
  failBoundary,
  failEvent,
  readVersions,
  releaseLease,
  renewLease,
  ScriptReplyError,
} from '../src/redis/scripts.js';
import { tempDir } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';

let server: RedisServer;
let redis: PantaRedis;
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
const commit = (event: number, version: string) =>
  commitEvent(redis, { keys, runId: run, event, version, result: `{"e":${event}}`, calls: 1, tokens: 42 });

describe('the Lua steps of a worker', () => {
  it('commit writes an event at most once: a retried or duplicated job changes nothing', async () => {
    expect(await commit(5, 'first')).toBe('done');
    expect(await commit(5, 'second')).toBe('before');
    expect(await redis.hget(keys.versions(run), '5')).toBe('first');
    expect(await redis.hget(keys.results(run), '5')).toBe('{"e":5}');
    const told = await redis.xrange(keys.schedulerInbox, '-', '+');
    expect(told.map(([, f]) => f)).toEqual([['op', 'done', 'run', run, 'event', '5', 'calls', '1', 'tokens', '42']]);
    // What the step writes is what the roles' decoders read.
    expect(told.map(([id, f]) => decodeSchedulerMessage(keys.schedulerInbox, id, f))).toEqual([
      { op: 'done', run, event: 5, calls: 1, tokens: 42 },
    ]);
    const collector = await redis.xrange(keys.collectorInbox, '-', '+');
    expect(collector.map(([id, f]) => decodeCollectorMessage(keys.collectorInbox, id, f))).toEqual([{ op: 'done', run, event: 5 }]);
    // A failure reported after the commit (a late duplicate whose call failed) is dropped too.
    expect(await failEvent(redis, { keys, runId: run, event: 5, error: 'boom' })).toBe('before');
    expect(await failEvent(redis, { keys, runId: run, event: 6, error: 'boom' })).toBe('done');
    const [, failed] = (await redis.xrange(keys.schedulerInbox, '-', '+'))[1]!;
    expect(decodeSchedulerMessage(keys.schedulerInbox, '1-0', failed)).toEqual({ op: 'failed', run, event: 6, error: 'boom' });
  });

  it('reads versions in order, and nothing for an event already committed or a closed run', async () => {
    await redis.hset(keys.versions(run), { '1': 'one', '3': 'three' });
    expect(await readVersions(redis, { keys, runId: run, event: 7, versions: [3, 1, 2] })).toEqual({
      kind: 'run',
      texts: ['three', 'one', null],
    });
    expect(await readVersions(redis, { keys, runId: run, event: 5, versions: [3] })).toEqual({ kind: 'before' });
    expect(await readVersions(redis, { keys, runId: run, event: 0, versions: [] })).toEqual({ kind: 'run', texts: [] });
    await redis.sadd(keys.closed, run);
    expect(await readVersions(redis, { keys, runId: run, event: 7, versions: [3] })).toEqual({ kind: 'closed' });
    expect(await commit(7, 'late')).toBe('closed');
    expect(await failEvent(redis, { keys, runId: run, event: 7, error: 'boom' })).toBe('closed');
    expect(await redis.hexists(keys.results(run), '7')).toBe(0);
  });

  it('commits a boundary once and asks the collector to journal it; a failure after it, or on a closed run, is dropped', async () => {
    const other = 'fq117-ring-n8-T0.7-glauber-t1';
    expect(await commitBoundary(redis, { keys, runId: other, sweep: 2, outcome: '{"stop":false}' })).toBe('done');
    expect(await commitBoundary(redis, { keys, runId: other, sweep: 2, outcome: '{"stop":true}' })).toBe('before');
    expect(await redis.hget(keys.boundaries(other), '2')).toBe('{"stop":false}');
    const asked = (await redis.xrange(keys.collectorInbox, '-', '+')).map(([id, f]) => decodeCollectorMessage(keys.collectorInbox, id, f));
    expect(asked).toContainEqual({ op: 'boundary', run: other, sweep: 2 });
    expect(await failBoundary(redis, { keys, runId: other, sweep: 2, error: 'boom' })).toBe('before');
    expect(await failBoundary(redis, { keys, runId: other, sweep: 3, error: 'boom' })).toBe('done');
    const last = (await redis.xrevrange(keys.schedulerInbox, '+', '-', 'COUNT', 1))[0]!;
    expect(decodeSchedulerMessage(keys.schedulerInbox, last[0], last[1])).toEqual({
      op: 'boundaryFailed',
      run: other,
      sweep: 3,
      error: 'boom',
    });
    await redis.sadd(keys.closed, other);
    expect(await commitBoundary(redis, { keys, runId: other, sweep: 4, outcome: '{}' })).toBe('closed');
    expect(await failBoundary(redis, { keys, runId: other, sweep: 4, error: 'boom' })).toBe('closed');
  });

  it('renews and releases a lease only for its holder', async () => {
    const lease = { key: 'panta:test:lease', token: 'me', ttlMs: 5000 };
    expect(await renewLease(redis, lease)).toBe(false);
    await redis.set(lease.key, 'me', 'PX', 5000);
    expect(await renewLease(redis, lease)).toBe(true);
    expect(await releaseLease(redis, { ...lease, token: 'someone else' })).toBe(false);
    expect(await redis.get(lease.key)).toBe('me');
    expect(await releaseLease(redis, lease)).toBe(true);
    expect(await redis.exists(lease.key)).toBe(0);
  });

  it('a script answering a code it never returns is a ScriptReplyError naming the script (a script and its caller out of step)', async () => {
    // A stand-in for a script edited out of step with its caller: the same command name, another reply.
    const drifted = connect(server.url, 'test-drifted');
    try {
      drifted.defineCommand('commitEvent6', { numberOfKeys: 6, lua: 'return 7' });
      const error = await commitEvent(drifted, { keys, runId: 'x', event: 0, version: '', result: '', calls: 0, tokens: 0 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ScriptReplyError);
      expect((error as Error).message).toMatch(/^Lua step commitEvent-6 answered 7/);
    } finally {
      await drifted.quit();
    }
  });
});
