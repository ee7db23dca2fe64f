import { describe, expect, it } from 'vitest';
import { runEvents } from '@panta/core';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { loadSweep, sweepSizing } from '../src/index.js';
import { harness, watch } from './executor-harness.js';
import { quiesce } from './fake-transport.js';

/** A sweep of the spec's grid (seed 4, dataset rheon6). */
function sweepOf(grid: string) {
  const dir = tempDir('panta-chains-');
  return loadSweep(writeSpec(dir, `name: chain-rounds\ndataset: ${RHEON6}\nseed: 4\n${grid}`), { out: `${dir}/out` });
}

/** Full mean fields: sweep 0 answers at once, then each run is one chain of `sweeps` x N events. */
function chains(runs: number, n: number, sweeps: number) {
  return sweepOf(`prompts: [fq117]\ngeometries: [meanfield]\nsizes: [${n}]\ntemperatures: [0.5]\ntrials: ${runs}\nsweeps: ${sweeps}\n`);
}

/**
 * Rounds of calls until the sweep ends when every call takes the same time: each round answers every call
 * in flight at once. At best max(events / slots, the longest chain + 1): slot-time busy = that / rounds.
 */
async function rounds(runs: number, n: number, sweeps: number, slots: number): Promise<{ rounds: number; best: number }> {
  const r = await roundsOf(chains(runs, n, sweeps), slots);
  return { rounds: r.rounds, best: Math.max(r.best, sweeps * n + 1) };
}

/** Rounds of calls a sweep takes on `slots`, and the least it could (its events over the slots). */
async function roundsOf(sweep: ReturnType<typeof sweepOf>, slots: number): Promise<{ rounds: number; best: number }> {
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
  return { rounds: count, best: Math.ceil(events / slots) };
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

  // bench/cluster-sim's eraclitus-shaped mixture: 648 runs (a quarter full mean fields, torus3d up to 125)
  // on 1,024 slots. Runs opened only once the slots ran short, and served round-robin, left the last and
  // deepest of them running alone at the end: 112 rounds where 86 would do (77%). Every run open that fits,
  // and the deepest served first: 91. Depth counted as the larger of events left over width and the next
  // ready event's rank (a run's last events are chains): 86, the least any order could take.
  it('an eraclitus-shaped mixture keeps 1,024 slots busy in the least rounds any order could', async () => {
    const sweep = sweepOf(`prompts: [fq117, fq367, fq75, fq346, fq518, fq574]
geometries: [ring, torus2d, torus3d, meanfield]
sizes: {ring: [16, 32, 48], torus2d: [16, 25, 36], torus3d: [27, 64, 125], meanfield: [4, 6, 8]}
temperatures: [0.4, 1.0, 1.6]
trials: 3
sweeps: 3
`);
    expect(sweep.runs.length).toBe(648);
    const r = await roundsOf(sweep, 1024);
    expect(r.best).toBe(86);
    expect(r.rounds).toBe(r.best);
  }, 120_000);

  // More runs than slots: a run opens as one ends, so the last chains run on with fewer beside them (89
  // rounds for the 72 of a sweep that could start every chain at once; 113 before).
  it('keep most of the slots busy when the runs outnumber them', async () => {
    const r = await rounds(96, 16, 2, 64);
    expect(r.best / r.rounds).toBeGreaterThanOrEqual(0.8);
  }, 60_000);
});
