import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PHASE_TABLE, type PhaseRow, writeParquetTable } from '@panta/corpus';
import { panta, tempDir, pantaInProcess as cli } from '../../../test/helpers.js';

/** A row of phase.parquet with the numbers the diagram reads; the rest null. */
function row(geometry: string, n: number, temperature: number, binder: number, chi: number, rho: number, equilibrated = true): PhaseRow {
  const nulls = Object.fromEntries(PHASE_TABLE.columns.filter((c) => c.nullable).map((c) => [c.name, null]));
  return {
    ...nulls,
    config_id: `p-${geometry}-n${n}-T${temperature}`,
    encoder: 'hashing',
    prompt_id: 'p',
    geometry,
    n,
    temperature,
    protocol: 'glauber',
    dynamics: 'glauber',
    trials: 4,
    plateau_from: 10,
    spin_dim: 1,
    binder_m: binder,
    binder_m_se: 0.01,
    chi_m: chi,
    chi_m_se: 0.01,
    rho,
    rho_se: 0.01,
    equilibrated,
  } as PhaseRow;
}

async function corpus(rows: PhaseRow[]): Promise<string> {
  const dir = join(tempDir(), 'c');
  mkdirSync(dir);
  writeFileSync(join(dir, 'manifest.json'), '{}');
  await writeParquetTable(join(dir, 'phase.parquet'), PHASE_TABLE, rows);
  return dir;
}

describe('panta phase', () => {
  it('prints T_c from Binder crossings and chi peaks and T* per size, and says where the data gives no number', async () => {
    const rows = [
      ...[0.6, 0.5, 0.3, 0.2].map((u, i) => row('torus2d', 8, i + 1, u, [1, 3, 2, 1][i], [0.5, 0.2, 0.3, 0.6][i], i !== 3)),
      ...[0.65, 0.55, 0.2, 0.1].map((u, i) => row('torus2d', 16, i + 1, u, [1, 2, 4, 1][i], [0.2, 0.3, 0.4, 0.5][i])),
      ...[0.6, 0.5, 0.3].map((u, i) => row('ring', 8, i + 1, u, [1, 3, 2][i], 0.1)),
    ];
    const dir = await corpus(rows);
    const text = await cli(['phase', dir]);
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines).toContain('torus2d · prompt p · encoder hashing · glauber · glauber');
    expect(lines).toContain('  T_c (Binder crossing, N=8/16): 2.333 [2.149, 2.518]');
    expect(lines).toContain('  T_c (chi peak, N=16): 2.9 [2, 4]');
    expect(lines).toContain('    N=8: 2.25 [1, 3]');
    expect(lines).toContain('  not equilibrated (plateau halves or trials disagree): N=8 T=4');
    expect(lines).toContain('  T_c (Binder crossing): none: one size (N=8): a Binder crossing needs two');
    const json = await cli(['phase', dir, '--json']);
    const out = JSON.parse(json.stdout) as { families: { geometry: string; tc_binder: { t: number | null } }[] };
    expect(out.families.map((f) => f.geometry)).toEqual(['torus2d', 'ring']);
    expect(out.families[0].tc_binder.t).toBeCloseTo(2 + 0.05 / 0.15, 12);
  });

  it('refuses a folder without phase.parquet in one line, exit 2', async () => {
    const dir = join(tempDir(), 'old');
    mkdirSync(dir);
    writeFileSync(join(dir, 'manifest.json'), '{}');
    const r = panta(['phase', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/phase\.parquet: missing: the sweep has not finished, or was written before phase\.parquet existed; fix: /),
    ]);
    expect((await cli(['phase', join(dir, 'nowhere')])).code).toBe(2);
  });
});
