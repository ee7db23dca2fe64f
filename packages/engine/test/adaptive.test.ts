import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyCorpus, type Manifest } from '@panta/corpus';
import { ROOT, corpusDiff, tempDir, writeSpec } from '../../../test/helpers.js';
import { loadSweep, mergeParts, runSweep } from '../src/index.js';

/** Two configuration groups (a mean field and a ring) of Ising spins on the heat-bath surrogate, two rounds. */
const SPEC = `name: adaptive
dataset: ${join(ROOT, 'datasets', 'spins.jsonl')}
prompts: [ising]
geometries: [meanfield, ring]
sizes: [16, 24]
temperatures: {adaptive: {range: [0.4, 1.6], start: 3, add: 1, rounds: 2, target: chi-peak}}
trials: 1
sweeps: 8
seed: 9
backend: {kind: surrogate, scenario: ising-meanfield, coupling: 1}
encoders: [{name: hashing, kind: hashing, dim: 16}]
`;

const grids = (out: string) => (JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest).adaptive?.grids;

describe('adaptive temperatures', () => {
  it('rounds add temperatures per group; a resumed sweep and a sharded one (merged) end with the same grids and corpus', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const [whole, resumed] = [join(dir, 'whole'), join(dir, 'resumed')];
    expect((await runSweep(spec, { out: whole, logLevel: 'silent' })).status).toBe('complete');
    const g = grids(whole)!;
    expect(Object.keys(g)).toEqual(['ising-meanfield-glauber', 'ising-ring-glauber']);
    // Start grid 0.4, 1, 1.6; each round adds one inside the bracket of the chi peak: 5 temperatures at most.
    for (const temps of Object.values(g)) {
      expect(temps.length).toBeGreaterThan(3);
      expect(temps.length).toBeLessThanOrEqual(5);
      expect(temps).toEqual(expect.arrayContaining([0.4, 1, 1.6]));
    }
    expect((await verifyCorpus(whole)).ok).toBe(true);
    // verify replays the rounds from the runs: a grid edited in the manifest is named.
    const edited = join(dir, 'edited');
    cpSync(whole, edited, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(edited, 'manifest.json'), 'utf8')) as Manifest;
    manifest.adaptive!.grids['ising-ring-glauber'] = [0.4, 1, 1.6];
    writeFileSync(join(edited, 'manifest.json'), JSON.stringify(manifest));
    expect((await verifyCorpus(edited)).problems.join('\n')).toMatch(
      /adaptive\.grids\["ising-ring-glauber"\] in manifest\.json is \[0\.4,1,1\.6\], but the rounds replayed/,
    );

    // Stopped in the middle of the first added round, then resumed: the same rounds are derived from disk.
    const stop = new AbortController();
    const first = await runSweep(spec, {
      out: resumed,
      logLevel: 'silent',
      signal: stop.signal,
      onProgress: (p) => {
        if (p.runsTotal < 12 && p.eventsWritten > 0) stop.abort();
      },
    });
    expect(first.status).toBe('stopped');
    expect((await runSweep(spec, { out: resumed, logLevel: 'silent' })).status).toBe('complete');
    expect(grids(resumed)).toEqual(g);
    expect(await corpusDiff(whole, resumed)).toEqual({ extra: 0, missing: 0 });

    // Two parts (each holds a whole group), merged.
    const parts = [1, 2].map((i) => join(dir, `part${i}`));
    for (const [i, out] of parts.entries())
      expect((await runSweep(spec, { out, shard: { index: i + 1, count: 2 }, logLevel: 'silent' })).status).toBe('complete');
    expect(Object.keys(grids(parts[0]!)!)).toHaveLength(1);
    const merged = join(dir, 'merged');
    expect((await mergeParts(merged, parts)).status).toBe('complete');
    expect(grids(merged)).toEqual(g);
    expect(await corpusDiff(whole, merged)).toEqual({ extra: 0, missing: 0 });
    expect((await verifyCorpus(merged)).ok).toBe(true);
  });

  it('binder-crossing needs two sizes per geometry: one line naming the field', () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC.replace('sizes: [16, 24]', 'sizes: [16]').replace('chi-peak', 'binder-crossing'));
    expect(() => loadSweep(spec)).toThrow(/temperatures\.adaptive\.target.*binder-crossing needs at least two sizes per geometry/);
  });
});
