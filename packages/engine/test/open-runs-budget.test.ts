import { describe, expect, it } from 'vitest';
import { corpusDiff, RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { runEvents } from '@panta/core';
import { BUFFER_BUDGET_BYTES, loadSweep, runSweep, sweepSizing } from '../src/index.js';
import { SLOT_BUFFER_BYTES } from '../src/sweep.js';

// Rows of a mean field of 729 hold 729 read versions and 728 neighbours each (4 bytes apiece; the neighbours
// in the event's own shuffled order): such runs weigh ~4 times a ring's of the same length. With a window of 16 events
// each run keeps few calls busy, and the executor would open all four at once if runs were only counted.
// Synchronous updates: every agent of a sweep updates at once, so the run is no chain and keeps full parts.
const SPEC = `name: open-runs-budget
dataset: ${RHEON6}
prompts: [fq117]
geometries: [meanfield]
dynamics: synchronous
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
    // The in-process surrogate answers at once: no slow calls, the budget is the fixed one.
    const sizing = sweepSizing(64, [{ name: 'hashing', dim: 384 }], sweep.runs.length, sweep.spec.lookahead, false);
    const meanfield = sweep.runs[0];
    const ring = { ...meanfield, k: 2 };
    expect(sizing.runBytes(meanfield)).toBeGreaterThan(2.5 * sizing.runBytes(ring));
    // A full mean field's rows hold their own (shuffled) neighbour lists, as a sampled one's hold their draws:
    // 4 bytes per neighbour that a ring's rows, views of the graph, do not hold.
    const sampled = { ...meanfield, geometry: { kind: 'meanfield' as const, sample: 728 } };
    expect(sizing.runBytes(sampled)).toBe(sizing.runBytes(meanfield));
    const rows = Math.min(8019, 3 * sizing.partRows);
    expect(sizing.runBytes(meanfield) - sizing.runBytes({ ...meanfield, geometry: { kind: 'ring' as const } })).toBe(rows * 4 * 728);
    expect(sizing.openBytesBudget).toBe(BUFFER_BUDGET_BYTES);
    const most = Math.floor(sizing.openBytesBudget / sizing.runBytes(meanfield));
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

  // A full mean field under asynchronous updates is one chain of events (each reads every agent): one call
  // in flight per run, so only a run per slot keeps the slots busy. Sweep 0 answers at once, then 5 x 64
  // chained events with 2 ms per call.
  const CHAINS = `name: chains
dataset: ${RHEON6}
prompts: [fq117]
geometries: [meanfield]
sizes: [64]
temperatures: [0.4, 1.0]
trials: 6
sweeps: 5
seed: 11
backend: {kind: surrogate, latency_ms: 2}
`;

  it('open one chain per slot, in parts sized to a slot, and write the corpus a few open runs write', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, CHAINS);
    const sweep = loadSweep(spec, { out: `${dir}/wide` });
    const slots = sweep.runs.length;
    const sizing = sweepSizing(slots, [{ name: 'hashing', dim: 384 }], sweep.runs.length);
    const chain = sweep.runs[0];
    expect(sizing.maxActiveRuns).toBe(slots);
    // Its parts are smaller than the run (it writes a row per call), and a slot's share holds its rows.
    expect(sizing.partRowsFor(chain)).toBeLessThan(runEvents(chain));
    expect(sizing.partRowsFor(chain)).toBeLessThan(sizing.partRows);
    // Against a surrogate that answers at once a chain writes full parts within the fixed budget.
    const fast = sweepSizing(slots, [{ name: 'hashing', dim: 384 }], sweep.runs.length, sweep.spec.lookahead, false);
    expect(fast.partRowsFor(chain)).toBe(fast.partRows);
    expect(fast.openBytesBudget).toBe(BUFFER_BUDGET_BYTES);
    expect(sizing.runBytes(chain)).toBeLessThanOrEqual(SLOT_BUFFER_BYTES);
    expect(slots * sizing.runBytes(chain)).toBeLessThanOrEqual(sizing.openBytesBudget);
    // The budget grows with the slots: 512 slots hold 512 chains of a mean field of 729 over 10 sweeps.
    const big = { ...chain, n: 729, k: 728, sweeps: 10 };
    const wide = sweepSizing(512, [{ name: 'hashing', dim: 384 }]);
    expect(wide.maxActiveRuns).toBe(512);
    expect(512 * wide.runBytes(big)).toBeLessThanOrEqual(wide.openBytesBudget);

    let widest = 0;
    const all = await runSweep(spec, {
      out: `${dir}/wide`,
      concurrency: slots,
      logLevel: 'silent',
      onProgress: (p) => (widest = Math.max(widest, p.runsActive)),
    });
    expect(all.status).toBe('complete');
    expect(widest).toBe(slots);
    const few = await runSweep(spec, { out: `${dir}/few`, concurrency: 3, logLevel: 'silent' });
    expect(few.status).toBe('complete');
    expect(await corpusDiff(`${dir}/wide`, `${dir}/few`)).toEqual({ extra: 0, missing: 0 });
  }, 120_000);
});
