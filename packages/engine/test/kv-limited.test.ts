import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '../src/index.js';
import { tempDir, writeSpec } from '../../../test/helpers.js';
import { kvLimitedServer, kvLimitedSpec, type KvServer } from '../../../test/kv-server.js';

/**
 * A server whose KV cache holds ~8 of these prompts at once (as vLLM, it queues the rest), 32 mean-field
 * chains at once, and a timeout of three service times: with every chain's call sent at once, the last of
 * four waves waited past its timeout in the server's queue and was sent again. Admission keeps what the
 * server holds in flight (its /metrics), and the timeout leaves out time the server reports queueing.
 */
let server: KvServer;
beforeAll(async () => {
  server = await kvLimitedServer();
});
afterAll(() => server.close());

describe('a KV-limited endpoint (~8 long prompts at once), 32 chains, timeout_ms three service times', () => {
  it('completes with every request sent once and none timed out', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const result = await runSweep(writeSpec(dir, kvLimitedSpec('kv-limited', server.url)), { out });
    const s = server.stats();
    expect(result.status).toBe('complete');
    const [row] = await queryRows(`SELECT sum(events) AS events, sum(calls) AS calls, sum(retries) AS retries FROM '${out}/runs.parquet'`);
    expect(Number(row!.events)).toBe(32 * 2 * 6);
    expect(s.requests, JSON.stringify({ ...s, promptTokens: undefined, priorities: undefined })).toBe(Number(row!.events));
    expect([...server.bodies.values()].filter((n) => n > 1)).toEqual([]);
    expect(s.abandoned, JSON.stringify({ ...s, promptTokens: undefined, priorities: undefined })).toBe(0);
    expect(Number(row!.calls)).toBe(Number(row!.events));
    expect(Number(row!.retries)).toBe(0);
    // backend.priority: each request carried vLLM's priority, minus its event's depth (a chain: the events
    // its run has left, 12 down to 1).
    expect(s.priorities.every((p) => Number.isInteger(p) && (p as number) < 0 && (p as number) >= -12)).toBe(true);
    expect(Math.min(...(s.priorities as number[]))).toBe(-12);
  });
});
