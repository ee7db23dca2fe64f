import { join } from 'node:path';
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
