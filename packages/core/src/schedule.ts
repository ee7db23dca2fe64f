import type { Graph } from './geometry/index.js';
import { meanFieldRowsCached } from './geometry/meanfield.js';
import { runEvents, type RunPlan } from './plan.js';
import { protocolOf, type ProtocolDef } from './protocol/registry.js';
import { mixSeed, rngFrom, type Rng } from './rng.js';

/** One event of a run's schedule: who answers, whom it reads, and which versions it reads. */
export interface EventPlan {
  event: number;
  sweep: number;
  agent: number;
  /**
   * Neighbours in prompt order (where the graph's order is agent order: shuffled per event, or in the run's
   * own order under neighbour_order per-run); empty at t = 0.
   */
  neighbours: Int32Array;
  /**
   * The event that wrote the agent's own previous answer, then one per neighbour; empty at t = 0. Int32: a
   * run has at most 2^30 events (spec bounds), and the event's row keeps this very array until its part is
   * written, which on a mean field of 729 is 2.9 KB a row instead of 5.8.
   */
  readVersions: Int32Array;
  /** The event's own seed: a pure function of (run seed, event index), 31 bits so every API accepts it. */
  seed: number;
  /** The version slot the event writes (team schedules: its own index); absent: its agent's. */
  slot?: number;
}

/**
 * What the dataflow planner streams through: a population's Schedule or a team's (core/src/team). Events
 * come in index order; each writes one of `slots` version slots, superseding the slot's previous version.
 */
export interface EventStream {
  readonly total: number;
  readonly slots: number;
  readonly position: number;
  readonly run: Pick<RunPlan, 'n' | 'dynamics'>;
  next(): EventPlan | null;
  skip(count: number): void;
  /** For each slot, the event that wrote its latest version before `position` (-1: none yet). */
  liveVersions(): Float64Array;
}

const EMPTY_I32 = new Int32Array(0);
const EMPTY_READS = new Int32Array(0);

/** The event seed sent to the backend. */
export function eventSeed(runSeed: number, event: number): number {
  return mixSeed(runSeed, 'event', event) >>> 1;
}

/**
 * The run's schedule as a stream (docs/DESIGN.md#initial-answers-and-updates): a pure function of the run seed and the graph. Events
 * 0..N-1 are the initial answers; each later event picks an agent uniformly with replacement
 * (asynchronous) or updates every agent in turn from the previous sweep's snapshot (synchronous).
 * It holds O(N) state, whatever the run's length.
 */
export class Schedule implements EventStream {
  readonly total: number;
  private readonly picks: Rng;
  /** Latest event that wrote each agent, as of the next event to be produced. */
  private readonly lastWriter: Float64Array;
  private cursor = 0;
  /** neighbour_order per-run: the run's seeded order of its agents, and each agent's place in it. */
  private readonly runOrder: { agents: Int32Array; rank: Int32Array; rows?: (Int32Array | undefined)[] } | undefined;
  /** Whom an update reads, as the run's protocol says. */
  private readonly reads: ProtocolDef['reads'];

  constructor(
    readonly run: Pick<RunPlan, 'n' | 'sweeps' | 'seed' | 'dynamics' | 'protocol' | 'neighbourOrder'>,
    readonly graph: Graph,
  ) {
    this.total = runEvents(run);
    this.reads = protocolOf(run.protocol).reads;
    this.picks = rngFrom(run.seed, 'picks');
    // -1: not written yet (a run resumed inside its initial answers has agents with no version).
    this.lastWriter = new Float64Array(run.n).fill(-1);
    // A sampled mean field's draw order is a fresh order per event too: per-run sorts the draw into the run's.
    if (run.neighbourOrder === 'per-run' && (graph.shuffled || graph.annealed)) this.runOrder = runOrder(run.n, run.seed);
  }

  /** One version slot per agent. */
  get slots(): number {
    return this.run.n;
  }

  /** Index of the next event `next()` returns. */
  get position(): number {
    return this.cursor;
  }

  /** For each agent, the event that wrote its latest answer before `position` (-1: none yet). */
  liveVersions(): Float64Array {
    return this.lastWriter.slice();
  }

