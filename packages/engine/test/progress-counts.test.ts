import { describe, expect, it } from 'vitest';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep, type SweepProgress } from '../src/index.js';

// One ring large enough that the executor reports progress many times while calls run (every ~100 ms).
const SPEC = `name: progress-counts
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [5000]
temperatures: [0.7]
sweeps: 5
seed: 3
concurrency: 64
`;

describe('progress of a real run', () => {
  it('counts events executed ahead of events written, and both reach the total', async () => {
    const dir = tempDir();
    const reports: SweepProgress[] = [];
    const summary = await runSweep(writeSpec(dir, SPEC), {
      out: `${dir}/out`,
      logLevel: 'silent',
      onProgress: (p) => reports.push({ ...p }),
    });
    expect(summary.status).toBe('complete');
    const total = 6 * 5_000;
    expect(reports.length).toBeGreaterThan(1);
    for (const p of reports) {
      expect(p.eventsTotal).toBe(total);
      expect(p.eventsExecuted).toBeGreaterThanOrEqual(p.eventsWritten);
    }
    expect(reports.some((p) => p.eventsExecuted > p.eventsWritten)).toBe(true);
    for (let i = 1; i < reports.length; i++) expect(reports[i].eventsExecuted).toBeGreaterThanOrEqual(reports[i - 1].eventsExecuted);
    expect(reports.at(-1)).toMatchObject({ eventsExecuted: total, eventsWritten: total });
  }, 120_000);
});
