import { GeometryError, MAX_AGENTS, undirectedCsr, type CsrGraph } from './graph.js';

/** An undirected edge between two 0-based agent indices. */
export type Edge = [number, number];

/**
 * Parses the text of an edge-list file: one edge per line as two 0-based agent indices separated by
 * whitespace or a comma; blank lines and lines starting with `#` or `%` are skipped. Throws a
 * GeometryError naming the file and line. Simplicity (no self-loops, no duplicates) is checked by
 * `validateEdges` / `edgesGraph`.
 */
export function parseEdgeList(text: string, file = 'edges file'): Edge[] {
  return parseEdgeFile(text, file).edges;
}

/** parseEdgeList, with the 1-based line of each edge (to name the line of a problem found later). */
export function parseEdgeFile(text: string, file = 'edges file'): { edges: Edge[]; lines: number[] } {
  const edges: Edge[] = [];
  const lines: number[] = [];
  const rows = text.split(/\r?\n/);
  for (let ln = 0; ln < rows.length; ln++) {
    const line = rows[ln].trim();
    if (line === '' || line.startsWith('#') || line.startsWith('%')) continue;
    const cols = line.split(/[\s,]+/);
    const where = `${file}:${ln + 1}`;
    if (cols.length !== 2) {
      throw new GeometryError(
        `${where}: expected two 0-based agent indices "i j", got "${line.length > 60 ? `${line.slice(0, 57)}...` : line}"`,
      );
    }
    const pair = cols.map((c) => {
      if (!/^\d+$/.test(c))
        throw new GeometryError(`${where}: "${c.length > 30 ? `${c.slice(0, 27)}...` : c}" is not a non-negative integer agent index`);
      return Number(c);
    });
    edges.push([pair[0], pair[1]]);
    lines.push(ln + 1);
  }
  return { edges, lines };
}

/** Population size implied by an edge list: the largest index + 1. */
export function edgeListSize(edges: readonly Edge[]): number {
  let max = -1;
  for (const [u, v] of edges) max = Math.max(max, u, v);
  return max + 1;
}

/**
 * Checks that an edge list describes a simple undirected graph on agents 0..n-1 (n defaults to the largest
 * index + 1): integer indices in range, no self-loops, no duplicate edges in either orientation, at least
 * one edge. Returns null, or a one-line message naming the offending edge (0-based position in the list).
 */
export function validateEdges(edges: readonly Edge[], n?: number): string | null {
  if (!Array.isArray(edges) || edges.length === 0) return 'the edge list is empty';
  const size = n ?? edgeListSize(edges);
  const seen = new Set<number | string>();
  const numericKeys = size * size <= Number.MAX_SAFE_INTEGER;
  for (let e = 0; e < edges.length; e++) {
    const pair = edges[e];
    if (!Array.isArray(pair) || pair.length !== 2) return `edge #${e} is not a pair [i, j]`;
    const [u, v] = pair;
    for (const x of [u, v]) {
      if (!Number.isInteger(x) || x < 0) return `edge #${e} (${u}, ${v}): ${x} is not a non-negative integer index`;
      if (x >= MAX_AGENTS) return `edge #${e} (${u}, ${v}): index ${x} is too large`;
      if (x >= size) return `edge #${e} (${u}, ${v}): index ${x} is out of range for N = ${size}`;
    }
    if (u === v) return `edge #${e} (${u}, ${v}) is a self-loop`;
    const lo = Math.min(u, v);
    const hi = Math.max(u, v);
    const key = numericKeys ? lo * size + hi : `${lo},${hi}`;
    if (seen.has(key)) return `edge #${e} (${u}, ${v}) is a duplicate (edges are undirected)`;
    seen.add(key);
  }
  if (size < 2) return `an edge list needs at least 2 agents, got N = ${size}`;
  return null;
}

/**
 * The undirected graph of an edge list, neighbours ascending. N is the largest index + 1 unless `n` is
 * given (agents with no edge then read nothing). The nominal degree k is the largest degree. Throws a
 * GeometryError for a list that is not a simple graph.
 */
export function edgesGraph(
  edges: readonly Edge[],
  opts: { n?: number; label?: string /** file named in errors */; source?: string } = {},
): CsrGraph {
  const problem = validateEdges(edges, opts.n);
  const label = opts.label ?? 'edges';
  if (problem) throw new GeometryError(`${opts.source ?? label}: ${problem}`);
  const n = opts.n ?? edgeListSize(edges);
  const us = new Int32Array(edges.length);
  const vs = new Int32Array(edges.length);
  for (let e = 0; e < edges.length; e++) {
    us[e] = edges[e][0];
    vs[e] = edges[e][1];
  }
  return undirectedCsr(label, n, us, vs);
}
