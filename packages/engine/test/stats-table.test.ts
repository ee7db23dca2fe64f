import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { RHEON6, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

const SPEC = `name: arm-stats
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring]
sizes: [8]
temperatures: [1.0]
trials: 4
sweeps: 3
seed: 11
protocol: [glauber, isolated]
`;

/** Welch's t, df and Cohen's d by the textbook formulas, written out again here (not core's code). */
function byHand(a: number[], b: number[]) {
  const m = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
  const s2 = (v: number[]) => v.reduce((s, x) => s + (x - m(v)) ** 2, 0) / (v.length - 1);
  const [na, nb] = [a.length, b.length];
  const se2 = s2(a) / na + s2(b) / nb;
  return {
    t: (m(a) - m(b)) / Math.sqrt(se2),
    df: se2 ** 2 / ((s2(a) / na) ** 2 / (na - 1) + (s2(b) / nb) ** 2 / (nb - 1)),
    d: (m(a) - m(b)) / Math.sqrt(((na - 1) * s2(a) + (nb - 1) * s2(b)) / (na + nb - 2)),
  };
}

describe('stats.parquet', () => {
  it('holds one row per metric and pair of arms, whose Welch t, df and d match the runs and order parameters; verify accepts it', async () => {
    const dir = tempDir();
    const out = join(dir, 'c');
    const summary = await runSweep(writeSpec(dir, SPEC), { out, concurrency: 8, logLevel: 'silent' });
    expect(summary.status).toBe('complete');
    const stats = await queryRows(`SELECT * FROM read_parquet('${out}/stats.parquet') ORDER BY metric`);
    expect(stats.map((r) => r.metric)).toEqual(['calls', 'cds_sys_final', 'cds_sys_max', 'delta_rho_final', 'focus_total', 'rho_final']);
    for (const r of stats)
      expect([r.cell, r.arm_a, r.arm_b, r.n_a, r.n_b]).toEqual(['fq367 · ring · N=8 · k=2 · T=1', 'glauber', 'isolated', 4, 4]);
    // CDS at the last sweep, per arm, read straight from order_params.parquet.
    const finals = await queryRows(
      `SELECT r.protocol, o.cds_sys FROM read_parquet('${out}/order_params.parquet') o JOIN read_parquet('${out}/runs.parquet') r USING (run_id)
       WHERE o.sweep = 3 AND o.encoder = 'hashing' ORDER BY r.protocol, r.trial`,
    );
    const arm = (p: string) => finals.filter((f) => f.protocol === p).map((f) => Number(f.cds_sys));
    const cds = stats.find((r) => r.metric === 'cds_sys_final')!;
    const hand = byHand(arm('glauber'), arm('isolated'));
    expect(Number(cds.mean_a)).toBeCloseTo(arm('glauber').reduce((s, x) => s + x, 0) / 4, 12);
    expect(Number(cds.welch_t)).toBeCloseTo(hand.t, 9);
    expect(Number(cds.welch_df)).toBeCloseTo(hand.df, 9);
    expect(Number(cds.cohen_d)).toBeCloseTo(hand.d, 9);
    expect(Number(cds.p_two_tailed)).toBeGreaterThan(0);
    expect(Number(cds.p_two_tailed)).toBeLessThanOrEqual(1);
    expect(Number(cds.ci_lo_a)).toBeLessThan(Number(cds.mean_a));
    // Calls: every run of both arms makes (sweeps + 1) * N agent calls and no protocol call: no variance, said in words.
    const calls = stats.find((r) => r.metric === 'calls')!;
    expect([Number(calls.mean_a), Number(calls.mean_b), calls.welch_t, calls.cohen_d]).toEqual([32, 32, null, null]);
    expect(calls.note).toBe('every trial of both arms has the same value');
    const verify = panta(['verify', out]);
    expect(verify.stdout + verify.stderr).toMatch(/^ok: /);
    const report = panta(['report', out, '--out', join(dir, 'report')]);
    expect(report.code).toBe(0);
    // The report's Table 3 shape is the same computation: its CDS row carries the file's t.
    const csv = readFileSync(join(dir, 'report', 'tables', 'arm-tests.csv'), 'utf8').split('\n');
    expect(csv[0]).toBe("cell,metric,arm A,arm B,mean A,mean B,Welch t,df,p (two-tailed),Cohen's d,note");
    const row = csv.find((l) => l.includes(',cds_sys_final,'))!.split(',');
    expect(Number(row[6])).toBeCloseTo(hand.t, 9);
    expect(readFileSync(join(dir, 'report', 'tables', 'arm-means.csv'), 'utf8')).toMatch(/,glauber,rho_final,4,/);
  }, 180_000);
});
