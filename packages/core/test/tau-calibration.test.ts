import { describe, expect, it } from 'vitest';
import { calibrateTau, cdsExceedance } from '../src/index.js';

describe('tau calibration', () => {
  it("reproduces the paper's table: 180 no-sync steps, 5.6% above 0.22, 1.1% above 0.25, 0% above 0.28: tau = 0.25 at 2%", () => {
    const values = [...Array(170).fill(0.1), ...Array(8).fill(0.245), ...Array(2).fill(0.275)];
    const c = calibrateTau(cdsExceedance(values), 0.02);
    expect(c.tau).toBe(0.25);
    expect(c.observations).toBe(180);
    expect(c.table.map((r) => [r.tau, r.count])).toEqual([
      [0.22, 10],
      [0.23, 10],
      [0.24, 10],
      [0.25, 2],
      [0.26, 2],
      [0.27, 2],
      [0.28, 0],
    ]);
    expect(c.table[0].share).toBeCloseTo(10 / 180, 12); // 5.6%
    expect(c.table[3].share).toBeCloseTo(2 / 180, 12); // 1.1%
    // A looser bound takes a lower tau: at 6%, 0.10 passes (10 of 180 above it: 5.6%).
    expect(calibrateTau(cdsExceedance(values), 0.06).tau).toBe(0.1);
  });

  it('counts strictly above tau, keeps the share strictly below the bound, and stays within [0, 2]', () => {
    // 50 at exactly 0.3 and 50 at 0: above 0.29, 50%; above 0.30, none.
    const c = calibrateTau(cdsExceedance([...Array(50).fill(0.3), ...Array(50).fill(0)]), 0.5);
    expect(c.tau).toBe(0.3);
    // All identical at 0: tau 0, and the table starts at 0.
    const zero = calibrateTau(cdsExceedance([0, 0, 0]), 0.02);
    expect(zero.tau).toBe(0);
    expect(zero.table.map((r) => r.tau)).toEqual([0, 0.01, 0.02, 0.03]);
    // Everything maximally divergent: only tau = 2 has no false positive.
    const two = calibrateTau(cdsExceedance([2, 2]), 1);
    expect(two.tau).toBe(2);
    expect(two.table.at(-1)).toEqual({ tau: 2, count: 0, share: 0 });
  });

  it('refuses an empty distribution or a bound outside (0, 1]; non-finite values are not observations', () => {
    expect(() => calibrateTau(cdsExceedance([]), 0.02)).toThrow(/no observation/);
    expect(() => calibrateTau(cdsExceedance([Number.NaN]), 0.02)).toThrow(/no observation/);
    expect(() => calibrateTau(cdsExceedance([0.1]), 0)).toThrow(/not in \(0, 1\]/);
  });
});
