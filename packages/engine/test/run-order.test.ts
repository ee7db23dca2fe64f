import { describe, expect, it } from 'vitest';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { loadSweep } from '../src/index.js';
import { chainsFirst } from '../src/run-order.js';

describe('the order runs open in', () => {
  it('puts the longest chains of dependent events first and keeps the grid order otherwise', () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      `name: order
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring, meanfield, torus2d]
sizes: [64, 729]
temperatures: [0.7]
trials: 2
sweeps: 2
`,
    );
    const { runs } = loadSweep(spec, { out: `${dir}/out` });
    const order = chainsFirst(runs).map((r) => `${r.geometryLabel}-${r.n}-t${r.trial}`);
    expect(order.slice(0, 4)).toEqual(['meanfield-729-t0', 'meanfield-729-t1', 'meanfield-64-t0', 'meanfield-64-t1']);
    // A ring's chains are short (a third of its agents update at once), a torus's a little longer.
    expect(order.slice(4, 6)).toEqual(['torus2d-64-t0', 'torus2d-64-t1']);
    expect(new Set(order).size).toBe(runs.length);
    expect(
      chainsFirst(runs)
        .map((r) => r.runId)
        .sort(),
    ).toEqual(runs.map((r) => r.runId).sort());
  });
});
