import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { tempDir, writeSpec } from '../../../test/helpers.js';
import { kvLimitedServer, kvLimitedSpec, type KvServer } from '../../../test/kv-server.js';
import { redisPerFile, errorLines } from './roles.js';

/**
 * The distributed twin of packages/engine/test/kv-limited.test.ts: two workers of 16 slots share an endpoint
 * whose KV cache holds ~8 of these prompts (it queues the rest), 32 mean-field chains, timeout_ms three
 * service times. Each worker's admission keeps its share of what the server runs, and no call times out
 * for having waited in the server's queue.
 */
let model: KvServer;
const dir = tempDir('panta-kv-');
const { roles } = redisPerFile(dir);

beforeAll(async () => {
  model = await kvLimitedServer();
});
afterAll(() => model.close());

describe('distributed: a KV-limited endpoint (~8 long prompts at once), 32 chains over two workers', () => {
  it('completes with every request sent once and none timed out', { timeout: 90_000 }, async () => {
    const specFile = writeSpec(dir, kvLimitedSpec('kv-dist', model.url), 'kv.yaml');
    const out = join(dir, 'out');
    const workers = [0, 1].map(() => roles.spawn(['worker', '--concurrency', '16']));
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
    const scheduler = roles.spawn(['scheduler', specFile]);
    const scheduled = await scheduler.exited;
    expect(errorLines(scheduled.stderr)).toEqual([]);
    expect(scheduled.code).toBe(0);
    const collected = await collector.exited;
    expect(collected.code).toBe(0);
    for (const w of workers) w.kill('SIGTERM');
    for (const w of workers) {
      const done = await w.exited;
      expect(done.stderr).toMatch(/panta worker: \d+ events committed, 0 duplicates skipped, 0 failed/);
    }
    const s = model.stats();
    const [row] = await queryRows(`SELECT sum(events) AS events, sum(calls) AS calls, sum(retries) AS retries FROM '${out}/runs.parquet'`);
    expect(Number(row!.events)).toBe(32 * 2 * 6);
    expect(s.requests).toBe(Number(row!.events));
    expect([...model.bodies.values()].filter((n) => n > 1)).toEqual([]);
    expect(s.abandoned, JSON.stringify({ ...s, promptTokens: undefined, priorities: undefined })).toBe(0);
    expect(Number(row!.retries)).toBe(0);
    // The event's depth travels with its job: each request carried vLLM's priority, minus it.
    expect(s.priorities.every((p) => Number.isInteger(p) && (p as number) < 0 && (p as number) >= -12)).toBe(true);
    expect(Math.min(...(s.priorities as number[]))).toBe(-12);
  });
});

describe('distributed: chains spread over the endpoints', () => {
  it('a worker holding every chain passes some on to a worker that joined later, each request sent once', {
    timeout: 120_000,
  }, async () => {
    // Two endpoints, a worker pinned to each (its node-local server). The first worker takes the chains' first
    // events alone: without passing chains on, each chain would stay with it to the end (its events run as
    // continuations of one another), and the second endpoint would serve none of them.
    const second = await kvLimitedServer();
    try {
      const specFile = writeSpec(dir, kvLimitedSpec('kv-spread', model.url, { trials: 16, sweeps: 6 }), 'spread.yaml');
      const out = join(dir, 'spread');
      const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
      const first = roles.spawn(['worker', '--concurrency', '32', '--base-url', `${model.url}/v1`]);
      const scheduler = roles.spawn(['scheduler', specFile]);
      const before = model.stats().requests;
      while (model.stats().requests === before) await sleep(50);
      const later = roles.spawn(['worker', '--concurrency', '32', '--base-url', `${second.url}/v1`]);
      const scheduled = await scheduler.exited;
      expect(errorLines(scheduled.stderr)).toEqual([]);
      expect(scheduled.code).toBe(0);
      expect((await collector.exited).code).toBe(0);
      for (const w of [first, later]) w.kill('SIGTERM');
      const [a, b] = await Promise.all([first.exited, later.exited]);
      expect([a.code, b.code]).toEqual([0, 0]);
      const passed = [a, b].map((w) => Number(/(\d+) chains passed on/.exec(w.stderr)?.[1] ?? -1));
      expect(passed[0]).toBeGreaterThan(0);
      // Each run: its agents' first answers, then six sweeps.
      const events = 16 * 7 * 6;
      const served = [model.stats().requests - before, second.stats().requests];
      // Every event's one request, on one endpoint or the other; none twice.
      expect(served[0] + served[1], JSON.stringify({ served, passed })).toBe(events);
      const bodies = new Map<string, number>();
      for (const m of [model.bodies, second.bodies]) for (const [h, n] of m) bodies.set(h, (bodies.get(h) ?? 0) + n);
      expect([...bodies.values()].filter((n) => n > 1)).toEqual([]);
      // The later worker's endpoint served a fair part of the chains (it got none of their first events).
      expect(served[1], JSON.stringify({ served, passed })).toBeGreaterThan(events / 5);
    } finally {
      await second.close();
    }
  });
});
