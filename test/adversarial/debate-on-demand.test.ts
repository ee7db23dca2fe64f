import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { ROOT, tempDir, writeSpec } from '../helpers.js';
import { HUGE_LENGTH, startAdversarialServer, type AdversarialMode, type AdversarialServer } from './server.js';

// Debate on demand (relay and hub arm `down`) against a server whose replies Panta did not write: prose with no
// DEBATE line, empty replies, replies of 100,000 characters. Each sweep completes and verifies; no reply calls a
// debate, so every planned debater is skipped (recorded, not called) and the members read no debate.

const dir = tempDir('panta-adversarial-down-');
const servers = new Map<AdversarialMode, AdversarialServer>();
const MODES = ['never-matching', 'empty', 'huge'] as const;
beforeAll(async () => {
  for (const mode of MODES) servers.set(mode, await startAdversarialServer({ mode }));
});
afterAll(async () => {
  for (const s of servers.values()) await s.close();
});

function spec(mode: AdversarialMode): string {
  // Empty replies are recorded rather than stopping the sweep (the health bound off); no retries.
  const backend = `{kind: openai, base_url: "${servers.get(mode)!.url}", model: adversarial-1, server: vllm, max_retries: 0, timeout_ms: 20000, max_unusable_share: 1}`;
  return `name: down-${mode}
dataset: ${ROOT}/datasets/claims24.jsonl
prompts: [cl01]
geometries: [chain]
sizes: [3]
temperatures: [0.7]
dynamics: [relay, hub]
protocol: [down]
seed: 5
backend: ${backend}
encoders: [{name: hashing, kind: hashing, dim: 64}]
judge: {kind: reference}
`;
}

describe('debate on demand against an adversarial OpenAI-compatible server', () => {
  it('off-format, empty and huge replies: every sweep completes and verifies, and no debate is called', async () => {
    // The three sweeps at once (each mostly waits on its calls; each mode has a server of its own), then each checked.
    const before = MODES.map((mode) => servers.get(mode)!.requests);
    const swept = await Promise.all(
      MODES.map((mode) => runSweep(writeSpec(dir, spec(mode), `${mode}.yaml`), { out: join(dir, mode), logLevel: 'silent' })),
    );
    for (const [i, mode] of MODES.entries()) {
      const out = join(dir, mode);
      expect(swept[i]!.status, mode).toBe('complete');
      expect((await verifyCorpus(out)).problems, mode).toEqual([]);
      const rows = (await queryRows(
        `SELECT e.role, e.response, e.reply_status FROM read_parquet('${out}/events/*.parquet') e ORDER BY e.run_id, e.event`,
      )) as unknown as { role: string; response: string; reply_status: string }[];
      // relay 3 + 2 x 2 and hub 5 + 3 x 2 planned calls; the debaters skipped, never sent.
      expect(rows).toHaveLength(7 + 11);
      const debaters = rows.filter((r) => r.role === 'debater');
      expect(debaters).toHaveLength(4 + 6);
      for (const r of debaters) expect(r, mode).toMatchObject({ response: '', reply_status: 'skipped' });
      expect(servers.get(mode)!.requests - before[i]!, mode).toBeGreaterThanOrEqual(3 + 5);
      for (const r of rows) {
        if (r.role === 'debater') continue;
        if (mode === 'empty') expect(r).toMatchObject({ response: '', reply_status: 'empty' });
        if (mode === 'huge') expect(r.response.length).toBe(HUGE_LENGTH);
      }
    }
  }, 240_000);
});
