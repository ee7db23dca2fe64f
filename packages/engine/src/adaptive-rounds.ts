import {
  InputError,
  planSweep,
  shardWeigherFor,
  SHARD_POLICY,
  sweepShardRuns,
  type AdaptiveTemperatures,
  type ArmFiles,
  type Edge,
  type Prompt,
  type RunPlan,
  type Shard,
  type SweepSpec,
} from '@panta/core';
import { nextGrids } from '@panta/corpus';

/**
 * Adaptive temperatures in the engine (core's adaptive.ts states the rule): the sweep runs round 0 (the start
 * grid), then, `rounds` times, reads each group's finished runs from their shards, adds the temperatures the
 * rule picks to the group's grid and runs the new runs. Every grid is a pure function of the finished runs'
 * answers, so a resumed sweep recomputes the same rounds from what is on disk, and a part of a job array
 * (which holds whole groups) the same grids as the whole sweep.
 */

/** What a round reads and sets of the loaded sweep (load.ts's LoadedSweep). */
interface RoundSweep {
  spec: SweepSpec;
  prompts: Prompt[];
  specFile: string;
  edgeLists: Map<string, Edge[]>;
  armFiles: ArmFiles;
  runs: RunPlan[];
  shard?: Shard;
  out: string;
  grids?: Map<string, number[]>;
}

/** The adaptive settings of a spec, or undefined for a fixed list. */
export function adaptiveOf(spec: SweepSpec): AdaptiveTemperatures | undefined {
  return Array.isArray(spec.temperatures) ? undefined : spec.temperatures.adaptive;
}

/** binder-crossing compares the two largest sizes: every geometry needs two. */
export function checkAdaptive(spec: SweepSpec, runs: readonly RunPlan[], file: string): void {
  const a = adaptiveOf(spec);
  if (a?.target !== 'binder-crossing') return;
  const sizes = new Map<string, Set<number>>();
  for (const r of runs) sizes.set(r.geometryLabel, (sizes.get(r.geometryLabel) ?? new Set()).add(r.n));
  for (const [label, n] of sizes)
    if (n.size < 2)
      throw new InputError(
        file,
        'temperatures.adaptive.target',
        `binder-crossing needs at least two sizes per geometry; ${label} has one`,
        'give that geometry two sizes or more, or use target: chi-peak',
      );
}

/**
 * After round `round` (0-based) has finished: the grids of the next round, and this part's runs under them
 * (sweep.runs becomes them, sweep.grids the grids). Returns the runs that are new.
 */
export async function nextRound(sweep: RoundSweep): Promise<RunPlan[]> {
  const a = adaptiveOf(sweep.spec)!;
  const grids = new Map(sweep.grids ?? []);
  await nextGrids(sweep.out, sweep.runs, grids, a);
  const all = planSweep(sweep.spec, sweep.prompts, sweep.specFile, sweep.edgeLists, sweep.armFiles, grids);
  const mine = sweep.shard ? sweepShardRuns(sweep.spec, all, sweep.shard, shardWeigherFor(SHARD_POLICY, sweep.spec, sweep.edgeLists)) : all;
  const had = new Set(sweep.runs.map((r) => r.runId));
  sweep.runs = mine;
  sweep.grids = grids;
  return mine.filter((r) => !had.has(r.runId));
}

/** The grids as the manifest records them: by group, ascending, groups sorted. */
export function gridsRecord(grids: ReadonlyMap<string, readonly number[]>): Record<string, number[]> {
  return Object.fromEntries([...grids.keys()].sort().map((g) => [g, [...grids.get(g)!]]));
}
