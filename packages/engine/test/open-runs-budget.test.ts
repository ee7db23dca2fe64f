import { describe, expect, it } from 'vitest';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { BUFFER_BUDGET_BYTES, loadSweep, runSweep, sweepSizing } from '../src/index.js';

// Rows of a mean field of 729 hold 729 read versions each (4 bytes apiece; the neighbours are the graph's
// cached rows, shared): such runs weigh ~2.6 times a ring's of the same length. With a window of 16 events
// each run keeps few calls busy, and the executor would open all four at once if runs were only counted.
const SPEC = `name: open-runs-budget
dataset: ${RHEON6}
prompts: [fq117]
geometries: [meanfield]
sizes: [729]
temperatures: [0.7]
trials: 4
sweeps: 10
seed: 3
concurrency: 64
lookahead: 16
`;

describe('runs open at once', () => {
  it('are weighed by their rows (reads included) against the buffer budget', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const sweep = loadSweep(spec, { out: `${dir}/out` });
    const sizing = sweepSizing(64, [{ name: 'hashing', dim: 384 }], sweep.runs.length);
    const meanfield = sweep.runs[0];
    const ring = { ...meanfield, k: 2 };
    expect(sizing.runBytes(meanfield)).toBeGreaterThan(2.5 * sizing.runBytes(ring));
    // A sampled mean field's rows hold their own neighbour lists too (4 more bytes per neighbour).
    const sampled = { ...meanfield, geometry: { kind: 'meanfield' as const, sample: 728 } };
    expect(sizing.runBytes(sampled) - sizing.runBytes(meanfield)).toBe(Math.min(8019, 3 * sizing.partRows) * 4 * 728);
    const most = Math.floor(BUFFER_BUDGET_BYTES / sizing.runBytes(meanfield));
    expect(most).toBeGreaterThanOrEqual(1);
    expect(most).toBeLessThan(sweep.runs.length);
    let widest = 0;
    const summary = await runSweep(spec, {
      out: `${dir}/out`,
      logLevel: 'silent',
      onProgress: (p) => (widest = Math.max(widest, p.runsActive)),
    });
    expect(summary.status).toBe('complete');
    expect(widest).toBeGreaterThan(0);
    expect(widest).toBeLessThanOrEqual(most);
  }, 120_000);
});
