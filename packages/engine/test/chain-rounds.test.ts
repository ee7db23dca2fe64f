import { describe, expect, it } from 'vitest';
import { runEvents } from '@panta/core';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { loadSweep, sweepSizing } from '../src/index.js';
import { harness, watch } from './executor-harness.js';
import { quiesce } from './fake-transport.js';

/** Full mean fields: sweep 0 answers at once, then each run is one chain of `sweeps` x N events. */
function chains(runs: number, n: number, sweeps: number) {
  const dir = tempDir('panta-chains-');
  const spec = `name: chain-rounds
dataset: ${RHEON6}
prompts: [fq117]
geometries: [meanfield]
sizes: [${n}]
temperatures: [0.5]
trials: ${runs}
sweeps: ${sweeps}
seed: 4
`;
  return loadSweep(writeSpec(dir, spec), { out: `${dir}/out` });
}

/**
 * Rounds of calls until the sweep ends when every call takes the same time: each round answers every call
 * in flight at once. At best max(events / slots, the longest chain + 1): slot-time busy = that / rounds.
 */
async function rounds(runs: number, n: number, sweeps: number, slots: number): Promise<{ rounds: number; best: number }> {
  const sweep = chains(runs, n, sweeps);
  const sizing = sweepSizing(slots, [], sweep.runs.length);
  const h = harness(sweep, { concurrency: slots, maxActiveRuns: sizing.maxActiveRuns });
  const done = watch(h.executor.run());
  let count = 0;
  await quiesce(20);
  while (!done.settled && count < 100_000) {
    h.transport.answerPending();
    count++;
    await quiesce(20);
  }
  expect(done.settled).toBe(true);
  const events = sweep.runs.reduce((s, r) => s + runEvents(r), 0);
  return { rounds: count, best: Math.max(Math.ceil(events / slots), sweeps * n + 1) };
}

describe('chains and slots', () => {
  // Round by round: before a run per slot could open (at most min(64, slots / 2)), 47 and 111 rounds.
  it.each([
    [64, 16, 1, 64],
    [64, 16, 3, 64],
  ])(
    '%i full mean fields of %i agents over %i sweeps keep %i slots busy 90% of the rounds',
    async (runs, n, sweeps, slots) => {
      const r = await rounds(runs, n, sweeps, slots);
      expect(r.best / r.rounds).toBeGreaterThanOrEqual(0.9);
    },
    60_000,
  );

  // More runs than slots: a run opens as one ends, so the last chains run on with fewer beside them (89
  // rounds for the 72 of a sweep that could start every chain at once; 113 before).
  it('keep most of the slots busy when the runs outnumber them', async () => {
    const r = await rounds(96, 16, 2, 64);
    expect(r.best / r.rounds).toBeGreaterThanOrEqual(0.8);
  }, 60_000);
});
