import { describe, expect, it } from 'vitest';
import {
  type AdaptiveTemperatures,
  datasetCard,
  maxTemperatureCount,
  nextTemperatures,
  parseSweepSpec,
  planSweep,
  type Prompt,
  runGroup,
  type RunSeries,
  startGrid,
  sweepPartition,
} from '../src/index.js';

const rule = (target: AdaptiveTemperatures['target'], add = 2): AdaptiveTemperatures => ({
  range: [0, 4],
  start: 5,
  add,
  rounds: 1,
  target,
});
/** A run of size n at temperature t whose snapshots after sweeps 0..4 are `plateau` from sweep 2 on (sweeps 0, 1 are discarded). */
const run = (n: number, temperature: number, plateau: number[], rho = 0.5): RunSeries => ({
  n,
  temperature,
  f: [9, 9, ...plateau],
  rho: [9, 9, rho, rho, rho],
});

describe('adaptive temperatures: the rule', () => {
  it('the start grid spans the range, ends included; the most temperatures is start + add x rounds', () => {
    expect(startGrid({ ...rule('chi-peak'), range: [0.5, 1.5], start: 3 })).toEqual([0.5, 1, 1.5]);
    expect(startGrid({ ...rule('chi-peak'), range: [0, 1], start: 4 })).toEqual([0, 0.333333, 0.666667, 1]);
    expect(maxTemperatureCount({ adaptive: { ...rule('rho-min'), rounds: 3 } })).toBe(5 + 2 * 3);
    expect(maxTemperatureCount([1, 2])).toBe(2);
  });

  it('chi-peak: the bracket of the largest size chi maximum is halved at its widest gaps, the lower first', () => {
    const grid = [0, 1, 2, 3, 4];
    // chi = N var(|f|): 0 everywhere but T = 2 (|f| 0.2, 0.8, 0.2); the smaller size peaks elsewhere and is not read.
    const runs = [
      ...grid.map((t) => run(10, t, t === 2 ? [0.2, -0.8, 0.2] : [0.5, 0.5, 0.5])),
      ...grid.map((t) => run(5, t, t === 4 ? [0, 1, 0] : [0.5, 0.5, 0.5])),
    ];
    expect(nextTemperatures(grid, runs, rule('chi-peak'))).toEqual({ added: [1.5, 2.5], bracket: [1, 3] });
    expect(nextTemperatures([...grid, 1.5, 2.5], runs, rule('chi-peak', 1)).added).toEqual([1.75]);
  });

  it('rho-min at a grid end brackets one side; binder-crossing brackets the steepest fall of U_L - U_L` through zero', () => {
    const grid = [4, 0, 1, 2, 3];
    const rho = grid.map((t) => run(10, t, [1, 1, 1], t === 4 ? 0.1 : 0.4));
    expect(nextTemperatures(grid, rho, rule('rho-min'))).toEqual({ added: [3.5, 3.25], bracket: [3, 4] });
    // U = 2/3 for a constant |f|, less for a varying one: the larger size is ordered up to T = 1, the smaller from T = 2.
    const varying = [0.1, 1, -0.1];
    const binder = [
      ...[0, 1, 2, 3, 4].map((t) => run(20, t, t <= 1 ? [1, -1, 1] : varying)),
      ...[0, 1, 2, 3, 4].map((t) => run(10, t, t <= 1 ? varying : [1, 1, 1])),
    ];
    expect(nextTemperatures(grid, binder, rule('binder-crossing', 1))).toEqual({ added: [1.5], bracket: [1, 2] });
    // A small fall deep in the ordered phase (both near 2/3: D = +0.003 at T = 0, -0.003 at 0.5) loses to the steep one.
    const [flat, dented] = [
      [1, 1, 1],
      [1, 1, 0.9],
    ];
    const noisy = [
      ...[run(20, 0, flat), run(10, 0, dented), run(20, 0.5, dented), run(10, 0.5, flat)],
      ...[1, 2, 3, 4].flatMap((t) => [run(20, t, t <= 1 ? [1, -1, 1] : varying), run(10, t, t <= 1 ? varying : flat)]),
    ];
    expect(nextTemperatures([0, 0.5, 1, 2, 3, 4], noisy, rule('binder-crossing', 1)).bracket).toEqual([1, 2]);
    // No data at all: the first point's bracket, never a throw.
    expect(nextTemperatures(grid, [], rule('chi-peak', 1))).toEqual({ added: [0.5], bracket: [0, 1] });
  });
});

describe('adaptive temperatures: the plan', () => {
  const prompt: Prompt = { id: 'p', question: 'q?', accepted: ['a'], false_answers: ['b'], false_premise: false, source: 's' };
  const spec = parseSweepSpec(
    `name: a
dataset: d.jsonl
geometries: [ring, meanfield, torus2d]
sizes: [9, 16]
temperatures: {adaptive: {range: [1, 3], start: 3, add: 1, rounds: 2, target: chi-peak}}
trials: 2`,
    'spec.yaml',
  );

  it('each group has its own grid; a job array deals whole groups, the same partition in every round', () => {
    const start = planSweep(spec, [prompt], 'spec.yaml');
    expect(start).toHaveLength(3 * 2 * 3 * 2);
    const grids = new Map([['p-ring-glauber', [1, 1.5, 2, 3]]]);
    const later = planSweep(spec, [prompt], 'spec.yaml', new Map(), {}, grids);
    expect(later).toHaveLength(start.length + 2 * 2);
    expect(later.filter((r) => r.temperature === 1.5).map((r) => r.geometryLabel)).toEqual(['ring', 'ring', 'ring', 'ring']);
    const partOf = (runs: typeof start) => {
      const part = sweepPartition(spec, runs, 2, () => 1);
      return new Map(runs.map((r, i) => [runGroup(r), part[i]]));
    };
    const [a, b] = [partOf(start), partOf(later)];
    expect(b).toEqual(a);
    expect(new Set(a.values())).toEqual(new Set([0, 1]));
    // Every run of a group is in one part.
    const part = sweepPartition(spec, later, 2, () => 1);
    later.forEach((r, i) => expect(part[i]).toBe(a.get(runGroup(r))));
  });
});

describe('adaptive temperatures: the dataset card', () => {
  it('names the grid each group reached', () => {
    const manifest = {
      name: 'a',
      spec: { temperatures: { adaptive: { range: [1, 3], start: 3, add: 1, rounds: 1, target: 'chi-peak' } } },
      code: { panta: '0', node: 'v20' },
      seed: 1,
      backend: { kind: 'surrogate', model: 'm' },
      judge: { kind: 'reference', model: 'reference' },
      encoders: [],
      runs: { planned: 8, complete: 8 },
      events: { written: 80 },
      tags: {},
      adaptive: { grids: { 'p-ring-glauber': [1, 1.5, 2, 3] } },
    };
    const card = datasetCard({
      title: 't',
      licence: 'cc-by-4.0',
      authors: [],
      manifest,
      tables: [],
      withoutEmbeddings: false,
      date: '2026-01-01',
    });
    expect(card).toContain('- Temperatures reached by the adaptive rounds: `p-ring-glauber` [1,1.5,2,3]');
  });
});
