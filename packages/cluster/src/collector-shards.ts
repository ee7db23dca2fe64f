import { shardRuns, type RunPlan } from '@panta/core';

/**
 * Which collector shard (0-based) writes each run when the scheduler splits the runs over `shards` collectors:
 * the same balanced partition as job arrays (core's shardRuns: heaviest runs first, to the lightest part),
 * so shards carry about the same events whatever the grid's order, and every role computes the same split
 * from the published sweep. `--shard I/K` on the command line is 1-based, as for job arrays: shard I-1.
 */
export function collectorShards(runs: readonly RunPlan[], shards: number): Map<string, number> {
  const of = new Map<string, number>();
  if (shards <= 1) {
    for (const r of runs) of.set(r.runId, 0);
    return of;
  }
  for (let index = 1; index <= shards; index++) for (const r of shardRuns(runs, { index, count: shards })) of.set(r.runId, index - 1);
  return of;
}
