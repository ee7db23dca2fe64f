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
