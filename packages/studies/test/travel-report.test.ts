import { describe, expect, it } from 'vitest';
import { consistencyRow, consistencySample } from '../src/travel/judge-consistency.js';
import {
  cdsSysMax,
  travelCdsHrTable,
  travelCdsTable,
  travelDepartures,
  travelJudgeKappaTable,
  travelTable1,
  travelTable2,
  travelTable3,
  type TravelRow,
  withDepartures,
} from '../src/travel/report.js';
import { assertionReplyText } from '../src/travel/rubric.js';

const row = (protocol: string, hr: number | null, extra: Partial<TravelRow> = {}): TravelRow => ({
  run_id: `${protocol}-${hr}`,
  trial: 0,
  prompt_id: 'travel-barcelona',
  protocol,
  hr,
  tcs: null,
  detection_step: null,
  recovery_steps: null,
  calls: 42,
  task_calls: 18,
  sync_calls: 0,
  cds_sys: [],
  ...extra,
});

// Arm A: HR 0.2, 0.4, 0.6 (mean 0.4, sd 0.2); arm B: 0.5, 0.7, 0.9 (mean 0.7, sd 0.2).
// CI of A: 0.4 -/+ t(0.975, 2) 0.2 / sqrt 3 = 0.4 -/+ 4.3026527 * 0.1154701 = 0.4 -/+ 0.4968276 = [-0.0968276, 0.8968276].
// Welch t = -0.3 / sqrt(0.04 / 3 + 0.04 / 3) = -1.8371173, df = 4 (equal n and sd), p = 0.1400660 (two-tailed);
// Cohen d = -0.3 / 0.2 = -1.5.
const ROWS: TravelRow[] = [
  row('no-sync', 0.2, { calls: 36, tcs: 1 }),
  row('no-sync', 0.4, { calls: 36, tcs: 0.5 }),
  row('no-sync', 0.6, { calls: 36, tcs: null }),
  row('full-broadcast', 0.5, { calls: 36, sync_calls: 30, cds_sys: [0.4, 0.1] }),
  row('full-broadcast', 0.7, { calls: 36, sync_calls: 30, cds_sys: [0.2, null] }),
  row('full-broadcast', 0.9, { calls: 36, sync_calls: 30 }),
  row('ssvp', 0.3, { calls: 50, sync_calls: 32, detection_step: 1, recovery_steps: 1 }),
  row('ssvp', 0.3, { calls: 56, sync_calls: 38, detection_step: 2, recovery_steps: null }),
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

  it('Table 2: calls as the paper counts them (task + sync; no-sync’s measuring summaries apart), detection in the paper’s step numbering', () => {
    const t = travelTable2(ROWS);
    const by = Object.fromEntries(t.rows.map((r) => [r[0] as string, r]));
    // arm, trials, task calls, sync calls, calls, CI low, CI high, all calls
    expect(by['no-sync'].slice(1, 8)).toEqual([3, 18, 0, 18, 18, 18, 36]);
    expect(by['no-sync'].slice(8, 11)).toEqual([0, null, 'no merge names the contradiction']);
    expect(by.ssvp.slice(1, 5)).toEqual([2, 18, 35, 53]);
    // detection at sweeps 1 and 2: the paper's steps 2 and 3, mean 2.5.
    expect(by.ssvp.slice(8, 13)).toEqual([2, 2.5, null, 1, null]);
    expect(by['full-broadcast'].slice(2, 5)).toEqual([18, 30, 48]);
    expect(t.caption).toMatch(/no-sync 18, ssvp 53, full-broadcast 126/);
  });

  it('CDS_sys(t): mean per arm and step over the trials with a value', () => {
    const t = travelCdsTable(ROWS);
    const fb = t.rows.filter((r) => r[0] === 'full-broadcast');
    expect(fb.map((r) => r.slice(1, 4))).toEqual([
      [2, 2, 0.30000000000000004],
      [3, 1, 0.1],
    ]);
    expect(t.rows.filter((r) => r[0] === 'no-sync').map((r) => r[2])).toEqual([0, 0]);
  });

  it('CDS_sys (max) against HR: Pearson r per arm with its Fisher-z 95% CI, by hand', () => {
    // CDS_sys (max) 0.1..0.5 against HR 0.2, 0.1, 0.4, 0.3, 0.5: deviations (-.2, -.1, 0, .1, .2) and (-.1, -.2, .1, 0, .2),
    // sxy = 0.08, sxx = syy = 0.1, r = 0.8; atanh 0.8 = ln 3, half-width 1.959964 / sqrt 2 = 1.385904:
    // CI = [tanh(-0.287291), tanh(2.484517)] = [-0.2796400, 0.9861962].
    const hr = [0.2, 0.1, 0.4, 0.3, 0.5];
    const rows = [0.1, 0.2, 0.3, 0.4, 0.5].map((max, i) => row('no-sync', hr[i], { cds_sys: [max / 2, null, max] }));
    expect(cdsSysMax([0.1, null, 0.3, 0.2])).toBe(0.3);
    expect(cdsSysMax([null])).toBeNull();
    const t = travelCdsHrTable([...rows, row('ssvp', 0.3, { cds_sys: [0.2] }), row('ssvp', 0.4, { cds_sys: [] })]);
    const [ns] = t.rows.filter((r) => r[0] === 'no-sync');
    expect(ns[1]).toBe(5);
    expect(ns[2] as number).toBeCloseTo(0.8, 12);
    expect(ns[3] as number).toBeCloseTo(-0.27964, 5);
    expect(ns[4] as number).toBeCloseTo(0.9862, 5);
    expect(t.rows.find((r) => r[0] === 'ssvp')).toEqual(['ssvp', 1, null, null, null, 'fewer than two trials with both values']);
    expect(t.caption).toMatch(/r = −0\.03/);
  });

  it('judge consistency: Cohen’s kappa between two calls’ labels over every (output, assertion), by hand', () => {
    const A = [
      { name: 'airport', gold: ['BCN'], wrong: ['LIS'] },
      { name: 'weather', gold: ['22 C'], wrong: ['14 C'] },
    ];
    const prompt = { id: 'travel-barcelona', question: 'q', accepted: ['BCN'], assertions: A } as never;
    const reply = (a: 'right' | 'wrong' | 'absent', b: 'right' | 'wrong' | 'absent') => assertionReplyText([a, b], A);
    // Labels, call 1: correct, correct, hallucinated, not_addressed | call 2: correct, hallucinated, hallucinated, not_addressed.
    // p_o = 3/4; p_e = (2/4)(1/4) + (1/4)(2/4) + (1/4)(1/4) = 5/16; kappa = (12/16 - 5/16) / (11/16) = 7/11.
    // The third output's second call failed: it is left out.
    const samples = [0, 1, 2].map((i) => ({ prompt, answer: `answer ${i}` }));
    const row = consistencyRow('m', samples, [
      [reply('right', 'right'), reply('right', 'wrong')],
      [reply('wrong', 'absent'), reply('wrong', 'absent')],
      [reply('right', 'right'), null],
    ]);
    expect(row).toMatchObject({ judge: 'm', outputs: 3, outputs_scored: 2, labels: 4, agreement: 0.75 });
    expect(row.kappa as number).toBeCloseTo(7 / 11, 12);
    expect(row.kappa_note).toBe('1 of 3 outputs left out (a call failed)');
    const t = travelJudgeKappaTable(row);
    expect(t.rows[0].slice(0, 4)).toEqual(['m', 3, 2, 4]);
    expect(t.caption).toMatch(/κ = 0\.79/);
    // 20 distinct outputs at most, the draw the corpus's alone (the same whatever the answers' order).
    const many = Array.from({ length: 50 }, (_x, i) => ({ prompt, answer: `a${i % 30}` }));
    const drawn = consistencySample(many);
    expect(drawn.length).toBe(20);
    expect(new Set(drawn.map((d) => d.answer)).size).toBe(20);
    expect(consistencySample([...many].reverse()).map((d) => d.answer)).toEqual(drawn.map((d) => d.answer));
  });

  it('the captions name the departures a corpus used: the per-scenario layout, another step count, the spec’s own', () => {
    const drawn = [row('ssvp', 0.1, { trial: 0 }), row('ssvp', 0.2, { trial: 1, prompt_id: 'travel-tokyo' })];
    expect(travelDepartures(drawn, { sweeps: 5 })).toEqual([]);
    const every = [...drawn, row('ssvp', 0.3, { trial: 0, prompt_id: 'travel-tokyo' })];
    expect(travelDepartures(every, { sweeps: 6, departures: ['Qwen, not Haiku'] })).toEqual([
      'every scenario run `trials` times (trial_prompts: every), not one scenario drawn per trial',
      '7 steps per trial (sweeps: 6), not 6',
      'Qwen, not Haiku',
    ]);
    const t = withDepartures(travelTable1(ROWS), travelDepartures(every, { sweeps: 5 }));
    expect(t.caption).toMatch(/Departures from the paper in this corpus: every scenario run `trials` times \(trial_prompts: every\)/);
    expect(withDepartures(travelTable1(ROWS), []).caption).toBe(travelTable1(ROWS).caption);
  });
});
