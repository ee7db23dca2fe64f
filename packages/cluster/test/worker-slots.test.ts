import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SWEEPS_KEY, WORKERS_KEY, liveSlots, sweepKeys } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { redisPerFile, errorLines, expectVerified, logged } from './roles.js';

const dir = tempDir('panta-slots-');
const redis = redisPerFile(dir);
const { roles } = redis;

// Concurrency 2 in the spec, 3 workers of 4 slots: 12 events can run, and 2 more wait queued (queuedMargin). 2 runs x 36 agents x 5 = 360 events of 60 ms,
// on a ring: a third of its agents can update at once, so the cap is reached all along (a mean field's chain is one at a time).
const specText = (name: string) =>
  `name: ${name}\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [36]\ntemperatures: [0.3, 1.0]\nsweeps: 4\nseed: 2\nbackend: {kind: surrogate, latency_ms: 60}\nconcurrency: 2\n`;

/** The most events in flight the scheduler reported while `until` is pending. */
async function peakInflight(name: string, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => (done = true));
  let peak = 0;
  while (!done) {
    const id = Object.keys(await redis.client.hgetall(SWEEPS_KEY)).find((k) => k.startsWith(`${name}-`));
    if (id) peak = Math.max(peak, Number((await redis.client.hget(sweepKeys(id).status, 'inflight')) ?? 0));
    await sleep(100);
  }
  return peak;
}

describe("the scheduler's events in flight follow the workers' slots", () => {
  it('registers workers while they serve, and keeps as many events in flight as they have slots unless --concurrency fixes it', {
    timeout: 120_000,
  }, async () => {
    const workers = [0, 1, 2].map(() => roles.spawn(['worker', '--concurrency', '4']));
    for (const w of workers) await logged(w, 'worker started');
    expect(await liveSlots(redis.client)).toEqual({ workers: 3, slots: 12 });

    const specFile = writeSpec(dir, specText('slots'), 'slots.yaml');
    const out = join(dir, 'slots');
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
    const scheduler = roles.spawn(['scheduler', specFile, '--watch-ms', '3000']);
    const peak = await peakInflight('slots', scheduler.exited);
    const scheduled = await scheduler.exited;
    expect(errorLines(scheduled.stderr)).toEqual([]);
    expect(scheduled.code).toBe(0);
    expect(scheduled.stderr).toMatch(/"concurrency":14,"workers":3,"slots":12,"msg":"events in flight follow the workers' slots"/);
    expect(peak).toBeGreaterThan(2);
    expect(peak).toBeLessThanOrEqual(14);
    expect((await collector.exited).code).toBe(0);
    await expectVerified(out);

    // Fixed on the command line: the cap stays where it was put.
    const fixedSpec = writeSpec(dir, specText('fixed'), 'fixed.yaml');
    const fixedCollector = roles.spawn(['collector', '--out', join(dir, 'fixed'), '--durable-ms', '300']);
    const fixed = roles.spawn(['scheduler', fixedSpec, '--watch-ms', '3000', '--concurrency', '3']);
    await logged(fixed, 'scheduler started');
    const fixedPeak = await peakInflight('fixed', Promise.race([fixed.exited, sleep(4000)]));
    expect(fixed.stderr()).toMatch(/"concurrency":3,.*"msg":"scheduler started"/);
    expect(fixed.stderr()).not.toContain("follow the workers' slots");
    expect(fixedPeak).toBeGreaterThan(0);
    expect(fixedPeak).toBeLessThanOrEqual(3);
    fixed.kill('SIGTERM');
    fixedCollector.kill('SIGTERM');
    await Promise.all([fixed.exited, fixedCollector.exited]);

    // A stopped worker takes its slots away at once.
    workers[0]!.kill('SIGTERM');
    expect((await workers[0]!.exited).code).toBe(0);
    expect(await liveSlots(redis.client)).toEqual({ workers: 2, slots: 8 });
    expect(await redis.client.hlen(WORKERS_KEY)).toBe(2);
  });
});
