import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { ROOT, corpusDiff, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

/** A 4 x 4 Ising torus on the heat-bath surrogate, well below T_c = 2.269 J and far above it. */
const SPEC = `name: ising-small
dataset: ${join(ROOT, 'datasets', 'spins.jsonl')}
prompts: [ising]
geometries: [torus2d]
sizes: [16]
temperatures: [1.0, 50]
trials: 4
sweeps: 60
seed: 5
backend: {kind: surrogate, scenario: ising, coupling: 1}
encoders: [{name: hashing, kind: hashing, dim: 32}]
`;

interface Row {
  temperature: number;
  sweep: number;
  magnetisation: number;
  n_correct: number;
  n_hallucinated: number;
}

describe('the heat-bath Ising surrogate through the whole pipeline', () => {
  it('whitening makes the two answers antipodal spins: m is |M| / N at every sweep; T << T_c orders, T >> T_c does not', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const [one, many] = [join(dir, 'one'), join(dir, 'many')];
    expect((await runSweep(spec, { out: one, concurrency: 1, logLevel: 'silent' })).status).toBe('complete');
    const rows = (await queryRows(
      `SELECT r.temperature, o.sweep::INTEGER AS sweep, o.magnetisation, o.n_correct::INTEGER AS n_correct, o.n_hallucinated::INTEGER AS n_hallucinated
       FROM read_parquet('${one}/order_params.parquet') o JOIN read_parquet('${one}/runs.parquet') r USING (run_id)`,
    )) as unknown as Row[];
    expect(rows).toHaveLength(2 * 4 * 61);
    for (const r of rows) {
      expect(r.n_correct + r.n_hallucinated).toBe(16);
      expect(r.magnetisation).toBeCloseTo(Math.abs(r.n_correct - r.n_hallucinated) / 16, 9);
    }
    const final = (t: number) => {
      const m = rows.filter((r) => r.temperature === t && r.sweep === 60).map((r) => r.magnetisation);
      return m.reduce((a, b) => a + b, 0) / m.length;
    };
    expect(final(1.0)).toBeGreaterThan(0.9);
    expect(final(50)).toBeLessThan(0.45);
    // The replies are a pure function of (seed, answers read): 64 events in flight write the same corpus.
    expect((await runSweep(spec, { out: many, concurrency: 64, logLevel: 'silent' })).status).toBe('complete');
    expect(await corpusDiff(one, many)).toEqual({ extra: 0, missing: 0 });
  });

  it('initial: ordered keeps the hot t = 0 (the whitening pool) and starts the dynamics ordered: below T_c every trial is ordered', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC.replace('coupling: 1}', 'coupling: 1, initial: ordered}').replace('sweeps: 60', 'sweeps: 6'));
    const out = join(dir, 'out');
    expect((await runSweep(spec, { out, concurrency: 8, logLevel: 'silent' })).status).toBe('complete');
    const rows = (await queryRows(
      `SELECT r.temperature, o.sweep::INTEGER AS sweep, o.magnetisation, o.n_correct::INTEGER AS n_correct, o.n_hallucinated::INTEGER AS n_hallucinated
       FROM read_parquet('${out}/order_params.parquet') o JOIN read_parquet('${out}/runs.parquet') r USING (run_id)`,
    )) as unknown as Row[];
    for (const r of rows) expect(r.magnetisation).toBeCloseTo(Math.abs(r.n_correct - r.n_hallucinated) / 16, 9);
    // t = 0 is hot: not every run starts ordered; every update of sweep 1 answers up, whatever it read.
    expect(rows.filter((r) => r.sweep === 0).some((r) => r.n_correct < 16)).toBe(true);
    const first = await queryRows(
      `SELECT DISTINCT response FROM read_parquet('${out}/events/*.parquet') WHERE role = 'agent' AND sweep = 1`,
    );
    expect(first.map((r) => r.response)).toEqual(['up']);
    for (const r of rows.filter((r) => r.sweep === 1)) expect(r.n_correct).toBeGreaterThanOrEqual(8);
    // Well below T_c, five sweeps from the cold start leave every trial ordered (a hot start coarsens for tens).
    for (const r of rows.filter((r) => r.temperature === 1.0 && r.sweep === 6)) expect(r.magnetisation).toBeGreaterThanOrEqual(0.75);
  });

  it('initial on a scenario that is not a heat-bath spin model is refused, naming the field', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC.replace('scenario: ising, coupling: 1}', 'scenario: neutral, initial: ordered}'));
    await expect(runSweep(spec, { out: join(dir, 'out'), logLevel: 'silent' })).rejects.toThrow(
      /backend\.initial.*heat-bath spin scenarios, not scenario "neutral"/,
    );
  });

  it('an encoder that gives two states one vector is refused before anything is written', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      SPEC.replace('prompts: [ising]', 'prompts: [potts3]').replace('scenario: ising', 'scenario: potts').replace('dim: 32', 'dim: 16'),
    );
    const out = join(dir, 'out');
    await expect(runSweep(spec, { out, logLevel: 'silent' })).rejects.toThrow(
      /encoders\[0\]: encoder hashing gives the states "red" and "green" of prompt potts3 one vector.*64 or more/,
    );
    expect(existsSync(out)).toBe(false);
  });
});