  next(): EventPlan | null {
    const j = this.cursor;
    if (j >= this.total) return null;
    this.cursor++;
    const { n, seed } = this.run;
    if (j < n) {
      this.lastWriter[j] = j;
      return { event: j, sweep: 0, agent: j, neighbours: EMPTY_I32, readVersions: EMPTY_READS, seed: eventSeed(seed, j) };
    }
    const sweep = Math.floor(j / n);
    const synchronous = this.run.dynamics === 'synchronous';
    const agent = synchronous ? j % n : this.picks.int(n);
    let neighbours =
      this.reads === 'none'
        ? EMPTY_I32
        : this.reads === 'everyone'
          ? everyoneBut(agent, n)
          : this.graph.neighbours(agent, this.graph.annealed ? rngFrom(seed, 'neighbours', j) : this.picks);
    if (neighbours.length > 1) {
      if (this.runOrder) neighbours = this.inRunOrder(agent, neighbours);
      else if (this.graph.shuffled) neighbours = shuffledOrder(neighbours, rngFrom(seed, 'order', j));
    }
    const reads = new Int32Array(neighbours.length + 1);
    if (synchronous) {
      // Everyone reads the previous sweep's snapshot, in which agent b was written by event (t-1)N + b.
      const base = (sweep - 1) * n;
      reads[0] = base + agent;
      for (let i = 0; i < neighbours.length; i++) reads[i + 1] = base + neighbours[i];
    } else {
      reads[0] = this.lastWriter[agent];
      for (let i = 0; i < neighbours.length; i++) reads[i + 1] = this.lastWriter[neighbours[i]];
    }
    this.lastWriter[agent] = j;
    return { event: j, sweep, agent, neighbours, readVersions: reads, seed: eventSeed(seed, j) };
  }

  /**
   * The neighbours in the run's order. Every other agent (a full mean field, full-broadcast): the run's order
   * without the agent, one array per agent kept while a mean field's rows are (N <= 1,024), as the graph
   * keeps its own; fewer: sorted by their places in the run's order.
   */
  private inRunOrder(agent: number, row: Int32Array): Int32Array {
    const { agents, rank, rows } = this.runOrder!;
    const n = agents.length;
    if (row.length === n - 1) {
      const kept = rows?.[agent];
      if (kept) return kept;
      const out = new Int32Array(n - 1);
      for (let i = 0, o = 0; i < n; i++) if (agents[i] !== agent) out[o++] = agents[i];
      if (rows) rows[agent] = out;
      return out;
    }
    return row.slice().sort((a, b) => rank[a] - rank[b]);
  }

  /** Advances past `count` events without returning them (resume). */
  skip(count: number): void {
    for (let i = 0; i < count && this.next(); i++);
  }
}

/**
 * The neighbours in a uniformly random order (Fisher-Yates on a copy: the graph's row is shared). The stream
 * is the event's own, a pure function of (run seed, event index), so the order, like the picks, is the same
 * at any concurrency, embedded or distributed, before or after a crash.
 */
export function shuffledOrder(row: Int32Array, rng: Rng): Int32Array {
  const out = row.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const r = rng.int(i + 1);
    const x = out[i];
    out[i] = out[r];
    out[r] = x;
  }
  return out;
}

/**
 * neighbour_order per-run: a uniformly random order of the run's agents from the run seed's own stream (not
 * the picks', so the same agents update in the same sequence under either order), and each agent's place.
 */
function runOrder(n: number, seed: number): { agents: Int32Array; rank: Int32Array; rows?: (Int32Array | undefined)[] } {
  const identity = new Int32Array(n);
  for (let i = 0; i < n; i++) identity[i] = i;
  const agents = shuffledOrder(identity, rngFrom(seed, 'run-order'));
  const rank = new Int32Array(n);
  for (let i = 0; i < n; i++) rank[agents[i]] = i;
  return { agents, rank, ...(meanFieldRowsCached(n) ? { rows: new Array<Int32Array | undefined>(n) } : {}) };
}

/** full-broadcast: every other agent, in agent order (the paper's broadcast reaches the whole system). */
function everyoneBut(agent: number, n: number): Int32Array {
  const out = new Int32Array(n - 1);
  for (let b = 0, i = 0; b < n; b++) if (b !== agent) out[i++] = b;
  return out;
}

/** Events, and the longest chain of reads-after-writes: their ratio is the parallelism a schedule offers. */
export function criticalPath(schedule: EventStream): { events: number; criticalPath: number } {
  const depth = new Float64Array(schedule.total);
  let longest = 0;
  for (let e = schedule.next(); e; e = schedule.next()) {
    let d = 0;
    for (const v of e.readVersions) d = Math.max(d, depth[v]);
    depth[e.event] = d + 1;
    longest = Math.max(longest, d + 1);
  }
  return { events: schedule.total, criticalPath: longest };
}
