import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { parseDataset } from '@panta/core';
import { startSurrogateServer } from '../src/server/app.js';
import type { ServerStats } from '../src/server/types.js';
import { RHEON6 } from '../../../test/helpers.js';
import { chat, firstPrompt } from './fixtures.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);

// bench/cluster and bench/cluster-sim read an endpoint's slot-time kept busy from GET /panta/stats, from
// another process: the route must give the batch's own counters, and slot-time must count only sequences
// generating (not idle slots, not time with nothing to do).
describe('GET /panta/stats', () => {
  it('reports requests answered and the slot-milliseconds the batch kept busy', async () => {
    const tokens = 20;
    const tokenMs = 5;
    const server = await startSurrogateServer({ prompts, slots: 4, tokenMs });
    const stats = async (): Promise<ServerStats> => {
      const res = await fetch(`${server.url}/panta/stats`);
      expect(res.status).toBe(200);
      return (await res.json()) as ServerStats;
    };
    const m = firstPrompt(prompts[0].question);
    const call = (seed: number) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: server.model,
          messages: chat(m),
          seed,
          max_tokens: tokens,
          min_tokens: tokens,
        }),
      }).then((r) => r.json());
    try {
      const before = await stats();
      expect(before.batch).toMatchObject({ slots: 4, busySlotMs: 0, finished: 0 });
      // Two calls side by side: two of the four slots, each for 20 tokens at 5 ms.
      await Promise.all([call(1), call(2)]);
      const after = await stats();
      expect(after.completed).toBe(2);
      expect(after.batch!.finished).toBe(2);
      expect(after.batch!.maxRunning).toBe(2);
      const callMs = tokens * tokenMs;
      // A sequence ends once its tokens are generated, never before (timer resolution: 0.25 ms each).
      expect(after.batch!.busySlotMs).toBeGreaterThanOrEqual(2 * (callMs - 0.25));
      // Two of four slots busy: at most half the slot-time while work was there.
      expect(after.batch!.busySlotMs).toBeLessThanOrEqual((after.batch!.activeMs * 4) / 2 + 1);
      // Idle slots count nothing.
      await sleep(30);
      const idle = await stats();
      expect(idle.batch!.busySlotMs).toBe(after.batch!.busySlotMs);
      expect(idle.batch!.activeMs).toBe(after.batch!.activeMs);
      // The route gives what the server object reports.
      expect(server.stats().batch!.busySlotMs).toBe(idle.batch!.busySlotMs);
    } finally {
      await server.close();
    }
  });

  it('has no batch counters without continuous batching', async () => {
    const server = await startSurrogateServer({ prompts, latencyMs: 1 });
    try {
      const body = (await (await fetch(`${server.url}/panta/stats`)).json()) as ServerStats;
      expect(body.batch).toBeUndefined();
      expect(body.requests).toBe(1);
    } finally {
      await server.close();
    }
  });
});
