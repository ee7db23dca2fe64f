import type { Rng } from '../rng.js';

/**
 * An interaction graph over agents 0..n-1. `neighbours` returns an array in the graph's order. Callers must
 * not modify it: static graphs hand out one shared array per agent, since every event's plan (and row) holds
 * its neighbours until the row is written.
 */
export interface Graph {
  readonly label: string;
  readonly n: number;
  /** nominal degree */
  readonly k: number;
  /** True when each update draws its neighbours anew (meanfield with `sample`). */
  readonly annealed: boolean;
  /**
   * True when the graph's order is agent order, which means nothing and would put the same agents first in
   * every prompt (a position bias): the schedule then lists them in a fresh seeded order per event. False
   * for lattices, whose order is one direction for every agent (translation-invariant, no agent favoured),
   * for a chain's single predecessor, and for a sampled mean field, already in random draw order.
   */
  readonly shuffled: boolean;
  /**
   * The agents `agent` reads, in prompt order. `rng` is the event's own stream: only annealed graphs draw
   * from it (exactly `k` calls to `rng.int`); static graphs ignore it.
   */
  neighbours(agent: number, rng: Rng): Int32Array;
}

/** A geometry that does not fit, or an edge list that is not a simple graph. */
export class GeometryError extends Error {
  override name = 'GeometryError';
}

/** Populations up to this size keep their neighbour arrays (shared by every event of an agent). */
export const MAX_CACHED_ROWS = 1 << 16;

/** Largest population an Int32Array index can address. */
export const MAX_AGENTS = 0x7fffffff;

export function checkAgent(agent: number, n: number): void {
  if (!Number.isInteger(agent) || agent < 0 || agent >= n) {
    throw new RangeError(`agent ${agent} is out of range for a population of N = ${n}`);
  }
}

/** A static graph stored as compressed sparse rows: the neighbours of i are targets[offsets[i]..offsets[i+1]). */
export class CsrGraph implements Graph {
  readonly annealed = false;

  constructor(
    readonly label: string,
    readonly n: number,
    readonly k: number,
    private readonly offsets: Int32Array,
    private readonly targets: Int32Array,
    readonly shuffled = true,
  ) {
    if (offsets.length !== n + 1) throw new Error(`CsrGraph: offsets must have n + 1 = ${n + 1} entries`);
    if (offsets[n] !== targets.length) throw new Error('CsrGraph: offsets[n] must equal targets.length');
    this.views = n <= MAX_CACHED_ROWS ? new Array<Int32Array | undefined>(n) : undefined;
  }

  /** One view per agent, made on first use (a view is an object: not kept for very large populations). */
  private readonly views: (Int32Array | undefined)[] | undefined;

  neighbours(agent: number, _rng?: Rng): Int32Array {
    checkAgent(agent, this.n);
    const views = this.views;
    if (!views) return this.targets.subarray(this.offsets[agent], this.offsets[agent + 1]);
    return (views[agent] ??= this.targets.subarray(this.offsets[agent], this.offsets[agent + 1]));
  }

  degree(agent: number): number {
    checkAgent(agent, this.n);
    return this.offsets[agent + 1] - this.offsets[agent];
  }

  /** Number of stored (directed) adjacency entries: twice the edge count for undirected graphs. */
  get entries(): number {
    return this.targets.length;
  }
}

/** Builds a lattice: exactly `k` neighbours per agent, computed by `row(i, out)` in prompt order (not shuffled). */
export function regularCsr(label: string, n: number, k: number, row: (i: number, out: Int32Array) => void): CsrGraph {
  const offsets = new Int32Array(n + 1);
  const targets = new Int32Array(n * k);
  const out = new Int32Array(k);
  for (let i = 0; i < n; i++) {
    row(i, out);
    targets.set(out, i * k);
    offsets[i + 1] = (i + 1) * k;
  }
  return new CsrGraph(label, n, k, offsets, targets, false);
}

/**
 * Builds an undirected graph from edge endpoints (u[e], v[e]); each edge appears in both rows and every row
 * is sorted ascending. The caller guarantees a simple graph. `k` defaults to the maximum degree.
 */
export function undirectedCsr(label: string, n: number, us: ArrayLike<number>, vs: ArrayLike<number>, k?: number): CsrGraph {
  const m = us.length;
  const offsets = new Int32Array(n + 1);
  for (let e = 0; e < m; e++) {
    offsets[us[e] + 1]++;
    offsets[vs[e] + 1]++;
  }
  let maxDegree = 0;
  for (let i = 0; i < n; i++) {
    maxDegree = Math.max(maxDegree, offsets[i + 1]);
    offsets[i + 1] = offsets[i + 1] + offsets[i];
  }
  const targets = new Int32Array(2 * m);
  const fill = offsets.slice(0, n);
  for (let e = 0; e < m; e++) {
    const u = us[e];
    const v = vs[e];
    targets[fill[u]++] = v;
    targets[fill[v]++] = u;
  }
  for (let i = 0; i < n; i++) targets.subarray(offsets[i], offsets[i + 1]).sort();
  return new CsrGraph(label, n, k ?? maxDegree, offsets, targets);
}
