import { driftTolerance, runEvents, snapshotAccuracy, teamSchedule, type RunPlan } from '@panta/core';
import {
  RUNS_TABLE,
  runDriftColumns,
  runsTablePath,
  UNMEASURED_DRIFT,
  writeParquetTable,
  type OrderParamRow,
  type RunRecord,
  type RunTableRow,
  type TeamRunDrift,
} from '@panta/corpus';
import { isTeamRun } from './team-table.js';
import type { CostOf, RunTotals } from './totals.js';

/** What runs.parquet's rows are built from, besides the plan: what the shards, journal and measurement say. */
export interface RunTableInput {
  runs: readonly RunPlan[];
  totals: ReadonlyMap<string, RunTotals>;
  records: ReadonlyMap<string, RunRecord>;
  failed: readonly string[];
  /** Order parameters of a measured sweep (empty until then); drift reads those of `encoder`. */
  orderParams: readonly OrderParamRow[];
  encoder: string;
  tolerance: number | 'auto';
  cost: CostOf;
  /** Team runs' FOCUS and drift, from their turns' scores (teams.parquet); population runs take theirs from accuracy. */
  teamDrift?: ReadonlyMap<string, TeamRunDrift>;
}

/** One row per planned run, in plan order: complete, failed or pending, with what is known of it. */
export function runTableRows(input: RunTableInput): RunTableRow[] {
  const { runs, totals, records, failed, cost } = input;
  // Drift reads accuracy (not_known and judge failures count as wrong), which the tags give on every snapshot.
  const accuracySeries = new Map<string, (number | null)[]>();
  for (const p of input.orderParams) {
    if (p.encoder !== input.encoder) continue;
    const series = accuracySeries.get(p.run_id);
    if (series) series.push(snapshotAccuracy(p));
    else accuracySeries.set(p.run_id, [snapshotAccuracy(p)]);
  }
  return runs.map((r) => {
    const t = totals.get(r.runId);
    const rec = records.get(r.runId);
    const accuracy = accuracySeries.get(r.runId);
    const tolerance = driftTolerance(input.tolerance, r.n);
    const team = input.teamDrift?.get(r.runId);
    const drift = accuracy ? runDriftColumns(accuracy, tolerance) : (team ?? UNMEASURED_DRIFT);
    return {
      run_id: r.runId,
      config_id: r.configId,
      trial: r.trial,
      prompt_id: r.prompt.id,
      geometry: r.geometryLabel,
      n: r.n,
      k: r.k,
      temperature: r.temperature,
      protocol: r.protocol,
      dynamics: r.dynamics,
      template_arm: r.arms?.template ?? null,
      population_arm: r.arms?.population ?? null,
      seed: r.seed,
      status: t ? 'complete' : failed.includes(r.runId) ? 'failed' : 'pending',
      events: t?.events ?? 0,
      calls: rec?.calls ?? null,
      retries: rec?.retries ?? null,
      prompt_tokens: t?.prompt_tokens ?? null,
      completion_tokens: t?.completion_tokens ?? null,
      cost: cost(t?.prompt_tokens ?? null, t?.completion_tokens ?? null),
      extra_calls: t?.extra ?? null,
      // A run that stopped early has a whole number of sweeps; the agent calls it did not make are saved.
      stopped_early: t ? t.events < runEvents(r) : null,
      // A team's events are not N per sweep: a debate ran its R turns, a relay or hub has no sweeps.
      sweeps_run: t ? (isTeamRun(r) ? (teamSchedule(r.dynamics).rounds ? r.sweeps : null) : t.events / r.n - 1) : null,
      calls_saved: t ? runEvents(r) - t.events : null,
      ...drift,
      wall_ms: rec?.wall_ms ?? null,
    };
  });
}

/** Writes `<out>/runs.parquet` (RUNS_TABLE) whole, replacing the last session's; returns its path. */
export async function writeRunTable(out: string, rows: readonly RunTableRow[]): Promise<string> {
  const file = runsTablePath(out);
  await writeParquetTable(file, RUNS_TABLE, rows);
  return file;
}
