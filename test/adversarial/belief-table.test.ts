import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamBoardRow } from '@panta/core';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { ROOT, tempDir, writeSpec } from '../helpers.js';
import { HUGE_LENGTH, startAdversarialServer, type AdversarialMode, type AdversarialServer } from './server.js';

// The observer's belief table and the extract baseline (relay and hub arms `table`, `extract`) against a server
// whose replies Panta did not write: prose in no ledger form, empty replies, replies of 100,000 characters. Each
// sweep completes and verifies; the table holds no entry an observer did not write in its form.

const dir = tempDir('panta-adversarial-table-');
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
  return `name: table-${mode}
dataset: ${ROOT}/datasets/claims24.jsonl
prompts: [cl01]
geometries: [chain]
sizes: [3]
temperatures: [0.7]
dynamics: [relay, hub]
protocol: [table, extract]
team: {board_tokens: 64}
seed: 5
backend: ${backend}
encoders: [{name: hashing, kind: hashing, dim: 64}]
judge: {kind: reference}
`;
}

describe("the belief table's observer against an adversarial OpenAI-compatible server", () => {
  it('off-format, empty and huge observer replies: every sweep completes and verifies, and the table stays empty', async () => {
    // The three sweeps at once (each mostly waits on its calls), then each checked.
    const swept = await Promise.all(
      MODES.map((mode) => runSweep(writeSpec(dir, spec(mode), `${mode}.yaml`), { out: join(dir, mode), logLevel: 'silent' })),
    );
    for (const [i, mode] of MODES.entries()) {
      const out = join(dir, mode);
      expect(swept[i]!.status, mode).toBe('complete');
      expect((await verifyCorpus(out)).problems, mode).toEqual([]);
      const rows = (await queryRows(
        `SELECT e.role, e.response, e.reply_status, e.board, r.protocol FROM read_parquet('${out}/events/*.parquet') e
         JOIN read_parquet('${out}/runs.parquet') r USING (run_id) ORDER BY e.run_id, e.event`,
      )) as unknown as { role: string; response: string; reply_status: string; board: string | null; protocol: string }[];
      // relay 3 + 2 and hub 1 + 1 + 3 + 3 + 1 calls, in each of the two arms.
      expect(rows).toHaveLength(2 * (5 + 9));
      expect(rows.filter((r) => r.role === 'observer')).toHaveLength(2 + 4);
      expect(rows.filter((r) => r.role === 'extractor')).toHaveLength(2 + 4);
      for (const r of rows) {
        if (mode === 'empty') expect(r).toMatchObject({ response: '', reply_status: 'empty' });
        if (mode === 'huge') expect(r.response.length).toBe(HUGE_LENGTH);
        if (r.protocol === 'extract') {
          expect(r.board).toBeNull();
          continue;
        }
        const board = JSON.parse(r.board!) as TeamBoardRow;
        expect(board.entries, `${mode} ${r.role}`).toEqual([]);
        expect(board.dropped).toBe(0);
      }
    }
  }, 240_000);
});
