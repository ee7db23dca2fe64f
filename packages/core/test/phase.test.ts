import { describe, expect, it } from 'vitest';
import {
  binderCumulant,
  bootstrapOverTrials,
  checkPlateau,
  checkTrials,
  chiSquarePerDofBound,
  curveCrossings,
  fittedCrossing,
  curveExtremum,
  factualSpin,
  graphDistances,
  halvesDisagree,
  integratedAutocorrelationTime,
  type PhasePoint,
  phaseDiagram,
  plateauOf,
  plateauStart,
  secondMomentLength,
  settledFor,
  SpatialCorrelation,
  susceptibility,
  trialsBound,
  TRIALS_SLACK,
  Z_EQUILIBRATION,
  Z95,
} from '@panta/core';

describe('fluctuation measures', () => {
  it('chi = N (<m^2> - <m>^2) over every plateau snapshot of every trial', () => {
    // samples 0.5, 0.5, 1, 0: <m> = 0.5, <m^2> = 0.375, so chi = 8 * 0.125 = 1
    expect(
      susceptibility(
        [
          [0.5, 0.5],
          [1, 0],
        ],
        8,
      ),
    ).toBeCloseTo(1, 12);
    expect(susceptibility([[0.3, 0.3, 0.3]], 100)).toBeCloseTo(0, 12);
    expect(susceptibility([], 4)).toBeNull();
  });

  it('Binder cumulant with the O(n) normalisation: 2/(n+2) ordered, 0 for a Gaussian, exact in between', () => {
    expect(
      binderCumulant(
        [
          [1, 1],
          [1, 1],
        ],
        1,
      ),
    ).toBeCloseTo(2 / 3, 12);
    expect(binderCumulant([[1, 1, 1]], 3)).toBeCloseTo(2 / 5, 12);
    // m^2 is 0 twice and 3 once: <m^2> = 1, <m^4> = 3 = 3 <m^2>^2, the Gaussian ratio for n = 1
    expect(binderCumulant([[0, 0, Math.sqrt(3)]], 1)).toBeCloseTo(0, 12);
    // half 1, half 0: <m^2> = 1/2, <m^4> = 1/2, U = 1 - (1/2) / (3/4) = 1/3
    expect(
      binderCumulant(
        [
          [1, 0],
          [0, 1],
        ],
        1,
      ),
    ).toBeCloseTo(1 / 3, 12);
    expect(binderCumulant([[0, 0]], 1)).toBeNull();
  });

  it('the factual spin is 1 - 2 rho', () => {
    expect(factualSpin(0.25)).toBe(0.5);
    expect(factualSpin(null)).toBeNull();
  });

  it('integrated autocorrelation time: 1 + 2 sum of positive rho(t)', () => {
    // [0,0,1,1]: deviations -1/2,-1/2,1/2,1/2, c0 = 1/4; rho(1) = (1/3)(1/4 - 1/4 + 1/4)/(1/4) = 1/3; rho(2) = -1 stops
    expect(integratedAutocorrelationTime([0, 0, 1, 1])).toBeCloseTo(5 / 3, 12);
    expect(integratedAutocorrelationTime([1, -1, 1, -1])).toBe(1);
    expect(integratedAutocorrelationTime([2, 2, 2])).toBe(1);
    expect(integratedAutocorrelationTime([2])).toBeNull();
  });
});

describe('plateau rule', () => {
  it('counts the sweeps from ceil(T/2) to T', () => {
    expect(plateauStart(4)).toBe(2);
    expect(plateauStart(5)).toBe(3);
    expect(plateauOf([9, 8, 7, 6, 5])).toEqual([7, 6, 5]);
  });

  it('flags a run whose plateau halves disagree beyond their errors', () => {
    // halves [0,1] and [1,2]: means 1/2 and 3/2, variances 1/4, tau = 1 (rho(1) = 0): se = sqrt(1/8 + 1/8) = 1/2
    const one = checkPlateau([[0, 1, 1, 2]]);
    expect(one.first).toBeCloseTo(0.5, 12);
    expect(one.second).toBeCloseTo(1.5, 12);
    expect(one.se).toBeCloseTo(0.5, 12);
    expect(one.flagged).toBe(false);
    // two such trials: se = sqrt(4 * 1/8) / 2
    expect(
      checkPlateau([
        [0, 1, 1, 2],
        [0, 1, 1, 2],
      ]).se,
    ).toBeCloseTo(Math.sqrt(0.5) / 2, 12);
    // a step with no noise has zero error and a difference: not on its plateau
    expect(checkPlateau([[0, 0, 1, 1]]).flagged).toBe(true);
    expect(checkPlateau([[0, 1, 0, 1]]).flagged).toBe(false);
  });
});

