import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { EVENT_QUEUE, SWEEPS_KEY, sweepKeys } from '../src/index.js';
import { RHEON6, corpusDiff, pantaAsync, tempDir, writeSpec, type PantaProcess } from '../../../test/helpers.js';
import { freePort } from '../../../test/redis-server.js';
import { expectVerified, logged, redisPerFile } from './roles.js';

// Long enough to kill roles mid-run: 3 geometries x 2 temperatures x 5 (sweeps + 1) x (16 + 36) = 1,560 events at
// 25 ms per call on 12 slots. Workers go on committing while the collector is dead, so a smaller sweep (984 events)
// was already finishing by the time the killed roles were restarted.
const spec = (name: string) => `
name: ${name}
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring, torus2d, meanfield]
sizes: [16, 36]
temperatures: [0.3, 1.0]
trials: 1
sweeps: 4
seed: 11
backend: {kind: surrogate, latency_ms: 25}
concurrency: 24
`;

/** The distributed corpus holds the embedded one's rows, every column but timings: `events` answers and the same rest. */
async function expectSameRows(out: string, embedded: string, events: number): Promise<void> {
  const [answers] = await queryRows(`SELECT count(*)::INTEGER AS n FROM read_parquet('${embedded}/events/*.parquet') WHERE role = 'agent'`);
  expect(answers!.n).toBe(events);
  expect(await corpusDiff(out, embedded)).toEqual({ extra: 0, missing: 0 });
}

// Each test runs 5 to 8 `panta` processes through a sweep: 25 to 65 s on a loaded 2-core machine, so 4x that.
const ROLE_TEST_MS = 240_000;

const dir = tempDir('panta-cluster-');
// Each test starts from an empty Redis and no role left over from a failed one.
const redis = redisPerFile(dir);

/** The roles of one distributed sweep, each a real `panta` process. */
class Cluster {
  collector!: PantaProcess;
  workers: PantaProcess[] = [];
  scheduler!: PantaProcess;
  constructor(
    private readonly specFile: string,
    readonly out: string,
  ) {}
  private spawn(args: string[]): PantaProcess {
    return redis.roles.spawn(args);
  }
  startCollector(): void {
    this.collector = this.spawn(['collector', '--out', this.out, '--durable-ms', '300']);
  }
  startScheduler(): void {
    this.scheduler = this.spawn(['scheduler', this.specFile, '--watch-ms', '3000']);
  }
  startWorker(i: number): void {
    this.workers[i] = this.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']);
  }
  start(): void {
    this.startCollector();
    for (let i = 0; i < 3; i++) this.startWorker(i);
    this.startScheduler();
  }
  /** The scheduler and the collector exit 0 once the corpus is complete (no error logged); workers stop on SIGTERM. */
  async finished(): Promise<void> {
    const scheduled = await this.scheduler.exited;
    expect(scheduled.stderr.split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
    expect(scheduled.code).toBe(0);
    expect((await this.collector.exited).code).toBe(0);
    expect(await this.stopWorkers()).toEqual([0, 0, 0]);
  }
  async stopWorkers(): Promise<(number | null)[]> {
    for (const w of this.workers) w.kill('SIGTERM');
    return Promise.all(this.workers.map(async (w) => (await w.exited).code));
  }
}

/** Waits until the scheduler reports at least `share` of the sweep's events written. */
async function progressed(name: string, share: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ids = Object.keys(await redis.client.hgetall(SWEEPS_KEY)).filter((id) => id.startsWith(`${name}-`));
    if (ids.length === 1) {
      const s = await redis.client.hgetall(sweepKeys(ids[0]!).status);
      if (Number(s.eventsWritten ?? 0) >= share * Number(s.eventsTotal ?? Infinity)) return;
    }
    await sleep(50);
  }
  throw new Error(`sweep ${name} made no progress`);
}

/**
 * The embedded corpus of `spec()`, run once for the file: the sweep's name is in no event row and no order
 * parameter, so the three distributed runs of that sweep (killed, restart, sharded) are each held to the same one.
 */
let embeddedOnce: Promise<string> | undefined;
function embeddedCorpus(): Promise<string> {
  embeddedOnce ??= (async () => {
    const embedded = join(dir, 'spec-embedded');
    const result = await runSweep(writeSpec(dir, spec('embedded'), 'embedded.yaml'), { out: embedded, logLevel: 'silent' });
    if (result.status !== 'complete') throw new Error(`the embedded corpus is ${result.status}`);
    return embedded;
  })();
  return embeddedOnce;
}

