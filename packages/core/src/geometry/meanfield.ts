import type { Rng } from '../rng.js';
import { checkAgent, type Graph } from './graph.js';

/**
 * All-to-all: agent i reads every other agent, ascending (k = N - 1; the schedule shuffles them per event).
 * Rows are computed on demand, so a large population costs O(N) per call and nothing up front (never N^2).
 */
export class MeanFieldGraph implements Graph {
  readonly annealed = false;
  readonly shuffled = true;
  readonly k: number;

  constructor(
    readonly n: number,
    readonly label = 'meanfield',
  ) {
    this.k = n - 1;
    this.rows = meanFieldRowsCached(n) ? new Array<Int32Array | undefined>(n) : undefined;
  }

  /** Rows kept while all of them fit in 4 MB (N <= 1,024): a mean field's rows are the largest per event. */
  private readonly rows: (Int32Array | undefined)[] | undefined;

  neighbours(agent: number, _rng?: Rng): Int32Array {
    checkAgent(agent, this.n);
    if (this.rows) return (this.rows[agent] ??= this.row(agent));
    return this.row(agent);
  }

  private row(agent: number): Int32Array {
    const out = new Int32Array(this.n - 1);
    for (let j = 0; j < agent; j++) out[j] = j;
    for (let j = agent + 1; j < this.n; j++) out[j - 1] = j;
    return out;
  }
}

/** Whether a full mean field of n agents keeps its neighbour rows (events then share them, not copy them). */
export function meanFieldRowsCached(n: number): boolean {
  return n * n <= 1 << 20;
}

/**
 * Annealed mean field: each update reads k distinct peers (never itself) drawn uniformly from the event's
 * own stream, in draw order. A partial Fisher-Yates shuffle over a virtual array of the N - 1 peers, with
 * the displaced slots kept in a small map, so a draw costs O(k) time and memory whatever N is, and every
 * ordered k-tuple of distinct peers is equally likely. Exactly k calls to `rng.int`.
 */
export class SampledMeanFieldGraph implements Graph {
  readonly annealed = true;
  readonly shuffled = false;

  constructor(
    readonly n: number,
    readonly k: number,
    readonly label = `meanfield-s${k}`,
  ) {
    if (!Number.isInteger(k) || k < 1 || k > n - 1) {
      throw new RangeError(`meanfield sample k = ${k} needs 1 <= k <= N - 1 = ${n - 1}`);
    }
  }

  neighbours(agent: number, rng: Rng): Int32Array {
    checkAgent(agent, this.n);
    return samplePeers(this.n, this.k, agent, rng);
  }
}

/** k distinct uniform values of {0..n-1} \ {exclude}, in draw order (partial Fisher-Yates, O(k)). */
export function samplePeers(n: number, k: number, exclude: number, rng: Rng): Int32Array {
  const m = n - 1; // peers, indexed 0..m-1; peer p is agent p, or p + 1 when p >= exclude
  const out = new Int32Array(k);
  const moved = new Map<number, number>();
  for (let i = 0; i < k; i++) {
    const j = i + rng.int(m - i);
    const atJ = moved.get(j) ?? j;
    const atI = moved.get(i) ?? i;
    moved.set(j, atI);
    out[i] = atJ >= exclude ? atJ + 1 : atJ;
  }
  return out;
}
