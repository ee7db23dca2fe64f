import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planSweep, runGroup } from '@panta/core';
import { loadSweep } from '@panta/engine';
import { ROOT, tempDir, writeSpec } from '../../../test/helpers.js';
import { collectorShards } from '../src/collector-shards.js';

const SPEC = `name: shards
dataset: ${join(ROOT, 'datasets', 'spins.jsonl')}
prompts: [ising]
geometries: [meanfield, ring, torus2d]
sizes: [9, 16]
temperatures: {adaptive: {range: [0.4, 1.6], start: 3, add: 2, rounds: 2, target: chi-peak}}
trials: 2
sweeps: 2
backend: {kind: surrogate, scenario: ising-meanfield}
`;

describe('collector shards under adaptive temperatures', () => {
  it("a run's shard does not depend on the rounds a role knows: added runs follow their group, size and trial", () => {
    const sweep = loadSweep(writeSpec(tempDir(), SPEC));
    const start = sweep.runs;
    const grids = new Map([...new Set(start.map(runGroup))].map((g, i) => [g, [0.4, 0.7 + i / 100, 1, 1.3, 1.6]]));
    const later = planSweep(sweep.spec, sweep.prompts, sweep.specFile, sweep.edgeLists, sweep.armFiles, grids);
    expect(later.length).toBe((start.length * 5) / 3);
    const [before, after] = [collectorShards(start, 3, sweep.spec), collectorShards(later, 3, sweep.spec)];
    for (const r of start) expect(after.get(r.runId)).toBe(before.get(r.runId));
    expect(new Set(before.values()).size).toBe(3);
    for (const r of later.filter((x) => !before.has(x.runId))) {
      const first = start.find((s) => runGroup(s) === runGroup(r) && s.n === r.n && s.trial === r.trial && s.temperature === 0.4)!;
      expect(after.get(r.runId)).toBe(after.get(first.runId));
    }
  });
});
