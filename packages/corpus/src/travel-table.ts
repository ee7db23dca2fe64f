import { type RunPlan, travelRunMeasures, type TravelEventRow } from '@panta/core';
import { shardPath } from './corpus-paths.js';
import { readParquetSql } from './duckdb.js';
import { queryRows } from './parquet-table.js';
import type { TravelTableRow } from './travel-table-schema.js';

/** Whether a run is a travel run: its prompt carries checkable assertions. */
export function isTravelRun(run: RunPlan): boolean {
  return run.prompt.assertions !== undefined;
}

/** travel.parquet's rows: the measures of the given complete travel runs, read back from their shards, in order. */
export async function travelTableRows(out: string, complete: readonly RunPlan[]): Promise<TravelTableRow[]> {
  const travel = complete.filter(isTravelRun);
  if (travel.length === 0) return [];
  const byRun = new Map<string, TravelEventRow[]>();
  for (const r of await queryRows(
    `SELECT run_id, role, sweep, response, divergence FROM ${readParquetSql(travel.map((t) => shardPath(out, t.runId)))} ORDER BY run_id, event, role`,
  )) {
    const row: TravelEventRow = {
      role: String(r.role),
      sweep: Number(r.sweep),
      response: String(r.response ?? ''),
      divergence: r.divergence === null || r.divergence === undefined ? null : Number(r.divergence),
    };
    const id = String(r.run_id);
    const list = byRun.get(id);
    if (list) list.push(row);
    else byRun.set(id, [row]);
  }
  return travel.map((run) => ({
    run_id: run.runId,
    config_id: run.configId,
    trial: run.trial,
    prompt_id: run.prompt.id,
    protocol: run.protocol,
    ...travelRunMeasures(run.prompt, byRun.get(run.runId) ?? [], run.sweeps),
  }));
}