describe('trials in different states', () => {
  it("chi-square per degree of freedom of the trials' means, each with its own error, against its 3-sigma bound", () => {
    // Means 1/2, 1/2, 11/2; variance 1/4 and tau = 1 each (rho(1) < 0), se^2 = 1/16; weighted mean 13/6.
    const c = checkTrials([
      [0, 1, 0, 1],
      [0, 1, 0, 1],
      [5, 6, 5, 6],
    ]);
    const w = 13 / 6;
    expect(c.spread).toBeCloseTo((2 * (0.5 - w) ** 2 + (5.5 - w) ** 2) / (1 / 16) / 2, 9);
    expect(c.bound).toBeCloseTo(2 * (1 - 2 / 18 + 3 * Math.sqrt(2 / 18)) ** 3, 12);
    expect(c.flagged).toBe(true);
    // Two trials whose means differ by 1 with se^2 = 1/16 each: X = 8, under the bound for one degree of freedom (2 x 10.5).
    expect(
      checkTrials([
        [0, 1, 0, 1],
        [1, 2, 1, 2],
      ]),
    ).toMatchObject({ spread: expect.closeTo(8, 9), flagged: false });
    expect(checkTrials([[0, 1, 0, 1]])).toEqual({ spread: null, bound: null, flagged: false });
  });

  it('the Wilson-Hilferty bound is within 3% of the chi-square quantile at 3 sigma', () => {
    // scipy: chi2.ppf(norm.cdf(3), k) / k for k = 1, 5, 11, 15
    const exact = [10.273018, 3.9642896, 2.7674752, 2.4538557];
    [1, 5, 11, 15].forEach((k, i) => expect(Math.abs(chiSquarePerDofBound(k, 3) / exact[i] - 1)).toBeLessThan(0.03));
  });

  it('flags a stripe beside ordered runs, which the plateau halves do not see (each run is flat)', () => {
    // Six trials of |m| on their plateau: five ordered (about 0.9), one stuck striped (about 0.05), each stationary.
    const noise = (k: number) => Array.from({ length: 40 }, (_, i) => 0.02 * Math.sin(1.7 * i + k) * Math.cos(0.9 * i * k));
    const trials = [0, 1, 2, 3, 4, 5].map((k) => noise(k).map((x) => (k === 5 ? 0.05 : 0.9) + x));
    expect(checkPlateau(trials).flagged).toBe(false);
    expect(checkTrials(trials).flagged).toBe(true);
    expect(checkTrials(trials.slice(0, 5)).flagged).toBe(false);
  });
});

describe('bootstrap over trials', () => {
  it('is seeded, and spans the resampled means', () => {
    const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const a = bootstrapOverTrials([0, 1], mean, 7)!;
    expect(bootstrapOverTrials([0, 1], mean, 7)).toEqual(a);
    // resampled means are 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4
    expect(a.lo).toBe(0);
    expect(a.hi).toBe(1);
    expect(a.se).toBeGreaterThan(0.3);
    expect(a.se).toBeLessThan(0.41);
    expect(bootstrapOverTrials([2, 2, 2], mean, 1)).toMatchObject({ se: 0, lo: 2, hi: 2 });
    expect(bootstrapOverTrials([2], mean, 1)).toBeNull();
  });
});

