import { DEFAULT_PROTOCOL, isTeamDynamics, type RunPlan, type Tag, type TeamEventRow, teamTurns } from '@panta/core';
import { readParquetSql } from './duckdb.js';
import { shardPath } from './corpus-paths.js';
import { queryRows } from './parquet-table.js';
import type { RunDriftColumns } from './run-drift.js';
import type { TeamTableRow } from './team-table-schema.js';

/**
 * teams.parquet's rows: the per-turn team metrics (core's teamTurns) of the given complete runs' team runs, in
 * the given order, read back from their finalized shards. Protocol `glauber` is the plain team, arm `none`.
 * Written at finish and recomputed by `panta verify`.
 */
export async function teamTableRows(out: string, complete: readonly RunPlan[]): Promise<TeamTableRow[]> {
  const teams = complete.filter((r) => isTeamDynamics(r.dynamics));
  if (teams.length === 0) return [];
  const byRun = new Map<string, TeamEventRow[]>();
  for (const r of await queryRows(
    'SELECT run_id, event, role, sweep, agent, response, reply_status, tag, prompt_tokens, completion_tokens ' +
      `FROM ${readParquetSql(teams.map((t) => shardPath(out, t.runId)))}`,
  )) {
    const row: TeamEventRow = {
      event: Number(r.event),
      role: String(r.role),
      sweep: Number(r.sweep),
      agent: Number(r.agent),
      response: String(r.response ?? ''),
      reply_status: String(r.reply_status ?? 'ok'),
      tag: (r.tag ?? null) as Tag | null,
      prompt_tokens: Number(r.prompt_tokens ?? 0),
      completion_tokens: Number(r.completion_tokens ?? 0),
    };
    const id = String(r.run_id);
    const list = byRun.get(id);
    if (list) list.push(row);
    else byRun.set(id, [row]);
  }
  return teams.flatMap((run) =>
    teamTurns(run.dynamics, run.prompt, byRun.get(run.runId) ?? []).map((t) => ({
      run_id: run.runId,
      config_id: run.configId,
      trial: run.trial,
      prompt_id: run.prompt.id,
      geometry: run.geometryLabel,
      n: run.n,
      k: run.k,
      temperature: run.temperature,
      protocol: run.protocol,
      dynamics: run.dynamics,
      arm: run.protocol === DEFAULT_PROTOCOL ? 'none' : run.protocol,
      population_arm: run.arms?.population ?? null,
      ...t,
    })),
  );
}

/**
 * A team run's FOCUS series (turns 2..R), its total, drift onset and recovery, with no tolerance (0):
 * runs.parquet's drift columns.
 */
export type TeamRunDrift = RunDriftColumns;

/**
 * Each team run's FOCUS series and drift, for runs.parquet: the same numbers as its rows in teams.parquet
 * (FOCUS over fact recall, drift with no tolerance). Relay and hub runs have one turn: no FOCUS.
 */
export function teamDriftByRun(rows: readonly TeamTableRow[]): Map<string, TeamRunDrift> {
  const out = new Map<string, TeamRunDrift>();
  for (const r of rows) {
    let d = out.get(r.run_id);
    if (!d) {
      d = { focus: [], focus_total: null, drift_tolerance: 0, drift_onset: r.drift_onset, recovered: r.recovered };
      out.set(r.run_id, d);
    }
    if (r.turn > 1) {
      d.focus?.push(r.focus);
      if (r.focus !== null) d.focus_total = (d.focus_total ?? 0) + r.focus;
    }
  }
  return out;
}
