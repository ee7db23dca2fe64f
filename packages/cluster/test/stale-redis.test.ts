import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { runSweep } from '@panta/engine';
import { EVENT_QUEUE, SWEEPS_KEY, sweepKeys } from '../src/index.js';
import { RHEON6, corpusDiff, pantaAsync, tempDir, writeSpec } from '../../../test/helpers.js';
import { redisPerFile, errorLines, expectVerified, logged } from './roles.js';

// 2 runs x 16 agents x 4 = 128 events: small, since every test runs the sweep more than once.
const spec = (name: string, seed = 5) => `
name: ${name}
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [16]
temperatures: [0.3, 1.0]
sweeps: 3
seed: ${seed}
backend: {kind: surrogate, latency_ms: 5}
concurrency: 8
`;

// Five rounds of a scheduler and a collector, four `panta verify` and two workers: ~20 `panta` processes, which took
// 166 s at a load of 35 on 2 cores (the first test); each test has its own timeout, above that.
const ROUNDS_TEST_MS = 300_000;

const dir = tempDir('panta-stale-');
const redis = redisPerFile(dir);
const { roles } = redis;

/** One scheduler and one collector against the same Redis (workers stay up between rounds, as in compose). */
async function round(
  specFile: string,
  out: string | null,
  schedulerArgs: string[] = [],
): Promise<{ scheduler: Awaited<ReturnType<typeof pantaAsync>>; collector: Awaited<ReturnType<typeof pantaAsync>> }> {
  const collector = roles.spawn(['collector', ...(out === null ? [] : ['--out', out]), '--durable-ms', '200']);
  const scheduler = roles.spawn(['scheduler', specFile, '--watch-ms', '3000', ...schedulerArgs]);
  return { scheduler: await scheduler.exited, collector: await collector.exited };
}

function expectOk(r: Awaited<ReturnType<typeof round>>): void {
  expect(errorLines(r.scheduler.stderr)).toEqual([]);
  expect(r.scheduler.stdout).toMatch(/^complete: sweep stale-[0-9a-f]{12}, 128 events scheduled and written$/m);
  expect(r.scheduler.code).toBe(0);
  expect(r.collector.stdout).toMatch(/^complete: 2\/2 runs, 128 events; corpus: /m);
  expect(r.collector.code).toBe(0);
}

