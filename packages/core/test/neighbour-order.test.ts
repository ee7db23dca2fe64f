import { describe, expect, it } from 'vitest';
import { buildGraph, rngFrom, Schedule, shufflesNeighbours, type EventPlan, type GeometrySpec } from '../src/index.js';
import { samplePeers } from '../src/geometry/meanfield.js';

const RUN = { n: 12, sweeps: 6, seed: 4242, dynamics: 'asynchronous' as const, protocol: 'glauber' as const };

function events(geometry: GeometrySpec, run: typeof RUN & { neighbourOrder?: 'per-run' } = RUN): EventPlan[] {
  const schedule = new Schedule(run, buildGraph(geometry, run.n, 7));
  const out: EventPlan[] = [];
  for (let e = schedule.next(); e; e = schedule.next()) out.push(e);
  return out;
}

const ascending = (xs: Int32Array) => xs.every((x, i) => i === 0 || xs[i - 1] < x);

describe('neighbour order in prompts', () => {
  it('a full mean field lists each event its N - 1 peers in its own seeded order, not agent order', () => {
    const updates = events({ kind: 'meanfield' }).filter((e) => e.sweep > 0);
    for (const e of updates) {
      // Every other agent exactly once, and the read versions follow the same order.
      expect([...e.neighbours].sort((a, b) => a - b)).toEqual([...Array(12).keys()].filter((b) => b !== e.agent));
      expect(e.readVersions.length).toBe(12);
    }
    expect(updates.filter((e) => ascending(e.neighbours)).length).toBeLessThan(2);
    // Two updates of the same agent see their peers in different orders.
    const byAgent = new Map<number, EventPlan[]>();
    for (const e of updates) byAgent.set(e.agent, [...(byAgent.get(e.agent) ?? []), e]);
    const twice = [...byAgent.values()].find((list) => list.length >= 2)!;
    expect(Array.from(twice[0].neighbours)).not.toEqual(Array.from(twice[1].neighbours));
    // No agent heads every prompt: the first place goes round.
    expect(new Set(updates.map((e) => e.neighbours[0])).size).toBeGreaterThan(6);
  });

  it('the order is a pure function of the run seed and the event: two schedules agree, another seed does not', () => {
    const a = events({ kind: 'meanfield' });
    const b = events({ kind: 'meanfield' });
    expect(b.map((e) => Array.from(e.neighbours))).toEqual(a.map((e) => Array.from(e.neighbours)));
    expect(b.map((e) => Array.from(e.readVersions))).toEqual(a.map((e) => Array.from(e.readVersions)));
    const other = events({ kind: 'meanfield' }, { ...RUN, seed: 4243 });
    expect(other.map((e) => Array.from(e.neighbours))).not.toEqual(a.map((e) => Array.from(e.neighbours)));
  });

  it('the shuffle does not move the picks: the same agents update, in the same sequence, as on a ring', () => {
    // The order draws from its own stream, so whether a graph shuffles never changes who updates when.
    expect(events({ kind: 'meanfield' }).map((e) => e.agent)).toEqual(events({ kind: 'ring' }).map((e) => e.agent));
  });

  it('synchronous updates read the previous sweep in the shuffled order too', () => {
    for (const e of events({ kind: 'meanfield' }, { ...RUN, dynamics: 'synchronous' }).filter((x) => x.sweep > 0)) {
      const base = (e.sweep - 1) * 12;
      expect(Array.from(e.readVersions)).toEqual([base + e.agent, ...Array.from(e.neighbours, (b) => base + b)]);
    }
  });

  it('lattices and chains keep their direction; star, random-regular, small-world and edges graphs are shuffled', () => {
    for (const geometry of [{ kind: 'ring' }, { kind: 'torus2d' }, { kind: 'chain' }] as GeometrySpec[]) {
      const n = geometry.kind === 'torus2d' ? 16 : 12;
      const graph = buildGraph(geometry, n, 7);
      expect(graph.shuffled).toBe(false);
      for (const e of events(geometry, { ...RUN, n }).filter((x) => x.sweep > 0))
        expect(Array.from(e.neighbours)).toEqual(Array.from(graph.neighbours(e.agent, rngFrom(0))));
    }
    for (const geometry of [
      { kind: 'star' },
      { kind: 'random-regular', k: 4 },
      { kind: 'small-world', k: 4, beta: 0.2 },
    ] as GeometrySpec[]) {
      expect(buildGraph(geometry, 12, 7).shuffled).toBe(true);
      const updates = events(geometry).filter((x) => x.sweep > 0 && x.neighbours.length > 1);
      expect(updates.some((e) => !ascending(e.neighbours))).toBe(true);
    }
  });

  it('the spec-level rule (fingerprints, memory) says what the graphs do', () => {
    const specs: GeometrySpec[] = [
      { kind: 'ring' },
      { kind: 'torus2d' },
      { kind: 'chain' },
      { kind: 'meanfield' },
      { kind: 'meanfield', sample: 3 },
      { kind: 'star' },
      { kind: 'random-regular', k: 4 },
      { kind: 'small-world', k: 4, beta: 0.2 },
    ];
    for (const spec of specs) expect(shufflesNeighbours(spec), spec.kind).toBe(buildGraph(spec, 16, 7).shuffled);
  });

  it('a sampled mean field keeps its draw order (already uniform over orders): no second shuffle', () => {
    const graph = buildGraph({ kind: 'meanfield', sample: 4 }, 12, 7);
    expect(graph.shuffled).toBe(false);
    for (const e of events({ kind: 'meanfield', sample: 4 }).filter((x) => x.sweep > 0))
      expect(Array.from(e.neighbours)).toEqual(Array.from(samplePeers(12, 4, e.agent, rngFrom(RUN.seed, 'neighbours', e.event))));
  });
});

