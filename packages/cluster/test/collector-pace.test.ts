import { describe, expect, it } from 'vitest';
import { ReadPace } from '../src/collector-pace.js';

/** Reads every `every` ms of a stream of `rate` events per ms, each handled in `handleMs`: the waits asked for. */
function paced(pace: ReadPace, rate: number, reads: number, handleMs = 0): { waits: number[]; sizes: number[] } {
  const waits: number[] = [];
  const sizes: number[] = [];
  let t = 0;
  let last = 0;
  for (let i = 0; i < reads; i++) {
    const events = Math.round(rate * (t - last));
    last = t;
    sizes.push(events);
    const wait = pace.waitAfter(events, t, t + handleMs);
    waits.push(wait);
    t += handleMs + wait + 1;
  }
  return { waits, sizes };
}

describe('ReadPace', () => {
  it('waits until about the target has gathered, whatever share of the events the reader receives', () => {
    // One collector at 2 events/ms, and one shard of four at 0.5: both settle on reads of about 500 events.
    for (const rate of [2, 0.5]) {
      const { sizes } = paced(new ReadPace(500, 2000), rate, 40, 5);
      for (const size of sizes.slice(-10)) expect(Math.abs(size - 500)).toBeLessThan(40);
    }
  });

  it('never waits past its bound, nor once handling a read takes as long as gathering the next', () => {
    const slow = paced(new ReadPace(500, 250), 0.1, 20);
    expect(Math.max(...slow.waits)).toBe(250);
    expect(slow.waits.slice(-5)).toEqual([250, 250, 250, 250, 250]);
    const busy = paced(new ReadPace(500, 250), 2, 20, 300);
    expect(busy.waits.slice(-5)).toEqual([0, 0, 0, 0, 0]);
  });

  it('counts the time the read took to handle, and asks nothing of its first read', () => {
    const pace = new ReadPace(100, 1000);
    expect(pace.waitAfter(10, 0, 0)).toBe(0);
    // 10 events in 100 ms: 1000 ms for 100 events, of which 40 went on handling these.
    expect(pace.waitAfter(10, 100, 140)).toBeCloseTo(960, 6);
  });

  it('smooths one burst or lull instead of swinging from no wait to the longest', () => {
    const pace = new ReadPace(500, 5000);
    pace.waitAfter(0, 0, 0);
    for (let t = 100; t <= 2000; t += 100) pace.waitAfter(50, t, t);
    // A steady 0.5 events/ms asks 1000 ms; one read with no events (a lull) asks less than half as much again,
    // not the bound; one with three times as many (a burst) asks less, not nothing.
    expect(pace.waitAfter(50, 2100, 2100)).toBeCloseTo(1000, 0);
    const lull = pace.waitAfter(0, 2200, 2200);
    expect(lull).toBeGreaterThan(1000);
    expect(lull).toBeLessThan(1500);
    const burst = pace.waitAfter(150, 2300, 2300);
    expect(burst).toBeGreaterThan(500);
    expect(burst).toBeLessThan(1000);
  });
});
