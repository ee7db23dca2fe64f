import { isTeamDynamics, type RunPlan } from '@panta/core';
import { TEAMS_TABLE, teamsTablePath, type TeamTableRow, writeParquetTable } from '@panta/corpus';

export { teamDriftByRun, teamTableRows, type TeamRunDrift } from '@panta/corpus';

/** Whether a run follows a team schedule (docs/teams.md) rather than population dynamics. */
export function isTeamRun(run: RunPlan): boolean {
  return isTeamDynamics(run.dynamics);
}

/** Writes `<out>/teams.parquet` whole when the sweep has team runs; returns its path, or null when it has none. */
export async function writeTeamTable(out: string, runs: readonly RunPlan[], rows: readonly TeamTableRow[]): Promise<string | null> {
  if (!runs.some(isTeamRun)) return null;
  const file = teamsTablePath(out);
  await writeParquetTable(file, TEAMS_TABLE, rows);
  return file;
}
