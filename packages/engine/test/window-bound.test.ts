import { describe, expect, it } from 'vitest';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep, type SweepProgress } from '../src/index.js';

// The surrogate answers at once: answers, dispatches and their promises chain in microtasks, and rows are
// handed to the collector only when the event loop turns. The window must bound answers not yet written.
// A ring four times the window, one sweep: without the bound from a run's first row, ~1,850 answers were held.
const SPEC = `name: window-bound
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [1000]
temperatures: [0.7]
sweeps: 1
seed: 3
concurrency: 64
lookahead: 256
`;

describe('the planning window', () => {
  it('bounds events executed and not yet written, from the first event on', async () => {
    const dir = tempDir();
    let widest = 0;
    let reports = 0;
    const summary = await runSweep(writeSpec(dir, SPEC), {
      out: `${dir}/out`,
      logLevel: 'silent',
      onProgress: (p: SweepProgress) => {
        reports++;
        widest = Math.max(widest, p.eventsExecuted - p.eventsWritten);
      },
    });
    expect(summary.status).toBe('complete');
    expect(reports).toBeGreaterThan(1);
    expect(widest).toBeGreaterThan(0);
    expect(widest).toBeLessThanOrEqual(256);
  }, 120_000);
});
