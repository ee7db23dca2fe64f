import { runGroup, shardPartition, startGrid, type RunPlan, type SweepSpec } from '@panta/core';

/**
 * Which collector shard (0-based) writes each run when the scheduler splits the runs over `shards` collectors:
 * core's shardPartition (heaviest runs first, to the lightest part) weighed by events, since a collector's
 * work is the rows it writes (a job array's parts are weighed by GPU time instead), so shards carry about the
 * same events whatever the grid's order, and every role computes the same split
 * from the published sweep. `--shard I/K` on the command line is 1-based, as for job arrays: shard I-1.
 *
 * Adaptive temperatures (`spec` given): the split is the start grid's, and a run a round adds goes to the shard
 * of the start run of its group, size and trial at the lowest start temperature. A run's shard thus never
 * depends on the rounds run so far: a role that knows fewer rounds than another still sends it to the same one.
 */
export function collectorShards(runs: readonly RunPlan[], shards: number, spec?: SweepSpec): Map<string, number> {
  const of = new Map<string, number>();
  if (shards <= 1) {
    for (const r of runs) of.set(r.runId, 0);
    return of;
  }
  if (spec && !Array.isArray(spec.temperatures)) {
    const start = new Set(startGrid(spec.temperatures.adaptive));
    const first = runs.filter((r) => start.has(r.temperature));
    const part = shardPartition(first, shards);
    const sibling = (r: RunPlan) => `${runGroup(r)}|${r.n}|${r.trial}`;
    const lowest = new Map<string, { temperature: number; shard: number }>();
    first.forEach((r, i) => {
      of.set(r.runId, part[i]!);
      const was = lowest.get(sibling(r));
      if (!was || r.temperature < was.temperature) lowest.set(sibling(r), { temperature: r.temperature, shard: part[i]! });
    });
    for (const r of runs) if (!of.has(r.runId)) of.set(r.runId, lowest.get(sibling(r))?.shard ?? 0);
    return of;
  }
  const part = shardPartition(runs, shards);
  runs.forEach((r, i) => of.set(r.runId, part[i]));
  return of;
}
