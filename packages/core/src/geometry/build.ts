import { mixSeed, rngFrom } from '../rng.js';
import { chainGraph, starGraph } from './directed.js';
import { edgeListSize, edgesGraph, type Edge } from './edges.js';
import { GeometryError, type Graph } from './graph.js';
import { ringGraph, torus2dGraph, torus3dGraph } from './lattice.js';
import { MeanFieldGraph, SampledMeanFieldGraph } from './meanfield.js';
import { randomRegularGraph, smallWorldGraph } from './random.js';
import { checkSize } from './size.js';
import { geometryLabel, type GeometrySpec } from './spec.js';

/**
 * Builds the interaction graph of `spec` over `n` agents. Seeded geometries (random-regular, small-world)
 * are a pure function of (label, n, seed). For `edges`, pass the parsed edge list; `n` must be at least the
 * largest index + 1 (use `edgeListSize(edges)`). Throws a GeometryError when n does not fit.
 */
export function buildGraph(spec: GeometrySpec, n: number, seed: number, edges?: Edge[]): Graph {
  const problem = checkSize(spec, n);
  if (problem) throw new GeometryError(problem);
  const label = geometryLabel(spec);
  switch (spec.kind) {
    case 'ring':
      return ringGraph(n, label);
    case 'torus2d':
      return torus2dGraph(n, label);
    case 'torus3d':
      return torus3dGraph(n, label);
    case 'meanfield':
      return spec.sample === undefined ? new MeanFieldGraph(n, label) : new SampledMeanFieldGraph(n, spec.sample, label);
    case 'chain':
      return chainGraph(n, label);
    case 'star':
      return starGraph(n, label);
    case 'random-regular':
      return randomRegularGraph(n, spec.k, graphRng(label, n, seed), label);
    case 'small-world':
      return smallWorldGraph(n, spec.k, spec.beta, graphRng(label, n, seed), label);
    case 'edges': {
      if (!edges) throw new GeometryError(`${label}: buildGraph needs the parsed edge list of ${spec.path}`);
      const size = edgeListSize(edges);
      if (n < size) {
        throw new GeometryError(`${label}: the edge list of ${spec.path} names agent ${size - 1}, so N must be at least ${size}, got ${n}`);
      }
      return edgesGraph(edges, { n, label, source: spec.path });
    }
  }
}

/**
 * Bytes of neighbour list an event's row holds of its own: none where rows are views of the graph's
 * adjacency (lattices and chains), 4 per neighbour where each event gets a fresh list (a sampled mean
 * field's draw; the shuffled order of a full mean field, a star or a random or given graph).
 */
export function ownNeighbourBytes(spec: GeometrySpec, _n: number, k: number): number {
  return LATTICE_ORDER.has(spec.kind) ? 0 : 4 * k;
}

/** Geometries whose neighbours keep the graph's order in prompts (see Graph.shuffled). */
const LATTICE_ORDER = new Set<GeometrySpec['kind']>(['ring', 'torus2d', 'torus3d', 'chain']);

/** Whether the schedule shuffles this geometry's neighbours per event (buildGraph(...).shuffled, without a graph). */
export function shufflesNeighbours(spec: GeometrySpec): boolean {
  return !LATTICE_ORDER.has(spec.kind) && !(spec.kind === 'meanfield' && spec.sample !== undefined);
}

/** The stream a seeded geometry draws from: independent across labels, sizes and seeds. */
function graphRng(label: string, n: number, seed: number) {
  return rngFrom(mixSeed('panta/geometry', label, n), seed);
}
