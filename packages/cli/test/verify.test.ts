import { cpSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { RHEON6, panta, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';

const SPEC = `name: verify
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d]
sizes: [16, 25]
temperatures: [0.2, 1.2]
sweeps: 3
seed: 3
`;

let corpus: string;
let dir: string;

beforeAll(async () => {
  dir = tempDir();
  corpus = join(dir, 'corpus');
  const spec = writeSpec(dir, SPEC.replace('sizes: [16, 25]', 'sizes: {ring: [16, 25], torus2d: [16, 25]}'));
  const r = await cli(['run', spec, '--out', corpus]);
  expect(r.stderr).not.toMatch(/error/i);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/complete: 16\/16 runs, 1,312 events/);
  expect(r.stdout).toMatch(/prompt\s+geometry\s+N\s+T\s+trials\s+m\s+q\s+rho/);
});

/** A copy of the good corpus to damage. */
function copy(name: string): string {
  const target = join(dir, name);
  cpSync(corpus, target, { recursive: true });
  return target;
}

const shard = (out: string) => join(out, 'events', 'fq117-ring-n16-T0.2-glauber-t0.parquet');

describe('panta verify', () => {
  it('accepts the corpus a sweep wrote', () => {
    // The binary: its exit status and stdout.
    const r = panta(['verify', corpus]);
    expect(r.stdout).toMatch(/^ok: /m);
    expect(r.code).toBe(0);
  });

  it('names a missing run', async () => {
    const out = copy('missing');
    rmSync(shard(out));
    const r = await cli(['verify', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/missing run fq117-ring-n16-T0.2-glauber-t0/);
  });

  it('names a truncated shard', async () => {
    const out = copy('truncated');
    truncateSync(shard(out), Math.floor(statSync(shard(out)).size / 2));
    const r = await cli(['verify', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/truncated or corrupt shard fq117-ring-n16-T0.2-glauber-t0/);
  });

  it('names event gaps', async () => {
    const out = copy('gaps');
    const file = shard(out);
    await queryRows(`COPY (SELECT * FROM read_parquet('${file}') WHERE event <> 20) TO '${file}.x' (FORMAT parquet)`);
    cpSync(`${file}.x`, file);
    rmSync(`${file}.x`);
    const r = await cli(['verify', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/event gaps in fq117-ring-n16-T0.2-glauber-t0: expected events 0..63 once each, found 63 rows/);
  });

  it('names order parameters that do not match the events', async () => {
    const out = copy('params');
    const file = join(out, 'order_params.parquet');
    await queryRows(
      `COPY (SELECT * REPLACE (CASE WHEN sweep = 2 THEN cohesion + 0.01 ELSE cohesion END AS cohesion) FROM read_parquet('${file}')) TO '${file}.x' (FORMAT parquet)`,
    );
    cpSync(`${file}.x`, file);
    rmSync(`${file}.x`);
    const r = await cli(['verify', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/order parameters of \S+ sweep 2 \(hashing\) do not match the events: cohesion/);
  });

  it('a folder that is no corpus is bad input for verify', async () => {
    const r = await cli(['verify', join(dir, 'nowhere')]);
    expect(r.code).toBe(2);
    expect(readdirSync(dir)).not.toContain('nowhere');
  });
});
