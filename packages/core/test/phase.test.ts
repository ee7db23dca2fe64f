import { describe, expect, it } from 'vitest';
import {
  binderCumulant,
  bootstrapOverTrials,
  checkPlateau,
  curveCrossings,
  curveExtremum,
  factualSpin,
  graphDistances,
  integratedAutocorrelationTime,
  plateauOf,
  plateauStart,
  secondMomentLength,
  SpatialCorrelation,
  susceptibility,
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
