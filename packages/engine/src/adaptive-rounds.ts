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
  sweepEvents,
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
 * After a round has finished: the grids of the next round, and this part's runs under them (sweep.runs
 * becomes them, sweep.grids the grids). Returns the runs that are new. The embedded sweep calls it; so does
 * the distributed collector, which owns the corpus the rule reads, for the scheduler (cluster's scheduler.ts).
 */
export async function nextRound(sweep: RoundSweep): Promise<RunPlan[]> {
  const a = adaptiveOf(sweep.spec)!;
  const grids = new Map(sweep.grids ?? []);
  await nextGrids(sweep.out, sweep.runs, grids, a);
  return adoptGrids(sweep, grids);
}

/**
 * The sweep under `grids` (a round's, as nextRound computed them): sweep.runs becomes this part's runs under
 * them, sweep.grids the grids. Returns the runs that are new. The distributed roles adopt the grids the
 * collector computed this way.
 */
export function adoptGrids(sweep: RoundSweep, grids: ReadonlyMap<string, readonly number[]>): RunPlan[] {
  const copy = new Map([...grids].map(([g, t]) => [g, [...t]]));
  const all = planSweep(sweep.spec, sweep.prompts, sweep.specFile, sweep.edgeLists, sweep.armFiles, copy);
  const mine = sweep.shard ? sweepShardRuns(sweep.spec, all, sweep.shard, shardWeigherFor(SHARD_POLICY, sweep.spec, sweep.edgeLists)) : all;
  const had = new Set(sweep.runs.map((r) => r.runId));
  sweep.runs = mine;
  sweep.grids = copy;
  return mine.filter((r) => !had.has(r.runId));
}

/**
 * The manifest of a sweep whose adaptive rounds planned more runs than the start: it counts them and records
 * each group's grid (embedded, and the collector that finishes a distributed sweep).
 */
export function recordRounds(
  manifest: { adaptive?: { grids: Record<string, number[]> }; runs: { planned: number }; events: { planned: number } },
  sweep: Pick<RoundSweep, 'grids' | 'runs'>,
): void {
  if (!sweep.grids) return;
  manifest.adaptive = { grids: gridsRecord(sweep.grids) };
  manifest.runs.planned = sweep.runs.length;
  manifest.events.planned = sweepEvents(sweep.runs);
}

/** The grids as the manifest records them: by group, ascending, groups sorted. */
export function gridsRecord(grids: ReadonlyMap<string, readonly number[]>): Record<string, number[]> {
  return Object.fromEntries([...grids.keys()].sort().map((g) => [g, [...grids.get(g)!]]));
}
