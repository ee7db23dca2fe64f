import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, sweepKeys, type PantaRedis } from '../src/index.js';
import { decodeCollectorMessage, decodeSchedulerMessage } from '../src/redis/inbox.js';
import {
  commitBoundary,
  commitEvents,
  failBoundary,
  failEvent,
  readEvents,
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
const item = (runId: string, event: number, version: string) => ({ runId, event, version, result: `{"e":${event}}`, calls: 1, tokens: 42 });
const commit = async (event: number, version: string) => (await commitEvents(redis, keys, [item(run, event, version)]))[0];
const read = async (event: number, versions: number[]) => (await readEvents(redis, keys, [{ runId: run, event, versions }]))[0];

describe('the Lua steps of a worker', () => {
  it('commit writes an event at most once: a retried or duplicated job changes nothing', async () => {
    expect(await commit(5, 'first')).toBe('done');
    expect(await commit(5, 'second')).toBe('before');
    expect(await redis.hget(keys.versions(run), '5')).toBe('first');
    expect(await redis.hget(keys.results(run), '5')).toBe('{"e":5}');
    const told = await redis.xrange(keys.schedulerInbox, '-', '+');
    expect(told.map(([, f]) => f)[0]).toEqual(['op', 'done', 'items', JSON.stringify([[run, 5, 1, 42]])]);
    // What the step writes is what the roles' decoders read; the duplicate is told with no usage (a restarted
    // scheduler may be waiting for it), and the collector hears of the result once.
    expect(told.map(([id, f]) => decodeSchedulerMessage(keys.schedulerInbox, id, f))).toEqual([
      { op: 'done', items: [{ run, event: 5, calls: 1, tokens: 42 }] },
      { op: 'done', items: [{ run, event: 5, calls: 0, tokens: 0 }] },
    ]);
    const collector = await redis.xrange(keys.collectorInbox, '-', '+');
    expect(collector.map(([id, f]) => decodeCollectorMessage(keys.collectorInbox, id, f))).toEqual([
      { op: 'done', items: [{ run, event: 5 }] },
    ]);
    // A failure reported after the commit (a late duplicate whose call failed) is dropped too.
    expect(await failEvent(redis, { keys, runId: run, event: 5, error: 'boom' })).toBe('before');
    expect(await failEvent(redis, { keys, runId: run, event: 6, error: 'boom' })).toBe('done');
    const [, failed] = (await redis.xrange(keys.schedulerInbox, '-', '+'))[2]!;
    expect(decodeSchedulerMessage(keys.schedulerInbox, '1-0', failed)).toEqual({ op: 'failed', run, event: 6, error: 'boom' });
  });

  it('commits events of several runs in one step, each at most once, with one message to each role', async () => {
    const a = 'fq117-ring-n8-T0.7-glauber-t2';
    const b = 'fq117-ring-n8-T0.7-glauber-t3';
    const before = (await redis.xlen(keys.schedulerInbox)) + (await redis.xlen(keys.collectorInbox));
    expect(await commitEvents(redis, keys, [item(a, 0, 'a0'), item(b, 0, 'b0'), item(a, 1, 'a1'), item(a, 0, 'again')])).toEqual([
      'done',
      'done',
      'done',
      'before',
    ]);
    expect(await redis.hmget(keys.versions(a), '0', '1')).toEqual(['a0', 'a1']);
    expect((await redis.xlen(keys.schedulerInbox)) + (await redis.xlen(keys.collectorInbox))).toBe(before + 2);
    const [id, fields] = (await redis.xrevrange(keys.collectorInbox, '+', '-', 'COUNT', 1))[0]!;
    expect(decodeCollectorMessage(keys.collectorInbox, id, fields)).toEqual({
      op: 'done',
      items: [
        { run: a, event: 0 },
        { run: a, event: 1 },
        { run: b, event: 0 },
      ],
    });
    // Reading a job of both runs: each run's versions once, per event whether it runs.
    const reads = await readEvents(redis, keys, [
      { runId: a, event: 2, versions: [1, 0] },
      { runId: b, event: 0, versions: [] },
      { runId: a, event: 3, versions: [0, 9] },
    ]);
    expect(reads).toEqual([{ kind: 'run', texts: ['a1', 'a0'] }, { kind: 'before' }, { kind: 'run', texts: ['a0', null] }]);
  });

  it('tells each collector shard of its own runs, in the one step of a worker turn', async () => {
    const shards = [keys.collectorInbox, `${keys.collectorInbox}:1`, `${keys.collectorInbox}:2`];
    const c = 'fq117-ring-n8-T0.7-glauber-t4';
    const d = 'fq117-ring-n8-T0.7-glauber-t5';
    const e = 'fq117-ring-n8-T0.7-glauber-t6';
    const shardOf: Record<string, number> = { [c]: 1, [d]: 2, [e]: 1 };
    const lengths = async () => Promise.all([keys.schedulerInbox, ...shards].map((k) => redis.xlen(k)));
    const before = await lengths();
    expect(
      await commitEvents(
        redis,
        keys,
        [item(c, 0, 'c0'), item(d, 0, 'd0'), item(e, 0, 'e0'), item(c, 0, 'dup')],
        (r) => shards[shardOf[r]!]!,
      ),
    ).toEqual(['done', 'done', 'done', 'before']);
    // One message to the scheduler, one to each shard concerned, none to the shard with no run in the step.
    expect((await lengths()).map((n, i) => n - before[i]!)).toEqual([1, 0, 1, 1]);
    const last = async (k: string) => {
      const [id, fields] = (await redis.xrevrange(k, '+', '-', 'COUNT', 1))[0]!;
      return decodeCollectorMessage(k, id, fields);
    };
    expect(await last(shards[1]!)).toEqual({
      op: 'done',
      items: [
        { run: c, event: 0 },
        { run: e, event: 0 },
      ],
    });
    expect(await last(shards[2]!)).toEqual({ op: 'done', items: [{ run: d, event: 0 }] });
    expect(await redis.hget(keys.versions(c), '0')).toBe('c0');
  });

  it('reads versions in order, and nothing for an event already committed or a closed run', async () => {
    await redis.hset(keys.versions(run), { '1': 'one', '3': 'three' });
    expect(await read(7, [3, 1, 2])).toEqual({ kind: 'run', texts: ['three', 'one', null] });
    expect(await read(5, [3])).toEqual({ kind: 'before' });
    expect(await read(0, [])).toEqual({ kind: 'run', texts: [] });
    // A mean field of thousands reads more versions than Lua's unpack() takes at once.
    const many = Array.from({ length: 9000 }, (_, i) => i + 100);
    const wide = await read(8, many);
    expect(wide.kind === 'run' && wide.texts.length).toBe(9000);
    await redis.sadd(keys.closed, run);
    expect(await read(7, [3])).toEqual({ kind: 'closed' });
    expect(await commit(7, 'late')).toBe('closed');
    expect(await failEvent(redis, { keys, runId: run, event: 7, error: 'boom' })).toBe('closed');
    expect(await redis.hexists(keys.results(run), '7')).toBe(0);
  });
  it('commits and reads more events of one run than one command takes (Lua unpack bound), each bit where GETBIT finds it', async () => {
    const big = 'fq117-meanfield-n4096-T0.7-glauber-t0';
    // 2,500 events: their bits go in BITFIELD slices of 1,000 (4 arguments each) and their texts in HSET slices.
    const events = Array.from({ length: 2500 }, (_, i) => 3 * i + 1);
    const batch = [...events.map((e) => item(big, e, `v${e}`)), item(big, events[1000]!, 'again')];
    const codes = await commitEvents(redis, keys, batch);
    expect(codes.slice(0, 2500).every((c) => c === 'done')).toBe(true);
    // The same event twice across two slices: committed once, with its first text.
    expect(codes[2500]).toBe('before');
    expect(await redis.hget(keys.versions(big), String(events[1000]))).toBe(`v${events[1000]}`);
    expect(await redis.hlen(keys.results(big))).toBe(2500);
    // Bit for bit what SETBIT would have set (fail-event-3 and the scheduler read them with GETBIT).
    const bits = await Promise.all([0, 1, 2, 3, 4, 7498, 7499, 7500].map((b) => redis.getbit(keys.committed(big), b)));
    expect(bits).toEqual([0, 1, 0, 0, 1, 1, 0, 0]);
    expect(await failEvent(redis, { keys, runId: big, event: events[2499]!, error: 'late' })).toBe('before');
    // Read back in one step: 2,501 events (3 arguments each) in BITFIELD slices, one not committed.
    const reads = await readEvents(redis, keys, [
      ...events.map((e) => ({ runId: big, event: e, versions: [e] })),
      { runId: big, event: 0, versions: [events[0]!, events[2499]!, 0] },
    ]);
    expect(reads.slice(0, 2500).every((r) => r.kind === 'before')).toBe(true);
    expect(reads[2500]).toEqual({ kind: 'run', texts: ['v1', `v${events[2499]}`, null] });
  });

  it('commits a boundary once and asks the collector to journal it; a failure after it, or on a closed run, is dropped', async () => {
    const other = 'fq117-ring-n8-T0.7-glauber-t1';
    expect(await commitBoundary(redis, { keys, runId: other, sweep: 2, outcome: '{"stop":false}' })).toBe('done');
    expect(await commitBoundary(redis, { keys, runId: other, sweep: 2, outcome: '{"stop":true}' })).toBe('before');
    expect(await redis.hget(keys.boundaries(other), '2')).toBe('{"stop":false}');
    const asked = (await redis.xrange(keys.collectorControl, '-', '+')).map(([id, f]) =>
      decodeCollectorMessage(keys.collectorControl, id, f),
    );
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
      drifted.defineCommand('commitEventsN', { lua: 'return {7}' });
      const error = await commitEvents(drifted, keys, [item('x', 0, '')]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ScriptReplyError);
      expect((error as Error).message).toMatch(/^Lua step commitEvents-n answered 7/);
    } finally {
      await drifted.quit();
    }
  });
});
