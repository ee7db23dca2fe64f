import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  buildGraph,
  checkSize,
  edgeListSize,
  edgesGraph,
  GeometryError,
  geometryLabel,
  geometrySchema,
  isUndirected,
  nominalDegree,
  parseEdgeList,
  samplePeers,
  validateEdges,
  type GeometrySpec,
  type Graph,
} from '../src/geometry/index.js';
import { rngFrom, type Rng } from '../src/rng.js';

const parse = (v: unknown): GeometrySpec => geometrySchema.parse(v);
const rng0 = () => rngFrom('geometry-test', 0);

function rows(g: Graph, rng: Rng = rng0()): number[][] {
  return Array.from({ length: g.n }, (_, i) => Array.from(g.neighbours(i, rng)));
}

function expectSymmetric(g: Graph): void {
  const adj = rows(g).map((r) => new Set(r));
  for (let i = 0; i < g.n; i++) {
    for (const j of adj[i]) {
      expect(adj[j].has(i), `${g.label}: ${j} in N(${i}) but ${i} not in N(${j})`).toBe(true);
    }
  }
}

function expectSimple(g: Graph): void {
  rows(g).forEach((r, i) => {
    expect(r.includes(i), `${g.label}: self-loop at ${i}`).toBe(false);
    expect(new Set(r).size, `${g.label}: repeated neighbour of ${i}`).toBe(r.length);
    for (const j of r) expect(j >= 0 && j < g.n).toBe(true);
  });
}

function expectAscending(g: Graph): void {
  rows(g).forEach((r) => expect(r).toEqual([...r].sort((a, b) => a - b)));
}

