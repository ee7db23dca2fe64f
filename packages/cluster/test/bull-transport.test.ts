import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { plannerFor, roleLogger, type EventTask, type LoadedSweep, type Transport, type TransportMessage } from '@panta/engine';
import {
  BullTransport,
  EVENT_QUEUE,
  SweepStore,
  connect,
  runWorker,
  sweepIdOf,
  sweepKeys,
  toPayload,
  type SweepKeys,
  type WorkerProgress,
  type WorkerSummary,
} from '../src/index.js';
import { decodeCollectorMessage, decodeSchedulerMessage, type CollectorMessage, type SchedulerMessage } from '../src/redis/inbox.js';
import { InboxReader } from '../src/redis/inbox-reader.js';
import { sendToScheduler } from '../src/redis/inboxes.js';
import { EVENT_JOB_OPTIONS } from '../src/result-codec.js';
import { tempDir } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';
import { conformanceSweep, describeTransportConformance } from '../../engine/test/transport-conformance.js';

/**
 * BullTransport driven as the scheduler drives it, with the smallest real setup around it: a real
 * redis-server, BullMQ's queue, and a real worker (runWorker, in this process) serving the sweep published
 * to Redis. The scheduler's inbox is read into deliver() as scheduler.ts does. A boundary's answer reaches
 * the scheduler through the collector, which journals it first: here a relay stands in for the collector
 * role (it forwards the worker's committed outcome, as collector-role.ts does once it has journalled it).
 */
let server: RedisServer;
let redis: ReturnType<typeof connect>;
let queue: Queue;
/** The queue's connection: BullMQ leaves a connection it is given open, so it is closed here. */
let queueRedis: ReturnType<typeof connect>;
const stopWorker = new AbortController();
let worker: Promise<WorkerSummary>;
/** The worker's own count per sweep: events it ran, and duplicates (events it found committed). */
const workerProgress = new Map<string, WorkerProgress>();
const beside = new Map<Transport, { inbox: InboxReader<SchedulerMessage>; relay: InboxReader<CollectorMessage>; keys: SweepKeys }>();

beforeAll(async () => {
  server = await RedisServer.start(tempDir('panta-bull-transport-'));
  redis = connect(server.url, 'test-scheduler');
  queue = new Queue(EVENT_QUEUE, {
    connection: (queueRedis = redis.duplicate()),
    defaultJobOptions: EVENT_JOB_OPTIONS,
  });
  queue.on('error', () => undefined);
  // The failing sweep's model is never up: the worker must not wait for it.
  worker = runWorker({
    redis: server.url,
    concurrency: 4,
    log: roleLogger('worker', 'silent'),
    signal: stopWorker.signal,
    waitEndpointMs: 0,
    onProgress: (sweepId, p) => workerProgress.set(sweepId, { ...p }),
  });
});

afterAll(async () => {
  stopWorker.abort();
  await worker;
  await queue.close();
  queueRedis.disconnect();
  await redis.quit();
  await server.stop();
});

async function transportFor(sweep: LoadedSweep, watchMs = 5_000): Promise<Transport> {
  const sweepId = sweepIdOf(sweep.spec.name, sweep.fingerprint);
  const keys = sweepKeys(sweepId);
  await redis.set(keys.spec, JSON.stringify(toPayload(sweepId, sweep, sweep.out)));
  const transport = new BullTransport(redis, queue, sweepId, new SweepStore(redis, keys), watchMs);
  const inbox = new InboxReader(redis, keys.schedulerInbox, decodeSchedulerMessage, (entries) => {
    for (const { message: m } of entries) if (m.op !== 'opened' && m.op !== 'closed' && m.op !== 'written') transport.deliver(m);
  });
  let relaying: Promise<unknown> = Promise.resolve();
  const relay = new InboxReader(redis, keys.collectorControl, decodeCollectorMessage, (entries) => {
    for (const { message: m } of entries) {
      if (m.op !== 'boundary') continue;
      relaying = relaying.then(async () => {
        const outcome = await redis.hget(keys.boundaries(m.run), String(m.sweep));
        await sendToScheduler(redis, keys, { op: 'boundary', run: m.run, sweep: m.sweep, outcome: outcome! });
      });
    }
  });
  await inbox.init();
  await relay.init();
  inbox.start((e) => transport.fail(e));
  relay.start((e) => transport.fail(e));
  beside.set(transport, { inbox, relay, keys });
  return transport;
}