describe('a Redis that still holds a finished sweep', { timeout: ROUNDS_TEST_MS }, () => {
  it('rebuilds a deleted corpus, finishes an intact one again, and says so only once the corpus is written', async () => {
    const specFile = writeSpec(dir, spec('stale'), 'stale.yaml');
    const out = join(dir, 'stale');
    for (let i = 0; i < 2; i++) roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']);
    expectOk(await round(specFile, out));
    await expectVerified(out);
    const first = join(dir, 'stale-first');
    cpSync(out, first, { recursive: true });

    // Status of a finished sweep: the corpus is written, nothing open or in flight, no scheduler "live".
    const status = await pantaAsync(['status', '--redis', redis.url]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/sweep stale-[0-9a-f]{12} \(done; corpus written\)/);
    expect(status.stdout).toContain('128/128 (100.0%), 0 in flight, 0.0 events/s');
    expect(status.stdout).toContain('runs 2/2 finished, 0 open');
    expect(status.stdout).not.toContain('scheduler live');
    expect(status.stdout).not.toMatch(/^\s+run\s+written/m);
    const json = JSON.parse((await pantaAsync(['status', '--redis', redis.url, '--json'])).stdout) as {
      sweeps: { phase: string; inflight: number; runsActive: number; runs: unknown[]; schedulerExited: boolean }[];
    };
    expect(json.sweeps[0]).toMatchObject({ phase: 'done', inflight: 0, runsActive: 0, runs: [], schedulerExited: true });

    // The corpus deleted, the same Redis: the sweep runs again to the same corpus.
    rmSync(out, { recursive: true });
    const rebuilt = await round(specFile, out);
    expectOk(rebuilt);
    expect(rebuilt.collector.stderr).toContain('the corpus holds less of this run than Redis recorded as written');
    await expectVerified(out);
    expect(await corpusDiff(out, first)).toEqual({ extra: 0, missing: 0 });

    // One run's shard deleted: that run alone runs again.
    const id = Object.keys(await redis.client.hgetall(SWEEPS_KEY)).find((k) => k.startsWith('stale-'))!;
    rmSync(join(out, 'events', 'fq117-ring-n16-T0.3-glauber-t0.parquet'));
    const repaired = await round(specFile, out);
    expectOk(repaired);
    expect(repaired.collector.stderr.match(/the corpus holds less of this run/g)).toHaveLength(1);
    await expectVerified(out);
    expect(await corpusDiff(out, first)).toEqual({ extra: 0, missing: 0 });

    // The corpus intact: nothing runs again, the corpus is finished again, both exit 0.
    const again = await round(specFile, out);
    expectOk(again);
    expect(again.collector.stderr).not.toContain('the corpus holds less');
    await expectVerified(out);
    expect(await redis.client.hget(sweepKeys(id).state, 'phase')).toBe('done');
    expect(await redis.client.keys(`panta:${id}:run:*`)).toEqual([]);

    // A new --out given to the scheduler alone (the collector writes where the scheduler says): the whole corpus there.
    const moved = join(dir, 'stale-moved');
    expectOk(await round(specFile, null, ['--out', moved]));
    await expectVerified(moved);
    expect(await corpusDiff(moved, first)).toEqual({ extra: 0, missing: 0 });
  });

  it('a collector passes over an unfinished sweep whose scheduler is gone and collects the one a scheduler publishes', async () => {
    // Published, then abandoned: its scheduler killed, its lease expired (a spec edited since, the same Redis).
    const abandoned = roles.spawn(['scheduler', writeSpec(dir, spec('stale', 7), 'abandoned.yaml'), '--out', join(dir, 'abandoned')]);
    await logged(abandoned, 'scheduler started');
    abandoned.kill('SIGKILL');
    await abandoned.exited;
    const [old] = Object.keys(await redis.client.hgetall(SWEEPS_KEY));
    await redis.client.del(sweepKeys(old!).schedulerLease);

    for (let i = 0; i < 2; i++) roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']);
    const out = join(dir, 'edited');
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '200']);
    await logged(collector, `"unfinished_without_scheduler":["${old}"],"msg":"waiting for a scheduler to publish a sweep"`);
    const scheduler = roles.spawn(['scheduler', writeSpec(dir, spec('stale'), 'edited.yaml'), '--watch-ms', '3000']);
    expectOk({ scheduler: await scheduler.exited, collector: await collector.exited });
    await expectVerified(out);
    expect(existsSync(join(dir, 'abandoned'))).toBe(false);
  });

  it('workers drop the queued jobs of a scheduler that is gone without a model call, and a scheduler resuming the sweep writes every event once, as embedded', async () => {
    const specFile = writeSpec(dir, spec('stale', 9), 'dropped.yaml');
    const out = join(dir, 'dropped');
    // BullMQ leaves a connection it is given open: closed after the queue (the file's Redis stops after its last test).
    const connection = redis.client.duplicate();
    const queue = new Queue(EVENT_QUEUE, { connection });
    queue.on('error', () => undefined);
    const queued = async () => {
      const c = await queue.getJobCounts('wait', 'prioritized', 'active', 'delayed');
      return (c.wait ?? 0) + (c.prioritized ?? 0) + (c.active ?? 0) + (c.delayed ?? 0);
    };
    try {
      // No worker yet: the scheduler's first events wait in the queue; then it stops (Ctrl-C) and nobody resumes it.
      const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '200']);
      const stopped = roles.spawn(['scheduler', specFile, '--watch-ms', '3000']);
      for (let i = 0; i < 600 && (await queued()) === 0; i++) await sleep(50);
      expect(await queued()).toBeGreaterThan(0);
      stopped.kill('SIGTERM');
      expect((await stopped.exited).code).toBe(130);
      const [id] = Object.keys(await redis.client.hgetall(SWEEPS_KEY));

      // A worker comes: it takes every job and runs none of them (nothing committed).
      const worker = roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']);
      for (let i = 0; i < 600 && (await queued()) > 0; i++) await sleep(50);
      expect(await queued()).toBe(0);
      expect(await redis.client.keys(`panta:${id}:run:*:committed`)).toEqual([]);
      expect(worker.stderr()).toContain("dropping this scheduler's queued jobs unrun");

      // The sweep resumed: the worker runs each event once (no duplicate: it spent no call before), the corpus
      // verifies and equals the embedded run's.
      const resumed = await roles.spawn(['scheduler', specFile, '--watch-ms', '3000']).exited;
      expect(errorLines(resumed.stderr)).toEqual([]);
      expect(resumed.stdout).toMatch(/^complete: sweep stale-[0-9a-f]{12}, 128 events scheduled and written$/m);
      expect((await collector.exited).code).toBe(0);
      worker.kill('SIGTERM');
      const served = await worker.exited;
      expect(served.stderr).toMatch(/panta worker: 128 events committed, 0 duplicates skipped, 0 failed, [1-9]\d* dropped unrun/);
      expect(errorLines(served.stderr)).toEqual([]);
      await expectVerified(out);
      const embedded = join(dir, 'dropped-embedded');
      expect((await runSweep(specFile, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
      expect(await corpusDiff(out, embedded)).toEqual({ extra: 0, missing: 0 });
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });

  it('refuses a corpus of another sweep at --out in one line, exit 2, from the scheduler when it sees the folder and through the collector when only the collector does', async () => {
    const other = join(dir, 'other');
    expect((await runSweep(writeSpec(dir, spec('stale', 6), 'other.yaml'), { out: other, logLevel: 'silent' })).status).toBe('complete');
    const specFile = writeSpec(dir, spec('stale'), 'stale2.yaml');

    // The scheduler sees the folder: it refuses before publishing anything.
    const seen = await pantaAsync(['scheduler', specFile, '--out', other, '--redis', redis.url]);
    expect(seen.code).toBe(2);
    expect(seen.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^panta: --out: out: .*other holds a corpus of a different sweep; fix: /),
    ]);
    expect(await redis.client.hlen(SWEEPS_KEY)).toBe(0);

    // Only the collector sees it (its own --out): that collector exits 2 with the line; the scheduler says so
    // and goes on waiting for a collector that accepts the sweep (one mistaken collector does not stop it).
    const collector = roles.spawn(['collector', '--out', other, '--durable-ms', '200']);
    const scheduler = roles.spawn(['scheduler', specFile, '--watch-ms', '3000', '--out', join(dir, 'elsewhere')]);
    const refused = await collector.exited;
    expect(refused.code).toBe(2);
    expect(
      refused.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('panta: ')),
    ).toEqual([expect.stringMatching(/^panta: .*other holds a corpus of a different sweep; fix: /)]);
    await logged(scheduler, /"refusal":"[^"]*the collector refused the sweep: [^"]*other holds a corpus of a different sweep/);
    expect(errorLines(scheduler.stderr())).toEqual([]);
    scheduler.kill('SIGTERM');
    expect((await scheduler.exited).code).toBe(130);
    expect(existsSync(join(dir, 'elsewhere'))).toBe(false);
    await expectVerified(other);
  });

  it('the scheduler checks the encoder models before publishing: a missing model folder is one line, exit 2, and nothing in Redis', async () => {
    const specFile = writeSpec(
      dir,
      `${spec('nomodels')}encoders: [{name: minilm, kind: onnx, path: ${join(dir, 'models', 'missing')}}]\n`,
      'nomodels.yaml',
    );
    const r = await pantaAsync(['scheduler', specFile, '--redis', redis.url]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^panta: .*missing.*; fix: /);
    expect(await redis.client.hlen(SWEEPS_KEY)).toBe(0);
  });
});