describe('spatial correlation on a ring of four', () => {
  const ring = [
    [1, 3],
    [0, 2],
    [1, 3],
    [2, 0],
  ];
  const dist = graphDistances(4, (i) => ring[i]);
  const spins = (xs: number[]) => xs.map((x) => [x]);

  it('graph distances by breadth first search', () => {
    expect([...dist.subarray(0, 4)]).toEqual([0, 1, 2, 1]);
  });

  it('C(r) and the second-moment length are exact on hand-built snapshots', () => {
    const aligned = new SpatialCorrelation(4, dist);
    aligned.add(spins([1, 1, 1, 1]), 1);
    expect(aligned.correlation()).toEqual([1, 1, 1]);
    expect(aligned.shell()).toEqual([1, 2, 1]);
    // xi^2 = (1 * 2 * 1 + 4 * 1 * 1) / (2 * 1 * (1 + 2 + 1)) = 6/8
    expect(secondMomentLength(aligned.correlation(), aligned.shell(), 1)).toBeCloseTo(Math.sqrt(0.75), 12);
    // with [1,1,-1,-1] added: C(1) = (1 + 0) / 2, C(2) = (1 - 1) / 2; xi^2 = (2 * 1/2) / (2 * (1 + 1)) = 1/4
    aligned.add(spins([1, 1, -1, -1]), 1);
    expect(aligned.correlation()).toEqual([1, 0.5, 0]);
    expect(secondMomentLength(aligned.correlation(), aligned.shell(), 1)).toBeCloseTo(0.5, 12);
    const domain = new SpatialCorrelation(4, dist);
    domain.add(spins([1, 1, 1, -1]), 1);
    expect(domain.correlation()).toEqual([1, 0, 0]);
    expect(secondMomentLength(domain.correlation(), domain.shell(), 1)).toBe(0);
  });
});

describe('finite-size scaling', () => {
  it('a Binder crossing by linear interpolation, with the band where the difference is within errors', () => {
    const a = [
      { t: 1, value: 0.6, se: 0.03 },
      { t: 2, value: 0.4, se: 0.03 },
    ];
    const b = [
      { t: 1, value: 0.5, se: 0.04 },
      { t: 2, value: 0.5, se: 0.04 },
    ];
    // D = 0.1, -0.1 crosses at 1.5; se_D = 0.05, so D - z se_D crosses at 1 + (0.1 - 0.05 z) / 0.2
    const [c] = curveCrossings(a, b);
    expect(c.t).toBeCloseTo(1.5, 12);
    expect(c.lo).toBeCloseTo(1 + (0.1 - 0.05 * Z95) / 0.2, 12);
    expect(c.hi).toBeCloseTo(1 + (0.1 + 0.05 * Z95) / 0.2, 12);
    expect(
      curveCrossings(a, [
        { t: 1, value: 0.1, se: 0 },
        { t: 2, value: 0.1, se: 0 },
      ]),
    ).toEqual([]);
  });

  it('a crossing from fits of both curves: exact where the difference is quadratic (interpolation is not), a seeded parametric-bootstrap interval', () => {
    // x = t - 2.13: U_a = 0.5 - 0.2 x, U_b = 0.5 - 0.6 x + 2 x^2 (D = -0.4 x + 2 x^2: roots 2.13 and 2.33).
    const ts = [2.0, 2.05, 2.1, 2.15, 2.2, 2.25];
    const curve = (f: (x: number) => number, se: number) => ts.map((t) => ({ t, value: f(t - 2.13), se }));
    const a = curve((x) => 0.5 - 0.2 * x, 0.01);
    const b = curve((x) => 0.5 - 0.6 * x + 2 * x * x, 0.01);
    const [linear] = curveCrossings(b, a);
    expect(Math.abs(linear.t - 2.13)).toBeGreaterThan(0.002);
    const fit = fittedCrossing(a, b, linear.t, 'seed')!;
    expect(fit.t).toBeCloseTo(2.13, 12);
    expect(fit.points).toEqual(ts);
    expect(fittedCrossing(a, b, linear.t, 'seed')).toEqual(fit);
    expect(fit.lo!).toBeLessThan(2.13);
    expect(fit.hi!).toBeGreaterThan(2.13);
    // Errors half as large give an interval about half as wide; no error, no width.
    const narrow = fittedCrossing(
      a.map((p) => ({ ...p, se: 0.005 })),
      b.map((p) => ({ ...p, se: 0.005 })),
      linear.t,
      'seed',
    )!;
    expect((fit.hi! - fit.lo!) / (narrow.hi! - narrow.lo!)).toBeGreaterThan(1.7);
    expect((fit.hi! - fit.lo!) / (narrow.hi! - narrow.lo!)).toBeLessThan(2.3);
    const exact = fittedCrossing(
      a.map((p) => ({ ...p, se: 0 })),
      b.map((p) => ({ ...p, se: 0 })),
      linear.t,
      'seed',
    )!;
    expect(exact).toMatchObject({ t: expect.closeTo(2.13, 12), lo: expect.closeTo(2.13, 12), hi: expect.closeTo(2.13, 12) });
    // Four points: a straight line per size (weighted least squares), the crossing of the two lines.
    const line = fittedCrossing(a.slice(1, 5), b.slice(1, 5), 2.13, 'seed')!;
    expect(line.points).toEqual([2.05, 2.1, 2.15, 2.2]);
    const slope = (ys: number[]) => {
      const xs = [2.05, 2.1, 2.15, 2.2];
      const [mx, my] = [xs.reduce((p, q) => p + q) / 4, ys.reduce((p, q) => p + q) / 4];
      const k = xs.reduce((acc, x, i) => acc + (x - mx) * (ys[i] - my), 0) / xs.reduce((acc, x) => acc + (x - mx) ** 2, 0);
      return { k, c: my - k * mx };
    };
    const [la, lb] = [slope(a.slice(1, 5).map((p) => p.value)), slope(b.slice(1, 5).map((p) => p.value))];
    expect(line.t).toBeCloseTo((la.c - lb.c) / (lb.k - la.k), 12);
  });

  it('a peak at the vertex of the parabola through its neighbours, bracketed by points not within errors', () => {
    const pts = [0, 1, 3, 2, 0].map((value, t) => ({ t, value, se: 0.1 }));
    // through (1,1), (2,3), (3,2): y = -1.5 t^2 + 6.5 t - 4, vertex 6.5 / 3
    expect(curveExtremum(pts, 'max')).toEqual({ t: expect.closeTo(6.5 / 3, 12), lo: 1, hi: 3 });
    const wide = pts.map((p) => ({ ...p, se: 1.5 }));
    expect(curveExtremum(wide, 'max')).toMatchObject({ lo: null, hi: null });
    // the minimum of rho: vertex of (1,-1), (2,-3), (3,-2) is the same
    expect(
      curveExtremum(
        pts.map((p) => ({ ...p, value: -p.value })),
        'min',
      )?.t,
    ).toBeCloseTo(6.5 / 3, 12);
    // an extreme point at the grid's edge is no located extremum
    expect(
      curveExtremum(
        [1, 2, 3].map((value, t) => ({ t, value, se: 0 })),
        'max',
      ),
    ).toBeNull();
  });
});

