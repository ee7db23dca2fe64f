import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureSweep, queryRows, readWhitening } from '@panta/corpus';
import { loadSweep, runSweep } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';

const SPEC = `
name: trace
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, {kind: meanfield, sample: 4}]
sizes: [12, 30]
temperatures: [0.2, 1.2]
trials: 2
sweeps: 3
seed: 5
`;

/** The corpus's order parameters and whitenings next to a measurement that reads every shard back. */
async function storedAndReadBack(spec: string, out: string) {
  const sweep = loadSweep(spec, { out });
  const runs = sweep.runs.map((r) => ({ runId: r.runId, configId: r.configId, n: r.n, promptId: r.prompt.id }));
  const readBack = await measureSweep(out, runs, [{ name: 'hashing', dim: 384 }], 'zca', false);
  const key = (r: { run_id: unknown; sweep: unknown }) => `${String(r.run_id)}|${Number(r.sweep)}`;
  const stored = await queryRows(`SELECT * EXCLUDE (sweep), sweep::DOUBLE AS sweep FROM read_parquet('${out}/order_params.parquet')`);
  expect(stored).toHaveLength(readBack.orderParams.length);
  const byKey = new Map(stored.map((r) => [key(r), r]));
  for (const r of readBack.orderParams) {
    const s = byKey.get(key(r))!;
    for (const f of [
      'magnetisation',
      'cohesion',
      'rho',
      'delta_rho',
      'cds_sys',
      'n_correct',
      'n_hallucinated',
      'n_not_known',
      'n_judge_failure',
    ] as const) {
      expect([key(r), f, s[f] === null ? null : Number(s[f])]).toEqual([key(r), f, r[f]]);
    }
  }
  for (const [prompt, per] of readBack.whitenings) {
    const w = per.get('hashing')!;
    const s = await readWhitening(out, prompt, 'hashing');
    expect(Array.from(s.matrix)).toEqual(Array.from(w.matrix));
    expect(Array.from(s.mean)).toEqual(Array.from(w.mean));
  }
  return readBack.orderParams.length;
}

describe('final measurement from the sweep trace', () => {
  it('writes the order parameters and whitenings that reading every shard back gives, bit for bit', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const out = join(dir, 'out');
    await runSweep(spec, { out, concurrency: 16 });
    expect(await storedAndReadBack(spec, out)).toBe(2 * 2 * 2 * 2 * 2 * 4);
    expect(readFileSync(join(out, 'log.jsonl'), 'utf8')).not.toMatch(/sweep trace over its budget/);
  });

  it('a trace over its memory budget is given up, said in the log, and the shards are read back instead', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const out = join(dir, 'out');
    await runSweep(spec, { out, concurrency: 16, traceBudgetBytes: 64 * 1024 });
    expect(readFileSync(join(out, 'log.jsonl'), 'utf8')).toMatch(
      /sweep trace over its budget: the order parameters will be measured from the shards/,
    );
    expect(await storedAndReadBack(spec, out)).toBe(2 * 2 * 2 * 2 * 2 * 4);
  });
});
