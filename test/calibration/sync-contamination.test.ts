import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { RHEON6, tempDir, writeSpec } from '../helpers.js';

/**
 * Calibration: the neutral surrogate's Potts parameters (coupling, field, belief) on rheon6 reproduce the
 * shape of the synchronisation paper. A retuned constant fails here, not in an engine test.
 */
describe('calibration: the neutral surrogate and the synchronisation protocols', () => {
  it("the synchronisation paper's shape: a seeded wrong belief spreads further under full-broadcast than under no-sync, and least under ssvp, whose merges surface it at the first exchange", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'beliefs.jsonl'), '{"id": "wrong-97", "belief": "97"}\n');
    const spec = writeSpec(
      dir,
      `name: contamination
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring]
sizes: [32]
temperatures: [0.3]
trials: 4
sweeps: 6
seed: 3
backend: {kind: surrogate, scenario: neutral}
protocol: [no-sync, ssvp, full-broadcast]
population: {file: beliefs.jsonl, assign: fraction, fraction: 0.15}
`,
    );
    const out = join(dir, 'o');
    await runSweep(spec, { out, logLevel: 'silent' });
    // Share of the agents without the belief whose last answer is the believed wrong one (97).
    const shares = await queryRows(`WITH last AS (
        SELECT *, row_number() OVER (PARTITION BY run_id, agent ORDER BY event DESC) AS rk FROM read_parquet('${out}/events/*.parquet') WHERE role = 'agent')
      SELECT protocol, avg(CASE WHEN response LIKE '%97%' THEN 1 ELSE 0 END) AS share FROM last WHERE rk = 1 AND persona IS NULL GROUP BY ALL`);
    const share = (protocol: string) => Number(shares.find((s) => s.protocol === protocol)!.share);
    expect(share('full-broadcast')).toBeGreaterThan(share('no-sync') + 0.2);
    expect(share('ssvp')).toBeLessThan(share('full-broadcast') - 0.2);
    const [first] = await queryRows(
      `SELECT min(sweep)::INTEGER AS sweep FROM read_parquet('${out}/events/*.parquet') WHERE role = 'merge' AND response LIKE 'Contradiction%'`,
    );
    expect(first!.sweep).toBe(1);
  });
});