/** The distributed corpus `out` of `spec()`: the embedded one's rows and order parameters, and `panta verify` passes it. */
async function expectEmbeddedEqual(out: string): Promise<void> {
  const embedded = await embeddedCorpus();
  await expectSameRows(out, embedded, 1560);
  expect(await queryRows(`SELECT * FROM read_parquet('${out}/order_params.parquet') ORDER BY ALL`)).toEqual(
    await queryRows(`SELECT * FROM read_parquet('${embedded}/order_params.parquet') ORDER BY ALL`),
  );
  await expectVerified(out);
}

describe('distributed mode on BullMQ and a real redis-server', { timeout: ROLE_TEST_MS }, () => {
  it('survives SIGKILL of a worker, the collector and the scheduler mid-run, and writes the embedded corpus', async () => {
    const specFile = writeSpec(dir, spec('killed'), 'killed.yaml');
    const cluster = new Cluster(specFile, join(dir, 'killed'));
    cluster.start();
    await progressed('killed', 0.1);
    // A second collector for the same sweep waits for the first one's lease instead of writing the corpus too.
    const intruder = redis.roles.spawn(['collector', '--out', join(dir, 'intruder')]);
    // Its line awaited as long as a loaded machine takes to start it (a fixed 30 s was too short at a load of 60).
    await logged(intruder, 'another collector holds this sweep');
    intruder.kill('SIGTERM');
    const stopped = await intruder.exited;
    expect(stopped.stderr).toContain('another collector holds this sweep');
    expect(stopped.code).toBe(130);
    await progressed('killed', 0.25);
    cluster.workers[0]!.kill('SIGKILL');
    cluster.collector.kill('SIGKILL');
    expect((await cluster.collector.exited).signal).toBe('SIGKILL');
    await sleep(300);
    cluster.startCollector();
    cluster.startWorker(0);

    const status = await pantaAsync(['status', '--redis', redis.url]);
    expect(status.code).toBe(0);
    // Live either way: running, or finishing (every event written, the corpus not yet) while the collector restarts.
    expect(status.stdout).toMatch(/sweep killed-[0-9a-f]{12} \((running|finishing)/);
    expect(status.stdout).toMatch(/queue: \d+ waiting, \d+ active/);

    // The scheduler too: restarted, it recomputes the schedule and continues from Redis and the corpus.
    await progressed('killed', 0.55);
    cluster.scheduler.kill('SIGKILL');
    expect((await cluster.scheduler.exited).signal).toBe('SIGKILL');
    cluster.startScheduler();

    await cluster.finished();
    await expectEmbeddedEqual(cluster.out);

    // Memory stays bounded: nothing of the finished runs is left in Redis, and no job.
    const id = Object.keys(await redis.client.hgetall(SWEEPS_KEY)).find((k) => k.startsWith('killed-'))!;
    expect(await redis.client.keys(`panta:${id}:run:*`)).toEqual([]);
    expect(await redis.client.xlen(sweepKeys(id).collectorInbox)).toBe(0);
    expect(await redis.client.xlen(sweepKeys(id).collectorControl)).toBe(0);
    expect(await redis.client.hget(sweepKeys(id).state, 'phase')).toBe('done');
    expect(await redis.client.keys(`bull:${EVENT_QUEUE}:*|*`)).toEqual([]);
  });

  it('carries on through a Redis restart (SIGKILL, AOF with appendfsync always) to the same corpus', async () => {
    const specFile = writeSpec(dir, spec('restart'), 'restart.yaml');
    const cluster = new Cluster(specFile, join(dir, 'restart'));
    cluster.start();
    await progressed('restart', 0.3);
    // Entries Redis delivered to the collector in a reply lost with the connection stay pending in its group:
    // taken here as the collector consumer and never acknowledged, they must still be written.
    const id = Object.keys(await redis.client.hgetall(SWEEPS_KEY)).find((k) => k.startsWith('restart-'))!;
    let lost = 0;
    for (let i = 0; i < 100 && lost === 0; i++) {
      const reply = (await redis.client.xreadgroup(
        'GROUP',
        'collector',
        'collector',
        'COUNT',
        5,
        'BLOCK',
        100,
        'STREAMS',
        sweepKeys(id).collectorInbox,
        '>',
      )) as [string, unknown[]][] | null;
      lost = reply?.[0]?.[1].length ?? 0;
    }
    expect(lost).toBeGreaterThan(0);
    await redis.server.restart('SIGKILL', 700);
    expect((await cluster.scheduler.exited).code).toBe(0);
    expect((await cluster.collector.exited).code).toBe(0);
    expect(await cluster.stopWorkers()).toEqual([0, 0, 0]);
    await expectEmbeddedEqual(cluster.out);
  });
});

describe('protocols and sweep boundaries in distributed mode', { timeout: ROLE_TEST_MS }, () => {
  it('ssvp, belief-board and drift-policy with personas, annealing and early stopping: SIGKILL of the collector and the scheduler, and the embedded corpus, every role', async () => {
    writeFileSync(join(dir, 'beliefs.jsonl'), '{"id": "wrong-97", "belief": "97"}\n');
    const specFile = writeSpec(
      dir,
      `name: arms
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring, {kind: meanfield, sample: 6}]
sizes: [16]
temperatures: [0.3, 1.0]
sweeps: 6
seed: 4
protocol: [ssvp, belief-board, drift-policy]
population: {file: beliefs.jsonl, assign: fraction, fraction: 0.25}
annealing: {to: 0.2}
early_stopping: {}
backend: {kind: surrogate, latency_ms: 25}
concurrency: 24
`,
      'arms.yaml',
    );
    const cluster = new Cluster(specFile, join(dir, 'arms'));
    cluster.start();
    // Killed just after it journalled a boundary, before the next sweep's rows are durable (every 300 ms): the
    // restarted collector must still write that boundary's calls, which the scheduler has already acted on.
    const journals = join(cluster.out, '.state', 'control');
    const judged = () =>
      existsSync(journals) ? readdirSync(journals).some((f) => readFileSync(join(journals, f), 'utf8').includes('"role":"judge"')) : false;
    for (let i = 0; i < 20_000 && !judged(); i++) await sleep(2);
    expect(judged()).toBe(true);
    await sleep(60); // past its acknowledgement of the boundary, within the 300 ms before rows are durable
    cluster.collector.kill('SIGKILL');
    await cluster.collector.exited;
    cluster.startCollector();
    await progressed('arms', 0.5);
    cluster.scheduler.kill('SIGKILL');
    await cluster.scheduler.exited;
    cluster.startScheduler();
    await cluster.finished();

    const embedded = join(dir, 'arms-embedded');
    expect((await runSweep(specFile, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
    await expectSameRows(
      cluster.out,
      embedded,
      (await queryRows(`SELECT sum(events)::INTEGER AS n FROM read_parquet('${embedded}/runs.parquet')`))[0]!.n as number,
    );
    const roles = await queryRows(
      `SELECT role, count(*)::INTEGER AS n FROM read_parquet('${cluster.out}/events/*.parquet') GROUP BY role ORDER BY role`,
    );
    expect(roles.map((r) => r.role)).toEqual(expect.arrayContaining(['agent', 'judge', 'merge']));
    const runs = (out: string) =>
      queryRows(`SELECT run_id, sweeps_run, calls_saved, extra_calls FROM read_parquet('${out}/runs.parquet') ORDER BY run_id`);
    const distributedRuns = await runs(cluster.out);
    expect(distributedRuns).toEqual(await runs(embedded));
    expect(distributedRuns.some((r) => Number(r.calls_saved) > 0)).toBe(true);
    await expectVerified(cluster.out);
    const id = Object.keys(await redis.client.hgetall(SWEEPS_KEY)).find((k) => k.startsWith('arms-'))!;
    expect(await redis.client.keys(`panta:${id}:run:*`)).toEqual([]);
  });
});

describe('distributed mode when the model fails', { timeout: ROLE_TEST_MS }, () => {
  // max_unusable_share 1: the health breaker off, so that each event fails on its own (unhealthy-backend.test.ts has it on).
  it('fails the runs whose events fail (exit 1), and a second scheduler resumes them to the complete corpus', async () => {
    const port = await freePort();
    const serve = (faults: string[]) => {
      return redis.roles.spawn(['serve-surrogate', '--port', String(port), '--dataset', RHEON6, ...faults]);
    };
    const listening = async (p: PantaProcess) => {
      for (let i = 0; i < 200; i++) {
        if (
          await fetch(`http://127.0.0.1:${port}/v1/models`).then(
            (r) => r.ok,
            () => false,
          )
        )
          return;
        await sleep(50);
      }
      throw new Error(`serve-surrogate did not listen: ${(await p.exited).stderr}`);
    };
    const specFile = writeSpec(
      dir,
      `name: faulty\ndataset: ${RHEON6}\nprompts: [fq117, fq367]\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.5]\nsweeps: 3\nseed: 4\nconcurrency: 8\nbackend: {kind: openai, base_url: "http://127.0.0.1:${port}/v1", model: surrogate-potts-v1, max_retries: 0, timeout_ms: 5000, max_unusable_share: 1}\n`,
      'faulty.yaml',
    );
    const out = join(dir, 'faulty');
    let model = serve(['--fault-rate', '1', '--faults', '500']);
    await listening(model);
    const cluster = new Cluster(specFile, out);
    cluster.start();
    expect((await cluster.scheduler.exited).code).toBe(1);
    const collected = await cluster.collector.exited;
    expect(collected.code).toBe(1);
    expect(collected.stdout).toMatch(/^failed: 0\/2 runs/m);
    const status = JSON.parse((await pantaAsync(['status', '--redis', redis.url, '--json'])).stdout) as {
      sweeps: { phase: string; runs: { run: string; failed?: string }[] }[];
    };
    expect(status.sweeps[0]!.phase).toBe('failed');
    expect(
      status.sweeps[0]!.runs.filter((r) => r.failed)
        .map((r) => r.run)
        .sort(),
    ).toEqual(['fq117-ring-n16-T0.5-glauber-t0', 'fq367-ring-n16-T0.5-glauber-t0']);
    model.kill('SIGTERM');
    await model.exited;

    model = serve([]);
    await listening(model);
    cluster.startCollector();
    cluster.startScheduler();
    expect((await cluster.scheduler.exited).code).toBe(0);
    expect((await cluster.collector.exited).code).toBe(0);
    expect(await cluster.stopWorkers()).toEqual([0, 0, 0]);
    const embedded = join(dir, 'faulty-embedded');
    expect((await runSweep(specFile, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
    model.kill('SIGTERM');
    await expectSameRows(out, embedded, 2 * 16 * 4);
    await expectVerified(out);
  });

  it('splits the runs over two collectors (--collectors 2, --shard auto): SIGKILL of one mid-run, a new one takes its shard, and the embedded corpus', async () => {
    const specFile = writeSpec(dir, spec('sharded'), 'sharded.yaml');
    const out = join(dir, 'sharded');
    const spawn = (args: string[]) => {
      return redis.roles.spawn(args);
    };
    // Replicas of one service: each takes the shard no other holds.
    const collector = () => spawn(['collector', '--out', out, '--durable-ms', '300', '--shard', 'auto']);
    const shards = [collector(), collector()];
    const workers = [0, 1, 2].map(() => spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']));
    const scheduler = spawn(['scheduler', specFile, '--watch-ms', '3000', '--collectors', '2']);
    await progressed('sharded', 0.2);
    // Killed at once (the sweep cannot finish while its shard has no collector, however long what follows takes).
    shards[1]!.kill('SIGKILL');
    expect((await shards[1]!.exited).signal).toBe('SIGKILL');
    // A collector that does not know the runs are split is refused in one line, before it writes anything.
    const unsharded = spawn(['collector', '--out', join(dir, 'unsharded')]);
    const refused = await unsharded.exited;
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /--shard: .*splits this sweep's runs over 2 collectors, not 1.*fix: start 2 collectors, --shard 1\/2 to --shard 2\/2/,
    );
    expect(existsSync(join(dir, 'unsharded'))).toBe(false);
    await sleep(500);
    shards[1] = collector();
    expect((await scheduler.exited).code).toBe(0);
    const ended = await Promise.all(shards.map((c) => c.exited));
    expect(ended.map((e) => e.code)).toEqual([0, 0]);
    // Between them the two took both shards: one finished the corpus, the other its own runs.
    const took = ended.map((e) => /"shard":"(\d)\/2","msg":"collector took a shard"/.exec(e.stderr)?.[1]);
    expect([...took].sort()).toEqual(['1', '2']);
    const second = ended[took.indexOf('2')]!;
    expect(second.stderr).toContain('shard done: collector 1 finishes the corpus');
    for (const w of workers) w.kill('SIGTERM');
    expect(await Promise.all(workers.map(async (w) => (await w.exited).code))).toEqual([0, 0, 0]);
    await expectEmbeddedEqual(out);
    // Each shard's inbox is drained, and the runs were written by both.
    const id = Object.keys(await redis.client.hgetall(SWEEPS_KEY)).find((k) => k.startsWith('sharded-'))!;
    expect(await redis.client.xlen(sweepKeys(id).collectorInbox)).toBe(0);
    expect(await redis.client.xlen(`${sweepKeys(id).collectorInbox}:1`)).toBe(0);
    expect(await redis.client.xlen(sweepKeys(id).collectorControl)).toBe(0);
    expect(await redis.client.xlen(`${sweepKeys(id).collectorControl}:1`)).toBe(0);
  });
});
