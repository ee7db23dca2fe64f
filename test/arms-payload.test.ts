import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSweep } from '@panta/engine';
import { fromPayload, toPayload } from '../packages/cluster/src/payload.js';
import { ROOT, RHEON6, tempDir, writeSpec } from './helpers.js';

describe('gridded arms in a cluster: the payload carries each arm’s template and population', () => {
  it('workers and the collector plan from Redis the runs the scheduler planned, with their own templates and personas', () => {
    const dir = tempDir('panta-arms-');
    const spec = writeSpec(
      dir,
      `name: arms\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [8]\ntemperatures: [0.7]\nsweeps: 1\nseed: 2\n` +
        `dynamics: [asynchronous, synchronous]\ntemplate: [rheon-a2, panta-v1]\n` +
        `population: [{name: none}, {name: probe, file: ${join(ROOT, 'examples', 'beliefs.jsonl')}, assign: same}]\n`,
    );
    const sweep = loadSweep(spec, { out: join(dir, 'out') });
    // As Redis holds it: JSON (an arm without a file is null there).
    const remote = fromPayload(JSON.parse(JSON.stringify(toPayload('s1', sweep, undefined))));
    expect(remote.runs).toHaveLength(8);
    const shape = (r: (typeof sweep.runs)[number]) => [
      r.runId,
      r.dynamics,
      r.template?.system,
      r.population?.entries[0]?.id ?? null,
      r.seed,
    ];
    expect(remote.runs.map(shape)).toEqual(sweep.runs.map(shape));
    expect(new Set(sweep.runs.map((r) => r.template?.system)).size).toBe(2);
    expect(sweep.runs.filter((r) => r.population).map((r) => r.arms?.population)).toEqual(['probe', 'probe', 'probe', 'probe']);
  });
});