describeTransportConformance('BullMQ', () => ({
  transportFor,
  heldVersions: async (transport, _sweep, runId) => redis.hlen(beside.get(transport)!.keys.versions(runId)),
  release: async (transport) => {
    const b = beside.get(transport)!;
    await b.inbox.close();
    await b.relay.close();
  },
}));

/** The messages a started transport hands the executor, and a way to wait for the n-th. */
async function started(transport: Transport): Promise<{ messages: TransportMessage[]; count(n: number): Promise<void> }> {
  const messages: TransportMessage[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  await transport.start((m) => {
    messages.push(m);
    for (const w of waiters.filter((x) => messages.length >= x.n)) w.resolve();
  });
  return {
    messages,
    count: (n) => (messages.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
  };
}

/** Jobs waiting to be taken: event jobs carry a priority (jobPriority), which BullMQ keeps apart from the plain waiting list. */
const queued = () => queue.getJobCountByTypes('waiting', 'prioritized');

/** Polls a Redis-side condition (BullMQ and the watchdog work on their own timers) within a bound. */
async function until(what: string, done: () => Promise<boolean> | boolean, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await done()) return;
    await sleep(25);
  }
  throw new Error(`never happened: ${what}`);
}

describe('BullTransport on its own', () => {
  const firstEvents = (sweep: LoadedSweep, count: number): EventTask[] =>
    plannerFor(sweep, sweep.runs[0]!, 0)
      .take(count)
      .map((plan) => ({ run: sweep.runs[0]!, plan }));

  it('answers an event committed already (by an earlier scheduler) without running it again, its usage counted then (the worker finds it committed and says so)', async () => {
    const sweep = conformanceSweep('bull-committed', '', 1);
    // A watchdog that never looks: the answer must come from the dispatch itself.
    const transport = await transportFor(sweep, 600_000);
    const { keys } = beside.get(transport)!;
    const got = await started(transport);
    const [done, fresh] = firstEvents(sweep, 2) as [EventTask, EventTask];
    await redis.setbit(keys.committed(done.run.runId), done.plan.event, 1);
    transport.dispatch(done);
    transport.dispatch(fresh);
    await got.count(2);
    await transport.close();
    expect(got.messages.map((m) => [m.type, (m as { task: EventTask }).task])).toEqual(
      expect.arrayContaining([
        ['outcome', done],
        ['outcome', fresh],
      ]),
    );
    const answer = got.messages.find((m) => m.type === 'outcome' && m.task === done) as { outcome: { calls: number } };
    expect(answer.outcome.calls).toBe(0);
    // No worker ran it: it wrote no version.
    expect(await redis.hexists(keys.versions(done.run.runId), String(done.plan.event))).toBe(0);
    expect(await redis.hexists(keys.versions(fresh.run.runId), String(fresh.plan.event))).toBe(1);
    expect(workerProgress.get(sweepIdOf(sweep.spec.name, sweep.fingerprint))).toMatchObject({ events: 1, duplicates: 1 });
  });

  it('hands a commit message that comes twice to the executor once', async () => {
    const sweep = conformanceSweep('bull-duplicate', '', 1);
    const transport = await transportFor(sweep, 600_000);
    const { keys } = beside.get(transport)!;
    const got = await started(transport);
    const [first, second] = firstEvents(sweep, 2) as [EventTask, EventTask];
    transport.dispatch(first);
    await got.count(1);
    // The inbox is read in order: the repeat is handled before the second event's commit arrives.
    await redis.xadd(keys.schedulerInbox, '*', 'op', 'done', 'items', JSON.stringify([[first.run.runId, first.plan.event, 1, 9]]));
    transport.dispatch(second);
    await got.count(2);
    await transport.close();
    expect(got.messages.map((m) => (m as { task: EventTask }).task)).toEqual([first, second]);
  });

  it("cuts a flush into jobs of at most half a worker's slots, at least 16 events when it has them, a run's events together", async () => {
    // Workers take a job whenever they have a free slot: a job waits behind at most its own events.
    for (const [perRun, workers, sizes] of [
      // one worker of 64 slots (the default): jobs of up to 32, about one per worker
      [3, undefined, [12]],
      [6, undefined, [24]],
      // four of 64: at least 16 a job when the flush has them
      [1, [4, 256], [4]],
      [6, [4, 256], [8, 16]],
      // one of 32: half its slots
      [6, [1, 32], [8, 16]],
    ] as const) {
      const count = 4 * perRun;
      const sweep = conformanceSweep(`bull-batches-${count}-${workers?.join('x') ?? 'default'}`, '', 4);
      const transport = (await transportFor(sweep, 600_000)) as BullTransport;
      if (workers) transport.setWorkers(workers[0], workers[1]);
      await started(transport);
      const tasks = sweep.runs.flatMap((run) =>
        plannerFor(sweep, run, 0)
          .take(perRun)
          .map((plan): EventTask => ({ run, plan })),
      );
      expect(tasks.length).toBe(count);
      await queue.pause();
      try {
        // Round-robin over runs, as the executor dispatches, in one turn: one flush.
        const order = Array.from({ length: perRun }, (_, i) => tasks.filter((_, k) => k % perRun === i)).flat();
        for (const t of order) transport.dispatch(t);
        await until('the jobs are queued', async () => (await queued()) === sizes.length);
        const jobs = await queue.getJobs(['waiting', 'prioritized']);
        expect(jobs.map((j) => j.data.events.length).sort((a, b) => a - b)).toEqual(sizes);
        for (const job of jobs) {
          const runs = job.data.events.map((e) => e.run);
          // A run's events are contiguous within a job.
          expect(runs.filter((r, i) => i > 0 && r !== runs[i - 1]).length).toBe(new Set(runs).size - 1);
        }
        expect(transport.sent).toEqual({ jobs: sizes.length, events: count });
        await queue.drain();
      } finally {
        await transport.close();
        await queue.resume();
      }
    }
  });

  it('the watchdog asks Redis about every job in flight in one step a tick, off the dispatch chain, and leaves live jobs alone', async () => {
    const sweep = conformanceSweep('bull-watch', '', 1);
    const transport = (await transportFor(sweep, 100)) as BullTransport;
    await started(transport);
    const tasks = firstEvents(sweep, 16);
    // Counted where the steps leave: the one-step check (jobs-gone-n), and BullMQ's per-job getJob.
    const steps = { gone: 0, getJob: 0 };
    const own = redis as unknown as { jobsGoneN(...a: unknown[]): Promise<unknown> };
    const jobsGoneN = own.jobsGoneN.bind(redis);
    own.jobsGoneN = (...a: unknown[]) => {
      steps.gone++;
      return jobsGoneN(...a);
    };
    const getJob = queue.getJob.bind(queue);
    queue.getJob = (id: string) => {
      steps.getJob++;
      return getJob(id);
    };
    await queue.pause();
    try {
      for (const t of tasks) transport.dispatch(t);
      await until('the jobs are queued', async () => (await queued()) > 0);
      const jobs = await queued();
      await until('the watchdog looked three times', () => steps.gone >= 3);
      expect(steps.getJob).toBe(0);
      expect(transport.requeued).toBe(0);
      expect(await queued()).toBe(jobs);
      await queue.drain();
    } finally {
      own.jobsGoneN = jobsGoneN;
      queue.getJob = getJob;
      await transport.close();
      await queue.resume();
    }
  });

  it('adds again an event whose job was lost from the queue, and answers it once', async () => {
    const sweep = conformanceSweep('bull-lost', '', 1);
    const transport = await transportFor(sweep, 300);
    const got = await started(transport);
    const [task] = firstEvents(sweep, 1) as [EventTask];
    await queue.pause();
    try {
      transport.dispatch(task);
      await until('the job is queued', async () => (await queued()) === 1);
      await queue.drain();
      await until('the watchdog adds it again', () => (transport as BullTransport).requeued === 1);
    } finally {
      await queue.resume();
    }
    await got.count(1);
    await transport.close();
    expect(got.messages.map((m) => [m.type, (m as { task: EventTask }).task])).toEqual([['outcome', task]]);
    expect((transport as BullTransport).requeued).toBe(1);
  });
});
