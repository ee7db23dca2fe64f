import { InputError } from '../errors.js';
import { runEvents, type RunPlan } from '../plan.js';

/**
 * One task of a job array: part `index` (1-based, as Slurm's and Kubernetes' array indices are usually
 * given) of `count`. A part runs a slice of the grid's runs and writes a partial corpus; `panta merge`
 * unions the parts and makes the final measurement.
 */
export interface Shard {
  index: number;
  count: number;
}

/** More parts than this is a typo, not a job array (Slurm's MaxArraySize defaults to 1001). */
export const MAX_SHARDS = 1_000_000;

const SHARD_FIX = 'write I/N with whole numbers 1 <= I <= N, e.g. --shard 1/3 for the first of three parts';

/** `I/N` as given on the command line; anything else is bad input naming the option. */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const bad = (problem: string) => new InputError('--shard', '', problem, SHARD_FIX);
  if (!m) throw bad(`"${text}" is not I/N`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) throw bad(`"${text}": N must be 1 to ${MAX_SHARDS.toLocaleString('en-US')}`);
  if (index < 1 || index > count) throw bad(`"${text}": I must be 1 to N (${count})`);
  return { index, count };
}

export function shardLabel(shard: Shard): string {
  return `part ${shard.index} of ${shard.count}`;
}

/**
 * How a job array's runs are dealt to its parts, recorded in each part's manifest (`shard.policy`):
 * - `gpu-time`: by each run's planned GPU time (gpu/gpu-plan.ts shardWeigher): an event of a full mean field
 *   of 256 costs about forty times one of a ring (a prompt of 26,600 tokens against 380), so parts dealt by
 *   events differ in GPU time far more than in events;
 * - `events` (a part's manifest without a policy: Panta before `gpu-time`): by events.
 * A part is resumed, verified and merged only under the policy that dealt it.
 */
export type ShardPolicy = 'gpu-time' | 'events';

/** The policy `panta run --shard` deals new parts by. */
export const SHARD_POLICY: ShardPolicy = 'gpu-time';

/**
 * The part (0-based) of every run: runs are dealt heaviest first (by `weigh`, default events) to the part with
 * the least weight so far, ties to the lower part (longest processing time first, LPT), so parts are balanced
 * whatever the grid's order (a round robin over a grid that alternates two sizes would give one part every
 * large run). A pure function of the runs and the weights, so every task of an array computes the same
 * partition.
 */
export function shardPartition<R extends Pick<RunPlan, 'sweeps' | 'n'>>(
  runs: readonly R[],
  count: number,
  weigh: (run: R) => number = runEvents,
): Uint32Array {
  const part = new Uint32Array(runs.length);
  if (count === 1) return part;
  const weights = runs.map(weigh);
  const order = runs.map((_, i) => i).sort((a, b) => weights[b] - weights[a] || a - b);
  const parts = new PartHeap(count);
  for (const i of order) part[i] = parts.takeLightest(weights[i]);
  return part;
}

/**
 * shardPartition dealing whole groups (adaptive temperatures: a part must hold every run its group's rounds
 * read): a group weighs what its `counted` runs weigh (the start grid's, present from the first round on, so
 * the partition is the same in every round), groups are dealt heaviest first to the lightest part, and each
 * run goes to its group's part.
 */
export function groupPartition<R>(
  runs: readonly R[],
  count: number,
  weigh: (run: R) => number,
  groupOf: (run: R) => string,
  counted: (run: R) => boolean,
): Uint32Array {
  const part = new Uint32Array(runs.length);
  if (count === 1) return part;
  const weights = new Map<string, number>();
  for (const run of runs) {
    const g = groupOf(run);
    weights.set(g, (weights.get(g) ?? 0) + (counted(run) ? weigh(run) : 0));
  }
  const groups = [...weights.keys()].sort();
  const order = groups.map((_, i) => i).sort((a, b) => weights.get(groups[b])! - weights.get(groups[a])! || a - b);
  const parts = new PartHeap(count);
  const dealt = new Map<string, number>();
  for (const i of order) dealt.set(groups[i], parts.takeLightest(weights.get(groups[i])!));
  runs.forEach((run, i) => (part[i] = dealt.get(groupOf(run))!));
  return part;
}

/** The runs of part `shard.index` (see shardPartition), in grid order. */
export function shardRuns<R extends Pick<RunPlan, 'sweeps' | 'n'>>(runs: readonly R[], shard: Shard, weigh?: (run: R) => number): R[] {
  if (shard.count === 1) return [...runs];
  const part = shardPartition(runs, shard.count, weigh);
  return runs.filter((_, i) => part[i] === shard.index - 1);
}

/** A min-heap of parts by (weight, index): O(log N) per run, so a million-part array of many runs stays fast. */
class PartHeap {
  private readonly load: number[];
  private readonly part: number[];

  constructor(count: number) {
    // Every part starts at 0: index order is already a heap.
    this.load = new Array<number>(count).fill(0);
    this.part = Array.from({ length: count }, (_, i) => i);
  }

  /** Adds `weight` to the lightest part and returns it. */
  takeLightest(weight: number): number {
    const chosen = this.part[0];
    this.load[0] += weight;
    this.siftDown(0);
    return chosen;
  }

  private less(a: number, b: number): boolean {
    return this.load[a] < this.load[b] || (this.load[a] === this.load[b] && this.part[a] < this.part[b]);
  }

  private siftDown(at: number): void {
    const size = this.load.length;
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let least = at;
      if (l < size && this.less(l, least)) least = l;
      if (r < size && this.less(r, least)) least = r;
      if (least === at) return;
      [this.load[at], this.load[least]] = [this.load[least], this.load[at]];
      [this.part[at], this.part[least]] = [this.part[least], this.part[at]];
      at = least;
    }
  }
}
