import { describe, expect, it } from 'vitest';
import {
  DataflowPlanner,
  Schedule,
  applyEntries,
  assignPopulation,
  boundaryGate,
  buildGraph,
  decodeBoardVersion,
  divergence,
  encodeBoardVersion,
  foldLive,
  isDrift,
  measureControl,
  nextControl,
  medoid,
  parseBoardReply,
  renderEntries,
  shouldStop,
  temperatureAt,
  type SweepControl,
} from '../src/index.js';

describe('annealing', () => {
  it('goes from the run temperature at sweep 1 to `to` at the last sweep, linearly or geometrically', () => {
    const linear = { to: 0.1, shape: 'linear' as const };
    expect([0, 1, 2, 3, 4, 5].map((t) => temperatureAt(1.1, t, 5, linear))).toEqual(
      [1.1, 1.1, 0.85, 0.6, 0.35, 0.1].map((x) => expect.closeTo(x, 12)),
    );
    const geometric = { to: 0.1, shape: 'geometric' as const };
    expect(temperatureAt(1.6, 3, 5, geometric)).toBeCloseTo(1.6 * (0.1 / 1.6) ** 0.5, 12);
    expect(temperatureAt(0.7, 4, 10, undefined)).toBe(0.7);
  });
});

describe('population assignment', () => {
  const entries = [
    { id: 'a', persona: 'A' },
    { id: 'b', belief: '97' },
    { id: 'c', persona: 'C' },
  ];
  it('same gives everyone the first entry; distinct deals all entries evenly; fraction reaches round(f N) agents', () => {
    expect([...assignPopulation({ entries, assign: 'same', fraction: 0 }, 5, 1)]).toEqual([0, 0, 0, 0, 0]);
    const distinct = assignPopulation({ entries, assign: 'distinct', fraction: 0 }, 30, 7);
    expect([0, 1, 2].map((i) => distinct.filter((x) => x === i).length)).toEqual([10, 10, 10]);
    const fraction = assignPopulation({ entries, assign: 'fraction', fraction: 0.2 }, 64, 7);
    expect(fraction.filter((x) => x >= 0).length).toBe(13);
    // A pure function of the run seed: another seed picks other agents.
    expect([...assignPopulation({ entries, assign: 'fraction', fraction: 0.2 }, 64, 7)]).toEqual([...fraction]);
    expect([...assignPopulation({ entries, assign: 'fraction', fraction: 0.2 }, 64, 8)]).not.toEqual([...fraction]);
  });
});

describe('belief board', () => {
  it('reads JSON replies, gives entries ids, and a later entry on the same object revises the earlier one', () => {
    const reply = parseBoardReply(
      'Sure! {"answer": "She was 96.", "entries": [{"object": "age", "claim": "96", "confidence": 0.9}, {"object": "year", "claim": "2022", "confidence": 2}]}',
    );
    expect(reply.answer).toBe('She was 96.');
    expect(reply.entries[1].confidence).toBe(1);
    const first = applyEntries([], 40, reply.entries);
    expect(first.written.map((e) => [e.id, e.revises])).toEqual([
      ['e40.0', null],
      ['e40.1', null],
    ]);
    const second = applyEntries(first.live, 90, [{ object: 'Age', claim: '97', confidence: 0.5 }]);
    expect(second.written[0]).toMatchObject({ id: 'e90.0', revises: 'e40.0' });
    expect(second.live.map((e) => e.id)).toEqual(['e40.1', 'e90.0']);
    // The corpus keeps written entries only; folding them gives back the live board.
    expect(foldLive(first.live, second.written)).toEqual(second.live);
    expect(renderEntries(second.live)).toBe('[e40.1] year: 2022 (confidence 1); [e90.0 revises e40.0] Age: 97 (confidence 0.5)');
    expect(decodeBoardVersion(encodeBoardVersion({ answer: 'x', entries: second.live }))).toEqual({ answer: 'x', entries: second.live });
    expect(parseBoardReply('not json at all')).toEqual({ answer: 'not json at all', entries: [] });
  });
});

