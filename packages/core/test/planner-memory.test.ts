import { describe, expect, it } from 'vitest';
import { DataflowPlanner, Schedule, buildGraph, type EventPlan } from '../src/index.js';

/** Bytes of the typed arrays and plain arrays an object holds directly (what grows with its sizes). */
function arrayEntries(o: object): number {
  let entries = 0;
  for (const value of Object.values(o)) {
    if (ArrayBuffer.isView(value)) entries += (value as Uint8Array).length;
    else if (Array.isArray(value)) entries += value.length;
  }
  return entries;
}

describe('planner memory', () => {
  it('holds per-event state for its window only, whatever the run length (a run of 2^26 events)', () => {
    const n = 64;
    const sweeps = 2 ** 20 - 1;
    const schedule = new Schedule(
      { n, sweeps, seed: 3, dynamics: 'asynchronous', protocol: 'glauber' },
      buildGraph({ kind: 'ring' }, n, 0),
    );
    expect(schedule.total).toBe(2 ** 26);
    const window = 256;
    const planner = new DataflowPlanner(schedule, window);
    // Run 20,000 events out of order (ready events taken in reverse), as an executor with many calls out does.
    let done = 0;
    while (done < 20_000) {
      const batch: EventPlan[] = planner.take(64);
      expect(batch.length).toBeGreaterThan(0);
      for (const plan of batch.reverse()) planner.complete(plan.event);
      done += batch.length;
    }
    expect(planner.finished).toBe(done);
    const queue = (planner as unknown as { ready: object }).ready;
    // Rings of 512 slots (the power of two above the window) and the agents' versions: no entry per event.
    expect(arrayEntries(planner)).toBeLessThanOrEqual(8 * 512 + 2 * n);
    expect(arrayEntries(queue)).toBeLessThanOrEqual(2 * 512 + 64);
  });
});