describe('phase diagram', () => {
  const point = (n: number, temperature: number, binder: number, chi: number, rho: number, geometry = 'ring'): PhasePoint => ({
    prompt_id: 'p',
    encoder: 'e',
    geometry,
    protocol: 'glauber',
    dynamics: 'glauber',
    template_arm: null,
    population_arm: null,
    n,
    temperature,
    m: 0.5,
    m_se: 0.01,
    chi_m: chi,
    chi_m_se: 0.01,
    binder_m: binder,
    binder_m_se: 0.01,
    rho,
    rho_se: 0.01,
    equilibrated: true,
  });
  const grid = (geometry = 'ring') => [
    ...[0.6, 0.5, 0.3, 0.2].map((u, i) => point(8, i + 1, u, [1, 3, 2, 1][i], [0.5, 0.2, 0.3, 0.6][i], geometry)),
    ...[0.65, 0.55, 0.2, 0.1].map((u, i) => point(16, i + 1, u, [1, 2, 4, 1][i], [0.2, 0.3, 0.4, 0.5][i], geometry)),
  ];

  it('T_c from the falling Binder crossing of the largest sizes, chi peaks and T* per size, with reasons where none', () => {
    const [f] = phaseDiagram(grid());
    expect(f.sizes).toEqual([8, 16]);
    // D = U16 - U8 = 0.05, 0.05, -0.1, -0.1 falls through zero between 2 and 3 (linearly at 2 + 0.05/0.15); the
    // four points fitted with a line each (equal errors): U8 = 0.4 - 0.14 (t - 2.5), U16 = 0.375 - 0.2 (t - 2.5).
    expect(f.tc_binder.t).toBeCloseTo(2.5 - 0.025 / 0.06, 12);
    expect(f.tc_binder.lo!).toBeLessThan(f.tc_binder.t!);
    expect(f.tc_binder.hi!).toBeGreaterThan(f.tc_binder.t!);
    expect(phaseDiagram(grid())[0].tc_binder).toEqual(f.tc_binder);
    expect(f.tc_binder.sizes).toEqual([8, 16]);
    // chi of N=16 peaks at T=3 between 2 and 1: vertex 3 - 1/10; N=8's at 2 + 1/6
    expect(f.tc_chi).toMatchObject({ n: 16, t: expect.closeTo(2.9, 12), lo: 2, hi: 4 });
    expect(f.chi_peaks[0].t).toBeCloseTo(2 + 1 / 6, 12);
    // rho of N=8 lowest at T=2: vertex of (1, .5), (2, .2), (3, .3) is 2.25; N=16's lowest is at the grid's end
    expect(f.t_star[0].t).toBeCloseTo(2.25, 12);
    expect(f.t_star[1]).toMatchObject({ t: null, note: expect.stringMatching(/grid's end/) });
  });

  it('a crossing counts when the larger size is significantly less ordered on the hot side; noise crossings do not', () => {
    const pts = (u8: number[], u16: number[]) => [
      ...u8.map((u, i) => point(8, i + 1, u, 1, 0.5)),
      ...u16.map((u, i) => point(16, i + 1, u, 1, 0.5)),
    ];
    // Nearly ordered on the cold side (D = 0.005, 0.02: 0.35 and 1.4 se), clearly apart on the hot side: the band is open below.
    // Lines through the four points cross at 1.49, outside the bracket 2..3 where D changes sign: the fit does
    // not describe these curves (saturated on the cold side), so the linear interpolation and its band are given.
    const [cold] = phaseDiagram(pts([0.66, 0.6, 0.3, 0.2], [0.665, 0.62, 0.2, 0.1]));
    expect(cold.tc_binder.t).toBeCloseTo(2 + 0.02 / 0.12, 12);
    expect(cold.tc_binder.lo).toBeNull();
    // The same with the cold side within one standard error (D = 0.01: 0.7 se): no crossing.
    expect(phaseDiagram(pts([0.66, 0.6, 0.3, 0.2], [0.665, 0.61, 0.2, 0.1]))[0].tc_binder.t).toBeNull();
    // A second sign change among curves that agree within errors (D = +0.005, -0.01 at T = 5, 6: -0.7 se) is not chosen.
    const [noisy] = phaseDiagram(pts([0.6, 0.5, 0.3, 0.1, 0.1, 0.1], [0.65, 0.55, 0.2, 0.05, 0.105, 0.09]));
    expect(noisy.tc_binder.t).toBeGreaterThan(2);
    expect(noisy.tc_binder.t).toBeLessThan(3);
  });

  it('a point within errors of zero does not end a side: sign changes blurred by noise near T_c are one crossing', () => {
    // U8 a line; U16 = U8 + D, D = 0.5, 0.3, -0.03, 0.03, -0.3, -0.5 (se_D 0.0707: z 7.1, 4.2, -0.42, 0.42, -4.2,
    // -7.1): near T_c the curves agree within errors and D's sign flips twice. Each sign change alone has one
    // side within errors (the rule that ended a side at the first point of the other sign found none); together
    // they are one crossing, whose fits (a parabola per size on all six points, D odd about 3.5) cross at 3.5.
    const d = [0.5, 0.3, -0.03, 0.03, -0.3, -0.5];
    const u8 = (t: number) => 0.6 - 0.1 * (t - 3.5);
    const pts = d.flatMap((x, i) => [
      { ...point(8, i + 1, u8(i + 1), 1, 0.5), binder_m_se: 0.05 },
      { ...point(16, i + 1, u8(i + 1) + x, 1, 0.5), binder_m_se: 0.05 },
    ]);
    const [f] = phaseDiagram(pts);
    expect(f.tc_binder.t).toBeCloseTo(3.5, 9);
    expect(f.tc_binder.lo!).toBeLessThan(3.5);
    expect(f.tc_binder.hi!).toBeGreaterThan(3.5);
    // A point significantly of the other sign does end a side: with D = -0.1 (z -1.4) at T = 3, the sign change
    // between 4 and 5 has no cold side (0.42 only) and the one between 2 and 3 keeps its hot side (1.4, 4.2, 7.1).
    const ended = d
      .map((x, i) => (i === 2 ? -0.1 : x))
      .flatMap((x, i) => [
        { ...point(8, i + 1, u8(i + 1), 1, 0.5), binder_m_se: 0.05 },
        { ...point(16, i + 1, u8(i + 1) + x, 1, 0.5), binder_m_se: 0.05 },
      ]);
    const [g] = phaseDiagram(ended);
    expect(g.tc_binder.t).toBeGreaterThan(2);
    expect(g.tc_binder.t).toBeLessThan(3);
  });

  it('says why where the data cannot give a number: one size, no crossing, not equilibrated', () => {
    const single = phaseDiagram(grid('torus2d').filter((p) => p.n === 8))[0];
    expect(single.tc_binder).toMatchObject({ t: null, note: 'one size (N=8): a Binder crossing needs two' });
    const parallel = phaseDiagram(grid().map((p) => (p.n === 16 ? { ...p, binder_m: p.binder_m! + 0.5 } : p)))[0];
    expect(parallel.tc_binder.note).toMatch(/^no crossing of the Binder cumulants of N=8 and N=16/);
    const drifting = phaseDiagram(grid().map((p) => (p.n === 16 && p.temperature === 3 ? { ...p, equilibrated: false } : p)))[0];
    expect(drifting.tc_binder).toMatchObject({ t: null, note: 'not equilibrated at N=16 T=3' });
    expect(drifting.tc_chi.note).toBe('not equilibrated at N=16 T=3');
    expect(drifting.not_equilibrated).toEqual([{ n: 16, temperature: 3, observables: ['m', 'rho'] }]);
    // A crossing inside the noise (D within errors on one side) is no crossing.
    const noisy = phaseDiagram(grid().map((p) => ({ ...p, binder_m_se: 0.2 })))[0];
    expect(noisy.tc_binder.t).toBeNull();
  });

  it("each estimate reads its own observable's checks: rho's plateau halves do not void T_c, m's do not void T*", () => {
    // The stored checks of a configuration: m's halves within errors, its trials' spread under the bound of 8
    // trials (about 2 x 2.3); rho's halves 20 standard errors apart (a cold start's rho near T_c, which relaxes
    // by whole-lattice reversals that m = |M| / N does not see).
    const checks = { equilibrated: false, trials: 8, drift_m: 0.001, drift_m_se: 0.01, spread_m: 1.5, drift_rho: 0.2, drift_rho_se: 0.01 };
    const rhoOnly = { ...checks };
    const mOnly = { ...checks, drift_rho: 0, spread_m: 50 };
    expect([settledFor({ ...grid()[0], ...rhoOnly }, 'm'), settledFor({ ...grid()[0], ...rhoOnly }, 'rho')]).toEqual([true, false]);
    expect([settledFor({ ...grid()[0], ...mOnly }, 'm'), settledFor({ ...grid()[0], ...mOnly }, 'rho')]).toEqual([false, true]);
    // The halves' rule and the trials' bound are checkPlateau's and checkTrials's.
    expect(halvesDisagree(0.031, 0.01)).toBe(true);
    expect(halvesDisagree(0.029, 0.01)).toBe(false);
    expect(halvesDisagree(null, 0.01)).toBe(false);
    expect(trialsBound(8)).toBeCloseTo(TRIALS_SLACK * chiSquarePerDofBound(7, Z_EQUILIBRATION), 15);
    const clean = phaseDiagram(grid())[0];
    // rho flagged at N=16 T=3 (inside the crossing's bracket and at chi's peak) and N=8 T=2 (rho's lowest point).
    const at = (n: number, t: number, extra: object) => (p: PhasePoint) => (p.n === n && p.temperature === t ? { ...p, ...extra } : p);
    const [f] = phaseDiagram(
      grid()
        .map(at(16, 3, rhoOnly))
        .map(at(8, 2, rhoOnly)),
    );
    expect(f.tc_binder).toEqual(clean.tc_binder);
    expect(f.tc_chi).toEqual(clean.tc_chi);
    expect(f.t_star[0]).toMatchObject({ t: null, note: 'not equilibrated at N=8 T=2' });
    expect(f.not_equilibrated).toEqual([
      { n: 8, temperature: 2, observables: ['rho'] },
      { n: 16, temperature: 3, observables: ['rho'] },
    ]);
    // m flagged there instead (trials in different states): T_c is voided, T* is not.
    const [g] = phaseDiagram(
      grid()
        .map(at(16, 3, mOnly))
        .map(at(8, 2, mOnly)),
    );
    expect(g.tc_binder).toMatchObject({ t: null, note: 'not equilibrated at N=8 T=2, N=16 T=3' });
    expect(g.tc_chi.note).toBe('not equilibrated at N=16 T=3');
    expect(g.t_star[0]).toEqual(clean.t_star[0]);
  });
});
