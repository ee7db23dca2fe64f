import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, Worker } from 'bullmq';
import { plannerFor, type EventTask } from '@panta/engine';
import { BullTransport, SweepStore, connect, sweepIdOf, sweepKeys } from '../src/index.js';
import { jobPriority, type BatchJob } from '../src/result-codec.js';
import { tempDir } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';
import { conformanceSweep } from '../../engine/test/transport-conformance.js';

/**
 * A chain's next call must not wait in BullMQ's queue behind the shallow events queued before it: jobs are
 * taken deepest first. A queue of its own (no worker serves it): the test takes the jobs by hand, as a worker
 * with a free slot would.
 */
let server: RedisServer;
let redis: ReturnType<typeof connect>;
let queue: Queue;
let taker: Worker<BatchJob>;
/** The queue's and the taker's connections: BullMQ leaves a connection it is given open, so they are closed here. */
const given: ReturnType<typeof connect>[] = [];

beforeAll(async () => {
  server = await RedisServer.start(tempDir('panta-job-priority-'));
  redis = connect(server.url, 'test-priority');
  given.push(redis.duplicate(), redis.duplicate());
  queue = new Queue('panta-priority-test', { connection: given[0]! });
  taker = new Worker<BatchJob>('panta-priority-test', null, { connection: given[1]!, autorun: false });
});

afterAll(async () => {
  await taker.close();
  await queue.close();
  for (const c of given) c.disconnect();
  await redis.quit();
  await server.stop();
});

describe('event jobs by depth', () => {
  it('a deep event dispatched after shallow ones is taken first', async () => {
    const sweep = conformanceSweep('bull-priority', '', 4);
    const sweepId = sweepIdOf(sweep.spec.name, sweep.fingerprint);
    const transport = new BullTransport(redis, queue, sweepId, new SweepStore(redis, sweepKeys(sweepId)), 600_000);
    // One worker of 32 slots: jobs of at most 16 events.
    transport.setWorkers(1, 32);
    await transport.start(() => undefined);
    const [chain, ...lattices] = sweep.runs;
    const shallow = lattices.flatMap((run) =>
      plannerFor(sweep, run, 0)
        .take(6)
        .map((plan): EventTask => ({ run, plan, depth: 2 })),
    );
    for (const t of shallow) transport.dispatch(t);
    // Its flush: the shallow jobs are in Redis before the deep event is dispatched.
    for (let i = 0; i < 200 && (await queue.getJobCountByTypes('waiting', 'prioritized')) === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    const deep: EventTask = { run: chain!, plan: plannerFor(sweep, chain!, 0).take(1)[0]!, depth: 257 };
    transport.dispatch(deep);
    await transport.close();

    const first = await taker.getNextJob('t1', { block: false });
    expect(first?.data.events.map((e) => [e.run, e.event, e.depth])).toEqual([[chain!.runId, deep.plan.event, 257]]);
    const rest = [];
    for (let job = await taker.getNextJob('t2', { block: false }); job; job = await taker.getNextJob('t2', { block: false }))
      rest.push(...job.data.events);
    expect(rest).toHaveLength(shallow.length);
  });

  it('the deeper, the sooner; every priority within what BullMQ takes (1 is kept for boundaries)', () => {
    expect(jobPriority(2561)).toBeLessThan(jobPriority(257));
    expect(jobPriority(257)).toBeLessThan(jobPriority(1));
    expect(jobPriority(1)).toBeLessThan(jobPriority(undefined));
    expect(jobPriority(undefined)).toBe(2 ** 21 - 1);
    expect(jobPriority(1e12)).toBe(2);
  });
});
