import { existsSync } from 'node:fs';
import {
  InputError,
  nextTemperatures,
  planSweep,
  runGroup,
  shardWeigherFor,
  SHARD_POLICY,
  startGrid,
  sweepShardRuns,
  type AdaptiveTemperatures,
  type ArmFiles,
  type Edge,
  type Prompt,
  type RunPlan,
  type Shard,
  type RunSeries,
  type SweepSpec,
} from '@panta/core';
import { queryRows, readParquetSql, shardPath } from '@panta/corpus';

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

/** Per run, f and rho after each sweep, from its shard's agent answers (the answers of sweep t). */
async function seriesOf(out: string, runs: readonly RunPlan[]): Promise<Map<string, RunSeries>> {
  const done = runs.filter((r) => existsSync(shardPath(out, r.runId)));
  const series = new Map<string, RunSeries>();
  if (done.length === 0) return series;
  const rows = await queryRows(
    `SELECT run_id, sweep::INTEGER AS sweep, count(*) FILTER (WHERE tag = 'correct')::INTEGER AS c,
       count(*) FILTER (WHERE tag = 'hallucinated')::INTEGER AS h
     FROM ${readParquetSql(done.map((r) => shardPath(out, r.runId)))} WHERE role = 'agent' GROUP BY run_id, sweep ORDER BY run_id, sweep`,
  );
  const byId = new Map(done.map((r) => [r.runId, r]));
  for (const row of rows) {
    const run = byId.get(row.run_id as string)!;
    let s = series.get(run.runId);
    if (!s) series.set(run.runId, (s = { n: run.n, temperature: run.temperature, f: [], rho: [] }));
    (s.f as number[])[row.sweep as number] = ((row.c as number) - (row.h as number)) / run.n;
    (s.rho as number[])[row.sweep as number] = (row.h as number) / run.n;
  }
  return series;
}

/** Each group's grid after the rounds so far (`grids`, start grid where absent) and one more round, from the finished runs. */
async function nextGrids(out: string, runs: readonly RunPlan[], grids: Map<string, number[]>, a: AdaptiveTemperatures): Promise<void> {
  const series = await seriesOf(out, runs);
  const byGroup = new Map<string, RunSeries[]>();
  const groups = new Set<string>();
  for (const r of runs) {
    const g = runGroup(r);
    groups.add(g);
    const s = series.get(r.runId);
    if (s) byGroup.set(g, [...(byGroup.get(g) ?? []), s]);
  }
  for (const g of [...groups].sort()) {
    const grid = grids.get(g) ?? startGrid(a);
    const { added } = nextTemperatures(grid, byGroup.get(g) ?? [], a);
    grids.set(
      g,
      [...grid, ...added].sort((x, y) => x - y),
    );
  }
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
