import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSweep, plannerFor, runSweep } from '@panta/engine';
import { connect, sweepKeys, type PantaRedis } from '../src/index.js';
import { decodeSchedulerMessage } from '../src/redis/inbox.js';
import { commitEvents, commitFollowing, handOver, offerContinuations } from '../src/redis/scripts.js';
import { RHEON6, corpusDiff, tempDir, writeSpec } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';
import { redisPerFile } from './roles.js';

// A continuation is an event whose one unwritten read is an event in flight: the scheduler leaves it in Redis
// and the worker that commits that event runs it next, instead of its going worker -> scheduler -> queue -> worker.

const dir = tempDir('panta-continuations-');
const redis = redisPerFile(dir, { flushEach: false });

const spec = (name: string, geometries = '[meanfield, ring]') => `
name: ${name}
dataset: ${RHEON6}
prompts: [fq117]
geometries: ${geometries}
sizes: [8]
temperatures: [0.3, 1.0]
trials: 1
sweeps: 3
seed: 5
backend: {kind: surrogate, latency_ms: 20}
concurrency: 16
`;

describe('the planner hands out continuations', () => {
  it("only an event whose other reads are written, after an event in flight, each event once, in a mean field's chain", () => {
    const sweep = loadSweep(writeSpec(dir, spec('planner', '[meanfield, ring]'), 'planner.yaml'));
    for (const run of sweep.runs) {
      const planner = plannerFor(sweep, run, 0);
      planner.followContinuations();
      const written = new Set<number>();
      const isWritten = (v: number) => v < 0 || written.has(v);
      const running: number[] = [];
      /** Continuations by the event they follow (one each). */
      const following = new Map<number, number>();
      const taken = new Set<number>();
      const take = (event: number) => {
        expect(taken.has(event)).toBe(false);
        taken.add(event);
      };
      let continuations = 0;
      /** Events that read nothing (their agents' first answers). */
      const unread = new Set<number>();
      let seed = 7;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      while (!planner.done) {
        for (let plan = planner.takeOne(); plan; plan = planner.takeOne()) {
          if (plan.readVersions.length === 0) unread.add(plan.event);
          expect([...plan.readVersions].every(isWritten)).toBe(true);
          take(plan.event);
          running.push(plan.event);
        }
        for (let c = planner.takeContinuation(); c; c = planner.takeContinuation()) {
          // Its parent is in flight (taken, not written) and has no other continuation; every other read is written.
          expect(taken.has(c.after) && !written.has(c.after)).toBe(true);
          expect(following.has(c.after)).toBe(false);
          expect([...c.plan.readVersions].filter((v) => !isWritten(v))).toEqual([c.after]);
          take(c.plan.event);
          following.set(c.after, c.plan.event);
          continuations++;
        }
        expect(running.length).toBeGreaterThan(0);
        // Any event in flight may finish next; its continuation then starts.
        const event = running.splice(Math.floor(random() * running.length), 1)[0]!;
        written.add(event);
        planner.complete(event);
        const child = following.get(event);
        if (child !== undefined) running.push(child);
      }
      expect(taken.size).toBe(planner.total);
      // A mean field is a chain: most of its events follow the one before them.
      // A mean field is a chain: every event that reads anything (all but the first sweep's answers) follows
      // the one before it, whatever order the events in flight finish in, but possibly the first such: it
      // waits on one of the first answers, which may be the last of them to finish.
      if (run.runId.includes('meanfield')) expect(continuations).toBeGreaterThanOrEqual(planner.total - unread.size - 1);
    }
  });

  it('none unless asked (the embedded transport takes no continuations)', () => {
    const sweep = loadSweep(writeSpec(dir, spec('unasked', '[meanfield]'), 'unasked.yaml'));
    const planner = plannerFor(sweep, sweep.runs[0]!, 0);
    const first = planner.takeOne()!;
    expect(planner.takeContinuation()).toBeUndefined();
    planner.complete(first.event);
    expect(planner.takeOne()).toBeDefined();
  });
});

