import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTrials } from '@panta/core';
import {
  checkPhaseTable,
  defineTable,
  manifestDigest,
  PHASE_TABLE,
  queryRows,
  verifyCorpus,
  writeParquetTable,
  type Manifest,
  type OrderParamRow,
  type PhaseRow,
} from '@panta/corpus';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { loadSweep, runSweep } from '../src/index.js';

const SPEC = `name: phase-table
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring]
sizes: [6]
temperatures: [0.3, 1.5]
trials: 3
sweeps: 6
seed: 5
`;

describe('phase.parquet', () => {
  it('holds chi, Binder and the plateau flag of each configuration, recomputed by panta verify; a corpus without it verifies', async () => {
    const dir = tempDir();
    const out = join(dir, 'c');
    const spec = writeSpec(dir, SPEC);
    expect((await runSweep(spec, { out, concurrency: 4, logLevel: 'silent' })).status).toBe('complete');
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
    expect(Object.keys(manifest.files ?? {})).toContain('phase.parquet');
    const rows = (await queryRows(`SELECT * FROM read_parquet('${out}/phase.parquet') ORDER BY temperature`)) as PhaseRow[];
    expect(rows.map((r) => [r.geometry, Number(r.n), Number(r.temperature), Number(r.trials), Number(r.plateau_from)])).toEqual([
      ['ring', 6, 0.3, 3, 3],
      ['ring', 6, 1.5, 3, 3],
    ]);
    // By hand from order_params.parquet: every snapshot of sweeps 3..6 of the three trials is one sample.
    for (const row of rows) {
      const ms = (
        await queryRows(
          `SELECT magnetisation AS m FROM read_parquet('${out}/order_params.parquet') WHERE config_id = '${row.config_id}' AND encoder = 'hashing' AND sweep >= 3`,
        )
      ).map((r) => Number(r.m));
      expect(ms).toHaveLength(12);
      const mom = (k: number) => ms.reduce((s, x) => s + x ** k, 0) / ms.length;
      expect(Number(row.chi_m)).toBeCloseTo(6 * (mom(2) - mom(1) ** 2), 12);
      const n = Number(row.spin_dim);
      expect(Number(row.binder_m)).toBeCloseTo(1 - (n * mom(4)) / ((n + 2) * mom(2) ** 2), 12);
      expect(Number(row.m)).toBeCloseTo(mom(1), 12);
      expect(typeof row.equilibrated).toBe('boolean');
      // C(r) on the ring of 6 (distances 0..3, n(r) = 1, 2, 2, 1): C(0) = 1 for unit spins; xi by its definition
      const corr = Array.from(row.corr as ArrayLike<number>, Number);
      expect(corr).toHaveLength(4);
      expect(corr[0]).toBeCloseTo(1, 9);
      const shell = [1, 2, 2, 1];
      const num = corr.reduce((s, c, r) => s + r * r * shell[r] * c, 0);
      const den = corr.reduce((s, c, r) => s + shell[r] * c, 0);
      if (den > 0 && num >= 0) expect(Number(row.xi)).toBeCloseTo(Math.sqrt(num / (2 * den)), 9);
      else expect(row.xi).toBeNull();
    }
    expect((await verifyCorpus(out)).problems).toEqual([]);

    // spread_m: the trials' plateau means of m against their own errors (each trial's series in sweep order).
    for (const row of rows) {
      const series = await queryRows(
        `SELECT list(magnetisation ORDER BY sweep) AS m FROM read_parquet('${out}/order_params.parquet') WHERE config_id = '${row.config_id}' AND encoder = 'hashing' AND sweep >= 3 GROUP BY run_id ORDER BY run_id`,
      );
      const trials = series.map((r) => Array.from(r.m as ArrayLike<number>, Number));
      expect(trials).toHaveLength(3);
      const spread = checkTrials(trials).spread;
      if (spread === null) expect(row.spread_m).toBeNull();
      else expect(Number(row.spread_m)).toBeCloseTo(spread, 9);
    }

    // A table written before spread_m (the plateau halves alone decided equilibrated) still verifies.
    const before = defineTable(
      'phase',
      PHASE_TABLE.columns.filter((c) => c.name !== 'spread_m'),
    );
    const halves = (d: unknown, se: unknown) => d !== null && se !== null && Math.abs(Number(d)) > 3 * Number(se);
    const legacy = rows.map(({ spread_m: _s, ...r }) => ({
      ...r,
      equilibrated: !halves(r.drift_m, r.drift_m_se) && !halves(r.drift_rho, r.drift_rho_se),
    }));
    await writeParquetTable(join(out, 'phase.parquet'), before, legacy as never);
    const orderParams = (await queryRows(
      `SELECT run_id, sweep::INTEGER AS sweep, encoder, magnetisation, rho FROM read_parquet('${out}/order_params.parquet')`,
    )) as unknown as OrderParamRow[];
    const { runs: planned } = loadSweep(spec, { out });
    expect(await checkPhaseTable(out, planned, orderParams, manifest.encoders)).toEqual([]);
    // ... by that rule: a flag the halves do not give is found.
    await writeParquetTable(join(out, 'phase.parquet'), before, legacy.map((r) => ({ ...r, equilibrated: !r.equilibrated })) as never);
    expect((await checkPhaseTable(out, planned, orderParams, manifest.encoders)).join('\n')).toMatch(/equilibrated/);
    await writeParquetTable(join(out, 'phase.parquet'), PHASE_TABLE, rows);

    // A changed number is found against the recomputation (beside the checksum).
    const { runs } = loadSweep(spec, { out });
    const forged = rows.map((r) => ({ ...r, chi_m: Number(r.chi_m) + 0.5 })) as PhaseRow[];
    await writeParquetTable(join(out, 'phase.parquet'), PHASE_TABLE, forged);
    expect((await verifyCorpus(out)).problems.join('\n')).toMatch(/phase\.parquet: .* does not match the order parameters: chi_m/);
    expect(runs.length).toBe(6);

    // A corpus written before the table (no file, none listed) verifies.
    rmSync(join(out, 'phase.parquet'));
    const { digest: _d, ...content } = manifest;
    delete content.files!['phase.parquet'];
    writeFileSync(join(out, 'manifest.json'), JSON.stringify({ ...content, digest: manifestDigest(content) }, null, 2));
    expect(await checkPhaseTable(out, runs, [], [])).toEqual([]);
    expect((await verifyCorpus(out)).problems).toEqual([]);
  }, 120_000);
});
