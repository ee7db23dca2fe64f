import { describe, expect, it } from 'vitest';
import { travelCdsTable, travelTable1, travelTable2, travelTable3, type TravelRow } from '../src/travel/report.js';

const row = (protocol: string, hr: number | null, extra: Partial<TravelRow> = {}): TravelRow => ({
  run_id: `${protocol}-${hr}`,
  prompt_id: 'travel-barcelona',
  protocol,
  hr,
  tcs: null,
  detection_step: null,
  recovery_steps: null,
  calls: 42,
  cds_sys: [],
  ...extra,
});

// Arm A: HR 0.2, 0.4, 0.6 (mean 0.4, sd 0.2); arm B: 0.5, 0.7, 0.9 (mean 0.7, sd 0.2).
// CI of A: 0.4 -/+ t(0.975, 2) 0.2 / sqrt 3 = 0.4 -/+ 4.3026527 * 0.1154701 = 0.4 -/+ 0.4968276 = [-0.0968276, 0.8968276].
// Welch t = -0.3 / sqrt(0.04 / 3 + 0.04 / 3) = -1.8371173, df = 4 (equal n and sd), p = 0.1400660 (two-tailed);
// Cohen d = -0.3 / 0.2 = -1.5.
const ROWS: TravelRow[] = [
  row('no-sync', 0.2, { calls: 18, tcs: 1 }),
  row('no-sync', 0.4, { calls: 18, tcs: 0.5 }),
  row('no-sync', 0.6, { calls: 18, tcs: null }),
  row('full-broadcast', 0.5, { calls: 126, cds_sys: [0.4, 0.1] }),
  row('full-broadcast', 0.7, { calls: 126, cds_sys: [0.2, null] }),
  row('full-broadcast', 0.9, { calls: 126 }),
  row('ssvp', 0.3, { calls: 50, detection_step: 1, recovery_steps: 1 }),
  row('ssvp', 0.3, { calls: 56, detection_step: 2, recovery_steps: null }),
];

describe('the travel tables (the paper’s Tables 1-3 shapes), against hand computations', () => {
  it('Table 1: mean and 95% CI per arm; undefined where an arm has fewer than two values, with the reason', () => {
    const t = travelTable1(ROWS);
    const [ns] = t.rows.filter((r) => r[0] === 'no-sync' && r[1] === 'hr');
    expect(ns[2]).toBe(3);
    expect(ns[3] as number).toBeCloseTo(0.4, 12);
    expect(ns[4] as number).toBeCloseTo(-0.0968276, 6);
    expect(ns[5] as number).toBeCloseTo(0.8968276, 6);
    const [tcs] = t.rows.filter((r) => r[0] === 'full-broadcast' && r[1] === 'tcs');
    expect(tcs.slice(2, 6)).toEqual([0, null, null, null]);
    expect(tcs[6]).toMatch(/./);
    // no-sync TCS: 1 and 0.5 (the null trial left out) -> mean 0.75 over 2.
    const [nsTcs] = t.rows.filter((r) => r[0] === 'no-sync' && r[1] === 'tcs');
    expect(nsTcs.slice(2, 4)).toEqual([2, 0.75]);
  });

  it('Table 3: Welch t, df, two-tailed p and Cohen d per pair; no variance is said in words', () => {
    const t = travelTable3(ROWS);
    const [pair] = t.rows.filter((r) => r[0] === 'hr' && r[1] === 'no-sync' && r[2] === 'full-broadcast');
    expect(pair[3] as number).toBeCloseTo(0.4, 12);
    expect(pair[4] as number).toBeCloseTo(0.7, 12);
    expect(pair[5] as number).toBeCloseTo(-1.8371173, 6);
    expect(pair[6] as number).toBeCloseTo(4, 9);
    expect(pair[7] as number).toBeCloseTo(0.140066, 5);
    expect(pair[8] as number).toBeCloseTo(-1.5, 9);
    const [flat] = t.rows.filter((r) => r[0] === 'hr' && r[1] === 'full-broadcast' && r[2] === 'ssvp');
    // ssvp's two trials are both 0.3: its sd is 0, Welch's t is still defined by the other arm's variance.
    expect(flat[5] as number).toBeCloseTo((0.7 - 0.3) / Math.sqrt(0.04 / 3), 9);
  });

  it('Table 2: calls per trial, detection and recovery over the trials that have them; none said in words', () => {
    const t = travelTable2(ROWS);
    const by = Object.fromEntries(t.rows.map((r) => [r[0] as string, r]));
    expect(by['no-sync'].slice(1, 3)).toEqual([3, 18]);
    expect(by['no-sync'].slice(5, 8)).toEqual([0, null, 'no merge names the contradiction']);
    expect(by.ssvp.slice(1, 3)).toEqual([2, 53]);
    expect(by.ssvp.slice(5, 10)).toEqual([2, 1.5, null, 1, null]);
    expect(by['full-broadcast'][2]).toBe(126);
  });

  it('CDS_sys(t): mean per arm and step over the trials with a value', () => {
    const t = travelCdsTable(ROWS);
    const fb = t.rows.filter((r) => r[0] === 'full-broadcast');
    expect(fb.map((r) => r.slice(1, 4))).toEqual([
      [1, 2, 0.30000000000000004],
      [2, 1, 0.1],
    ]);
    expect(t.rows.filter((r) => r[0] === 'no-sync').map((r) => r[2])).toEqual([0, 0]);
  });
});
