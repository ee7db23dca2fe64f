import { describe, expect, it } from 'vitest';
import { DataflowPlanner, Schedule, buildGraph, criticalPath, rngFrom, type EventPlan } from '../src/index.js';

const run = (
  n: number,
  over: Partial<{ sweeps: number; seed: number; dynamics: 'asynchronous' | 'synchronous'; protocol: 'glauber' | 'isolated' }> = {},
) => ({
  n,
  sweeps: over.sweeps ?? 3,
  seed: over.seed ?? 11,
  dynamics: over.dynamics ?? 'asynchronous',
  protocol: over.protocol ?? 'glauber',
});

/** The strictly sequential process, written independently of Schedule: live answers as a plain array. */
function sequentialReads(n: number, seed: number, sweeps: number, graph = buildGraph({ kind: 'ring' }, n, 0)) {
  const picks = rngFrom(seed, 'picks');
  const writer = Array.from({ length: n }, (_, i) => i);
  const out: { agent: number; reads: number[] }[] = [];
  for (let j = n; j < (sweeps + 1) * n; j++) {
    const a = picks.int(n);
    const nb = Array.from(graph.neighbours(a, picks));
    out.push({ agent: a, reads: [writer[a], ...nb.map((b) => writer[b])] });
    writer[a] = j;
  }
  return out;
}

describe('schedule', () => {
  it('starts with the N initial answers, reading nothing', () => {
    const s = new Schedule(run(8), buildGraph({ kind: 'ring' }, 8, 0));
    for (let i = 0; i < 8; i++) {
      const e = s.next()!;
      expect([e.event, e.sweep, e.agent, e.neighbours.length, e.readVersions.length]).toEqual([i, 0, i, 0, 0]);
    }
    expect(s.next()!.sweep).toBe(1);
  });

  it('reads, for each agent it sees, the latest earlier write (the sequential process)', () => {
    const n = 16;
    const s = new Schedule(run(n, { sweeps: 5 }), buildGraph({ kind: 'ring' }, n, 0));
    s.skip(n);
    const expected = sequentialReads(n, 11, 5);
    for (const want of expected) {
      const e = s.next()!;
      expect(e.agent).toBe(want.agent);
      expect(Array.from(e.readVersions)).toEqual(want.reads);
    }
    expect(s.next()).toBeNull();
  });

  it('picks with replacement: some agents update twice in a sweep, some not at all', () => {
    const n = 200;
    const s = new Schedule(run(n, { sweeps: 1 }), buildGraph({ kind: 'ring' }, n, 0));
    s.skip(n);
    const counts = new Array(n).fill(0);
    for (let e = s.next(); e; e = s.next()) counts[e.agent]++;
    expect(counts.filter((c) => c === 0).length).toBeGreaterThan(40); // about N/e
    expect(Math.max(...counts)).toBeGreaterThan(1);
  });

  it('is a pure function of the run seed', () => {
    const agents = (seed: number) => {
      const s = new Schedule(run(32, { seed }), buildGraph({ kind: 'ring' }, 32, 0));
      const out: number[] = [];
      for (let e = s.next(); e; e = s.next()) out.push(e.agent, e.seed);
      return out;
    };
    expect(agents(5)).toEqual(agents(5));
    expect(agents(5)).not.toEqual(agents(6));
  });

  it('synchronous dynamics read the previous sweep snapshot', () => {
    const n = 9;
    const s = new Schedule(run(n, { dynamics: 'synchronous' }), buildGraph({ kind: 'torus2d' }, n, 0));
    s.skip(2 * n);
    const e = s.next()!; // sweep 2, agent 0
    expect(e.sweep).toBe(2);
    expect(e.agent).toBe(0);
    expect(Array.from(e.readVersions)).toEqual([n + 0, ...Array.from(e.neighbours, (b) => n + b)]);
  });

  it('isolated agents read only their own previous answer', () => {
    const s = new Schedule(run(8, { protocol: 'isolated' }), buildGraph({ kind: 'ring' }, 8, 0));
    s.skip(8);
    const e = s.next()!;
    expect(e.neighbours.length).toBe(0);
    expect(e.readVersions.length).toBe(1);
  });

  it('critical path: mean field is sequential after t = 0, a ring is not', () => {
    const mf = criticalPath(new Schedule(run(50), buildGraph({ kind: 'meanfield' }, 50, 0)));
    expect(mf.criticalPath).toBe(1 + 3 * 50);
    const ring = criticalPath(new Schedule(run(2000), buildGraph({ kind: 'ring' }, 2000, 0)));
    expect(ring.events / ring.criticalPath).toBeGreaterThan(50);
  });
});

