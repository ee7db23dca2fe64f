import { existsSync } from 'node:fs';
import {
  type AdaptiveTemperatures,
  type AdaptiveGrids,
  type Edge,
  nextTemperatures,
  planSweep,
  type Prompt,
  type RunPlan,
  type RunSeries,
  runGroup,
  type Shard,
  startGrid,
  sweepShardRuns,
  type SweepSpec,
} from '@panta/core';
import { shardPath } from './corpus-paths.js';
import { readParquetSql } from './duckdb.js';
import { queryRows } from './parquet-table.js';

/**
 * Adaptive temperatures read from a corpus (core's adaptive.ts states the rule): the finished runs' f and rho
 * after each sweep, and the grids the rounds reach from them. The engine plans each round with nextGrids;
 * `panta verify` replays every round with replayGrids and compares the manifest's grids.
 */

/** Per run with a shard, f and rho after each sweep, from its agent answers (the answers of sweep t). */
export async function runSeriesOf(out: string, runs: readonly RunPlan[]): Promise<Map<string, RunSeries>> {
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

/** One more round: each group of `runs` gets the temperatures the rule adds from its finished runs (in `grids`, in place). */
export async function nextGrids(
  out: string,
  runs: readonly RunPlan[],
  grids: Map<string, number[]>,
  a: AdaptiveTemperatures,
): Promise<void> {
  const series = await runSeriesOf(out, runs);
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

/** What planning a round needs of a sweep. */
export interface AdaptivePlanInput {
  spec: SweepSpec;
  prompts: Prompt[];
  specFile: string;
  edgeLists: Map<string, Edge[]>;
  shard?: Shard;
  weigh: (run: RunPlan) => number;
}

/** The runs of a part (or the whole sweep) under `grids`. */
export function adaptiveRuns(p: AdaptivePlanInput, grids: AdaptiveGrids): RunPlan[] {
  const all = planSweep(p.spec, p.prompts, p.specFile, p.edgeLists, {}, grids);
  return p.shard ? sweepShardRuns(p.spec, all, p.shard, p.weigh) : all;
}

/** Every round replayed from the corpus's shards: the grids an uninterrupted sweep reaches (sorted by group). */
export async function replayGrids(out: string, p: AdaptivePlanInput): Promise<Map<string, number[]>> {
  const a = (p.spec.temperatures as { adaptive: AdaptiveTemperatures }).adaptive;
  const grids = new Map<string, number[]>();
  for (let round = 1; round <= a.rounds; round++) {
    const before = JSON.stringify([...grids]);
    await nextGrids(out, adaptiveRuns(p, grids), grids, a);
    if (JSON.stringify([...grids]) === before) break;
  }
  return grids;
}
