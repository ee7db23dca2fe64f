import type { Rng } from '../rng.js';
import { GeometryError, undirectedCsr, type CsrGraph } from './graph.js';

function shuffle(a: Int32Array, rng: Rng): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/**
 * One attempt of the Steger-Wormald pairing (as in networkx `random_regular_graph`): shuffle the open stubs,
 * pair them, keep every pair that is not a self-loop or a repeat, and retry the rest until none is left.
 * Returns the edges as keys u * n + v (u < v), or null when the open stubs cannot all be paired.
 */
function tryRegular(n: number, k: number, rng: Rng): Set<number> | null {
  const edges = new Set<number>();
  let stubs = new Int32Array(n * k);
  for (let s = 0; s < stubs.length; s++) stubs[s] = s % n;
  while (stubs.length > 0) {
    shuffle(stubs, rng);
    const open = new Map<number, number>(); // agent -> open stubs, in first-seen order
    for (let s = 0; s + 1 < stubs.length; s += 2) {
      let u = stubs[s];
      let v = stubs[s + 1];
      if (u > v) [u, v] = [v, u];
      const key = u * n + v;
      if (u !== v && !edges.has(key)) {
        edges.add(key);
      } else {
        open.set(u, (open.get(u) ?? 0) + 1);
        open.set(v, (open.get(v) ?? 0) + 1);
      }
    }
    if (!suitable(edges, open, n)) return null;
    let total = 0;
    for (const c of open.values()) total += c;
    stubs = new Int32Array(total);
    let at = 0;
    for (const [agent, c] of open) for (let r = 0; r < c; r++) stubs[at++] = agent;
  }
  return edges;
}

/** True if some pair of distinct agents with open stubs is not yet joined (so pairing can progress). */
function suitable(edges: Set<number>, open: Map<number, number>, n: number): boolean {
  if (open.size === 0) return true;
  const agents = [...open.keys()];
  for (let a = 0; a < agents.length; a++) {
    for (let b = 0; b < a; b++) {
      const u = Math.min(agents[a], agents[b]);
      const v = Math.max(agents[a], agents[b]);
      if (!edges.has(u * n + v)) return true;
    }
  }
  return false;
}

function regularEdges(n: number, k: number, rng: Rng, attempts: number): Set<number> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const edges = tryRegular(n, k, rng);
    if (edges) return edges;
  }
  throw new GeometryError(`random-regular: no simple ${k}-regular graph on N = ${n} found in ${attempts} attempts`);
}

/**
 * A uniform-ish random simple k-regular graph (no self-loops, no multi-edges), seeded; neighbours ascending.
 * Dense degrees (k > (N - 1) / 2) are built as the complement of a random (N - 1 - k)-regular graph, which
 * keeps the pairing fast. Needs k < N and N * k even.
 */
export function randomRegularGraph(n: number, k: number, rng: Rng, label = `random-regular-k${k}`): CsrGraph {
  if (!(Number.isInteger(k) && k >= 1 && k < n && (n * k) % 2 === 0)) {
    throw new GeometryError(`random-regular: k = ${k} on N = ${n} needs 1 <= k < N and N * k even`);
  }
  if (n * n > Number.MAX_SAFE_INTEGER) throw new GeometryError(`random-regular: N = ${n} is too large`);
  const complement = k > (n - 1) / 2;
  const d = complement ? n - 1 - k : k;
  const edges = d === 0 ? new Set<number>() : regularEdges(n, d, rng, 1000);
  const m = complement ? (n * k) / 2 : edges.size;
  const us = new Int32Array(m);
  const vs = new Int32Array(m);
  let e = 0;
  if (complement) {
    for (let u = 0; u < n; u++) {
      for (let v = u + 1; v < n; v++) {
        if (!edges.has(u * n + v)) {
          us[e] = u;
          vs[e++] = v;
        }
      }
    }
  } else {
    for (const key of edges) {
      us[e] = Math.floor(key / n);
      vs[e++] = key % n;
    }
  }
  return undirectedCsr(label, n, us, vs, k);
}

/**
 * Watts-Strogatz small world, seeded: a ring lattice where each agent is joined to k / 2 agents on each
 * side, then each lattice edge (i, i + j) is rewired with probability beta to (i, w), w uniform among agents
 * that are neither i nor already joined to i (as in networkx `watts_strogatz_graph`: for j = 1..k/2, for
 * i = 0..N-1; an agent already joined to everyone keeps its edge). Simple graph; neighbours ascending.
 * Needs k even and N > k + 1.
 */
export function smallWorldGraph(n: number, k: number, beta: number, rng: Rng, label = `small-world-k${k}-b${beta}`): CsrGraph {
  if (!(Number.isInteger(k) && k >= 2 && k % 2 === 0 && n > k + 1)) {
    throw new GeometryError(`small-world: k = ${k} on N = ${n} needs k even, k >= 2 and N > k + 1`);
  }
  if (!(beta >= 0 && beta <= 1)) throw new GeometryError(`small-world: beta = ${beta} must be in [0, 1]`);
  const half = k / 2;
  const adj: Set<number>[] = Array.from({ length: n }, () => new Set<number>());
  for (let i = 0; i < n; i++) {
    for (let j = 1; j <= half; j++) {
      const v = (i + j) % n;
      adj[i].add(v);
      adj[v].add(i);
    }
  }
  for (let j = 1; j <= half; j++) {
    for (let u = 0; u < n; u++) {
      if (rng.next() >= beta) continue;
      const v = (u + j) % n;
      const mine = adj[u];
      if (mine.size >= n - 1) continue; // joined to everyone: nowhere to rewire to
      if (!mine.has(v)) continue; // this lattice edge was already rewired away from v's side
      let w = rng.int(n);
      while (w === u || mine.has(w)) w = rng.int(n);
      mine.delete(v);
      adj[v].delete(u);
      mine.add(w);
      adj[w].add(u);
    }
  }
  let m = 0;
  for (let u = 0; u < n; u++) for (const v of adj[u]) if (u < v) m++;
  const us = new Int32Array(m);
  const vs = new Int32Array(m);
  let e = 0;
  for (let u = 0; u < n; u++) {
    for (const v of adj[u]) {
      if (u < v) {
        us[e] = u;
        vs[e++] = v;
      }
    }
  }
  return undirectedCsr(label, n, us, vs, k);
}
