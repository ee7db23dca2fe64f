import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { ROOT, tempDir, writeSpec } from '../helpers.js';

/**
 * Calibration: the debate scenario (studies/src/teams/surrogate/debate) on examples/drift-debate.yaml
 * reproduces the shape of Drift No More?: debates drift, and fewer with DRIFTPolicy. A retuned scenario
 * constant fails here, not in an engine test.
 */
describe('calibration: the debate scenario on examples/drift-debate.yaml (Drift No More?)', () => {
  it('fewer debates drift (gold-based) with drift-policy than without', async () => {
    const dir = tempDir();
    const text = readFileSync(join(ROOT, 'examples', 'drift-debate.yaml'), 'utf8')
      .replaceAll('../datasets/', `${ROOT}/datasets/`)
      .replace(/^out: .*$/m, '')
      .replace('backend: {kind: surrogate}', 'backend: {kind: surrogate, scenario: debate}')
      // The two arms the shape compares (each run's draws are its own: the arms left out change nothing here).
      .replace('protocol: [glauber, drift-policy, drift-policy-gold, regenerate]', 'protocol: [glauber, drift-policy]');
    expect(text).toContain('scenario: debate');
    expect(text).toContain('protocol: [glauber, drift-policy]\n');
    const out = join(dir, 'out');
    expect((await runSweep(writeSpec(dir, text, 'debate.yaml'), { out, logLevel: 'silent' })).status).toBe('complete');
    const file = `read_parquet('${out}/events/*.parquet')`;
    // A debate drifts when its solution is below the best it had for two turns running.
    const drift = await queryRows(`WITH sol AS (SELECT run_id, protocol, sweep, arg_max(tag, event) AS tag FROM ${file}
        WHERE role = 'solution' AND reply_status <> 'skipped' GROUP BY ALL),
      s AS (SELECT run_id, protocol, sweep, (tag = 'correct')::INTEGER < coalesce(max((tag = 'correct')::INTEGER) OVER (PARTITION BY run_id ORDER BY sweep ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS below FROM sol),
      e AS (SELECT run_id, protocol, (below AND lead(below) OVER (PARTITION BY run_id ORDER BY sweep))::INTEGER AS two FROM s),
      d AS (SELECT run_id, protocol, max(two) AS drift FROM e GROUP BY ALL)
      SELECT protocol, avg(drift) AS share FROM d GROUP BY protocol ORDER BY protocol`);
    const share = Object.fromEntries(drift.map((d) => [d.protocol, Number(d.share)]));
    expect(share.glauber).toBeGreaterThan(0);
    expect(share['drift-policy']).toBeLessThan(share.glauber!);
  });
});
