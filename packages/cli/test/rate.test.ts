import { describe, expect, it } from 'vitest';
import { ETA_MIN_OBSERVED_MS, RateMeter, etaSeconds, formatEta, formatRate } from '../src/rate.js';

/** Feeds `meter` a counter that grows at `perSecond(t)` for `ms`, read every 250 ms from `t0`; returns the end time. */
function feed(meter: RateMeter, t0: number, value0: number, ms: number, perSecond: (t: number) => number): { t: number; value: number } {
  let t = t0;
  let value = value0;
  while (t < t0 + ms) {
    value += (perSecond(t) * 250) / 1000;
    t += 250;
    meter.add(t, value);
  }
  return { t, value };
}

describe('RateMeter', () => {
  it('has no rate before a second is seen, then the exact rate of a steady counter', () => {
    const m = new RateMeter();
    m.add(0, 0);
    m.add(500, 50);
    expect(m.perSecond()).toBeUndefined();
    feed(m, 500, 50, 60_000, () => 100);
    expect(m.perSecond()).toBeCloseTo(100, 9);
  });

  it('moves little on a burst (a run found on disk, a wave of parts), where a ratio of two close samples jumps tenfold', () => {
    const m = new RateMeter();
    const end = feed(m, 0, 0, 60_000, () => 100);
    m.add(end.t + 250, end.value + 25 + 5000); // 5,000 at once
    const rate = m.perSecond()!;
    expect(rate).toBeGreaterThan(100);
    expect(rate).toBeLessThan(400);
    expect(((25 + 5000) * 1000) / 250).toBeGreaterThan(20_000); // what the two samples around the burst say
  });

  it('follows a lasting change of pace within a few windows', () => {
    const m = new RateMeter(20_000);
    const end = feed(m, 0, 0, 60_000, () => 100);
    feed(m, end.t, end.value, 60_000, () => 50);
    expect(m.perSecond()!).toBeGreaterThan(50);
    expect(m.perSecond()!).toBeLessThan(55);
  });

  it('a counter that goes back (a new session) starts over instead of counting a negative pace', () => {
    const m = new RateMeter();
    const end = feed(m, 0, 0, 10_000, () => 100);
    m.add(end.t + 250, 0);
    feed(m, end.t + 250, 0, 10_000, () => 100);
    expect(m.perSecond()!).toBeGreaterThan(90);
    expect(m.perSecond()!).toBeLessThanOrEqual(100 + 1e-9);
  });
});

describe('etaSeconds', () => {
  it('is hidden until enough is seen, then remaining / rate; 0 when nothing remains', () => {
    const m = new RateMeter();
    m.add(0, 0);
    const early = feed(m, 0, 0, ETA_MIN_OBSERVED_MS - 250, () => 100);
    expect(m.perSecond()).toBeCloseTo(100, 9);
    expect(etaSeconds(1000, m)).toBeUndefined();
    feed(m, early.t, early.value, 250, () => 100);
    expect(etaSeconds(1000, m)).toBeCloseTo(10, 9);
    expect(etaSeconds(0, m)).toBe(0);
    expect(etaSeconds(-5, new RateMeter())).toBe(0);
  });

  it('is steady through the pace swings of a real sweep (runs of very different cost in turn)', () => {
    // The quickstart's measured pace in 5 s steps: 15k, 18k, 5k, 3.6k, 20k events/s (mean-field runs of 729
    // agents are slow, rings of 64 fast), which a 5 s ratio turned into an ETA of 23 s, 14 s, 47 s, 58 s, 6 s.
    const paces = [15_000, 18_000, 5_000, 3_600, 20_000, 20_000, 15_000, 18_000, 5_000, 3_600];
    const pace = (t: number) => paces[Math.min(paces.length - 1, Math.floor(t / 5000))];
    const total = 420_000;
    const m = new RateMeter();
    m.add(0, 0);
    let at = { t: 0, value: 0 };
    const etas: number[] = [];
    while (at.value < total * 0.9) {
      at = feed(m, at.t, at.value, 1000, pace);
      const eta = etaSeconds(total - at.value, m);
      if (eta !== undefined) etas.push(eta);
    }
    expect(etas.length).toBeGreaterThan(10);
    // Each second the ETA should fall by about a second; it never jumps up by more than a quarter.
    for (let i = 1; i < etas.length; i++) expect(etas[i], `second ${i}`).toBeLessThan(etas[i - 1] * 1.25);
  });
});

describe('formatting', () => {
  it('ETA and rates', () => {
    expect(formatEta(undefined)).toBe('--');
    expect(formatEta(Number.POSITIVE_INFINITY)).toBe('--');
    expect(formatEta(44.6)).toBe('45s');
    expect(formatEta(125)).toBe('2m05s');
    expect(formatEta(4020)).toBe('1h07m');
    expect(formatRate(undefined)).toBe('--');
    expect(formatRate(12345.6)).toBe('12,346');
  });
});