describe('ssvp divergence and drift-policy majority', () => {
  it('divergence is the cosine distance to the neighbourhood mean; the medoid is the answer nearest the mean', () => {
    expect(
      divergence(
        [1, 0],
        [
          [1, 0],
          [1, 0],
        ],
      ),
    ).toBeCloseTo(0, 12);
    expect(
      divergence(
        [1, 0],
        [
          [0, 1],
          [0, 1],
        ],
      ),
    ).toBeCloseTo(1, 12);
    expect(
      divergence(
        [1, 0],
        [
          [1, 0],
          [0, 1],
        ],
      ),
    ).toBeCloseTo(1 - Math.SQRT1_2, 12);
    expect(divergence([1, 0], [])).toBe(0);
    expect(
      medoid(
        ['a', 'b', 'c'],
        [
          [1, 0],
          [0.8, 0.6],
          [0, 1],
        ],
      ),
    ).toBe('b');
    expect(isDrift('DRIFT: it changed')).toBe(true);
    expect(isDrift('  "Drift" - yes')).toBe(true);
    expect(isDrift('STABLE')).toBe(false);
    expect(isDrift('No drift')).toBe(false);
  });
});

describe('early stopping rule', () => {
  const rule = { window: 2, tolerance: 0.04, rho_tolerance: 0.03, min_sweeps: 2 };
  const h = (...xs: [number, number | null][]): SweepControl[] => xs.map(([m, rho]) => ({ m, rho }));
  it('stops once both quantities stayed within their tolerances over the window, never before min_sweeps', () => {
    expect(shouldStop(h([0.5, 0.2], [0.5, 0.2]), rule)).toBe(false); // t = 1 < 2
    expect(shouldStop(h([0.1, 0.5], [0.5, 0.2], [0.51, 0.21], [0.52, 0.22]), rule)).toBe(true);
    expect(shouldStop(h([0.1, 0.5], [0.5, 0.2], [0.51, 0.21], [0.55, 0.22]), rule)).toBe(false); // m moved 0.05
    expect(shouldStop(h([0.1, 0.5], [0.5, 0.2], [0.51, 0.21], [0.52, 0.24]), rule)).toBe(false); // rho moved 0.04 over 2
    expect(shouldStop(h([0.5, null], [0.5, null], [0.5, null]), rule)).toBe(true);
    expect(shouldStop(h([0.5, null], [0.5, 0.2], [0.5, null]), rule)).toBe(false);
  });
  it('a unanimous t = 0 snapshot is centred on the origin (m = 1), as the whitening falls back to raw; a varied one on its mean', () => {
    const same = [
      [0.6, 0.8],
      [0.6, 0.8],
      [0.6, 0.8],
    ];
    const state = nextControl(undefined, 0, same, ['not_known', 'not_known', 'not_known'], undefined, 4);
    expect(state.mean0).toEqual([0, 0]);
    expect(state.history[0].m).toBeCloseTo(1, 12);
    expect(state.history[0].rho).toBeNull();
    const varied = nextControl(
      undefined,
      0,
      [
        [1, 0],
        [0, 1],
      ],
      ['correct', 'correct'],
      undefined,
      4,
    );
    expect(varied.mean0).toEqual([0.5, 0.5]);
    expect(varied.history[0].m).toBeCloseTo(0, 12);
  });
  it('measures the centred magnetisation and rho of a snapshot', () => {
    const c = measureControl(
      [
        [1, 0],
        [1, 0],
        [0, 1],
      ],
      ['correct', 'hallucinated', 'not_known'],
      [0, 0],
    );
    expect(c.m).toBeCloseTo(Math.hypot(2, 1) / 3, 12);
    expect(c.rho).toBe(0.5);
  });
});

describe('sweep boundaries in the planner', () => {
  it('holds every event from the gate on until it moves, and ends a run at the gate', () => {
    const run = { n: 8, sweeps: 4, seed: 3, dynamics: 'asynchronous' as const, protocol: 'glauber' as const };
    const planner = new DataflowPlanner(new Schedule(run, buildGraph({ kind: 'ring' }, 8, 0)), 1000, 0, boundaryGate(run, -1, false));
    const done: number[] = [];
    const drain = () => {
      for (let plans = planner.take(100); plans.length > 0; plans = planner.take(100))
        for (const p of plans) {
          planner.complete(p.event);
          done.push(p.event);
        }
    };
    drain();
    expect(done).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(planner.atGate).toBe(true);
    planner.setGate(boundaryGate(run, 0, false));
    drain();
    expect(done.length).toBe(16);
    expect(Math.max(...done)).toBe(15);
    planner.setGate(boundaryGate(run, 1, true));
    planner.endAtGate();
    expect(planner.done).toBe(true);
    expect(planner.total).toBe(16);
    expect(boundaryGate(run, 3, false)).toBe(Number.POSITIVE_INFINITY);
  });
});