describe('dataflow planner', () => {
  /** Executes a run in a random valid order and checks every event was ready only after its reads. */
  function shuffledExecution(window: number, seed: number, startEvent = 0) {
    const n = 24;
    const graph = buildGraph({ kind: 'torus2d' }, 25, 0);
    const planner = new DataflowPlanner(new Schedule(run(25, { sweeps: 4 }), graph), window, startEvent);
    const rng = rngFrom(seed);
    const written = new Set<number>(Array.from({ length: startEvent }, (_, i) => i));
    const live = new Set<number>(startEvent > 0 ? Array.from(planner.liveVersions()).filter((v) => v >= 0) : []);
    const inflight: EventPlan[] = [];
    const order: number[] = [];
    let maxLive = 0;
    while (!planner.done) {
      inflight.push(...planner.take(1 + rng.int(4)));
      expect(inflight.length).toBeGreaterThan(0);
      const [e] = inflight.splice(rng.int(inflight.length), 1);
      for (const v of e!.readVersions) {
        expect(written.has(v)).toBe(true);
        expect(live.has(v)).toBe(true); // never released while a reader is pending
      }
      written.add(e!.event);
      live.add(e!.event);
      order.push(e!.event);
      for (const dead of planner.complete(e!.event)) live.delete(dead);
      maxLive = Math.max(maxLive, live.size);
    }
    void n;
    return { order, maxLive };
  }

  it('runs every event once, only after the versions it reads, in many orders', () => {
    for (let seed = 0; seed < 20; seed++) {
      const { order } = shuffledExecution(64, seed);
      expect(new Set(order).size).toBe(125);
    }
  });

  it('keeps live versions bounded by the window, not by the run length', () => {
    const { maxLive } = shuffledExecution(16, 3);
    expect(maxLive).toBeLessThanOrEqual(25 + 16 + 1);
  });

  it('resumes after a prefix of written events', () => {
    const { order } = shuffledExecution(32, 1, 40);
    expect(order.length).toBe(125 - 40);
    expect(Math.min(...order)).toBe(40);
  });

  it('resumes inside the initial answers without releasing a live version (regression)', () => {
    for (let seed = 0; seed < 10; seed++) {
      const { order } = shuffledExecution(32, seed, 10);
      expect(order.length).toBe(125 - 10);
    }
  });

  it('plans incrementally: a first step, more with planAhead or when nothing is ready, never past the window', () => {
    const ring = () => new Schedule(run(2000, { sweeps: 4 }), buildGraph({ kind: 'ring' }, 2000, 0));
    const planner = new DataflowPlanner(ring(), 16384);
    expect(planner.readyCount).toBe(1024); // the first step: initial answers, all ready
    expect(planner.behind).toBe(true);
    planner.planAhead(4000);
    expect(planner.readyCount).toBe(2000); // every initial answer; later events wait on them
    planner.planAhead(Number.POSITIVE_INFINITY);
    expect(planner.behind).toBe(false);

    const narrow = new DataflowPlanner(ring(), 64);
    narrow.planAhead(Number.POSITIVE_INFINITY);
    expect(narrow.readyCount).toBe(64);
    expect(narrow.behind).toBe(false);
    // Taking plans on demand: with nothing ready and the window not planned, takeOne plans until one is.
    const lazy = new DataflowPlanner(ring(), 16384);
    expect(lazy.take(3000).length).toBe(2000);
    expect(lazy.readyCount).toBe(0);
  });

  it('refuses an event completed twice', () => {
    const planner = new DataflowPlanner(new Schedule(run(4), buildGraph({ kind: 'ring' }, 4, 0)), 8);
    const [e] = planner.take(1);
    planner.complete(e!.event);
    expect(() => planner.complete(e!.event)).toThrow(/twice/);
  });
});

describe('synchronous dynamics in the planner', () => {
  /**
   * Runs a planner the way the executor does, at `concurrency` calls in flight completing in a seeded random
   * order, with a version store that deletes what `complete` releases: every read must find its version.
   */
  function execute(
    run: { n: number; sweeps: number; seed: number; dynamics: 'synchronous' | 'asynchronous'; protocol: 'glauber' },
    concurrency: number,
    window: number,
    startEvent: number,
  ): number {
    const schedule = new Schedule(run, buildGraph({ kind: 'ring' }, run.n, 0));
    const planner = new DataflowPlanner(schedule, window, startEvent);
    const store = new Set<number>(Array.from(planner.liveVersions()).filter((v) => v >= 0));
    const rng = rngFrom(run.seed, 'order', 0);
    const flight: EventPlan[] = [];
    let executed = 0;
    while (!planner.done) {
      for (let e = planner.takeOne(); e; e = flight.length + 1 < concurrency ? planner.takeOne() : undefined) {
        for (const v of e.readVersions) if (!store.has(v)) throw new Error(`event ${e.event} reads version ${v}, which is not published`);
        flight.push(e);
      }
      if (flight.length === 0) throw new Error('nothing ready and nothing in flight');
      const [e] = flight.splice(rng.int(flight.length), 1);
      store.add(e!.event);
      for (const dead of planner.complete(e!.event)) store.delete(dead);
      planner.consumed(e!.event);
      executed++;
    }
    // At most two snapshots are alive at once: the previous sweep's and this one's.
    expect(store.size).toBeLessThanOrEqual(2 * run.n);
    return executed;
  }

  it('a version superseded in sweep t stays published until every event of sweep t has read it, at any concurrency and window', () => {
    const run = { n: 16, sweeps: 4, seed: 5, dynamics: 'synchronous' as const, protocol: 'glauber' as const };
    for (const concurrency of [1, 3, 16, 64]) for (const window of [16, 40, 1000]) expect(execute(run, concurrency, window, 0)).toBe(80);
  });

  it('a synchronous run resumed mid-sweep loads the previous snapshot of the agents already updated in this sweep', () => {
    const run = { n: 16, sweeps: 4, seed: 6, dynamics: 'synchronous' as const, protocol: 'glauber' as const };
    for (const start of [16, 21, 40, 63]) for (const concurrency of [1, 8]) expect(execute(run, concurrency, 64, start)).toBe(80 - start);
  });
});