function errorOf(v: unknown): string {
  const r = geometrySchema.safeParse(v);
  expect(r.success, `expected ${JSON.stringify(v)} to be rejected`).toBe(false);
  return r.error!.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ` : '') + i.message).join('; ');
}

/** Pearson chi-square statistic of observed counts against a uniform expectation. */
function chiSquare(counts: number[]): number {
  const total = counts.reduce((a, b) => a + b, 0);
  const e = total / counts.length;
  return counts.reduce((s, c) => s + (c - e) ** 2 / e, 0);
}

describe('geometrySchema', () => {
  it('normalises every shorthand to an object', () => {
    for (const kind of ['ring', 'torus2d', 'torus3d', 'meanfield', 'chain', 'star']) {
      expect(parse(kind)).toEqual({ kind });
      expect(parse({ kind })).toEqual({ kind });
    }
  });

  it('accepts the parameterised objects', () => {
    expect(parse({ kind: 'meanfield', sample: 8 })).toEqual({ kind: 'meanfield', sample: 8 });
    expect(parse({ kind: 'random-regular', k: 3 })).toEqual({ kind: 'random-regular', k: 3 });
    expect(parse({ kind: 'small-world', k: 4, beta: 0.1 })).toEqual({ kind: 'small-world', k: 4, beta: 0.1 });
    expect(parse({ kind: 'edges', path: 'graphs/net.txt' })).toEqual({ kind: 'edges', path: 'graphs/net.txt' });
  });

  it('is idempotent: a normalised spec parses to itself', () => {
    for (const v of ['ring', { kind: 'meanfield', sample: 4 }, { kind: 'small-world', k: 6, beta: 1 }]) {
      const once = parse(v);
      expect(parse(once)).toEqual(once);
    }
  });

  it('rejects unknown keys (strict objects)', () => {
    expect(errorOf({ kind: 'ring', k: 2 })).toMatch(/Unrecognized key/);
    expect(errorOf({ kind: 'random-regular', k: 4, beta: 0.1 })).toMatch(/Unrecognized key.*beta/);
    expect(errorOf({ kind: 'meanfield', samples: 8 })).toMatch(/samples/);
  });

  it('rejects bad parameters with a focused message', () => {
    expect(errorOf({ kind: 'small-world', k: 3, beta: 0.1 })).toMatch(/^k: small-world k must be even/);
    expect(errorOf({ kind: 'small-world', k: 4, beta: 1.5 })).toMatch(/^beta: Too big/);
    expect(errorOf({ kind: 'small-world', k: 4 })).toMatch(/^beta: /);
    expect(errorOf({ kind: 'random-regular' })).toMatch(/^k: /);
    expect(errorOf({ kind: 'random-regular', k: 2.5 })).toMatch(/^k: /);
    expect(errorOf({ kind: 'meanfield', sample: 0 })).toMatch(/^sample: /);
    expect(errorOf({ kind: 'edges', path: '' })).toMatch(/^path: /);
    expect(errorOf({ kind: 'hypercube' })).toMatch(/^kind: /);
  });

  it('names the choices for an unknown or incomplete shorthand', () => {
    expect(errorOf('torus')).toMatch(/unknown geometry "torus": expected one of ring, torus2d, torus3d, meanfield/);
    expect(errorOf('random-regular')).toMatch(/needs parameters.*\{kind: random-regular, k: 4\}/);
    expect(errorOf('small-world')).toMatch(/needs parameters/);
    expect(errorOf(7)).toMatch(/a geometry is a name/);
    expect(errorOf(null)).toMatch(/a geometry is a name/);
  });

  it('has a JSON Schema for editor completion', () => {
    const schema = JSON.stringify(z.toJSONSchema(geometrySchema, { io: 'input' }));
    expect(schema).toContain('small-world');
    expect(schema).toContain('"torus2d"');
  });
});

describe('geometryLabel', () => {
  it('gives the short stable labels', () => {
    expect(geometryLabel(parse('ring'))).toBe('ring');
    expect(geometryLabel(parse('torus2d'))).toBe('torus2d');
    expect(geometryLabel(parse('torus3d'))).toBe('torus3d');
    expect(geometryLabel(parse('meanfield'))).toBe('meanfield');
    expect(geometryLabel(parse({ kind: 'meanfield', sample: 8 }))).toBe('meanfield-s8');
    expect(geometryLabel(parse('chain'))).toBe('chain');
    expect(geometryLabel(parse('star'))).toBe('star');
    expect(geometryLabel(parse({ kind: 'random-regular', k: 4 }))).toBe('random-regular-k4');
    expect(geometryLabel(parse({ kind: 'small-world', k: 4, beta: 0.1 }))).toBe('small-world-k4-b0.1');
    expect(geometryLabel(parse({ kind: 'small-world', k: 6, beta: 1 }))).toBe('small-world-k6-b1');
    expect(geometryLabel(parse({ kind: 'edges', path: 'graphs/karate.txt' }))).toBe('edges-karate');
  });

  it('makes file stems safe for run ids', () => {
    const label = geometryLabel({ kind: 'edges', path: 'C:\\data\\My Net: v2.edges.csv' });
    expect(label).toBe('edges-my-net-v2.edges');
    expect(label).not.toMatch(/[\sA-Z:]/);
  });
});

describe('checkSize', () => {
  const cases: [unknown, number, string | null][] = [
    ['torus2d', 10, 'N = 10 does not fit torus2d (N = L^2): nearest valid sizes are 9 and 16'],
    ['torus2d', 64, null],
    ['torus2d', 9, null],
    ['torus2d', 4, 'N = 4 does not fit torus2d (N = L^2, L >= 3): nearest valid size is 9'],
    ['torus3d', 64, null],
    ['torus3d', 729, null],
    ['torus3d', 100, 'N = 100 does not fit torus3d (N = L^3): nearest valid sizes are 64 and 125'],
    ['torus3d', 26, 'N = 26 does not fit torus3d (N = L^3, L >= 3): nearest valid size is 27'],
    ['ring', 2, 'N = 2 is too small for ring (N >= 3): nearest valid size is 3'],
    ['ring', 3, null],
    ['meanfield', 1, 'N = 1 is too small for meanfield (N >= 2): nearest valid size is 2'],
    ['meanfield', 2, null],
    [{ kind: 'meanfield', sample: 8 }, 8, 'N = 8 is too small for meanfield-s8 (sample k = 8 needs N >= k + 1): nearest valid size is 9'],
    [{ kind: 'meanfield', sample: 8 }, 9, null],
    ['chain', 1, 'N = 1 is too small for chain (N >= 2): nearest valid size is 2'],
    ['chain', 2, null],
    ['star', 2, 'N = 2 is too small for star (N >= 3): nearest valid size is 3'],
    ['star', 3, null],
    [
      { kind: 'random-regular', k: 3 },
      7,
      'N = 7 does not fit random-regular-k3 (N * k must be even, k = 3): nearest valid sizes are 6 and 8',
    ],
    [
      { kind: 'random-regular', k: 3 },
      5,
      'N = 5 does not fit random-regular-k3 (N * k must be even, k = 3): nearest valid sizes are 4 and 6',
    ],
    [{ kind: 'random-regular', k: 3 }, 3, 'N = 3 is too small for random-regular-k3 (N > k = 3 and N * k even): nearest valid size is 4'],
    [{ kind: 'random-regular', k: 4 }, 4, 'N = 4 is too small for random-regular-k4 (N > k = 4 and N * k even): nearest valid size is 5'],
    [{ kind: 'random-regular', k: 4 }, 5, null],
    [{ kind: 'random-regular', k: 3 }, 4, null],
    [{ kind: 'small-world', k: 4, beta: 0.1 }, 5, 'N = 5 is too small for small-world-k4-b0.1 (N > k + 1 = 5): nearest valid size is 6'],
    [{ kind: 'small-world', k: 4, beta: 0.1 }, 6, null],
    [{ kind: 'edges', path: 'x.txt' }, 1, 'N = 1 is too small for edges-x (N >= 2): nearest valid size is 2'],
    [{ kind: 'edges', path: 'x.txt' }, 2, null],
  ];
  it.each(cases)('%j at N = %i', (spec, n, expected) => {
    expect(checkSize(parse(spec), n)).toBe(expected);
  });

  it('rejects sizes that are not positive integers', () => {
    expect(checkSize(parse('ring'), 0)).toMatch(/positive integer/);
    expect(checkSize(parse('ring'), 6.5)).toMatch(/positive integer/);
  });

  it('checks exact powers at large sizes', () => {
    expect(checkSize(parse('torus3d'), 1000 ** 3)).toBeNull();
    expect(checkSize(parse('torus3d'), 1000 ** 3 + 1)).toMatch(/nearest valid sizes are 1000000000 and 1003003001/);
    expect(checkSize(parse('torus2d'), 46340 ** 2)).toBeNull();
  });

  it('buildGraph throws the same message', () => {
    expect(() => buildGraph(parse('torus2d'), 10, 1)).toThrow(GeometryError);
    expect(() => buildGraph(parse('torus2d'), 10, 1)).toThrow('nearest valid sizes are 9 and 16');
    expect(() => buildGraph(parse({ kind: 'random-regular', k: 3 }), 7, 1)).toThrow('nearest valid sizes are 6 and 8');
  });
});

describe('every geometry', () => {
  const specs: [unknown, number][] = [
    ['ring', 7],
    ['torus2d', 16],
    ['torus3d', 27],
    ['meanfield', 6],
    [{ kind: 'meanfield', sample: 3 }, 10],
    ['chain', 5],
    ['star', 6],
    [{ kind: 'random-regular', k: 3 }, 10],
    [{ kind: 'small-world', k: 4, beta: 0.3 }, 12],
  ];
  it.each(specs)('%j at N = %i: label, size, range, simplicity, nominal degree', (v, n) => {
    const spec = parse(v);
    const g = buildGraph(spec, n, 11);
    expect(g.label).toBe(geometryLabel(spec));
    expect(g.n).toBe(n);
    expect(g.k).toBe(nominalDegree(spec as Exclude<GeometrySpec, { kind: 'edges' }>, n));
    expect(g.annealed).toBe(spec.kind === 'meanfield' && spec.sample !== undefined);
    expectSimple(g);
    if (isUndirected(spec)) expectSymmetric(g);
    expect(() => g.neighbours(n, rng0())).toThrow(RangeError);
    expect(() => g.neighbours(-1, rng0())).toThrow(RangeError);
  });

  it('static graphs ignore the event stream and share one array per agent (events hold it, read-only)', () => {
    for (const [v, n] of specs) {
      const spec = parse(v);
      const g = buildGraph(spec, n, 11);
      if (g.annealed) continue;
      const used = rng0();
      const first = g.neighbours(1, used);
      expect(used.u32()).toBe(rng0().u32());
      expect(g.neighbours(1, used)).toBe(first);
      expect(g.neighbours(2, used)).not.toBe(first);
    }
  });
});

describe('ring', () => {
  it('reads [i - 1, i + 1] with wrap-around', () => {
    const g = buildGraph(parse('ring'), 5, 0);
    expect(g.k).toBe(2);
    expect(rows(g)).toEqual([
      [4, 1],
      [0, 2],
      [1, 3],
      [2, 4],
      [3, 0],
    ]);
  });
});

describe('torus2d', () => {
  it('reads [left, right, down, up] with wrap-around at the corners (L = 3)', () => {
    const g = buildGraph(parse('torus2d'), 9, 0);
    expect(g.k).toBe(4);
    expect(Array.from(g.neighbours(0, rng0()))).toEqual([2, 1, 6, 3]);
    expect(Array.from(g.neighbours(2, rng0()))).toEqual([1, 0, 8, 5]);
    expect(Array.from(g.neighbours(6, rng0()))).toEqual([8, 7, 3, 0]);
    expect(Array.from(g.neighbours(8, rng0()))).toEqual([7, 6, 5, 2]);
    expect(Array.from(g.neighbours(4, rng0()))).toEqual([3, 5, 1, 7]);
  });

  it('matches the coordinate formula everywhere (L = 8)', () => {
    const l = 8;
    const g = buildGraph(parse('torus2d'), l * l, 0);
    for (let y = 0; y < l; y++) {
      for (let x = 0; x < l; x++) {
        const at = (xx: number, yy: number) => ((xx + l) % l) + l * ((yy + l) % l);
        expect(Array.from(g.neighbours(at(x, y), rng0()))).toEqual([at(x - 1, y), at(x + 1, y), at(x, y - 1), at(x, y + 1)]);
      }
    }
  });
});

describe('torus3d', () => {
  it('reads [x-1, x+1, y-1, y+1, z-1, z+1] with wrap-around at the corners (L = 3)', () => {
    const g = buildGraph(parse('torus3d'), 27, 0);
    expect(g.k).toBe(6);
    expect(Array.from(g.neighbours(0, rng0()))).toEqual([2, 1, 6, 3, 18, 9]);
    expect(Array.from(g.neighbours(26, rng0()))).toEqual([25, 24, 23, 20, 17, 8]);
    expect(Array.from(g.neighbours(13, rng0()))).toEqual([12, 14, 10, 16, 4, 22]);
  });

  it('matches the coordinate formula everywhere (L = 4)', () => {
    const l = 4;
    const g = buildGraph(parse('torus3d'), l ** 3, 0);
    const at = (x: number, y: number, z: number) => ((x + l) % l) + l * ((y + l) % l) + l * l * ((z + l) % l);
    for (let z = 0; z < l; z++) {
      for (let y = 0; y < l; y++) {
        for (let x = 0; x < l; x++) {
          expect(Array.from(g.neighbours(at(x, y, z), rng0()))).toEqual([
            at(x - 1, y, z),
            at(x + 1, y, z),
            at(x, y - 1, z),
            at(x, y + 1, z),
            at(x, y, z - 1),
            at(x, y, z + 1),
          ]);
        }
      }
    }
  });
});

describe('meanfield', () => {
  it('reads all others ascending (k = N - 1)', () => {
    const g = buildGraph(parse('meanfield'), 5, 0);
    expect(g.k).toBe(4);
    expect(g.annealed).toBe(false);
    expect(rows(g)).toEqual([
      [1, 2, 3, 4],
      [0, 2, 3, 4],
      [0, 1, 3, 4],
      [0, 1, 2, 4],
      [0, 1, 2, 3],
    ]);
  });

  it('allocates nothing up front, so huge populations build at once', () => {
    const g = buildGraph(parse('meanfield'), 2_000_000_000, 0);
    expect(g.k).toBe(1_999_999_999);
    const big = buildGraph(parse('meanfield'), 100_000, 0);
    const r = big.neighbours(500, rng0());
    expect(r.length).toBe(99_999);
    expect(r[499]).toBe(499);
    expect(r[500]).toBe(501);
  });
});

describe('meanfield with sample', () => {
  const spec = parse({ kind: 'meanfield', sample: 3 });

  it('draws k distinct peers other than the agent', () => {
    const g = buildGraph(spec, 10, 0);
    expect(g.annealed).toBe(true);
    expect(g.k).toBe(3);
    const rng = rng0();
    for (let t = 0; t < 2000; t++) {
      const agent = t % 10;
      const r = Array.from(g.neighbours(agent, rng));
      expect(r.length).toBe(3);
      expect(new Set(r).size).toBe(3);
      expect(r).not.toContain(agent);
      for (const j of r) expect(j >= 0 && j < 10).toBe(true);
    }
  });

  it('is a pure function of the event stream and uses exactly k draws', () => {
    const g = buildGraph(spec, 50, 0);
    const a = rngFrom('event', 9);
    const b = rngFrom('event', 9);
    expect(Array.from(g.neighbours(7, a))).toEqual(Array.from(g.neighbours(7, b)));
    const c = rngFrom('event', 9);
    for (let i = 0; i < 3; i++) c.int(2);
    expect(a.u32()).toBe(c.u32());
    const other = Array.from({ length: 20 }, (_, s) => Array.from(g.neighbours(7, rngFrom('event', s))).join());
    expect(new Set(other).size).toBeGreaterThan(15);
  });

  it('takes all peers when k = N - 1, and N - 1 is the limit', () => {
    const g = buildGraph(parse({ kind: 'meanfield', sample: 4 }), 5, 0);
    const r = Array.from(g.neighbours(2, rng0())).sort();
    expect(r).toEqual([0, 1, 3, 4]);
    expect(() => buildGraph(parse({ kind: 'meanfield', sample: 5 }), 5, 0)).toThrow('nearest valid size is 6');
  });

  it('costs O(k), not O(N): samples from two billion agents', () => {
    const g = buildGraph(parse({ kind: 'meanfield', sample: 8 }), 2_000_000_000, 0);
    const rng = rng0();
    for (let t = 0; t < 1000; t++) {
      const r = Array.from(g.neighbours(1_999_999_999, rng));
      expect(new Set(r).size).toBe(8);
      expect(Math.max(...r)).toBeLessThan(1_999_999_999);
    }
  });

  it('is uniform over peers and over positions (chi-square, seeded)', () => {
    const n = 10;
    const agent = 4;
    const draws = 30_000;
    const g = buildGraph(spec, n, 0);
    const rng = rngFrom('uniformity', 1);
    const any = new Array<number>(n).fill(0);
    const byPosition = [0, 1, 2].map(() => new Array<number>(n).fill(0));
    for (let t = 0; t < draws; t++) {
      const r = g.neighbours(agent, rng);
      r.forEach((j, p) => {
        any[j]++;
        byPosition[p][j]++;
      });
    }
    expect(any[agent]).toBe(0);
    const peers = (c: number[]) => c.filter((_, j) => j !== agent);
    // 8 degrees of freedom: P(chi2 > 30) is about 2e-4.
    expect(chiSquare(peers(any))).toBeLessThan(30);
    for (const c of byPosition) expect(chiSquare(peers(c))).toBeLessThan(30);
  });

  it('the uniformity check has power: a slightly biased first peer fails it', () => {
    // Control for the test above: the same threshold and draw count reject a sampler whose first peer is
    // the smaller of two uniform draws one time in five.
    const n = 10;
    const agent = 4;
    const rng = rngFrom('uniformity', 2);
    const first = new Array<number>(n).fill(0);
    for (let t = 0; t < 30_000; t++) {
      const s = samplePeers(n, 3, agent, rng);
      const j = rng.int(5) === 0 ? Math.min(s[0], s[1]) : s[0];
      first[j]++;
    }
    expect(chiSquare(first.filter((_, j) => j !== agent))).toBeGreaterThan(30);
  });
});

describe('chain', () => {
  it('is a directed relay: i reads [i - 1], agent 0 reads nothing', () => {
    const g = buildGraph(parse('chain'), 4, 0);
    expect(g.k).toBe(1);
    expect(rows(g)).toEqual([[], [0], [1], [2]]);
    expect(isUndirected(parse('chain'))).toBe(false);
  });
});

describe('star', () => {
  it('hub 0 reads every leaf ascending, each leaf reads [0]', () => {
    const g = buildGraph(parse('star'), 5, 0);
    expect(g.k).toBe(4);
    expect(rows(g)).toEqual([[1, 2, 3, 4], [0], [0], [0], [0]]);
    expectSymmetric(g);
  });
});

describe('random-regular', () => {
  const sizes: [number, number][] = [
    [10, 3],
    [12, 4],
    [100, 5],
    [64, 8],
    [9, 8],
    [10, 8],
    [11, 6],
    [20, 2],
    [6, 1],
  ];
  it.each(sizes)('N = %i, k = %i is simple, k-regular, symmetric, ascending', (n, k) => {
    const g = buildGraph(parse({ kind: 'random-regular', k }), n, 3);
    expect(g.k).toBe(k);
    rows(g).forEach((r) => expect(r.length).toBe(k));
    expectSimple(g);
    expectSymmetric(g);
    expectAscending(g);
  });

  it('k = N - 1 is the complete graph', () => {
    const g = buildGraph(parse({ kind: 'random-regular', k: 5 }), 6, 3);
    expect(rows(g)[2]).toEqual([0, 1, 3, 4, 5]);
  });

  it('same seed gives the same graph, another seed another graph', () => {
    const spec = parse({ kind: 'random-regular', k: 4 });
    const a = rows(buildGraph(spec, 50, 1));
    expect(rows(buildGraph(spec, 50, 1))).toEqual(a);
    expect(rows(buildGraph(spec, 50, 2))).not.toEqual(a);
    const dense = parse({ kind: 'random-regular', k: 7 });
    expect(rows(buildGraph(dense, 10, 1))).toEqual(rows(buildGraph(dense, 10, 1)));
    expect(rows(buildGraph(dense, 10, 1))).not.toEqual(rows(buildGraph(dense, 10, 2)));
  });

  it('is not a fixed lattice: many distinct graphs over seeds', () => {
    const spec = parse({ kind: 'random-regular', k: 3 });
    const seen = new Set<string>();
    for (let s = 0; s < 30; s++) seen.add(JSON.stringify(rows(buildGraph(spec, 8, s))));
    expect(seen.size).toBeGreaterThan(10);
  });

  it('scales to a large population', () => {
    const g = buildGraph(parse({ kind: 'random-regular', k: 6 }), 20_000, 5);
    for (const i of [0, 1, 9_999, 19_999]) expect(g.neighbours(i, rng0()).length).toBe(6);
  });
});

describe('small-world', () => {
  const lattice = (n: number, k: number) =>
    Array.from({ length: n }, (_, i) => {
      const r: number[] = [];
      for (let j = 1; j <= k / 2; j++) r.push((i + j) % n, (i - j + n) % n);
      return r.sort((a, b) => a - b);
    });

  it('beta = 0 is the ring lattice with k / 2 neighbours on each side', () => {
    const g = buildGraph(parse({ kind: 'small-world', k: 4, beta: 0 }), 10, 1);
    expect(rows(g)).toEqual(lattice(10, 4));
    expect(g.k).toBe(4);
  });

  it.each([0.1, 0.5, 1])('beta = %f keeps a simple symmetric graph with N k / 2 edges', (beta) => {
    const n = 200;
    const k = 6;
    const g = buildGraph(parse({ kind: 'small-world', k, beta }), n, 4);
    expectSimple(g);
    expectSymmetric(g);
    expectAscending(g);
    const degrees = rows(g).map((r) => r.length);
    expect(degrees.reduce((a, b) => a + b, 0)).toBe(n * k);
    for (const d of degrees) expect(d).toBeGreaterThanOrEqual(k / 2);
  });

  it('rewires about a fraction beta of the lattice edges', () => {
    const n = 2000;
    const k = 4;
    const g = buildGraph(parse({ kind: 'small-world', k, beta: 0.1 }), n, 8);
    const base = lattice(n, k).map((r) => new Set(r));
    let kept = 0;
    rows(g).forEach((r, i) => r.forEach((j) => (kept += base[i].has(j) ? 1 : 0)));
    const rewired = (n * k - kept) / 2; // of n k / 2 = 4000 edges, about 400
    expect(rewired).toBeGreaterThan(320);
    expect(rewired).toBeLessThan(480);
  });

  it('same seed gives the same graph, another seed another graph', () => {
    const spec = parse({ kind: 'small-world', k: 4, beta: 0.2 });
    const a = rows(buildGraph(spec, 60, 1));
    expect(rows(buildGraph(spec, 60, 1))).toEqual(a);
    expect(rows(buildGraph(spec, 60, 2))).not.toEqual(a);
  });

  it('works at the smallest size N = k + 2 with full rewiring', () => {
    const g = buildGraph(parse({ kind: 'small-world', k: 4, beta: 1 }), 6, 9);
    expectSimple(g);
    expectSymmetric(g);
  });
});

describe('edges', () => {
  const spec = parse({ kind: 'edges', path: 'graphs/tri.txt' });

  it('parses an edge-list file: comments, blanks, commas and spaces', () => {
    const text = '# a triangle and a tail\n0 1\n1,2\n\n% also a comment\n2\t0\n3   2\n';
    expect(parseEdgeList(text)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
      [3, 2],
    ]);
  });

  it('names the file and line of a malformed row', () => {
    expect(() => parseEdgeList('0 1\n1 2 0.5\n', 'net.txt')).toThrow('net.txt:2: expected two 0-based agent indices');
    expect(() => parseEdgeList('0 1\n1 x\n', 'net.txt')).toThrow('net.txt:2: "x" is not a non-negative integer');
    expect(() => parseEdgeList('-1 2\n', 'net.txt')).toThrow('net.txt:1: "-1" is not a non-negative integer');
  });

  it('builds N = max index + 1 with neighbours ascending and k = max degree', () => {
    const edges: [number, number][] = [
      [3, 2],
      [0, 2],
      [1, 2],
      [0, 1],
    ];
    expect(edgeListSize(edges)).toBe(4);
    const g = buildGraph(spec, edgeListSize(edges), 0, edges);
    expect(g.label).toBe('edges-tri');
    expect(g.n).toBe(4);
    expect(g.k).toBe(3);
    expect(rows(g)).toEqual([[1, 2], [0, 2], [0, 1, 3], [2]]);
    expectSymmetric(g);
  });

  it('accepts a larger N (isolated agents read nothing) but not a smaller one', () => {
    const edges: [number, number][] = [[0, 1]];
    expect(rows(buildGraph(spec, 3, 0, edges))).toEqual([[1], [0], []]);
    expect(() => buildGraph(spec, 2, 0, [[0, 2]])).toThrow('N must be at least 3');
    expect(() => buildGraph(spec, 2, 0)).toThrow('needs the parsed edge list of graphs/tri.txt');
  });

  it('rejects self-loops, duplicates in either orientation, bad indices and empty lists', () => {
    expect(
      validateEdges([
        [0, 1],
        [1, 1],
      ]),
    ).toBe('edge #1 (1, 1) is a self-loop');
    expect(
      validateEdges([
        [0, 1],
        [1, 2],
        [1, 0],
      ]),
    ).toBe('edge #2 (1, 0) is a duplicate (edges are undirected)');
    expect(
      validateEdges([
        [0, 1],
        [0, 1],
      ]),
    ).toMatch(/duplicate/);
    expect(validateEdges([[0, 1.5]])).toMatch(/not a non-negative integer/);
    expect(validateEdges([[0, -1]])).toMatch(/not a non-negative integer/);
    expect(validateEdges([])).toBe('the edge list is empty');
    expect(validateEdges([[0, 5]], 3)).toMatch(/out of range for N = 3/);
    expect(
      validateEdges([
        [0, 1],
        [1, 2],
      ]),
    ).toBeNull();
    expect(() =>
      buildGraph(spec, 2, 0, [
        [0, 1],
        [1, 0],
      ]),
    ).toThrow('graphs/tri.txt: edge #1 (1, 0) is a duplicate');
    expect(() => edgesGraph([[2, 2]])).toThrow(GeometryError);
  });
});
