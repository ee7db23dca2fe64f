import { describe, expect, it } from 'vitest';
import { armPairs, armSummaries, compareArms, meanCi, studentTCdf, studentTQuantile, twoTailedP } from '../src/index.js';

// Student's sleep data (Cushny & Peebles, as in R's `sleep`): extra hours of sleep under two drugs.
const drug1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
const drug2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

describe("Student's t distribution", () => {
  it('has the closed forms of df = 1 (Cauchy) and df = 2', () => {
    // df = 1: P(T <= t) = 1/2 + atan(t)/pi, so P(|T| >= 1) = 1/2.
    expect(twoTailedP(1, 1)).toBeCloseTo(0.5, 12);
    expect(studentTCdf(3, 1)).toBeCloseTo(0.5 + Math.atan(3) / Math.PI, 12);
    // df = 2: P(|T| >= t) = 1 - t / sqrt(2 + t^2).
    expect(twoTailedP(2, 2)).toBeCloseTo(1 - 2 / Math.sqrt(6), 12);
    expect(studentTCdf(-2, 2)).toBeCloseTo((1 - 2 / Math.sqrt(6)) / 2, 12);
  });

  it('gives the tables’ 97.5% quantiles (2.262157 at df 9, 2.045230 at df 29, 12.7062 at df 1)', () => {
    expect(studentTQuantile(0.975, 9)).toBeCloseTo(2.262157, 5);
    expect(studentTQuantile(0.975, 29)).toBeCloseTo(2.04523, 5);
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(studentTQuantile(0.5, 4)).toBe(0);
  });
});

describe('mean with a 95% confidence interval', () => {
  it("matches R's t.test(sleep drug 1): mean 0.75, CI [-0.5297804, 2.0297804]", () => {
    const r = meanCi(drug1);
    expect(r.n).toBe(10);
    expect(r.mean).toBeCloseTo(0.75, 12);
    expect(r.lo).toBeCloseTo(-0.5297804, 6);
    expect(r.hi).toBeCloseTo(2.0297804, 6);
    expect(r.undefinedBecause).toBeNull();
  });

  it('by hand on [1, 2, 3]: sd 1, CI 2 ± 4.302653 / sqrt(3)', () => {
    const r = meanCi([1, 2, 3]);
    expect(r.sd).toBeCloseTo(1, 12);
    expect(r.lo).toBeCloseTo(2 - 4.302653 / Math.sqrt(3), 5);
    expect(r.hi).toBeCloseTo(2 + 4.302653 / Math.sqrt(3), 5);
  });

  it('is undefined, said in words, for no trial or one trial; all-equal trials give a zero-width interval', () => {
    expect(meanCi([])).toMatchObject({ n: 0, mean: null, lo: null, undefinedBecause: 'no trial has a value' });
    expect(meanCi([0.4, null])).toMatchObject({ n: 1, mean: 0.4, sd: null, lo: null, hi: null });
    expect(meanCi([0.4])).toHaveProperty('undefinedBecause', 'a single trial: no spread to estimate');
    expect(meanCi([0.5, 0.5, 0.5])).toMatchObject({ mean: 0.5, sd: 0, lo: 0.5, hi: 0.5, undefinedBecause: null });
  });
});