describe('the Lua steps of continuations', () => {
  let server: RedisServer;
  let client: PantaRedis;
  beforeAll(async () => {
    server = await RedisServer.start(tempDir('panta-follow-'));
    client = connect(server.url, 'test');
  });
  afterAll(async () => {
    await client.quit();
    await server.stop();
  });
  const keys = sweepKeys('follow-0123456789ab');
  const run = 'fq117-meanfield-n8-T0.3-glauber-t0';
  const item = (event: number, owner?: string) => ({
    runId: run,
    event,
    version: `v${event}`,
    result: `{"e":${event}}`,
    calls: 1,
    tokens: 9,
    ...(owner === undefined ? {} : { owner }),
  });

  it('the commit of its parent takes it once, for the job it runs under; once the parent is committed it is not left', async () => {
    const job = JSON.stringify({ event: 4, readVersions: [2, 3, 9] });
    expect(await offerContinuations(client, keys, [{ runId: run, parent: 3, child: 4, job }])).toEqual([true]);
    // A commit that takes none (a worker stopping) leaves it; the parent is committed then, so no later commit takes it.
    expect(await commitFollowing(client, keys, [item(2, '')])).toEqual([{ once: 'done' }]);
    expect(await commitFollowing(client, keys, [item(3, 'job-a'), item(5, 'job-a')])).toEqual([
      // With what it reads, read after the step's writes (its parent's version 3 among them; 9 is missing).
      { once: 'done', next: job, read: { kind: 'run', texts: ['v2', 'v3', null] } },
      { once: 'done' },
    ]);
    expect(await client.hgetall(keys.follow(run))).toEqual({ o4: 'job-a' });
    expect(await commitFollowing(client, keys, [item(3, 'job-b')])).toEqual([{ once: 'before' }]);
    // Its parent committed: a continuation offered now goes as a job (nobody would take it).
    expect(await offerContinuations(client, keys, [{ runId: run, parent: 5, child: 6, job: '{"event":6}' }])).toEqual([false]);
    // The continuation's own commit forgets who took it; the scheduler hears of each commit in order (3 again: found committed).
    expect(await commitEvents(client, keys, [item(4, 'job-a')])).toEqual(['done']);
    expect(await client.hgetall(keys.follow(run))).toEqual({});
    const told = (await client.xrange(keys.schedulerInbox, '-', '+')).map(([id, f]) => decodeSchedulerMessage(keys.schedulerInbox, id, f));
    expect(told.flatMap((m) => (m.op === 'done' ? m.items.map((i) => i.event) : []))).toEqual([2, 3, 5, 3, 4]);
    // A continuation passed on (a worker holding more than its share of the chains): the job it went as owns it,
    // unless it is committed already (its commit forgot the owner: nothing is left behind).
    expect(await offerContinuations(client, keys, [{ runId: run, parent: 9, child: 10, job: '{"event":10}' }])).toEqual([true]);
    expect(await commitFollowing(client, keys, [item(9, 'job-c')])).toEqual([
      { once: 'done', next: '{"event":10}', read: { kind: 'run', texts: [] } },
    ]);
    expect(await client.hget(keys.follow(run), 'o10')).toBe('job-c');
    expect(await handOver(client, keys, run, 10, 'job-d')).toBe(true);
    expect(await client.hget(keys.follow(run), 'o10')).toBe('job-d');
    expect(await commitEvents(client, keys, [item(10, 'job-d')])).toEqual(['done']);
    expect(await handOver(client, keys, run, 10, 'job-e')).toBe(false);
    expect(await client.hgetall(keys.follow(run))).toEqual({});
    // A closed run takes no offer.
    await client.sadd(keys.closed, run);
    expect(await offerContinuations(client, keys, [{ runId: run, parent: 7, child: 8, job: '{}' }])).toEqual([false]);
  });
});

describe('continuations on the cluster', { timeout: 240_000 }, () => {
  it('workers run chain events as continuations, and the corpus is the embedded one', async () => {
    const specFile = writeSpec(dir, spec('follow'), 'follow.yaml');
    const out = join(dir, 'follow');
    const collector = redis.roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
    const workers = [0, 1].map(() => redis.roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']));
    const scheduler = redis.roles.spawn(['scheduler', specFile, '--watch-ms', '3000']);
    const scheduled = await scheduler.exited;
    expect(scheduled.stderr.split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
    expect(scheduled.code).toBe(0);
    expect((await collector.exited).code).toBe(0);
    for (const w of workers) w.kill('SIGTERM');
    const stopped = await Promise.all(workers.map((w) => w.exited));
    expect(stopped.map((w) => w.code)).toEqual([0, 0]);
    const continued = stopped.map((w) => Number(/(\d+) run as continuations/.exec(w.stderr)?.[1] ?? -1));
    // Two mean-field runs of 24 events: nearly every event after the first follows its predecessor.
    expect(continued.reduce((a, b) => a + b, 0)).toBeGreaterThan(24);
    const embedded = join(dir, 'follow-embedded');
    const result = await runSweep(writeSpec(dir, spec('follow'), 'follow-embedded.yaml'), { out: embedded, logLevel: 'silent' });
    expect(result.status).toBe('complete');
    expect(await corpusDiff(out, embedded)).toEqual({ extra: 0, missing: 0 });
  });
});