describe('neighbour_order per-run', () => {
  const perRun = { ...RUN, n: 16, neighbourOrder: 'per-run' as const };
  const updates = (geometry: GeometrySpec, run: typeof perRun = perRun) => events(geometry, run).filter((e) => e.sweep > 0);
  /** Whether any two agents keep one relative order in every prompt that lists both. */
  const relativeOrderHolds = (list: EventPlan[]) => {
    const before = new Set<string>();
    for (const e of list)
      for (let i = 0; i < e.neighbours.length; i++)
        for (let j = i + 1; j < e.neighbours.length; j++) before.add(`${e.neighbours[i]}<${e.neighbours[j]}`);
    for (const pair of before) {
      const [a, b] = pair.split('<');
      if (before.has(`${b}<${a}`)) return false;
    }
    return true;
  };

  it('a full mean field lists the same order in every event of a run: the run order without the agent', () => {
    const list = updates({ kind: 'meanfield' });
    expect(relativeOrderHolds(list)).toBe(true);
    // Two agents' prompts differ only where each leaves itself out.
    const a = list.find((e) => e.agent !== list[0].agent)!;
    const strip = (e: EventPlan, drop: number) => Array.from(e.neighbours).filter((b) => b !== drop);
    expect(strip(list[0], a.agent)).toEqual(strip(a, list[0].agent));
    // Per event (the default) the same run gives many orders.
    expect(relativeOrderHolds(updates({ kind: 'meanfield' }, { ...perRun, neighbourOrder: undefined }))).toBe(false);
  });

  it('the order is a pure function of the run seed: two schedules agree, other runs have other orders and other heads', () => {
    const a = updates({ kind: 'meanfield' });
    expect(updates({ kind: 'meanfield' }).map((e) => Array.from(e.neighbours))).toEqual(a.map((e) => Array.from(e.neighbours)));
    const heads = new Set<number>();
    for (let seed = 1; seed <= 40; seed++) {
      const other = updates({ kind: 'meanfield' }, { ...perRun, seed });
      // The run's order heads every prompt but the head's own.
      const firsts = other.map((e) => e.neighbours[0]);
      const head = firsts.reduce((best, b) => (firsts.filter((x) => x === b).length > firsts.filter((x) => x === best).length ? b : best));
      expect(other.every((e) => e.neighbours[0] === head || e.agent === head)).toBe(true);
      heads.add(head);
      if (seed === 1) expect(other.map((e) => Array.from(e.neighbours))).not.toEqual(a.map((e) => Array.from(e.neighbours)));
    }
    // No agent heads every run's prompts: 40 runs over 16 agents give many heads.
    expect(heads.size).toBeGreaterThan(8);
  });

  it('only the order moves: the same agents update with the same neighbour sets and read versions in prompt order', () => {
    for (const geometry of [
      { kind: 'meanfield' },
      { kind: 'meanfield', sample: 5 },
      { kind: 'random-regular', k: 4 },
      { kind: 'star' },
    ] as GeometrySpec[]) {
      const run = events(geometry, perRun);
      const event = events(geometry, { ...perRun, neighbourOrder: undefined });
      expect(run.map((e) => e.agent)).toEqual(event.map((e) => e.agent));
      const sorted = (xs: Int32Array) => Array.from(xs).sort((x, y) => x - y);
      expect(run.map((e) => sorted(e.neighbours))).toEqual(event.map((e) => sorted(e.neighbours)));
      expect(run.map((e) => sorted(e.readVersions))).toEqual(event.map((e) => sorted(e.readVersions)));
      for (const e of run) {
        const live = event.find((x) => x.event === e.event)!;
        const version = new Map(Array.from(live.neighbours, (b, i) => [b, live.readVersions[i + 1]]));
        expect(Array.from(e.readVersions.subarray(1))).toEqual(Array.from(e.neighbours, (b) => version.get(b)));
      }
    }
  });

  it('a sampled mean field and random graphs list any two agents in one relative order throughout a run', () => {
    for (const geometry of [
      { kind: 'meanfield', sample: 5 },
      { kind: 'random-regular', k: 4 },
      { kind: 'small-world', k: 4, beta: 0.3 },
    ] as GeometrySpec[]) {
      expect(relativeOrderHolds(updates(geometry)), geometry.kind).toBe(true);
      expect(relativeOrderHolds(updates(geometry, { ...perRun, neighbourOrder: undefined })), geometry.kind).toBe(false);
    }
  });

  it('lattices and chains keep their direction', () => {
    for (const geometry of [{ kind: 'ring' }, { kind: 'torus2d' }, { kind: 'chain' }] as GeometrySpec[]) {
      expect(events(geometry, perRun).map((e) => Array.from(e.neighbours))).toEqual(
        events(geometry, { ...perRun, neighbourOrder: undefined }).map((e) => Array.from(e.neighbours)),
      );
    }
  });
});
