import { shardPartition, type RunPlan } from '@panta/core';

/**
 * Which collector shard (0-based) writes each run when the scheduler splits the runs over `shards` collectors:
 * core's shardPartition (heaviest runs first, to the lightest part) weighed by events, since a collector's
 * work is the rows it writes (a job array's parts are weighed by GPU time instead), so shards carry about the
 * same events whatever the grid's order, and every role computes the same split
 * from the published sweep. `--shard I/K` on the command line is 1-based, as for job arrays: shard I-1.
 */
export function collectorShards(runs: readonly RunPlan[], shards: number): Map<string, number> {
  const of = new Map<string, number>();
  if (shards <= 1) {
    for (const r of runs) of.set(r.runId, 0);
    return of;
  }
  const part = shardPartition(runs, shards);
  runs.forEach((r, i) => of.set(r.runId, part[i]));
  return of;
}