describe("Welch's t test and Cohen's d", () => {
  it("matches R's t.test(extra ~ group, sleep): t = -1.8608, df = 17.776, p = 0.07939", () => {
    const r = compareArms(drug1, drug2);
    expect(r.t).toBeCloseTo(-1.8608, 4);
    expect(r.df).toBeCloseTo(17.776, 3);
    expect(r.p).toBeCloseTo(0.07939, 5);
    // d by hand: means 0.75 and 2.33, variances 3.200556 and 4.009, equal n: pooled SD = sqrt((3.200556 + 4.009) / 2).
    expect(r.d).toBeCloseTo((0.75 - 2.33) / Math.sqrt((3.2005556 + 4.009) / 2), 6);
    expect(r.undefinedBecause).toBeNull();
  });

  it('by hand on [1, 2, 3] vs [4, 6, 8]: t = -4 / sqrt(5/3), df = 50/17, d = -4 / sqrt(2.5)', () => {
    const r = compareArms([1, 2, 3], [4, 6, 8]);
    expect(r.t).toBeCloseTo(-4 / Math.sqrt(5 / 3), 12);
    expect(r.df).toBeCloseTo(50 / 17, 12);
    expect(r.d).toBeCloseTo(-4 / Math.sqrt(2.5), 12);
    expect(r.p).toBeCloseTo(twoTailedP(4 / Math.sqrt(5 / 3), 50 / 17), 12);
    // Swapping the arms flips the signs, not p.
    const s = compareArms([4, 6, 8], [1, 2, 3]);
    expect(s.t).toBeCloseTo(-r.t!, 12);
    expect(s.p).toBeCloseTo(r.p!, 12);
  });

  it('is undefined in words, never NaN, on degenerate arms', () => {
    expect(compareArms([1], [2, 3])).toMatchObject({ t: null, p: null, d: null });
    expect(compareArms([1], [2, 3]).undefinedBecause).toMatch(/fewer than two trials/);
    expect(compareArms([0.5, 0.5], [0.5, 0.5])).toMatchObject({
      t: null,
      p: null,
      d: null,
      undefinedBecause: 'every trial of both arms has the same value',
    });
    expect(compareArms([0, 0], [1, 1]).undefinedBecause).toMatch(/no variance in either arm/);
    // One constant arm is fine: Welch needs only one variance.
    const one = compareArms([0, 0, 0], [1, 2, 3]);
    expect(one.t).toBeCloseTo(-2 / Math.sqrt(1 / 3), 12);
    expect(one.df).toBeCloseTo(2, 12);
    expect(one.d).toBeCloseTo(-2 / Math.sqrt(0.5), 12);
    for (const v of Object.values(one)) expect(Number.isNaN(v)).toBe(false);
  });
});

describe('arm statistics', () => {
  it('compares arms only within a cell, per metric, every pair once, with a row per pair', () => {
    const obs = [
      { cell: 'q1', arm: 'no-sync', metrics: { rho: 1 } },
      { cell: 'q1', arm: 'no-sync', metrics: { rho: 2 } },
      { cell: 'q1', arm: 'no-sync', metrics: { rho: 3 } },
      { cell: 'q1', arm: 'full-broadcast', metrics: { rho: 4 } },
      { cell: 'q1', arm: 'full-broadcast', metrics: { rho: 6 } },
      { cell: 'q1', arm: 'full-broadcast', metrics: { rho: 8 } },
      { cell: 'q1', arm: 'ssvp', metrics: { rho: null } },
      { cell: 'q2', arm: 'no-sync', metrics: { rho: 100 } },
    ];
    const pairs = armPairs(obs, ['rho']);
    expect(pairs.map((p) => `${p.cell}:${p.arm_a}/${p.arm_b}`)).toEqual([
      'q1:no-sync/full-broadcast',
      'q1:no-sync/ssvp',
      'q1:full-broadcast/ssvp',
    ]);
    expect(pairs[0]).toMatchObject({ n_a: 3, mean_a: 2, n_b: 3, mean_b: 6, note: null });
    expect(pairs[0].welch_t).toBeCloseTo(-4 / Math.sqrt(5 / 3), 12);
    expect(pairs[0].cohen_d).toBeCloseTo(-4 / Math.sqrt(2.5), 12);
    expect(pairs[1]).toMatchObject({ n_b: 0, mean_b: null, welch_t: null, p_two_tailed: null });
    const summaries = armSummaries(obs, ['rho']);
    expect(summaries.map((s) => [s.cell, s.arm, s.mean])).toEqual([
      ['q1', 'no-sync', 2],
      ['q1', 'full-broadcast', 6],
      ['q1', 'ssvp', null],
      ['q2', 'no-sync', 100],
    ]);
  });
});
